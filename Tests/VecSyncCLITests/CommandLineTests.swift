import Foundation
import Testing
import VecSync
import VecSyncTestSupport

/// The shell path: `vecsync-cli track` and `vecsync-cli sync` with three database files and
/// one folder, run as a user runs them.
@Suite("Command line")
struct CommandLineTests {
    /// The built `vecsync-cli`, beside the test bundle.
    static var executable: URL? {
        var directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = directory.appendingPathComponent("vecsync-cli")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            directory = directory.deletingLastPathComponent()
        }
        return nil
    }

    static func run(_ arguments: [String]) throws -> (status: Int32, output: String) {
        guard let executable else {
            throw VecSyncError.io(
                path: "vecsync-cli", reason: "not found beside the test bundle; build it first (swift build)")
        }
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    @Test("three database files syncing through one folder with vecsync-cli converge")
    func threeDatabasesConvergeThroughTheCLI() throws {
        let directory = try temporaryDirectory("cli")
        let folder = directory.appendingPathComponent("shared")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let paths = ["A", "B", "C"].map { directory.appendingPathComponent("\($0).db").path }
        for (index, path) in paths.enumerated() {
            let queue = try DatabaseQueue(path: path)
            try queue.write { db in
                try db.execute(sql: "CREATE TABLE photos (id TEXT PRIMARY KEY, title TEXT, embedding F32_BLOB(3))")
                try db.execute(
                    sql: "INSERT INTO photos VALUES (?, ?, ?)",
                    arguments: ["photo-\(index)", "from \(index)", Data([UInt8](repeating: UInt8(index), count: 12))])
            }
        }
        for (index, path) in paths.enumerated() {
            let result = try Self.run(["track", "--db", path, "--table", "photos", "--site", "site-\(index)"])
            #expect(result.status == 0, "\(result.output)")
            #expect(result.output.contains("tracking photos"))
        }
        // After tracking, a write from any client is captured.
        let queue = try DatabaseQueue(path: paths[1])
        try queue.write { db in try db.execute(sql: "UPDATE photos SET title = 'edited' WHERE id = 'photo-1'") }

        var lines: [String] = []
        for path in paths + paths {
            let result = try Self.run(["sync", "--db", path, "--folder", folder.path])
            #expect(result.status == 0, "\(result.output)")
            lines.append(result.output)
        }
        #expect(lines[0].hasPrefix("site-0: pushed 1 rows in 1 files; pulled 0 files"), "\(lines[0])")
        var snapshots: [[String]] = []
        for path in paths {
            let queue = try DatabaseQueue(path: path)
            snapshots.append(
                try queue.read { db in
                    try Row.fetchAll(db, sql: "SELECT id, title, hex(embedding) FROM photos ORDER BY id").map {
                        "\($0)"
                    }
                })
        }
        #expect(snapshots[0].count == 3)
        #expect(snapshots[0].contains { $0.contains("edited") })
        #expect(snapshots[1] == snapshots[0])
        #expect(snapshots[2] == snapshots[0])

        let untrackable = try Self.run(["track", "--db", paths[0], "--table", "sqlite_master"])
        #expect(untrackable.status != 0)
        let changes = try Self.run(["changes", "--db", paths[0], "--limit", "1"])
        #expect(changes.status == 0 && changes.output.contains("\"origin\" : \"site-0\""), "\(changes.output)")
    }

    @Test("track --authority makes one site's concurrent writes win, on every replica")
    func authorityFromTheCLI() throws {
        let directory = try temporaryDirectory("cli")
        let folder = directory.appendingPathComponent("shared").path
        defer { try? FileManager.default.removeItem(at: directory) }
        let mac = directory.appendingPathComponent("mac.db").path
        let phone = directory.appendingPathComponent("phone.db").path
        for (path, site) in [(mac, "mac"), (phone, "phone")] {
            try DatabaseQueue(path: path).write { db in
                try db.execute(sql: "CREATE TABLE files (path TEXT PRIMARY KEY, title TEXT)")
            }
            let result = try Self.run(["track", "--db", path, "--table", "files", "--site", site, "--authority", "mac"])
            #expect(
                result.status == 0 && result.output.contains("site 'mac' is authoritative for files"),
                "\(result.output)")
        }
        try DatabaseQueue(path: mac).write { db in try db.execute(sql: "INSERT INTO files VALUES ('/a', 'scanned')") }
        for path in [mac, phone] { #expect(try Self.run(["sync", "--db", path, "--folder", folder]).status == 0) }
        // Concurrent edits, the phone's last by the clock: the mac's stands everywhere.
        try DatabaseQueue(path: mac).write { db in try db.execute(sql: "UPDATE files SET title = 'rescanned'") }
        Thread.sleep(forTimeInterval: 0.01)
        try DatabaseQueue(path: phone).write { db in try db.execute(sql: "UPDATE files SET title = 'phone edit'") }
        for path in [mac, phone, mac] { #expect(try Self.run(["sync", "--db", path, "--folder", folder]).status == 0) }
        for path in [mac, phone] {
            #expect(
                try DatabaseQueue(path: path).read { db in try String.fetchOne(db, sql: "SELECT title FROM files") }
                    == "rescanned")
        }
        let refused = try Self.run(["track", "--db", mac, "--authority", "mac"])
        #expect(refused.status != 0 && refused.output.contains("--authority needs the --table"), "\(refused.output)")
    }

    @Test("vecsync-cli sync fails with a non-zero status when the database is locked")
    func lockedDatabaseFailsTheSync() throws {
        let directory = try temporaryDirectory("cli-locked")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("A.db").path
        let folder = directory.appendingPathComponent("shared").path
        try DatabaseQueue(path: path).write { db in
            try db.execute(sql: "CREATE TABLE photos (id TEXT PRIMARY KEY, title TEXT)")
        }
        #expect(try Self.run(["track", "--db", path, "--table", "photos", "--site", "a"]).status == 0)
        // Another connection is inside a write transaction while the command runs.
        let holder = try DatabaseQueue(path: path)
        let result = try holder.write { db in
            try db.execute(sql: "INSERT INTO photos VALUES ('p1', 'held')")
            return try Self.run(["sync", "--db", path, "--folder", folder])
        }
        #expect(result.status != 0, "\(result.output)")
        #expect(result.output.contains("locked"), "\(result.output)")
        #expect(!result.output.contains("files skipped"), "\(result.output)")
    }
}
