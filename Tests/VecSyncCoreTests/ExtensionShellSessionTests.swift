import Foundation
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
        #expect(
            output.stdout == "[1,2.5,-0.03]\n1.0\n",
            "SQL:\n\(Self.session)expected stdout: \"[1,2.5,-0.03]\\n1.0\\n\"\ngot: \(output.stdout.debugDescription)")
        #expect(output.stderr == "", "stderr: \(output.stderr)")
        #expect(output.status == 0)
    }

    @Test("The extension make builds needs no Swift runtime: only libc, libm and the BLAS")
    func extensionNeedsNoSwiftRuntime() throws {
        // The file `make extension` writes, whatever VECSYNC_EXTENSION names (make test points
        // it at the sanitized build); missing, this fails and says how to build it.
        let built = try Shell.builtExtensionPath()
        let library = try Data(contentsOf: URL(fileURLWithPath: built))
        // The entry point the shell's `.load` looks up is in the dynamic string table: this is
        // the extension, not an empty or foreign file that would pass the checks below.
        #expect(library.range(of: Data("sqlite3_vecsync_init".utf8)) != nil, "\(built) has no sqlite3_vecsync_init")
        // A NEEDED entry or run path would put these names in the dynamic string table.
        for name in ["libswiftCore", "swift_addNewDSOImage", "/usr/lib/swift"] {
            #expect(library.range(of: Data(name.utf8)) == nil, "the extension refers to \(name)")
        }
    }

    @Test("The same session in-process returns the same two values")
    func sessionReturnsTheSameValuesInProcess() {
        SQLCase("the documented session", Self.session, rows: ["[1,2.5,-0.03]", "1.0"])
            .verify(.inProcess)
    }

    @Test(
        "A failing statement does not stop the next one, in either path",
        arguments: SQLPath.allCases)
    func errorsDoNotStopTheScript(path: SQLPath) throws {
        let run = try path.run(
            """
            SELECT vector32('[1,,2]');
            SELECT vector_extract('[7]');
            """)
        #expect(run.rows == ["[7]"], "\(run)")
        #expect(run.errors.count == 1, "\(run)")
    }
}
