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

    /// Runs every case of `Tests/SQLCases/<name>` on this path: a setup's cases each alone,
    /// a file setup's cases in order on one new file (``verify(onFileAfter:_:sourceLocation:)``).
    /// A file that cannot be read or parsed is a recorded issue naming the file and line.
    func verify(casesIn name: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let file: SQLCaseFile
        do throws(SQLCaseFileError) {
            file = try SQLCaseFile(named: name)
        } catch {
            SQLCase.unreadable(error).verify(self, sourceLocation: sourceLocation)
            return
        }
        for group in file.groups {
            if group.onFile {
                try verify(onFileAfter: group.setup, group.cases, sourceLocation: sourceLocation)
            } else {
                for sqlCase in group.standaloneCases {
                    sqlCase.verify(self, sourceLocation: sourceLocation)
                }
            }
        }
    }
}
