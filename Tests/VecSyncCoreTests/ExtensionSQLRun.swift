/// What an SQL script produced: its rows and its errors, as text, in the order they came.
///
/// Both ways of running the extension report in this one shape, so a case states its
/// expectation once:
///
/// - a row is its columns' text joined with `|`, `NULL` for a null, as the `sqlite3` shell
///   prints a row in list mode with `.nullvalue NULL`;
/// - an error is SQLite's message (the shell adds a prefix such as
///   `Runtime error near line 1:`, so expectations match on substrings).
///
/// A text value that holds a newline prints as several lines in the shell; cases that
/// return such values (like `vecsync_debug()`) test them through `instr` or `replace`.
struct SQLRun: Sendable, Equatable, CustomStringConvertible {
    /// The rows, each its columns' text joined with `|`.
    var rows: [String]
    /// The error messages, one per failed statement.
    var errors: [String]

    var description: String {
        var parts: [String] = []
        parts.append(rows.isEmpty ? "no rows" : "rows " + rows.map(Self.quoted).joined(separator: ", "))
        if !errors.isEmpty {
            parts.append("errors " + errors.map(Self.quoted).joined(separator: ", "))
        }
        return parts.joined(separator: "; ")
    }

    /// A value for a report, shortened when long (a 65,537-element vector is not read).
    static func quoted(_ text: String) -> String {
        "\"" + abbreviated(text) + "\""
    }

    /// `text`, cut in the middle when longer than `limit` characters.
    static func abbreviated(_ text: String, limit: Int = 240) -> String {
        guard text.count > limit else { return text }
        let half = limit / 2
        return String(text.prefix(half)) + " … (\(text.count) characters) … " + String(text.suffix(half))
    }
}
