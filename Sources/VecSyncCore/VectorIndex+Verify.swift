import GRDB

extension VectorIndex {
    /// Compares the index with its canonical rows and reports rows missing from the index,
    /// stale in it (embedding or metadata differ), extra in it, and canonical embeddings that
    /// cannot be indexed. It writes nothing; ``rebuild(_:)`` or ``refresh(_:keys:)`` repair.
    ///
    /// It reads every canonical row and every index row once: run it at startup, after a
    /// restore, or from `vecsync-cli verify`, not on every query.
    public func verify(_ db: Database) throws -> VectorIndexReport {
        try VecSyncError.wrap {
            let byteCount = dimensions * 4
            let valid = "typeof(s.\(qEmbedding)) = 'blob' AND length(s.\(qEmbedding)) = \(byteCount)"
            let canonicalRows =
                try Int.fetchOne(
                    db, sql: "SELECT count(*) FROM \(qTable) WHERE \(qEmbedding) IS NOT NULL") ?? 0
            let invalid = try DatabaseValue.fetchAll(
                db,
                sql: """
                    SELECT s.\(qKey) FROM \(qTable) AS s
                    WHERE s.\(qEmbedding) IS NOT NULL AND NOT (\(valid)) ORDER BY 1
                    """)
            guard try db.tableExists(name) else {
                let all = try DatabaseValue.fetchAll(
                    db,
                    sql: """
                        SELECT s.\(qKey) FROM \(qTable) AS s WHERE \(valid) ORDER BY 1
                        """)
                return VectorIndexReport(
                    index: name, exists: false, canonicalRows: canonicalRows, indexedRows: 0,
                    missing: all, stale: [], extra: [], invalid: invalid)
            }
            let indexedRows = try Int.fetchOne(db, sql: "SELECT count(*) FROM \(qName)") ?? 0
            // Point lookups into the index by key, one per canonical row.
            let missing = try DatabaseValue.fetchAll(
                db,
                sql: """
                    SELECT s.\(qKey) FROM \(qTable) AS s
                    WHERE \(valid) AND NOT EXISTS (SELECT 1 FROM \(qName) AS v WHERE v.\(qIndexKey) = s.\(qKey))
                    ORDER BY 1
                    """)
            let metadataDiffers = metadata.map {
                " OR v.\($0.name.quotedSQLIdentifier) IS NOT s.\($0.name.quotedSQLIdentifier)"
            }.joined()
            let stale = try DatabaseValue.fetchAll(
                db,
                sql: """
                    SELECT s.\(qKey) FROM \(qTable) AS s JOIN \(qName) AS v ON v.\(qIndexKey) = s.\(qKey)
                    WHERE \(valid) AND (v.\(qEmbedding) IS NOT s.\(qEmbedding)\(metadataDiffers))
                    ORDER BY 1
                    """)
            // One scan of the index, a key lookup into the canonical table for each row.
            let extra = try DatabaseValue.fetchAll(
                db,
                sql: """
                    SELECT v.\(qIndexKey) FROM \(qName) AS v
                    WHERE NOT EXISTS (SELECT 1 FROM \(qTable) AS s WHERE s.\(qKey) = v.\(qIndexKey) AND \(valid))
                    ORDER BY 1
                    """)
            return VectorIndexReport(
                index: name, exists: true, canonicalRows: canonicalRows, indexedRows: indexedRows,
                missing: missing, stale: stale, extra: extra, invalid: invalid)
        }
    }
}
