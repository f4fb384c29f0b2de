import ArgumentParser
import Foundation
import GRDB
import Testing
import VecSyncServer
import VecSyncTestSupport

@testable import vecsync_cli

/// `vecsync-cli sync --server … --space … --token …`, run in-process as a person runs it,
/// against a server on loopback.
@Suite("vecsync-cli sync through a server", .serialized)
struct CLISyncTests {
    static func run(_ arguments: [String]) throws {
        var command = try VecSyncCLI.parseAsRoot(arguments)
        try command.run()
    }

    @Test func twoDatabasesSyncThroughTheServer() async throws {
        let folder = try temporaryDirectory("cli-server")
        defer { try? FileManager.default.removeItem(at: folder) }
        let test = try await TestStore.make(.sqlite)
        let server = try await RunningServer.start(test.store)
        let (space, tokens) = try await makeSpace(test.store, "cli", tokens: 2)
        let files = ["A.db", "B.db"].map { folder.appendingPathComponent($0).path }
        for (index, file) in files.enumerated() {
            let queue = try DatabaseQueue(path: file)
            try await queue.write { db in
                try db.execute(sql: "CREATE TABLE notes (id TEXT PRIMARY KEY, body TEXT)")
                try db.execute(sql: "INSERT INTO notes VALUES (?, ?)", arguments: ["n\(index)", "written on \(index)"])
            }
            try queue.close()
            try Self.run(["track", "--db", file, "--table", "notes", "--site", "site\(index)"])
        }
        let url = server.url.absoluteString
        for index in [0, 1, 0] {
            let arguments = ["sync", "--db", files[index], "--server", url, "--space", space, "--token", tokens[index]]
            try await blocking { try Self.run(arguments) }
        }
        for file in files {
            let queue = try DatabaseQueue(path: file)
            let rows = try await queue.read { db in
                try String.fetchAll(db, sql: "SELECT id || ':' || body FROM notes ORDER BY id")
            }
            #expect(rows == ["n0:written on 0", "n1:written on 1"], "\(file)")
            try queue.close()
        }
        await server.stop()
        await test.close()
    }

    @Test func serverOptionsAreCheckedBeforeAnythingRuns() {
        for arguments in [
            ["sync", "--db", "x.db"],
            ["sync", "--db", "x.db", "--server", "http://127.0.0.1:1"],
            ["sync", "--db", "x.db", "--server", "http://127.0.0.1:1", "--space", "s"],
            ["sync", "--db", "x.db", "--server", "ftp://host", "--space", "s", "--token", "vst_x"],
            [
                "sync", "--db", "x.db", "--folder", "f", "--server", "http://127.0.0.1:1", "--space", "s", "--token",
                "t",
            ],
        ] {
            #expect(throws: (any Error).self, "\(arguments)") { _ = try VecSyncCLI.parseAsRoot(arguments) }
        }
    }
}
