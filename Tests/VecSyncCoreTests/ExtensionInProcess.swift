import Foundation
import GRDB
import GRDBSQLite
import VecSyncCore

/// Runs SQL in this process, on a GRDB connection with the extension installed on it.
///
/// This is the extension as a Swift app uses it: the C code compiled into the app and
/// installed on each connection, on the SQLite library GRDB links.
///
/// ```swift
/// let run = try InProcess.run("SELECT vector_extract(vector32('[1,2]'));")
/// // run.rows == ["[1,2]"], run.errors == []
/// ```
///
/// Statements run one after another like the `sqlite3` shell runs a script without
/// `-bail`: a failing statement records its error and the next one still runs. Values are
/// read with `sqlite3_column_text`, so a REAL prints as the shell prints it (`1.0`).
enum InProcess {
    /// Runs `sql` (one or more statements) on a new connection and returns its rows and
    /// errors. Without `databasePath` the database is in memory; with `readOnly` the file
    /// is opened read-only (`SQLITE_OPEN_READONLY`).
    static func run(_ sql: String, databasePath: String? = nil, readOnly: Bool = false) throws -> SQLRun {
        // The extension alone, as the sqlite3 shell has it: no `PRAGMA threads` of
        // Configuration.vecSync(), which the cases about threads set themselves.
        var configuration = Configuration()
        configuration.prepareDatabase { db in try VecSyncExtension.install(on: db) }
        configuration.readonly = readOnly
        let dbQueue: DatabaseQueue
        if let databasePath {
            dbQueue = try DatabaseQueue(path: databasePath, configuration: configuration)
        } else {
            dbQueue = try DatabaseQueue(configuration: configuration)
        }
        return try dbQueue.inDatabase { db in
            guard let connection = db.sqliteConnection else {
                throw InProcessError.connectionClosed
            }
            return execute(sql, on: connection)
        }
    }

    /// Prepares and steps each statement of `sql` on `connection`.
    private static func execute(_ sql: String, on connection: OpaquePointer) -> SQLRun {
        var result = SQLRun(rows: [], errors: [])
        sql.withCString { start in
            var rest: UnsafePointer<CChar>? = start
            while let current = rest, current.pointee != 0 {
                var statement: OpaquePointer?
                var next: UnsafePointer<CChar>?
                let rc = sqlite3_prepare_v2(connection, current, -1, &statement, &next)
                if rc != SQLITE_OK {
                    // The shell cannot find where a statement that does not parse ends
                    // either; stop here.
                    result.errors.append(String(cString: sqlite3_errmsg(connection)))
                    sqlite3_finalize(statement)
                    return
                }
                rest = next
                guard let statement else { continue }  // blanks or a comment
                defer { sqlite3_finalize(statement) }
                stepping: while true {
                    switch sqlite3_step(statement) {
                    case SQLITE_ROW:
                        result.rows.append(row(of: statement))
                    case SQLITE_DONE:
                        break stepping
                    default:
                        result.errors.append(String(cString: sqlite3_errmsg(connection)))
                        break stepping
                    }
                }
            }
        }
        return result
    }

    /// The current row as the shell prints it in list mode with `.nullvalue NULL`.
    private static func row(of statement: OpaquePointer) -> String {
        (0..<sqlite3_column_count(statement)).map { column -> String in
            if sqlite3_column_type(statement, column) == SQLITE_NULL { return "NULL" }
            guard let text = sqlite3_column_text(statement, column) else { return "" }
            let count = Int(sqlite3_column_bytes(statement, column))
            return String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self)
        }.joined(separator: "|")
    }
}

/// Why ``InProcess`` could not run SQL at all.
enum InProcessError: Error, CustomStringConvertible {
    /// GRDB handed over a closed connection.
    case connectionClosed

    var description: String {
        switch self {
        case .connectionClosed: "the GRDB connection has no open SQLite handle"
        }
    }
}
