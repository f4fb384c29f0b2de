/// Quoting of names and literals that reach SQL text: the one place VecSync does it.
///
/// GRDB's `quotedDatabaseIdentifier` wraps a name in double quotes without doubling the
/// quotes inside it, so a table named `a")--` would end the identifier early. Every
/// identifier VecSync writes into SQL goes through ``quotedSQLIdentifier`` instead; values
/// are bound, and the few literals SQL requires (trigger error messages) go through
/// ``quotedSQLString``.
///
/// ```swift
/// "a\"b".quotedSQLIdentifier   // "a""b"
/// "it's".quotedSQLString       // 'it''s'
/// ```
extension String {
    /// This string as an SQL identifier: in double quotes, each `"` doubled.
    package var quotedSQLIdentifier: String {
        "\"" + replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    /// This string as an SQL string literal: in single quotes, each `'` doubled.
    package var quotedSQLString: String {
        "'" + replacingOccurrences(of: "'", with: "''") + "'"
    }
}
