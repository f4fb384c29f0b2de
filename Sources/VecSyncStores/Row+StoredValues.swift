import Foundation
import VecSyncCore

/// How the stores read their rows' values. A synced row may arrive with a column still NULL
/// (a column added on another device, a row written by an older version): text reads as
/// "", a time as 1970, never a decoding error.
extension Row {
    /// The text of `column`, "" when it is NULL.
    func text(_ column: String) throws -> String {
        try decode(String?.self, forColumn: column) ?? ""
    }

    /// The time of `column`, stored as integer milliseconds since 1970; 1970 when NULL.
    func date(_ column: String) throws -> Date {
        Date(millisecondsSince1970: try decode(Int64?.self, forColumn: column) ?? 0)
    }

    /// The time of `column`, stored as integer milliseconds since 1970; nil when NULL.
    func optionalDate(_ column: String) throws -> Date? {
        try decode(Int64?.self, forColumn: column).map(Date.init(millisecondsSince1970:))
    }

    /// The thread parameters of the row's `k0`, `alpha` and `m` columns.
    func parameters() throws -> ParameterSet {
        ParameterSet(
            k0: try decode(forColumn: "k0"), alpha: try decode(forColumn: "alpha"), m: try decode(forColumn: "m"))
    }
}
