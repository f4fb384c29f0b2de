import Foundation
import Testing
import VecSync
import VecSyncTestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// `vecsync-cli sync --events` and `vecsync-cli status`, and a sync process killed while it
/// merges, run as a user runs them.
@Suite("Command line progress")
struct CommandLineProgressTests {
    /// A database file with `rows` tracked photos (64-d embeddings) of `site`.
    static func database(_ path: String, site: String, rows: Int) throws {
        let queue = try DatabaseQueue(path: path)
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE photos (id TEXT PRIMARY KEY, title TEXT, embedding F32_BLOB(64))")
            for row in 0..<rows {
                try db.execute(
                    sql: "INSERT INTO photos VALUES (?, ?, ?)",
                    arguments: [
                        "\(site)-\(row)", "photo \(row)",
                        Vector((0..<64).map { Float(row + $0) / 64 }).blob,
                    ])
            }
        }
        let tracked = try CommandLineTests.run(["track", "--db", path, "--table", "photos", "--site", site])
        #expect(tracked.status == 0, "\(tracked.output)")
    }

    /// In `directory`: a shared folder, `a.db` holding `rows` tracked photos of site-a and
    /// already pushed to the folder, and `b.db`, tracked and empty, of site-b.
    static func pushedPair(rows: Int, in directory: URL) throws -> (folder: String, a: String, b: String) {
        let folder = directory.appendingPathComponent("shared").path
        let a = directory.appendingPathComponent("a.db").path
        let b = directory.appendingPathComponent("b.db").path
        try database(a, site: "site-a", rows: rows)
        try database(b, site: "site-b", rows: 0)
        #expect(try CommandLineTests.run(["sync", "--db", a, "--folder", folder]).status == 0)
        return (folder, a, b)
    }

    static func count(_ path: String) throws -> Int {
        try DatabaseQueue(path: path).read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM photos") ?? -1 }
    }

    @Test("sync --events prints phases, commits and the end; status shows the last sync and the peer's cursor")
    func eventsAndStatusFromTheCLI() throws {
        let directory = try temporaryDirectory("cli-progress")
        defer { try? FileManager.default.removeItem(at: directory) }
        let (folder, a, b) = try Self.pushedPair(rows: 900, in: directory)
        let synced = try CommandLineTests.run(["sync", "--db", b, "--folder", folder, "--events"])
        #expect(synced.status == 0, "\(synced.output)")
        let lines = synced.output.split(separator: "\n").map(String.init)
        #expect(lines.prefix(3) == ["phase reconciling", "phase pushing", "phase pulling"], "\(lines)")
        let merged = lines.filter { $0.hasPrefix("merged ") }
        // 900 rows in files of 400: three transactions of at most 400 rows.
        #expect(merged.count == 3, "\(lines)")
        #expect(merged.last?.hasPrefix("merged 3 batches, 900 rows, ") == true, "\(lines)")
        #expect(lines.contains("finished"))
        #expect(
            lines.contains {
                $0.hasPrefix("site-b: pushed 0 rows in 0 files; pulled 3 files from 1 sites: 900 applied")
            })

        let status = try CommandLineTests.run(["status", "--db", b])
        #expect(status.status == 0, "\(status.output)")
        #expect(status.output.contains("site-b: last sync "), "\(status.output)")
        #expect(status.output.contains("pending local changes: 0 rows"), "\(status.output)")
        let sequence = try DatabaseQueue(path: a).read { db in
            try Int64.fetchOne(db, sql: "SELECT seq FROM vecsync_replica") ?? -1
        }
        #expect(status.output.contains("peer site-a: merged through \(sequence)"), "\(status.output)")

        let json = try CommandLineTests.run(["status", "--db", a, "--json"])
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [String: Any], "\(json.output)")
        #expect(object["site"] as? String == "site-a")
        #expect(object["pendingLocalChanges"] as? Int == 0)
        #expect((object["destinations"] as? [[String: Any]])?.first?["publishedThrough"] as? Int64 == sequence)
    }

    @Test("a vecsync-cli sync killed while it merges keeps every commit it reported, and the next one finishes")
    func killedSyncProcessResumes() throws {
        guard let executable = CommandLineTests.executable else {
            Issue.record("vecsync-cli not found beside the test bundle")
            return
        }
        let directory = try temporaryDirectory("cli-kill")
        defer { try? FileManager.default.removeItem(at: directory) }
        let (folder, _, b) = try Self.pushedPair(rows: 6000, in: directory)

        let process = Process()
        process.executableURL = executable
        process.arguments = ["sync", "--db", b, "--folder", folder, "--events"]
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        // Kill it (SIGKILL: no clean-up) as soon as it reports its first commit.
        var text = ""
        var reported = 0
        while reported == 0 {
            let data = errors.fileHandleForReading.availableData
            if data.isEmpty { break }
            text += String(decoding: data, as: UTF8.self)
            for line in text.split(separator: "\n") where line.hasPrefix("merged ") {
                reported = Int(line.split(separator: " ")[3]) ?? 0
            }
        }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        #expect(reported > 0, "\(text)")
        let kept = try Self.count(b)
        #expect(kept >= reported, "\(text)")
        #expect(kept % 400 == 0 || kept == 6000, "whole transactions only: \(kept)")

        let resumed = try CommandLineTests.run(["sync", "--db", b, "--folder", folder])
        #expect(resumed.status == 0, "\(resumed.output)")
        #expect(resumed.output.contains(": \(6000 - kept) applied"), "\(resumed.output)")
        #expect(try Self.count(b) == 6000)
    }
}
