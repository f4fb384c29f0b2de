import Foundation

extension ChangeSet {
    /// `records` (each with the table it belongs to) laid out with one table list for all:
    /// each record's ``Record/table`` is renumbered into the returned tables, which hold
    /// every table once, in the order the records first name them. What joining records of
    /// several change sets needs, as each numbers the tables it uses on its own.
    package static func withOneTableList(
        _ records: some Sequence<(Table, Record)>
    ) -> (tables: [Table], records: [Record]) {
        var tables: [Table] = []
        var laidOut: [Record] = []
        for (table, record) in records {
            var record = record
            if let index = tables.firstIndex(of: table) {
                record.table = index
            } else {
                record.table = tables.count
                tables.append(table)
            }
            laidOut.append(record)
        }
        return (tables, laidOut)
    }
}
