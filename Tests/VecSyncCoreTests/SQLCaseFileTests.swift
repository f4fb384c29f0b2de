import Testing

/// The case-file format of `Tests/SQLCases/`: what a file means, and that a malformed one
/// is an error naming its line rather than a crash or a case that passes.
@Suite("SQL case files")
struct SQLCaseFileTests {
    @Test("Setups, flags, rows, empty rows and errors are read as written")
    func readsEveryKindOfLine() throws {
        let file = try SQLCaseFile(
            name: "example.cases",
            text: """
                -- What the file covers.

                -- case: alone
                select 1;
                -- row: 1

                -- setup
                create table t(a);
                insert into t values (NULL), ('');

                -- case: after the setup
                -- python skips: the reason
                select a from t order by a;
                -- row: NULL
                -- row:
                -- case: an error
                select nope;
                -- error: no such column
                -- error: nope

                -- file setup
                create table f(a);

                -- case: on the file
                -- read-only
                select count(*) from f;
                -- a comment in the SQL stays part of it
                -- row: 0
                -- comment lines after the expectation are ignored
                """)
        #expect(file.groups.count == 3)
        let cases = file.groups[0].standaloneCases + file.groups[1].standaloneCases
        #expect(cases.map(\.title) == ["alone", "after the setup", "an error"])
        #expect(cases[1].sql == "create table t(a);\ninsert into t values (NULL), ('');\nselect a from t order by a;")
        #expect(cases[1].expected.description == #"rows "NULL", """#)
        #expect(cases[2].expected.description == #"an error mentioning "no such column", "nope""#)
        #expect(cases[1].origin == "Tests/SQLCases/example.cases:11")
        let onFile = file.groups[2]
        #expect(onFile.onFile && onFile.setup == "create table f(a);\n")
        #expect(onFile.cases.map(\.readOnly) == [true])
        #expect(onFile.cases[0].sql == "select count(*) from f;\n-- a comment in the SQL stays part of it")
    }

    static let malformed: [(text: String, line: Int, words: String)] = [
        ("select 1;\n-- case: a\nselect 1;\n-- row: 1", 1, "SQL before the first"),
        ("-- case: a\nselect 1;", 1, "does not say what it must print"),
        ("-- case: a\nselect 1;\n-- row: 1\nselect 2;", 4, "SQL after what case “a” must print"),
        ("-- case: a\nselect 1;\n-- row: 1\n-- error: x", 4, "mixes rows"),
        ("-- case: a\nselect 1;\n-- no rows\n-- no rows", 4, "mixes rows"),
        ("-- case: a\n-- row: 1", 2, "has no SQL"),
        ("-- case: a\nselect 1;\n-- Rows: 1", 3, "looks like a case file's line"),
        ("-- case: a\nselect 1;\n-- read-only\n-- row: 1", 3, "belongs right after"),
        ("-- case: a\nselect 1;\n-- row: 1\n-- case: a\nselect 2;\n-- row: 2", 4, "a second case titled"),
        ("-- case: a\nselect 1;\n-- row: 1\n-- setup\ncreate table t(a);", 4, "a setup without a case"),
        ("-- case:   \nselect 1;\n-- row: 1", 1, "needs a title"),
        ("-- only a comment", 0, "no case"),
    ]

    @Test("A malformed file is an error that names its line", arguments: malformed)
    func malformedFileNamesItsLine(sample: (text: String, line: Int, words: String)) {
        do {
            let file = try SQLCaseFile(name: "bad.cases", text: sample.text)
            Issue.record("read as \(file.groups.count) groups:\n\(sample.text)")
        } catch {
            #expect(error.line == sample.line, "\(error)")
            #expect(error.description.contains(sample.words), "\(error)")
            #expect(error.description.hasPrefix("Tests/SQLCases/bad.cases"), "\(error)")
        }
    }

    @Test("A file that cannot be read is one case that fails, naming the file")
    func anUnreadableFileIsAFailingCase() {
        let unreadable: SQLCase
        do throws(SQLCaseFileError) {
            _ = try SQLCaseFile(named: "no-such-file.cases")
            Issue.record("a file that does not exist was read")
            return
        } catch {
            unreadable = .unreadable(error)
        }
        withKnownIssue {
            unreadable.verify(.inProcess)
        } matching: { issue in
            issue.comments.contains { $0.rawValue.contains("no-such-file.cases") }
        }
    }
}
