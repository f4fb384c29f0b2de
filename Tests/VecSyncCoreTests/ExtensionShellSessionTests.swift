import Testing

/// The shell session the README and issue promise, character for character.
@Suite("The documented sqlite3 session")
struct ExtensionShellSessionTests {
    static let session = """
        select vector_extract(vector32('[1, 2.5, -3e-2]'));
        select vector_distance_cos(vector32('[1,0]'), vector32('[0,1]'));

        """

    @Test("The shell prints exactly [1,2.5,-0.03] and 1.0, and nothing on stderr")
    func shellSessionPrintsExactlyWhatIsDocumented() throws {
        let output = try Shell.run(Self.session)
        #expect(output.stdout == "[1,2.5,-0.03]\n1.0\n",
                "SQL:\n\(Self.session)expected stdout: \"[1,2.5,-0.03]\\n1.0\\n\"\ngot: \(output.stdout.debugDescription)")
        #expect(output.stderr == "", "stderr: \(output.stderr)")
        #expect(output.status == 0)
    }

    @Test("The same session in-process returns the same two values")
    func sessionReturnsTheSameValuesInProcess() {
        SQLCase("the documented session", Self.session, rows: ["[1,2.5,-0.03]", "1.0"])
            .verify(.inProcess)
    }

    @Test("A failing statement does not stop the next one, in either path",
          arguments: SQLPath.allCases)
    func errorsDoNotStopTheScript(path: SQLPath) throws {
        let run = try path.run("""
            SELECT vector32('[1,,2]');
            SELECT vector_extract('[7]');
            """)
        #expect(run.rows == ["[7]"], "\(run)")
        #expect(run.errors.count == 1, "\(run)")
    }
}
