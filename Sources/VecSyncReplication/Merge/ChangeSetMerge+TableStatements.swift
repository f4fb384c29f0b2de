import Foundation
import GRDB
import VecSyncCore

extension ChangeSetMerge {
    /// The SQL a merge runs against one table, prepared once per merge.
    struct TableStatements {
        let table: TrackedTable
        let selectClock, writeClock, selectRow, upsertRow, deleteRow: Statement
        /// How the change set's columns of this table map onto the local ones (nil: the same).
        let mapping: ColumnMapping?
        /// The value a column the origin does not have takes in a row the merge writes whole:
        /// its DEFAULT (by local column index).
        let lackingValues: [Int: DatabaseValue]

        init(_ db: Database, _ table: TrackedTable, mapping: ColumnMapping? = nil) throws {
            self.table = table
            self.mapping = mapping
            let t = table.name.quotedSQLIdentifier
            let key = table.primaryKey.quotedSQLIdentifier
            var lackingValues: [Int: DatabaseValue] = [:]
            if let mapping, !mapping.lacking.isEmpty {
                let defaults = try Replica.defaultValues(db, of: table)
                for index in mapping.lacking { lackingValues[index] = defaults[index] }
            }
            self.lackingValues = lackingValues
            selectClock = try db.cachedStatement(sql: table.clockTable.selectRowSQL)
            writeClock = try db.cachedStatement(sql: table.clockTable.writeRowSQL)
            selectRow = try db.cachedStatement(
                sql:
                    "SELECT \(([key] + table.columns.map(\.quotedSQLIdentifier)).joined(separator: ", ")) FROM \(t) WHERE \(key) = ?"
            )
            let columns = table.columns.map(\.quotedSQLIdentifier)
            let rowPlaceholders = Array(repeating: "?", count: 1 + columns.count).joined(separator: ", ")
            let conflict =
                columns.isEmpty
                ? "DO NOTHING" : "DO UPDATE SET " + columns.map { "\($0) = excluded.\($0)" }.joined(separator: ", ")
            upsertRow = try db.cachedStatement(
                sql:
                    "INSERT INTO \(t) (\(([key] + columns).joined(separator: ", "))) VALUES (\(rowPlaceholders)) ON CONFLICT(\(key)) \(conflict)"
            )
            deleteRow = try db.cachedStatement(sql: "DELETE FROM \(t) WHERE \(key) = ?")
        }

        /// `UPDATE t SET a = ?, b = ? WHERE key = ?` for the given column indexes.
        func update(_ db: Database, columns indexes: [Int]) throws -> Statement {
            let sets = indexes.map { "\(table.columns[$0].quotedSQLIdentifier) = ?" }.joined(separator: ", ")
            return try db.cachedStatement(
                sql:
                    "UPDATE \(table.name.quotedSQLIdentifier) SET \(sets) WHERE \(table.primaryKey.quotedSQLIdentifier) = ?"
            )
        }
    }
}
