import Foundation
import GRDB

extension VectorIndex {
    /// Creates the index if it does not exist: the `vec0` table, filled from the canonical
    /// rows, the triggers that keep it current, the `vecsync_state` table, and the index's
    /// entry in the `vecsync_vector_indexes` registry (so tools and replicas find it).
    ///
    /// Calling it again on an existing index only installs the current triggers (replacing
    /// those of an earlier release); use ``rebuild(_:)`` to refill it. An existing index registered with another definition
    /// (dimensions, metric, columns) is refused with
    /// ``VecSyncError/schemaMismatch(table:reason:)``: ``rebuild(_:)`` replaces it.
    public func create(_ db: Database) throws {
        try validate(db)
        try VecSyncError.wrap {
            try db.inSavepoint {
                try Self.createStateTable(db)
                if try !db.tableExists(name) {
                    try db.execute(sql: createTableSQL(db))
                    try backfill(db)
                } else if let existing = try Self.registered(named: name, in: db), existing != self {
                    throw VecSyncError.schemaMismatch(
                        table: name,
                        reason:
                            "the index exists as \(existing.summary), not \(summary); call rebuild(_:) to recreate it")
                }
                try dropTriggers(db)
                for sql in triggerSQL() {
                    try db.execute(sql: sql)
                }
                try register(db)
                return .commit
            }
        }
    }

    /// A short description for messages: `photos.embedding keyed by source_id, 768 dimensions, cosine, metadata [mood text]`.
    var summary: String {
        "\(table).\(embeddingColumn) keyed by \(primaryKey), \(dimensions) dimensions, \(metric.rawValue)"
            + (metadata.isEmpty
                ? "" : ", metadata [\(metadata.map { "\($0.name) \($0.type.rawValue)" }.joined(separator: ", "))]")
            + (ivf.map { ", indexed by \($0.declaration)" } ?? "")
    }

    /// Drops the index table, its triggers and its registry entry, and creates them again
    /// from the canonical rows. Searches afterwards return what they returned before.
    public func rebuild(_ db: Database) throws {
        try validate(db)
        try VecSyncError.wrap {
            try db.inSavepoint {
                try dropObjects(db)
                try create(db)
                return .commit
            }
        }
    }

    /// Drops the index table, its triggers and its registry entry. The canonical rows are
    /// untouched.
    public func drop(_ db: Database) throws {
        try VecSyncError.wrap {
            try db.inSavepoint {
                try dropObjects(db)
                if try db.tableExists(Self.registryTable) {
                    try db.execute(
                        sql: "DELETE FROM \(Self.registryTable.quotedSQLIdentifier) WHERE name = ?",
                        arguments: [name])
                }
                return .commit
            }
        }
    }

    /// Whether the index table exists.
    public func exists(_ db: Database) throws -> Bool {
        try db.tableExists(name)
    }

    /// Creates `vecsync_state(key TEXT PRIMARY KEY, value)` if it is missing.
    public static func createStateTable(_ db: Database) throws {
        try db.execute(sql: "CREATE TABLE IF NOT EXISTS \(stateTable.quotedSQLIdentifier)(key TEXT PRIMARY KEY, value)")
    }

    // MARK: - Internals

    private func dropObjects(_ db: Database) throws {
        try dropTriggers(db)
        try db.execute(sql: "DROP TABLE IF EXISTS \(qName)")
    }

    private func dropTriggers(_ db: Database) throws {
        for trigger in [insertTrigger, updateTrigger, deleteTrigger] {
            try db.execute(sql: "DROP TRIGGER IF EXISTS \(trigger.quotedSQLIdentifier)")
        }
    }

    /// Fills the index from every canonical row that has an embedding.
    func backfill(_ db: Database) throws {
        try db.execute(
            sql: """
                \(insertPrefix)
                SELECT \(sourceColumns(prefix: "").joined(separator: ", ")) FROM \(qTable)
                WHERE \(qEmbedding) IS NOT NULL
                """)
    }

    /// Checks the description against the canonical table before anything is written.
    func validate(_ db: Database) throws {
        guard dimensions > 0 else {
            throw VecSyncError.invalidArgument(name: "dimensions", value: "\(dimensions)", reason: "must be at least 1")
        }
        guard try db.tableExists(table) else {
            throw VecSyncError.notFound(kind: "table", key: table)
        }
        let columns = try db.columns(in: table).map { $0.name.lowercased() }
        for column in [embeddingColumn] + metadata.map(\.name) + (usesRowid ? [] : [primaryKey])
        where !columns.contains(column.lowercased()) {
            throw VecSyncError.schemaMismatch(table: table, reason: "no column \(column)")
        }
    }

    /// `CREATE VIRTUAL TABLE "idx" USING vec0(key text primary key, embedding float[n] distance_metric=… [indexed by ivf(…)], …)`
    func createTableSQL(_ db: Database) throws -> String {
        var columns: [String] = []
        if !usesRowid {
            columns.append("\(qKey) \(try keyType(db)) primary key")
        }
        columns.append(
            "\(qEmbedding) float[\(dimensions)] distance_metric=\(metric.rawValue)"
                + (ivf.map { " indexed by \($0.declaration)" } ?? ""))
        columns += metadata.map { "\($0.name.quotedSQLIdentifier) \($0.type.rawValue)" }
        return "CREATE VIRTUAL TABLE \(qName) USING vec0(\(columns.joined(separator: ", ")))"
    }

    /// `integer` when the canonical key has integer affinity, `text` otherwise.
    func keyType(_ db: Database) throws -> String {
        let column = try db.columns(in: table).first { $0.name.lowercased() == primaryKey.lowercased() }
        let declared = column?.type.uppercased() ?? ""
        return declared.contains("INT") ? "integer" : "text"
    }

    /// The three triggers, as plain SQL.
    ///
    /// `INSERT OR REPLACE` and `UPDATE OR REPLACE` delete the row they replace without
    /// firing delete triggers (unless `PRAGMA recursive_triggers` is on, which no one should
    /// have to remember), so the insert trigger runs whatever the new embedding is and first
    /// removes the index row of the key it writes, and the update trigger removes the rows of
    /// both the old and the new key. Neither is a BEFORE trigger: those also fire for an
    /// `INSERT OR IGNORE` that is ignored and for an upsert that turns into an update, and
    /// would drop index rows whose canonical rows stay.
    ///
    /// A REPLACE that deletes a row of another key, through a second UNIQUE constraint,
    /// still leaves that row in the index: ``verify(_:)`` reports it, ``rebuild(_:)`` clears it.
    func triggerSQL() -> [String] {
        let newValues = sourceColumns(prefix: "NEW.").joined(separator: ", ")
        let watched = ([embeddingColumn] + metadata.map(\.name) + (usesRowid ? [] : [primaryKey]))
            .map(\.quotedSQLIdentifier).joined(separator: ", ")
        let insertNew = "\(insertPrefix) SELECT \(newValues) WHERE NEW.\(qEmbedding) IS NOT NULL;"
        return [
            """
            CREATE TRIGGER \(insertTrigger.quotedSQLIdentifier) AFTER INSERT ON \(qTable)
            WHEN \(MergingFlag.notMergingCondition)
            BEGIN
              DELETE FROM \(qName) WHERE \(qIndexKey) = NEW.\(qKey);
              \(insertNew)
            END
            """,
            """
            CREATE TRIGGER \(updateTrigger.quotedSQLIdentifier) AFTER UPDATE OF \(watched) ON \(qTable)
            WHEN \(MergingFlag.notMergingCondition)
            BEGIN
              DELETE FROM \(qName) WHERE \(qIndexKey) = OLD.\(qKey);
              DELETE FROM \(qName) WHERE \(qIndexKey) = NEW.\(qKey) AND NEW.\(qKey) IS NOT OLD.\(qKey);
              \(insertNew)
            END
            """,
            """
            CREATE TRIGGER \(deleteTrigger.quotedSQLIdentifier) AFTER DELETE ON \(qTable)
            WHEN \(MergingFlag.notMergingCondition)
            BEGIN
              DELETE FROM \(qName) WHERE \(qIndexKey) = OLD.\(qKey);
            END
            """,
        ]
    }
}
