import Foundation
import Testing

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
    /// `.build/libvecsync.so` (`.dylib` on macOS) in this package. When `make test` named it,
    /// a missing file fails the test, so the shell tests never pass without having run; in a
    /// plain `swift test` of a fresh clone the shell cases skip instead (``skipReason()``).
    static func extensionPath() throws -> String {
        let configured = ProcessInfo.processInfo.environment["VECSYNC_EXTENSION"] ?? ""
        guard configured.isEmpty else { return try existing(configured) }
        if let reason = skipReason() { try skipShellCases(reason) }
        return builtExtension
    }

    /// Why the shell cases cannot run in a plain `swift test` (no `$VECSYNC_EXTENSION`): no
    /// built extension, or a shell that cannot load it (macOS's `/usr/bin/sqlite3`); nil when
    /// they can, and always nil under `make test`, where they must run. Printed once.
    static func skipReason() -> String? {
        guard (ProcessInfo.processInfo.environment["VECSYNC_EXTENSION"] ?? "").isEmpty else { return nil }
        return skipping.value {
            let reason: String?
            if !FileManager.default.fileExists(atPath: builtExtension) {
                reason = "the sqlite3 shell cases are skipped: no loadable extension at \(builtExtension) "
                    + "(`make extension` builds it; `make test` runs them)"
            } else if let refusal = shellRefusal(loading: loadArgument(builtExtension)) {
                reason = "the sqlite3 shell cases are skipped: \(shellBinary) cannot load the extension "
                    + "(\(refusal)); set SQLITE3 to a shell that loads extensions (Homebrew's on macOS)"
            } else {
                reason = nil
            }
            if let reason { FileHandle.standardError.write(Data("note: \(reason)\n".utf8)) }
            return reason
        }
    }

    private static let skipping = Memo<String?>()

    /// What the shell printed when `.load` failed, or nil when it loaded.
    private static func shellRefusal(loading loadPath: String) -> String? {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [shellBinary, "-batch", "-cmd", ".load \(loadPath)", ":memory:", "select 1;"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        guard (try? process.run()) != nil else { return "it does not start" }
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        if process.terminationStatus == 0 && text.hasPrefix("1") { return nil }
        return text.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The file `make extension` writes, `.build/libvecsync.so` (`.dylib` on macOS) in this
    /// package, whatever `$VECSYNC_EXTENSION` names. Throws, or skips, when it is missing, as
    /// ``extensionPath()`` does.
    static func builtExtensionPath() throws -> String {
        if ProcessInfo.processInfo.environment["VECSYNC_EXTENSION"].map({ !$0.isEmpty }) == true {
            return try existing(builtExtension)
        }
        return try extensionPath()
    }

    private static var builtExtension: String {
        #if canImport(Darwin)
        packageRoot.appendingPathComponent(".build/libvecsync.dylib").path
        #else
        packageRoot.appendingPathComponent(".build/libvecsync.so").path
        #endif
    }

    private static func existing(_ path: String) throws -> String {
        guard FileManager.default.fileExists(atPath: path) else {
            throw ShellError.extensionNotBuilt(path: path)
        }
        return path
    }

    /// What `.load` takes for `library`: its path without the suffix, as the README shows
    /// it; SQLite adds the platform's suffix and derives the entry point sqlite3_vecsync_init.
    static func loadArgument(_ library: String) -> String {
        var loadPath = library
        for suffix in [".so", ".dylib"] where loadPath.hasSuffix(suffix) {
            loadPath.removeLast(suffix.count)
        }
        return loadPath
    }

    /// Skips the calling test case (``skipReason()`` printed why, once).
    private static func skipShellCases(_ reason: String) throws -> Never {
        #if compiler(>=6.3)
        try Test.cancel(Comment(rawValue: reason))
        #else
        throw ShellError.extensionNotBuilt(path: builtExtension)
        #endif
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
        let loadPath = loadArgument(try extensionPath())

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

    /// The `sqlite3` binary to run: `$SQLITE3`, else `sqlite3` from PATH. On macOS, whose
    /// `/usr/bin/sqlite3` cannot load extensions, Homebrew's when it is installed.
    static var shellBinary: String {
        let configured = ProcessInfo.processInfo.environment["SQLITE3"] ?? ""
        if !configured.isEmpty { return configured }
        #if canImport(Darwin)
        for brew in ["/opt/homebrew/opt/sqlite/bin/sqlite3", "/usr/local/opt/sqlite/bin/sqlite3"]
        where FileManager.default.isExecutableFile(atPath: brew) {
            return brew
        }
        #endif
        return "sqlite3"
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
            "the loadable extension \(path) does not exist: run `make test`, or `make extension` "
                + "and set VECSYNC_EXTENSION to the built libvecsync.so (.dylib on macOS)"
        case .cannotStart(let binary, let underlying):
            "cannot run the sqlite3 shell `\(binary)` (install Debian's `sqlite3` package, or "
                + "set SQLITE3): \(underlying)"
        case .crashed(let signal, let sql):
            "the sqlite3 shell died of signal \(signal) running:\n\(SQLRun.abbreviated(sql, limit: 2000))"
        }
    }
}

/// A value computed once per process, on first use.
final class Memo<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: Value?
    private var computed = false

    func value(_ compute: () -> Value) -> Value {
        lock.lock()
        defer { lock.unlock() }
        if !computed {
            stored = compute()
            computed = true
        }
        return stored!
    }
}
