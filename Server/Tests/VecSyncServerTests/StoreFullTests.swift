import Foundation
import ServerTestSupport
import Testing
import VecSyncReplication
import VecSyncServer

/// A SQLite store on a file system that fills up: a push that no longer fits is answered 507
/// `storage-full` with one error line in the log, nothing of it stored, and the server goes
/// on serving reads. The file system is a 2 MiB tmpfs, so the suite runs where it may mount
/// one (as root on Linux, as `make test` runs in CI); elsewhere it says it is skipped.
@Suite("A full disk", .serialized, .enabled(if: TinyFileSystem.canMount, TinyFileSystem.skipReason))
struct StoreFullTests {
    @Test func pushOnAFullDiskIs507AndLogged() async throws {
        let tiny = try TinyFileSystem(megabytes: 2)
        defer { tiny.remove() }
        let store = try SQLiteServerStore(directory: tiny.directory)
        try await store.prepare()
        let log = CollectedLog()
        let server = try await RunningServer.start(
            store, limits: SyncServer.Limits(requestsPerSecond: 0), logger: log.logger())
        let (space, tokens) = try await makeSpace(store, "full")
        var random = SeededRandom(defaultSeed: 0x5E4F_0023)
        let seed = random.seed
        let device = try PhotoDevice("filler", options: Replica.Options(maximumBatchRows: 40))
        try device.addPhotos(800, prefix: "f", random: &random)
        var batches: [Data] = []
        try device.replica.forEachChangeSet(since: 0) { batches.append($0.serialized()) }
        let base = server.url.appendingPathComponent("v1/spaces/\(space)")
        let registration = try JSONEncoder().encode(["site": "filler", "name": "Filler", "platform": "Linux"])
        #expect(
            try await raw(
                "POST", base.appendingPathComponent("devices"), token: tokens[0],
                headers: ["Content-Type": "application/json"], body: registration
            ).status == 200)
        var codes: [Int] = []
        for body in batches {
            let answer = try await raw(
                "POST", base.appendingPathComponent("changesets"), token: tokens[0],
                headers: ["X-VecSync-SHA256": sha256Hex(body), "Content-Type": "application/vnd.vecsync.changeset"],
                body: body)
            codes.append(answer.status)
            if answer.status != 201 {
                #expect(answer.status == 507 && answer.errorCode == "storage-full", "seed \(seed): \(answer.json ?? [:])")
                break
            }
        }
        #expect(codes.last == 507, "seed \(seed): the disk never filled: \(codes.count) pushes of \(batches.count)")
        #expect(!codes.contains(500), "seed \(seed): \(codes)")
        let errors = log.lines.filter { $0.hasPrefix("error ") }
        #expect(errors.count == 1 && errors.first?.contains("storage-full") == true, "\(errors)")
        let status = try await raw("GET", base.appendingPathComponent("status"), token: tokens[0])
        #expect(status.status == 200, "reads go on: \(status.status)")
        #expect(status.json?["lastSeq"] as? Int == codes.count - 1, "\(status.json ?? [:])")
        await server.stop()
        await store.close()
    }
}
