import Testing

/// How a vec0 table in these tests is keyed.
enum Vec0KeyKind: String, Sendable, CaseIterable, CustomTestStringConvertible {
    /// `id text primary key`
    case text = "text primary key"
    /// `id integer primary key`, with ids that are not in insertion order
    case integer = "integer primary key"
    /// no primary key: the rowid
    case none = "no primary key"

    var testDescription: String { rawValue }

    /// The key column as selected in a query.
    var keyColumn: String { self == .none ? "rowid" : "id" }
}
