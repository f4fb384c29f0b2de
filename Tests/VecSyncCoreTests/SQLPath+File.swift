import Testing
import VecSyncTestSupport

extension SQLPath {
    /// Runs `setUp` on a new database file (what it prints is not checked: a case checks
    /// it), then verifies `cases` on that file one after another, each on a new connection —
    /// in the shell, a new `sqlite3` process — as a case marked ``SQLCase/readingOnly`` on a
    /// read-only one; the file is removed afterwards.
    ///
    /// ```swift
    /// try path.verify(onFileAfter: table + "update t_info set value = 1 where key = 'format';", [
    ///     SQLCase("the next connection sees the damage", knn, error: ["storage is damaged", "'format'"])
    /// ])
    /// ```
    func verify(
        onFileAfter setUp: String, _ cases: [SQLCase], sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        try withTemporaryFile("sql-\(rawValue.filter(\.isLetter))") { file in
            if !setUp.isEmpty { _ = try run(setUp, databasePath: file) }
            for sqlCase in cases {
                sqlCase.verify(self, databasePath: file, sourceLocation: sourceLocation)
            }
        }
    }
}
