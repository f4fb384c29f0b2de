import GRDB

/// What ``VectorIndex/verify(_:)`` found when it compared a derived index with its
/// canonical rows. Keys are the canonical primary keys.
public struct VectorIndexReport: Sendable, Hashable {
    /// The index's name.
    public var index: String
    /// Whether the index table exists at all.
    public var exists: Bool
    /// Canonical rows that have an embedding (valid or not).
    public var canonicalRows: Int
    /// Rows in the index.
    public var indexedRows: Int
    /// Canonical rows with a valid embedding that the index lacks.
    public var missing: [DatabaseValue]
    /// Rows whose indexed embedding or metadata differ from the canonical row.
    public var stale: [DatabaseValue]
    /// Index rows whose canonical row is gone or has no valid embedding.
    public var extra: [DatabaseValue]
    /// Canonical rows whose embedding cannot be indexed: not a blob of 4 × dimensions bytes.
    public var invalid: [DatabaseValue]

    /// Creates a report.
    public init(
        index: String, exists: Bool, canonicalRows: Int, indexedRows: Int,
        missing: [DatabaseValue], stale: [DatabaseValue], extra: [DatabaseValue], invalid: [DatabaseValue]
    ) {
        self.index = index
        self.exists = exists
        self.canonicalRows = canonicalRows
        self.indexedRows = indexedRows
        self.missing = missing
        self.stale = stale
        self.extra = extra
        self.invalid = invalid
    }

    /// True when the index exists and holds exactly the canonical rows' current values.
    /// Invalid canonical embeddings do not make the index inconsistent (they cannot be
    /// indexed); they are reported in ``invalid``.
    public var isConsistent: Bool {
        exists && missing.isEmpty && stale.isEmpty && extra.isEmpty
    }
}

extension VectorIndexReport: CustomStringConvertible {
    /// One line: `photos_vec: 120 canonical, 119 indexed, 1 missing, 0 stale, 0 extra, 0 invalid`.
    public var description: String {
        guard exists else { return "\(index): index table missing (\(canonicalRows) canonical rows)" }
        func keys(_ values: [DatabaseValue]) -> String {
            guard !values.isEmpty else { return "" }
            let shown = values.prefix(5).map { "\($0)" }.joined(separator: ", ")
            return " [" + shown + (values.count > 5 ? ", …" : "") + "]"
        }
        return "\(index): \(canonicalRows) canonical, \(indexedRows) indexed, "
            + "\(missing.count) missing\(keys(missing)), \(stale.count) stale\(keys(stale)), "
            + "\(extra.count) extra\(keys(extra)), \(invalid.count) invalid\(keys(invalid))"
            + (isConsistent ? " — consistent" : " — out of step")
    }
}
