import Foundation
import GRDB
import ServerFixtures
import ServerTestSupport
import Testing
import VecSyncReplication

@testable import VecSyncServer

/// A store on a file system that fills up, on each back end: a push that no longer fits is
/// answered 507 `storage-full` with one error line in the log, nothing of it stored, and the
/// server goes on serving reads, pulls and registrations of known devices. Once space
/// returns, pushes are stored again. The file system is a small tmpfs, so the suite runs where it
/// may mount one (as root on Linux, as `make test` runs in CI); elsewhere it says it is skipped.
@Suite("A full disk", .serialized, .enabled(if: TinyFileSystem.canMount, TinyFileSystem.skipReason))
struct StoreFullTests {
    @Test func pushOnAFullDiskIs507AndLogged() async throws {
        let tiny = try TinyFileSystem(megabytes: 2)
        defer { tiny.remove() }
        let ballast = try tiny.ballast(kilobytes: 512)
        let store = try SQLiteServerStore(directory: tiny.directory)
        try await store.prepare()
        try await Self.fillUntilRefused(store, "SQLite", tiny: tiny, ballast: ballast)
        await store.close()
    }

    /// The same on PostgreSQL: a database whose tablespace is a 3 MiB tmpfs (PostgreSQL's
    /// `disk_full`, SQLSTATE 53100, when a table cannot grow).
    @Test(.enabled(if: BackEnd.postgresURL != nil, BackEnd.postgresSkipReason))
    func pushOnAFullPostgresDiskIs507AndLogged() async throws {
        let url = try #require(BackEnd.postgresURL)
        let tiny = try TinyFileSystem(megabytes: 3)
        defer { tiny.remove() }
        // The tablespace's folder must belong to the user PostgreSQL runs as.
        let dataDirectory = try PostgresTools.run("psql", ["-tA", url, "-c", "SHOW data_directory"])
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let owner = try FileManager.default.attributesOfItem(atPath: dataDirectory)[.ownerAccountID]
        try FileManager.default.setAttributes([.ownerAccountID: owner as Any], ofItemAtPath: tiny.directory.path)
        let ballast = try tiny.ballast(kilobytes: 512)
        let name = "vecsync_full_\(UUID().uuidString.prefix(8).lowercased())"
        try PostgresTools.run("psql", [url, "-c", "CREATE TABLESPACE \(name) LOCATION '\(tiny.directory.path)'"])
        try PostgresTools.run("psql", [url, "-c", "CREATE DATABASE \(name) TABLESPACE \(name)"])
        let store = try PostgresServerStore(url: try PostgresTools.url(url, database: name))
        do {
            try await store.prepare()
            try await Self.fillUntilRefused(store, "PostgreSQL", tiny: tiny, ballast: ballast)
        } catch {
            Issue.record("PostgreSQL: \(error)")
        }
        await store.close()
        try PostgresTools.run("psql", [url, "-c", "DROP DATABASE \(name) WITH (FORCE)"])
        try PostgresTools.run("psql", [url, "-c", "DROP TABLESPACE \(name)"])
    }

    /// Pushes change sets of 40 photos (768-d embeddings) through a server over `store` until
    /// one is refused: it must be 507 `storage-full`, the only error line in the log, with
    /// nothing of it stored. Then what is left of `tiny` is filled too, and reads go on:
    /// status, a pull with its site, the known device registering again (the writes they
    /// make are skipped when they fail for room: ``FullDiskNoticeTests``). Then `ballast` and
    /// the filler are removed and the refused push is stored.
    static func fillUntilRefused(_ store: any ServerStore, _ backEnd: String, tiny: TinyFileSystem, ballast: URL)
        async throws
    {
        let log = CollectedLog()
        let server = try await RunningServer.start(
            store, limits: SyncServer.Limits(requestsPerSecond: 0), logger: log.logger())
        let (space, tokens) = try await makeSpace(store, "full")
        let (batches, seed) = try PhotoDevice.serializedBatches(
            "filler", photos: 800, prefix: "f", batchRows: 40, seed: 0x5E4F_0023)
        let base = server.url.appendingPathComponent("v1/spaces/\(space)")
        #expect(try await rawRegister(base, token: tokens[0], site: "filler", name: "Filler").status == 200)
        var codes: [Int] = []
        for body in batches {
            let answer = try await rawPush(base, token: tokens[0], body: body)
            codes.append(answer.status)
            if answer.status != 201 {
                #expect(
                    answer.status == 507 && answer.errorCode == "storage-full",
                    "\(backEnd), seed \(seed): \(answer.status) \(answer.json ?? [:])")
                break
            }
        }
        #expect(codes.last == 507, "\(backEnd), seed \(seed): \(codes.count) pushes of \(batches.count): \(codes)")
        let errors = log.lines.filter { $0.hasPrefix("error ") }
        #expect(errors.count == 1 && errors.first?.contains("storage-full") == true, "\(backEnd): \(errors)")
        let status = try await raw("GET", base.appendingPathComponent("status"), token: tokens[0])
        #expect(status.status == 200, "\(backEnd): reads go on: \(status.status)")
        #expect(status.json?["lastSeq"] as? Int == codes.count - 1, "\(backEnd): \(status.json ?? [:])")
        let filler = tiny.fillUp()
        var pull = URLComponents(url: base.appendingPathComponent("changesets"), resolvingAgainstBaseURL: false)!
        pull.queryItems = [.init(name: "after", value: "0"), .init(name: "site", value: "filler")]
        let pulled = try await raw("GET", pull.url!, token: tokens[0])
        #expect(pulled.status == 200, "\(backEnd): a pull on a full disk: \(pulled.status) \(pulled.json ?? [:])")
        let again = try await rawRegister(base, token: tokens[0], site: "filler", name: "Filler again")
        #expect(again.status == 200, "\(backEnd): a known device registering: \(again.status) \(again.json ?? [:])")
        let newcomer = try await rawRegister(base, token: tokens[0], site: "newcomer", name: "New")
        // Refused (507) when the write needs room, stored when it finds some (SQLite reuses
        // its WAL's room, PostgreSQL a table page's): never another answer.
        #expect([200, 507].contains(newcomer.status), "\(backEnd): a new device: \(newcomer.status)")
        try FileManager.default.removeItem(at: ballast)
        try FileManager.default.removeItem(at: filler)
        let refused = batches[codes.count - 1]
        let stored = try await rawPush(base, token: tokens[0], body: refused)
        #expect(stored.status == 201, "\(backEnd): once space returns: \(stored.status) \(stored.json ?? [:])")
        await server.stop()
    }
}

/// The writes a full disk may skip: the skip is taken only for a full disk, on either back
/// end's error, and is logged once a minute, not once a request.
@Suite("Writes skipped on a full disk")
struct FullDiskNoticeTests {
    @Test func aFullDiskSkipsTheWriteAndWarnsOnce() async throws {
        let log = CollectedLog()
        let notice = FullDiskNotice()
        let full = DatabaseError(resultCode: .SQLITE_FULL, message: "database or disk is full")
        for _ in 0..<3 {
            let skipped: Int? = try await notice.skippingWhenFull("a pull point", logger: log.logger()) {
                throw full
            }
            #expect(skipped == nil)
        }
        #expect(notice.skipped == 3)
        #expect(log.lines.filter { $0.hasPrefix("warning ") && $0.contains("a pull point skipped") }.count == 1)
        let done = try await notice.skippingWhenFull("a pull point", logger: log.logger()) { 7 }
        #expect(done == 7)
    }

    @Test func otherFailuresAreThrown() async {
        let notice = FullDiskNotice()
        let locked = DatabaseError(resultCode: .SQLITE_BUSY, message: "database is locked")
        await #expect(throws: DatabaseError.self) {
            _ = try await notice.skippingWhenFull("a pull point", logger: CollectedLog().logger()) { () -> Int in
                throw locked
            }
        }
        #expect(notice.skipped == 0)
    }
}
