import GRDB

/// A condition on a metadata column of a `vec0` table, applied during the KNN scan so that
/// a search still returns `k` rows whenever `k` rows match.
///
/// ```swift
/// try db.vec0Search(table: "photos_vec", keyColumn: "photo_id", near: query, k: 10,
///                   where: [.equal("album", "Japan"), .greater("taken_at", 1_700_000_000)],
///                   as: String.self)
/// ```
///
/// The column name is quoted and the value bound: neither is spliced into SQL text.
public struct VectorFilter: Sendable, Hashable {
    /// A comparison operator supported on vec0 metadata columns.
    public enum Operator: String, Sendable, Hashable, CaseIterable {
        /// `=`
        case equal = "="
        /// `!=`
        case notEqual = "!="
        /// `<`
        case less = "<"
        /// `<=`
        case lessOrEqual = "<="
        /// `>`
        case greater = ">"
        /// `>=`
        case greaterOrEqual = ">="
    }

    /// The metadata column compared.
    public var column: String
    /// The comparison.
    public var op: Operator
    /// The value compared with, bound as a statement argument.
    public var value: DatabaseValue

    /// Creates a condition `column op value`.
    public init(_ column: String, _ op: Operator, _ value: some DatabaseValueConvertible) {
        self.column = column
        self.op = op
        self.value = value.databaseValue
    }

    /// `column = value`
    public static func equal(_ column: String, _ value: some DatabaseValueConvertible) -> VectorFilter {
        VectorFilter(column, .equal, value)
    }

    /// `column != value`
    public static func notEqual(_ column: String, _ value: some DatabaseValueConvertible) -> VectorFilter {
        VectorFilter(column, .notEqual, value)
    }

    /// `column < value`
    public static func less(_ column: String, _ value: some DatabaseValueConvertible) -> VectorFilter {
        VectorFilter(column, .less, value)
    }

    /// `column <= value`
    public static func lessOrEqual(_ column: String, _ value: some DatabaseValueConvertible) -> VectorFilter {
        VectorFilter(column, .lessOrEqual, value)
    }

    /// `column > value`
    public static func greater(_ column: String, _ value: some DatabaseValueConvertible) -> VectorFilter {
        VectorFilter(column, .greater, value)
    }

    /// `column >= value`
    public static func greaterOrEqual(_ column: String, _ value: some DatabaseValueConvertible) -> VectorFilter {
        VectorFilter(column, .greaterOrEqual, value)
    }

    /// The SQL condition with a `?` placeholder for the value.
    var sql: String { "\(column.quotedSQLIdentifier) \(op.rawValue) ?" }
}
