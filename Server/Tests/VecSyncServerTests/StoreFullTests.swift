import Foundation
import ServerFixtures
import ServerTestSupport
import Testing
import VecSyncReplication
import VecSyncServer

/// A store on a file system that fills up, on each back end: a push that no longer fits is
/// answered 507 `storage-full` with one error line in the log, nothing of it stored, and the
/// server goes on serving reads. The file system is a small tmpfs, so the suite runs where it
/// may mount one (as root on Linux, as `make test` runs in CI); elsewhere it says it is skipped.
@Suite("A full disk", .serialized, .enabled(if: TinyFileSystem.canMount, TinyFileSystem.skipReason))
struct StoreFullTests {
    @Test func pushOnAFullDiskIs507AndLogged() async throws {
        let tiny = try TinyFileSystem(megabytes: 2)
        defer { tiny.remove() }
        let store = try SQLiteServerStore(directory: tiny.directory)
        try await store.prepare()
        try await Self.fillUntilRefused(store, "SQLite")
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
        let name = "vecsync_full_\(UUID().uuidString.prefix(8).lowercased())"
        try PostgresTools.run("psql", [url, "-c", "CREATE TABLESPACE \(name) LOCATION '\(tiny.directory.path)'"])
        try PostgresTools.run("psql", [url, "-c", "CREATE DATABASE \(name) TABLESPACE \(name)"])
        let store = try PostgresServerStore(url: try PostgresTools.url(url, database: name))
        do {
            try await store.prepare()
            try await Self.fillUntilRefused(store, "PostgreSQL")
        } catch {
            Issue.record("PostgreSQL: \(error)")
        }
        await store.close()
        try PostgresTools.run("psql", [url, "-c", "DROP DATABASE \(name) WITH (FORCE)"])
        try PostgresTools.run("psql", [url, "-c", "DROP TABLESPACE \(name)"])
    }

    /// Pushes change sets of 40 photos (768-d embeddings) through a server over `store` until
    /// one is refused: it must be 507 `storage-full`, the only error line in the log, with
    /// nothing of it stored, and reads go on.
    static func fillUntilRefused(_ store: any ServerStore, _ backEnd: String) async throws {
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
        await server.stop()
    }
}
