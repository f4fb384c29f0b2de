import Foundation
import GRDB

/// What went wrong in VecSync, with what a person needs to fix it: the expected and actual
/// dimensions, the offending input, or the SQL that failed and SQLite's message.
public enum VecSyncError: Error, Sendable, Hashable {
    /// A vector has the wrong number of elements for its column or index.
    case dimensionMismatch(expected: Int, got: Int)
    /// A vector element is NaN or infinite, which no vector column accepts.
    case nonFiniteElement(index: Int, value: Float)
    /// A blob is not a valid F32 vector (its length is not a multiple of 4).
    case invalidBlob(byteCount: Int, reason: String)
    /// Text is not a vector such as `[1, 2.5, -3e-2]`; carries (an excerpt of) the text.
    case invalidVectorText(String, reason: String)
    /// An argument is out of range, e.g. a search limit of 0.
    case invalidArgument(name: String, value: String, reason: String)
    /// A row that the operation needs does not exist.
    case notFound(kind: String, key: String)
    /// The database schema does not match what the caller asked for.
    case schemaMismatch(table: String, reason: String)
    /// The connection lacks the VecSync extension (or the named part of it).
    case extensionMissing(feature: String, sql: String)
    /// A derived index is not registered, or its definition is unusable.
    case derivedIndex(name: String, reason: String)
    /// SQLite refused a statement: its message, result code and the SQL.
    case sqlite(message: String, resultCode: Int32, sql: String?)

    /// At most 80 characters of `text`, for error messages.
    static func excerpt(_ text: String) -> String {
        text.count <= 80 ? text : String(text.prefix(77)) + "..."
    }

    /// Converts a GRDB error into ``sqlite(message:resultCode:sql:)``, or into
    /// ``extensionMissing(feature:sql:)`` when SQLite reports a missing vector function or
    /// module. Other errors pass through unchanged.
    public static func wrapping(_ error: any Error) -> any Error {
        guard let dbError = error as? DatabaseError else { return error }
        let message = dbError.message ?? "\(dbError.resultCode)"
        let sql = dbError.sql
        for marker in ["no such module: vec0", "no such function: vector", "no such function: libsql_vector_idx",
                       "no such table: vector_top_k", "no such function: vec_", "no such function: vecsync_"]
        where message.contains(marker) {
            let feature = message.components(separatedBy: ": ").last ?? message
            return VecSyncError.extensionMissing(feature: feature, sql: sql ?? "")
        }
        return VecSyncError.sqlite(
            message: message, resultCode: dbError.extendedResultCode.rawValue, sql: sql)
    }

    /// Runs `body`, converting a GRDB error with ``wrapping(_:)``.
    public static func wrap<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch {
            throw wrapping(error)
        }
    }
}

extension VecSyncError: CustomStringConvertible, LocalizedError {
    /// A sentence that says what went wrong and with which input.
    public var description: String {
        switch self {
        case let .dimensionMismatch(expected, got):
            "wrong vector dimension: expected \(expected), got \(got)"
        case let .nonFiniteElement(index, value):
            "vector element \(index) is \(value); vectors must be finite"
        case let .invalidBlob(byteCount, reason):
            "invalid vector blob of \(byteCount) bytes: \(reason)"
        case let .invalidVectorText(text, reason):
            "invalid vector text '\(text)': \(reason)"
        case let .invalidArgument(name, value, reason):
            "invalid \(name) \(value): \(reason)"
        case let .notFound(kind, key):
            "no \(kind) with key '\(key)'"
        case let .schemaMismatch(table, reason):
            "table \(table) does not match: \(reason)"
        case let .extensionMissing(feature, sql):
            "the VecSync extension is not loaded on this connection (\(feature)); "
                + "call VecSyncExtension.register() before opening it, or use VecSyncDatabase. SQL: \(sql)"
        case let .derivedIndex(name, reason):
            "derived index \(name): \(reason)"
        case let .sqlite(message, resultCode, sql):
            "SQLite error \(resultCode): \(message)" + (sql.map { " — SQL: \($0)" } ?? "")
        }
    }

    /// The same text as ``description``.
    public var errorDescription: String? { description }
}
