import Foundation
import GRDB
import Testing
import VecSyncCore
import VecSyncTestSupport

@testable import VecSyncReplication

/// A first sync of many rows merges in bounded transactions, reports what it does as
/// events, keeps what it merged when cut short and resumes from there; a damaged change set
/// file is published again by its origin, so it never cuts that origin off.
@Suite("Progressive sync")
struct ProgressiveSyncTests: FolderSuite {
    let scratch = ScratchFolder("progress")

    /// Thrown by an event handler to cut a sync short, as a kill would.
    struct Killed: Error {}

    static func count(_ replica: Replica, _ sql: String = "SELECT count(*) FROM photos") throws -> Int {
        try replica.writer.read { db in try Int.fetchOne(db, sql: sql) ?? -1 }
    }

    /// The ends of the change set files in `site`'s subfolder, in order.
    static func fileEnds(_ directory: URL, _ site: String) throws -> [Int64] {
        try FileManager.default.contentsOfDirectory(atPath: directory.appendingPathComponent(site).path)
            .compactMap { FolderTransport.range(ofFileName: $0)?.through }.sorted()
    }

    /// A replica holding `rows` photos with embeddings, pushed through `transport` in change
    /// sets of `batchRows` rows.
    static func origin(rows: Int, batchRows: Int, transport: FolderTransport) throws -> Replica {
        let origin = try Fixture.replica("origin", options: Replica.Options(maximumBatchRows: batchRows))
        try origin.writer.write { db in
            for row in 0..<rows {
                try db.execute(
                    sql: "INSERT INTO photos (id, title, rating, embedding) VALUES (?, ?, ?, ?)",
                    arguments: [
                        String(format: "p%05d", row), "title \(row)", row % 5,
                        Vector([Float(row), 1, -Float(row) / 7, 0.5]).blob,
                    ])
            }
        }
        try origin.sync(through: transport)
        return origin
    }

    @Test("a first sync commits bounded transactions and reports phases, commits and totals in order")
    func firstSyncReportsBoundedCommits() throws {
        let origin = try Self.origin(rows: 1000, batchRows: 50, transport: transport)
        let receiver = try Fixture.replica("receiver", options: Replica.Options(maximumMergeRows: 100))
        var events: [SyncEvent] = []
        let report = try receiver.sync(through: transport) { events.append($0) }

        let phases = events.compactMap { event -> SyncPhase? in
            if case .phase(let phase) = event { return phase }
            return nil
        }
        #expect(phases == [.reconciling, .pushing, .pulling])
        let commits = events.compactMap { event -> SyncProgress? in
            if case .merged(let progress) = event { return progress }
            return nil
        }
        // 20 files of 50 rows, two per transaction of at most 100 rows.
        #expect(commits.count == 10)
        #expect(commits.map(\.rows) == Array(stride(from: 100, through: 1000, by: 100)))
        #expect(commits.map(\.batches) == Array(1...10))
        #expect(commits.allSatisfy { $0.changeSets == 2 * $0.batches })
        let bytes = try FileManager.default.contentsOfDirectory(
            at: folder.appendingPathComponent("origin"), includingPropertiesForKeys: nil
        ).filter { $0.pathExtension == "vcs" }.reduce(0) { $0 + (try Data(contentsOf: $1).count) }
        #expect(commits.last?.bytes == bytes)
        #expect(commits.last?.expectedBytes == bytes)
        #expect(commits.last?.fraction == 1)
        #expect(zip(commits, commits.dropFirst()).allSatisfy { $0.bytes < $1.bytes })
        guard case .finished(let finished) = events.last else {
            Issue.record("the last event is not .finished: \(String(describing: events.last))")
            return
        }
        #expect(finished == report)
        #expect(report.applied == 1000)
        #expect(report.waiting.isEmpty)
        #expect(try Fixture.snapshot(receiver) == Fixture.snapshot(origin))
        #expect(try receiver.verifyDerivedIndexes().values.allSatisfy { $0 == 0 })
    }

    @Test("an event handler may read the database: events never arrive inside a read or a transaction")
    func handlersMayReadTheDatabase() throws {
        let origin = try Fixture.replica("origin", options: Replica.Options(maximumBatchRows: 10))
        for row in 0..<35 {
            try Self.write(origin, "INSERT INTO photos (id, title) VALUES (?, 'x')", ["p\(row)"])
        }
        var pending: [Int] = []
        try origin.sync(through: transport) { event in
            if case .pushed = event { pending.append(try origin.syncStatus().pendingLocalChanges) }
        }
        // Each event sees the database as the push left it: the cursor moved past all four.
        #expect(pending == [0, 0, 0, 0])
        let receiver = try Fixture.replica("receiver", options: Replica.Options(maximumMergeRows: 10))
        var counts: [Int] = []
        try receiver.sync(through: transport) { event in
            if case .merged = event { counts.append(try Self.count(receiver)) }
        }
        #expect(counts == [10, 20, 30, 35])
    }

    @Test("a first sync cut after any commit keeps exactly what it merged, in step, and the next finishes it")
    func cutSyncKeepsItsCommitsAndResumes() throws {
        var random = SeededRandom(defaultSeed: 0x5EED_9A11)
        let seed = random.seed
        let origin = try Self.origin(rows: 600, batchRows: 40, transport: transport)
        for _ in 0..<3 {
            let cut = Int.random(in: 1...14, using: &random)
            let receiver = try Fixture.replica("receiver", options: Replica.Options(maximumMergeRows: 40))
            var merged: SyncProgress?
            #expect(throws: Killed.self, "seed \(seed), cut after commit \(cut)") {
                try receiver.sync(through: transport) { event in
                    guard case .merged(let progress) = event else { return }
                    merged = progress
                    if progress.batches == cut { throw Killed() }
                }
            }
            // Every commit reported stays, with a cursor that says exactly how far.
            #expect(try Self.count(receiver) == cut * 40, "seed \(seed), cut \(cut)")
            let cursor = try receiver.peers().first { $0.site == origin.site }?.received
            #expect(cursor == (try Self.fileEnds(folder, "origin"))[cut - 1], "seed \(seed), cut \(cut)")
            #expect(merged?.rows == cut * 40)
            #expect(try receiver.verifyDerivedIndexes().values.allSatisfy { $0 == 0 }, "seed \(seed)")
            let status = try receiver.syncStatus()
            #expect(status.lastSyncs.first?.succeeded == false)
            #expect(status.lastSyncs.first?.summary.contains("Killed") == true)
            #expect(status.lastSyncs.first?.firstCaughtUp == nil)
            #expect(
                status.description.contains(
                    "first sync through \(transport.destination): not finished yet (1 run, \(cut * 40) rows merged so far)"
                ))

            // The next sync merges the rest, and nothing twice.
            var resumed: SyncProgress?
            let report = try receiver.sync(through: transport) { event in
                if case .merged(let progress) = event { resumed = progress }
            }
            #expect(report.merges.count == 15 - cut, "seed \(seed), cut \(cut)")
            #expect(report.applied == 600 - cut * 40)
            #expect(resumed?.rows == 600 - cut * 40)
            #expect(try Fixture.snapshot(receiver) == Fixture.snapshot(origin), "seed \(seed), cut \(cut)")
            #expect(try receiver.verifyDerivedIndexes().values.allSatisfy { $0 == 0 })
            let finished = try #require(try receiver.syncStatus().lastSyncs.first)
            #expect(finished.succeeded)
            // The first sync took two runs, and is finished.
            #expect(finished.runs == 2)
            #expect(finished.rowsMerged == 600)
            #expect(finished.firstCaughtUp != nil)
            #expect(try receiver.syncStatus().description.contains("2 runs, 600 rows merged in all"))
            // Nothing left: the next sync is quiet, and the first sync's end stays.
            let again = try receiver.sync(through: transport)
            #expect(again.isQuiet)
            #expect(try receiver.syncStatus().lastSyncs.first?.firstCaughtUp == finished.firstCaughtUp)
        }
    }

    @Test("cancelling the task that reads the events stops the sync between commits; the next one resumes")
    func cancellingEventsStopsTheSync() async throws {
        let origin = try Self.origin(rows: 400, batchRows: 20, transport: transport)
        let receiver = try Fixture.replica("receiver", options: Replica.Options(maximumMergeRows: 20))
        var seen = 0
        for try await event in receiver.syncEvents(through: transport) {
            if case .merged = event {
                seen += 1
                if seen == 2 { break }
            }
        }
        // The sync stops at its next event: the third commit, in progress, is kept.
        var status = try receiver.syncStatus()
        for _ in 0..<1000 where status.lastSyncs.isEmpty {
            try await Task.sleep(for: .milliseconds(10))
            status = try receiver.syncStatus()
        }
        #expect(status.lastSyncs.first?.succeeded == false)
        #expect(try Self.count(receiver) == 60)
        #expect(
            try receiver.peers().first { $0.site == origin.site }?.received == Self.fileEnds(folder, "origin")[2])
        let kept = 60

        var last: SyncReport?
        for try await event in receiver.syncEvents(through: transport) {
            if case .finished(let report) = event { last = report }
        }
        #expect(last?.applied == 400 - kept)
        #expect(try Fixture.snapshot(receiver) == Fixture.snapshot(origin))
    }

    @Test("the status says when the replica last synced, what it has not pushed, and each peer's cursors")
    func statusReportsLastSyncPendingAndCursors() throws {
        let mac = try Fixture.replica("mac")
        let phone = try Fixture.replica("phone")
        let never = try phone.syncStatus()
        #expect(never.lastSync == nil)
        #expect(never.pendingLocalChanges == 0)
        #expect(never.peers.isEmpty)
        #expect(never.description.contains("never synced"))

        try Self.write(mac, "INSERT INTO photos (id, title) VALUES ('p1', 'one'), ('p2', 'two'), ('p3', 'three')")
        #expect(try mac.syncStatus().pendingLocalChanges == 3)
        let before = Date()
        try mac.sync(through: transport)
        let macStatus = try mac.syncStatus()
        #expect(macStatus.pendingLocalChanges == 0)
        #expect(macStatus.destinations.map(\.destination) == [transport.destination])
        let macFirst = try mac.currentSequence()
        #expect(macStatus.destinations.first?.publishedThrough == macFirst)
        #expect(macStatus.lastSyncs.first?.destination == transport.destination)
        #expect(macStatus.lastSyncs.first?.succeeded == true)
        #expect(macStatus.lastSyncs.first?.summary.hasPrefix("mac: pushed 3 rows in 1 files") == true)
        #expect(try #require(macStatus.lastSync) >= before.addingTimeInterval(-1))

        try Self.write(mac, "UPDATE photos SET title = 'uno' WHERE id = 'p1'")
        try Self.write(mac, "DELETE FROM photos WHERE id = 'p2'")
        #expect(try mac.syncStatus().pendingLocalChanges == 2)
        let macSecond = try mac.currentSequence()

        try phone.sync(through: transport)
        let phoneStatus = try phone.syncStatus()
        #expect(phoneStatus.peers.map(\.site) == [mac.site])
        #expect(phoneStatus.peers.first?.received == macFirst)
        #expect(phoneStatus.peers.first?.waitingFor == nil)
        // Merged rows are not local changes: nothing waits to be sent.
        #expect(phoneStatus.pendingLocalChanges == 0)
        try Self.write(phone, "UPDATE photos SET rating = 5 WHERE id = 'p3'")
        #expect(try phone.syncStatus().pendingLocalChanges == 1)
        try mac.sync(through: transport)
        #expect(try mac.syncStatus().peers.first?.acknowledged == 0)
        try phone.sync(through: transport)
        try mac.sync(through: transport)
        let settled = try mac.syncStatus()
        #expect(settled.peers.map(\.site) == [phone.site])
        // The phone's file was made when it had merged the mac's first file.
        #expect(settled.peers.first?.acknowledged == macFirst)
        #expect(try settled.peers.first?.received == phone.publishedThrough(to: transport.destination))
        #expect(try phone.syncStatus().peers.first?.received == macSecond)
        #expect(try phone.syncStatus().pendingLocalChanges == 0)
    }

    @Test("a damaged file is published again by its origin; its later files, partial rows included, then merge")
    func damagedFileIsPublishedAgain() throws {
        let origin = try Self.origin(rows: 20, batchRows: 5, transport: transport)
        let originFolder = folder.appendingPathComponent("origin")
        let names = try FileManager.default.contentsOfDirectory(atPath: originFolder.path).filter {
            $0.hasSuffix(".vcs")
        }.sorted()
        #expect(names.count == 4)
        // The second file arrives damaged.
        let damaged = originFolder.appendingPathComponent(names[1])
        var bytes = try Data(contentsOf: damaged)
        bytes[bytes.count / 2] ^= 0x5A
        try bytes.write(to: damaged)
        // Later changes of the origin: a row of the damaged file edited (a partial record the
        // receiver cannot merge without the damaged file), and a new row.
        try Self.write(origin, "UPDATE photos SET title = 'edited' WHERE id = 'p00006'")
        try Self.write(origin, "INSERT INTO photos (id, title) VALUES ('late', 'late')")
        try origin.sync(through: transport)

        let receiver = try Fixture.replica("receiver")
        var waits: [SyncGap] = []
        let first = try receiver.sync(through: transport) { event in
            if case .waiting(let gap) = event { waits.append(gap) }
        }
        #expect(first.problems.count == 2, "\(first.problems)")
        #expect(first.problems.first?.contains(names[1]) == true)
        #expect(first.problems.last?.contains("earlier changes") == true, "\(first.problems)")
        let gap = try #require(first.waiting.first)
        #expect(first.waiting.count == 1)
        #expect(waits == first.waiting)
        #expect(gap.origin == origin.site)
        let damagedRange = try #require(FolderTransport.range(ofFileName: names[1]))
        #expect(gap.since == damagedRange.since)
        #expect(gap.through == damagedRange.through)
        #expect(gap.reason.contains(names[1]))
        #expect(try receiver.gaps() == [gap])
        #expect(try receiver.syncStatus().peers.first?.waitingFor == gap)
        #expect(first.description.contains("waiting for changes of 1 sites"))
        let request = folder.appendingPathComponent("receiver").appendingPathComponent(".request-origin")
        #expect(FileManager.default.fileExists(atPath: request.path))
        #expect(try Self.count(receiver, "SELECT count(*) FROM photos WHERE id = 'p00006'") == 0)

        // Syncing again before the origin answers changes nothing and asks nothing new.
        let waiting = try receiver.sync(through: transport)
        #expect(waiting.waiting == [gap])

        // The origin publishes the range again on its next sync; the receiver then merges
        // everything, and its cursor passes the gap.
        let answered = try origin.sync(through: transport)
        #expect(answered.pushedFiles >= 1)
        // The damaged file is gone, or written again whole under its name.
        #expect(
            !FileManager.default.fileExists(atPath: damaged.path)
                || (try? ChangeSet(serialized: Data(contentsOf: damaged))) != nil)
        let healed = try receiver.sync(through: transport)
        #expect(healed.problems.isEmpty, "\(healed.problems)")
        #expect(healed.waiting.isEmpty)
        #expect(try receiver.gaps().isEmpty)
        #expect(!FileManager.default.fileExists(atPath: request.path))
        #expect(try receiver.peers().first { $0.site == origin.site }?.received == origin.currentSequence())
        #expect(try Fixture.snapshot(receiver) == Fixture.snapshot(origin))
        #expect(try receiver.verifyDerivedIndexes().values.allSatisfy { $0 == 0 })

        // A request already served is not served twice.
        let quiet = try origin.sync(through: transport)
        #expect(quiet.pushedFiles == 0)
        #expect(try receiver.sync(through: transport).applied == 0)
    }

    @Test("files stay without a hole when a push leaves out its last batches, so a third reader's cursor moves")
    func filesHaveNoHoleAfterLeftOutBatches() throws {
        let a = try Fixture.replica("a")
        let b = try Fixture.replica("b")
        let c = try Fixture.replica("c")
        try Self.write(a, "INSERT INTO photos (id, title) VALUES ('a1', 'one')")
        try a.sync(through: transport)
        try c.sync(through: transport)
        try Self.write(b, "INSERT INTO photos (id, title) VALUES ('b1', 'one'), ('b2', 'two')")
        try b.sync(through: transport)
        // a merges b's rows: its sequence moves, but the rows are b's; its push leaves them out.
        try a.sync(through: transport)
        try a.sync(through: transport)
        try Self.write(a, "UPDATE photos SET title = 'uno' WHERE id = 'a1'")
        try a.sync(through: transport)
        let report = try c.sync(through: transport)
        #expect(report.waiting.isEmpty)
        #expect(try c.peers().first { $0.site == a.site }?.received == a.currentSequence())
        #expect(try Fixture.snapshot(c) == Fixture.snapshot(a))
    }
}
