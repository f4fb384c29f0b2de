import Foundation
import GRDB
import ServerTestSupport
import Testing
import VecSyncServer

/// `vecsync-cli sync --server … --space …`, the built command run as a person runs it (the
/// token in `VECSYNC_TOKEN`), against a server on loopback.
@Suite("vecsync-cli sync through a server", .serialized)
struct CLISyncTests {
    /// Runs the root package's `vecsync-cli` (`$VECSYNC_CLI`, which `make test` sets, else
    /// `../.build/debug/vecsync-cli`) and throws with its output when it fails.
    static func run(_ arguments: [String], token: String? = nil) throws {
        var environment = ProcessInfo.processInfo.environment
        environment["VECSYNC_TOKEN"] = token
        try ProgramRun.run(try cliPath(), arguments, environment: environment)
    }

    /// The command's binary; missing, the tests fail instead of passing without having run.
    static func cliPath() throws -> URL {
        let configured = ProcessInfo.processInfo.environment["VECSYNC_CLI"] ?? ""
        let url =
            configured.isEmpty
            ? URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
                "../../../.build/debug/vecsync-cli"
            ).standardized
            : URL(fileURLWithPath: configured)
        guard FileManager.default.isExecutableFile(atPath: url.path) else {
            throw ServerConfigurationError(
                "vecsync-cli not found at \(url.path): run `swift build --product vecsync-cli` in the repository root, or set VECSYNC_CLI"
            )
        }
        return url
    }

    @Test func twoDatabasesSyncThroughTheServer() async throws {
        let folder = try temporaryDirectory("cli-server")
        defer { try? FileManager.default.removeItem(at: folder) }
        try await withServedSpace(.sqlite, "cli", tokens: 2) { test, server, space, tokens, _ in
            let files = ["A.db", "B.db"].map { folder.appendingPathComponent($0).path }
            for (index, file) in files.enumerated() {
                let queue = try DatabaseQueue(path: file)
                try await queue.write { db in
                    try db.execute(sql: "CREATE TABLE notes (id TEXT PRIMARY KEY, body TEXT)")
                    try db.execute(
                        sql: "INSERT INTO notes VALUES (?, ?)", arguments: ["n\(index)", "written on \(index)"])
                }
                try queue.close()
                try Self.run(["track", "--db", file, "--table", "notes", "--site", "site\(index)"])
            }
            let url = server.url.absoluteString
            for index in [0, 1, 0] {
                let arguments = ["sync", "--db", files[index], "--server", url, "--space", space]
                let token = tokens[index]
                try await blocking { try Self.run(arguments, token: token) }
            }
            for file in files {
                let queue = try DatabaseQueue(path: file)
                let rows = try await queue.read { db in
                    try String.fetchAll(db, sql: "SELECT id || ':' || body FROM notes ORDER BY id")
                }
                #expect(rows == ["n0:written on 0", "n1:written on 1"], "\(file)")
                try queue.close()
            }
        }
    }
}
