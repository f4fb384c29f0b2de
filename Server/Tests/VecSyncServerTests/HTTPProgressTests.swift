import Foundation
import ServerTestSupport
import Testing
import VecSyncCore
import VecSyncReplication
import VecSyncServer
import VecSyncStores
import VecSyncHTTP

/// Syncing through a server reports the same events as through a folder, merges in bounded
/// transactions, keeps what it merged when cut short, and says what it waits for.
@Suite("HTTP transport progress")
struct HTTPProgressTests {
    /// The events a sync reported, collected across the syncing thread.
    final class Recorder: @unchecked Sendable {
        private let lock = NSLock()
        private var stored: [SyncEvent] = []
        /// Commits after which the handler throws, as a kill would.
        let cutAfter: Int?

        init(cutAfter: Int? = nil) {
            self.cutAfter = cutAfter
        }

        var events: [SyncEvent] { lock.withLock { stored } }

        var commits: [SyncProgress] {
            events.compactMap { event in
                if case .merged(let progress) = event { return progress }
                return nil
            }
        }

        func record(_ event: SyncEvent) throws {
            lock.withLock { stored.append(event) }
            if case .merged(let progress) = event, progress.batches == cutAfter { throw Killed() }
        }
    }

    struct Killed: Error {}

    @Test("a first sync through a server reports bounded commits; cut short it keeps them and resumes")
    func firstSyncThroughServerReportsAndResumes() async throws {
        var random = SeededRandom(defaultSeed: 0x5E4F_0101)
        let seed = random.seed
        try await withServedSpace(.sqlite, "progress", tokens: 3) { test, server, space, tokens, _ in
            let writer = try PhotoDevice("writer", options: Replica.Options(maximumBatchRows: 20))
            try writer.addPhotos(200, prefix: "w", random: &random)
            let transports = tokens.map { token in
                var transport = HTTPTransport(server: server.url, space: space, token: token, platform: "test")
                transport.pageSize = 4
                return transport
            }
            let pushed = Recorder()
            _ = try await blocking { [writer] in try writer.replica.sync(through: transports[0], events: pushed.record)
            }
            let pushes = pushed.events.compactMap { event -> SyncProgress? in
                if case .pushed(let progress) = event { return progress }
                return nil
            }
            let total = try #require(pushes.last?.rows)
            #expect(pushes.map(\.changeSets) == Array(1...pushes.count), "seed \(seed)")
            #expect(pushes.count >= 10)

            // A reader merging at most 40 rows a transaction: commits in order, with byte totals.
            let reader = try PhotoDevice("reader", options: Replica.Options(maximumMergeRows: 40))
            let recorder = Recorder()
            let report = try await blocking { [reader] in
                try reader.replica.sync(through: transports[1], events: recorder.record)
            }
            #expect(report.problems.isEmpty, "seed \(seed): \(report.problems)")
            let commits = recorder.commits
            #expect(commits.map(\.batches) == Array(1...commits.count))
            #expect(commits.last?.rows == total, "seed \(seed)")
            #expect(
                zip([SyncProgress()] + commits, commits).allSatisfy { $1.rows - $0.rows <= 40 && $1.rows > $0.rows })
            #expect(commits.count < pushes.count, "change sets of 20 rows or fewer share transactions")
            #expect(commits.last?.bytes == pushes.last?.bytes)
            #expect(commits.last?.expectedBytes == pushes.last?.bytes)
            guard case .finished(let finished) = recorder.events.last else {
                Issue.record("the last event is not .finished")
                return
            }
            #expect(finished.applied == total)
            #expect(try reader.photos.count() == 200)

            // Cut after the second commit: what it merged stays, with its cursor; the next sync
            // merges the rest and nothing twice.
            let cut = try PhotoDevice("cut", options: Replica.Options(maximumMergeRows: 40))
            let cutRecorder = Recorder(cutAfter: 2)
            await #expect(throws: Killed.self) {
                try await blocking { [cut] in try cut.replica.sync(through: transports[2], events: cutRecorder.record) }
            }
            let kept = try #require(cutRecorder.commits.last?.rows)
            #expect(cutRecorder.commits.count == 2)
            #expect(try cut.replica.verifyDerivedIndexes().values.allSatisfy { $0 == 0 })
            #expect(try cut.replica.syncStatus().lastSyncs.first?.succeeded == false)
            let resumed = Recorder()
            let rest = try await blocking { [cut] in
                try cut.replica.sync(through: transports[2], events: resumed.record)
            }
            #expect(rest.applied == total - kept, "seed \(seed)")
            #expect(resumed.commits.last?.rows == total - kept)
            #expect(try cut.snapshot() == reader.snapshot())
            let status = try cut.replica.syncStatus()
            #expect(status.lastSyncs.first?.destination == transports[2].destination)
            #expect(status.lastSyncs.first?.succeeded == true)
            #expect(
                try status.peers.first { $0.site == writer.replica.site }?.received
                    == writer.replica.currentSequence())
        }
    }

    @Test("a change set that fails its SHA-256 is reported as waited for, and downloaded again by the next pull")
    func damagedDownloadIsWaitedFor() async throws {
        try await withServedSpace(.sqlite, "gap", tokens: 1) { test, server, space, tokens, spaceID in
            let (batch, _) = try await ServerScenarios.storeDamagedChangeSet(
                in: test.store, spaceID: spaceID, seed: 0x5E4F_0102)
            let reader = try PhotoDevice("reader")
            let transport = HTTPTransport(server: server.url, space: space, token: tokens[0])
            let recorder = Recorder()
            let report = try await blocking { [reader] in
                try reader.replica.sync(through: transport, events: recorder.record)
            }
            let gap = try #require(report.waiting.first)
            #expect(gap.origin == SiteID("author"))
            #expect(gap.since == 0 && gap.through == batch.through)
            #expect(gap.reason.contains("SHA-256"))
            #expect(recorder.events.contains(.waiting(gap)))
            #expect(try reader.replica.syncStatus().peers.first?.waitingFor == gap)
            // The next pull tries it again (it is still damaged on the server: still waited for).
            let again = try await blocking { [reader] in try reader.replica.sync(through: transport) }
            #expect(again.waiting == [gap])
        }
    }
}
