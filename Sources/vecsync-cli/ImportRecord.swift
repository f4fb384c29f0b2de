import VecSync

/// One row to import: its key, its vector, and other fields (JSON lines only).
struct ImportRecord {
    var key: DatabaseValue
    var vector: Vector
    var fields: [(String, DatabaseValue)]
}
