import Foundation

/// One vec0 table as pip `sqlite-vec` 0.1.9 stores it in one chunk of 8 slots, as plain SQL
/// that rebuilds its shadow tables with the rows sqlite-vec wrote: `T_chunks` (the validity
/// bits and each slot's rowid), `T_info`, the metadata chunks, `T_rowids` (each row's slot)
/// and one `T_vector_chunksNN` per vector column. ``declaration`` is the `sqlite_schema` row
/// that makes it a vec0 table again, after `pragma writable_schema = on`.
struct SqliteVecTable: Sendable {
    /// The table's name.
    var name: String
    /// Its vec0 arguments as declared: `e float[2], chunk_size=8`.
    var columns: String
    /// The rowid of each slot of the chunk, in order; nil where a deleted row's slot was
    /// zeroed.
    var slots: [Int64?]
    /// The text primary key of each row, in slot order, for a table declared with one.
    var textKeys: [String]? = nil
    /// Each vector column's chunk, in hex.
    var vectorChunks: [String]
    /// Each metadata column's chunk, in hex.
    var metadataChunks: [String] = []
    /// The rows of `T_metadatatext00` (texts longer than a chunk keeps), when the table has
    /// text metadata.
    var metadataTexts: [(rowid: Int64, text: String)]? = nil
    /// Whether `T_info` also holds CREATE_VERSION_MAJOR, _MINOR and _PATCH.
    var versionParts = false

    /// A file of `tables`: their shadow tables, then their declarations.
    static func file(_ tables: [SqliteVecTable]) -> String {
        tables.map(\.shadowTables).joined() + "pragma writable_schema = on;\n"
            + tables.map { $0.declaration + "\n" }.joined()
    }

    /// The shadow tables and their rows, one statement a line.
    var shadowTables: String {
        let rowids = slots.map { slot in (0..<8).map { String(format: "%02x", ((slot ?? 0) >> ($0 * 8)) & 0xff) }.joined() }
        let validity = slots.enumerated().reduce(0) { bits, slot in slot.element == nil ? bits : bits | 1 << slot.offset }
        let rows = slots.enumerated().compactMap { slot in slot.element.map { (rowid: $0, offset: slot.offset) } }
        var lines = [
            "CREATE TABLE \"\(name)_chunks\"(chunk_id INTEGER PRIMARY KEY AUTOINCREMENT,size INTEGER NOT NULL,validity BLOB NOT NULL,rowids BLOB NOT NULL);",
            "insert into \"\(name)_chunks\"(chunk_id, size, validity, rowids) values (1, 8, X'\(String(format: "%02x", validity))', X'\((rowids + Array(repeating: String(repeating: "0", count: 16), count: 8 - slots.count)).joined())');",
            "CREATE TABLE \"\(name)_info\" (key text primary key, value any);",
            "insert into \"\(name)_info\"(key, value) values ('CREATE_VERSION', 'v0.1.9');",
        ]
        if versionParts {
            lines += zip(["MAJOR", "MINOR", "PATCH"], [0, 1, 9]).map { part, value in
                "insert into \"\(name)_info\"(key, value) values ('CREATE_VERSION_\(part)', \(value));"
            }
        }
        for (column, chunk) in metadataChunks.enumerated() {
            let table = "\"\(name)_metadatachunks\(String(format: "%02d", column))\""
            lines += [
                "CREATE TABLE \(table)(rowid PRIMARY KEY, data BLOB NOT NULL);",
                "insert into \(table)(rowid, data) values (1, X'\(chunk)');",
            ]
        }
        if let metadataTexts {
            lines.append("CREATE TABLE \"\(name)_metadatatext00\"(rowid PRIMARY KEY, data TEXT);")
            lines += metadataTexts.map { "insert into \"\(name)_metadatatext00\"(rowid, data) values (\($0.rowid), '\($0.text)');" }
        }
        let key = textKeys == nil ? "id" : "id TEXT UNIQUE NOT NULL"
        lines.append(
            "CREATE TABLE \"\(name)_rowids\"(rowid INTEGER PRIMARY KEY AUTOINCREMENT,\(key),chunk_id INTEGER,chunk_offset INTEGER);")
        lines += rows.enumerated().map { index, row in
            let id = textKeys.map { "'\($0[index])'" } ?? "NULL"
            return "insert into \"\(name)_rowids\"(rowid, id, chunk_id, chunk_offset) values (\(row.rowid), \(id), 1, \(row.offset));"
        }
        for (column, chunk) in vectorChunks.enumerated() {
            let table = "\"\(name)_vector_chunks\(String(format: "%02d", column))\""
            lines += [
                "CREATE TABLE \(table)(rowid PRIMARY KEY,vectors BLOB NOT NULL);",
                "insert into \(table)(rowid, vectors) values (1, X'\(chunk)');",
            ]
        }
        return lines.map { $0 + "\n" }.joined()
    }

    /// The `sqlite_schema` row of the table.
    var declaration: String {
        "insert into sqlite_schema values ('table', '\(name)', '\(name)', 0, 'CREATE VIRTUAL TABLE \(name) using vec0(\(columns))');"
    }
}
