import Foundation

/// Runs SQL through the real `sqlite3` shell, with `libvecsync.so` loaded by `.load`.
///
/// This is the extension as a user of the shell meets it:
///
/// ```
/// sqlite3 -batch -cmd ".load <package>/.build/libvecsync" -cmd ".nullvalue NULL" :memory: < script.sql
/// ```
///
/// The script goes in on stdin; stdout and stderr come back separately. There is no
/// `-bail`: like a user's script, a failing statement prints its error and the next one
/// runs. The shell binary is `$SQLITE3` when set, else `sqlite3` on the `PATH`.
///
/// ```swift
/// let output = try Shell.run("SELECT vector_extract(vector32('[1,2]'));")
/// // output.stdout == "[1,2]\n", output.stderr == ""
/// ```
enum Shell {
    /// What one shell session printed.
    struct Output: Sendable {
        /// Everything printed on stdout: the rows.
        var stdout: String
        /// Everything printed on stderr: the errors.
        var stderr: String
        /// The shell's exit status (1 when any statement failed).
        var status: Int32

        /// The output as rows and errors: one row a stdout line, one error a stderr line.
        var run: SQLRun {
            SQLRun(rows: Self.lines(stdout), errors: Self.lines(stderr).filter { !$0.isEmpty })
        }

        private static func lines(_ text: String) -> [String] {
            guard !text.isEmpty else { return [] }
            var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            if lines.last == "" { lines.removeLast() }
            return lines
        }
    }

    /// The built extension: `$VECSYNC_EXTENSION` (set by `make test`), else
    /// `.build/libvecsync.so` in this package. Throws when the file is missing, so
    /// the shell tests fail rather than pass without having run.
    static func extensionPath() throws -> String {
        let configured = ProcessInfo.processInfo.environment["VECSYNC_EXTENSION"] ?? ""
        return try existing(configured.isEmpty ? builtExtension : configured)
    }

    /// The file `make extension` writes, `.build/libvecsync.so` in this package, whatever
    /// `$VECSYNC_EXTENSION` names. Throws when it is missing, as ``extensionPath()`` does.
    static func builtExtensionPath() throws -> String {
        try existing(builtExtension)
    }

    private static var builtExtension: String {
        packageRoot.appendingPathComponent(".build/libvecsync.so").path
    }

    private static func existing(_ path: String) throws -> String {
        guard FileManager.default.fileExists(atPath: path) else {
            throw ShellError.extensionNotBuilt(path: path)
        }
        return path
    }

    /// The package root, three levels above this file (Tests/VecSyncCoreTests/<file>).
    static var packageRoot: URL {
        URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent()
            .deletingLastPathComponent()
            .deletingLastPathComponent()
    }

    /// Runs `sql` in one `sqlite3` session on `databasePath` (in memory by default); with
    /// `readOnly`, the shell opens it with `-readonly`.
    static func run(_ sql: String, databasePath: String = ":memory:", readOnly: Bool = false) throws -> Output {
        let library = try extensionPath()
        // `.load` takes the path without its suffix, as the README shows it; SQLite adds
        // the platform's suffix and derives the entry point sqlite3_vecsync_init.
        var loadPath = library
        for suffix in [".so", ".dylib"] where loadPath.hasSuffix(suffix) {
            loadPath.removeLast(suffix.count)
        }

        let scratch = FileManager.default.temporaryDirectory
            .appendingPathComponent("vecsync-shell-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        // Files, not pipes: a long script or a long answer cannot fill a pipe and deadlock.
        let input = scratch.appendingPathComponent("input.sql")
        let stdoutFile = scratch.appendingPathComponent("stdout")
        let stderrFile = scratch.appendingPathComponent("stderr")
        try Data(sql.utf8).write(to: input)
        _ = FileManager.default.createFile(atPath: stdoutFile.path, contents: nil)
        _ = FileManager.default.createFile(atPath: stderrFile.path, contents: nil)

        let stdin = try FileHandle(forReadingFrom: input)
        let stdout = try FileHandle(forWritingTo: stdoutFile)
        let stderr = try FileHandle(forWritingTo: stderrFile)
        defer {
            try? stdin.close()
            try? stdout.close()
            try? stderr.close()
        }

        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments =
            [shellBinary, "-batch"] + (readOnly ? ["-readonly"] : []) + [
                "-cmd", ".load \(loadPath)",
                "-cmd", ".nullvalue NULL",
                databasePath,
            ]
        // `make test` runs the shell cases once more against a sanitizer build of the
        // extension: the shell then needs the sanitizer runtime preloaded. Nothing else this
        // process preloads reaches the shell: the Apple-SQLite lane's shim stands for the
        // app's SQLite, while the shell stands for one that loads extensions (Homebrew's).
        var environment = ProcessInfo.processInfo.environment
        environment["LD_PRELOAD"] = nil
        if let preload = environment["VECSYNC_SHELL_PRELOAD"], !preload.isEmpty {
            environment["LD_PRELOAD"] = preload
        }
        process.environment = environment
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = stderr
        do {
            try process.run()
        } catch {
            throw ShellError.cannotStart(binary: shellBinary, underlying: String(describing: error))
        }
        process.waitUntilExit()
        if process.terminationReason == .uncaughtSignal {
            throw ShellError.crashed(signal: process.terminationStatus, sql: sql)
        }
        let out = String(decoding: try Data(contentsOf: stdoutFile), as: UTF8.self)
        let err = String(decoding: try Data(contentsOf: stderrFile), as: UTF8.self)
        if process.terminationStatus == 127, err.contains(shellBinary) {
            throw ShellError.cannotStart(binary: shellBinary, underlying: err)
        }
        return Output(stdout: out, stderr: err, status: process.terminationStatus)
    }

    /// The `sqlite3` binary to run.
    static var shellBinary: String {
        let configured = ProcessInfo.processInfo.environment["SQLITE3"] ?? ""
        return configured.isEmpty ? "sqlite3" : configured
    }
}

/// Why ``Shell`` could not run SQL; each case says what to do about it.
enum ShellError: Error, CustomStringConvertible {
    /// The loadable extension has not been built where the tests look for it.
    case extensionNotBuilt(path: String)
    /// The `sqlite3` binary could not be started.
    case cannotStart(binary: String, underlying: String)
    /// The shell died of a signal: the extension crashed it.
    case crashed(signal: Int32, sql: String)

    var description: String {
        switch self {
        case .extensionNotBuilt(let path):
            "the loadable extension \(path) does not exist: run `make test`, or "
                + "`swift build -c release --product vecsync` and set VECSYNC_EXTENSION to the "
                + "built libvecsync.so"
        case .cannotStart(let binary, let underlying):
            "cannot run the sqlite3 shell `\(binary)` (install Debian's `sqlite3` package, or "
                + "set SQLITE3): \(underlying)"
        case .crashed(let signal, let sql):
            "the sqlite3 shell died of signal \(signal) running:\n\(SQLRun.abbreviated(sql, limit: 2000))"
        }
    }
}
