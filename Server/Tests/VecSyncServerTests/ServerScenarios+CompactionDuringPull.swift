import Foundation
import ServerTestSupport
import Testing
import VecSyncReplication
import VecSyncServer
import VecSyncHTTP

extension ServerScenarios {
    /// A new device lists every page of the history before it downloads any (so that it
    /// knows the bytes to come), and a snapshot and a compaction run while it downloads:
    /// - the default compaction drops nothing the device listed but has not merged: its pull
    ///   point is what it confirmed merging (`merged`), not the last page it listed, and
    ///   its first sync ends with every row;
    /// - a forced one drops them: the downloads that follow fail and are recorded as gaps,
    ///   the next sync bootstraps from the snapshot, and the gaps the snapshot filled are
    ///   cleared, so the device says it has caught up.
    static func compactionDuringAPullLosesNothing(_ backEnd: BackEnd) async throws {
        for force in [false, true] {
            var random = SeededRandom(defaultSeed: 0x5E4F_0031)
            let seed = random.seed
            try await withServedSpace(backEnd, force ? "forced" : "listed", tokens: 2) {
                test, server, space, tokens, spaceID in
                let writer = try PhotoDevice("writer", options: Replica.Options(maximumBatchRows: 4))
                try writer.addPhotos(40, prefix: "photo", random: &random)
                // Twice: the second pull tells the server the writer holds everything, so the
                // newcomer is the one device a compaction must wait for.
                let writerTransport = HTTPTransport(server: server.url, space: space, token: tokens[0])
                for _ in 0..<2 { try await writer.sync(through: writerTransport) }

                let device = try PhotoDevice("newcomer", options: Replica.Options(maximumMergeRows: 8))
                var listing = HTTPTransport(server: server.url, space: space, token: tokens[1])
                listing.pageSize = 3
                let transport = listing
                _ = try await blocking { try transport.register(device.replica) }
                let compaction = CompactionOnce(store: test.store, spaceID: spaceID, force: force)
                let first = try await blocking {
                    try device.replica.sync(through: transport) { event in
                        if case .merged = event { try compaction.runOnce() }
                    }
                }
                #expect(compaction.ran, "seed \(seed): no merge event came")
                if force {
                    #expect(compaction.dropped > 0, "seed \(seed): the forced compaction dropped nothing")
                    #expect(!first.isCaughtUp, "seed \(seed): \(first)")
                    let second = try await device.sync(through: transport)
                    #expect(second.isCaughtUp, "seed \(seed): \(second)")
                } else {
                    #expect(compaction.dropped == 0, "seed \(seed): the default compaction dropped listed change sets")
                    #expect(first.problems.isEmpty && first.isCaughtUp, "seed \(seed): \(first)")
                }
                let gaps = try device.replica.gaps()
                #expect(gaps.isEmpty, "seed \(seed): \(gaps)")
                let status = try device.replica.syncStatus()
                #expect(status.peers.allSatisfy { $0.waitingFor == nil }, "seed \(seed): \(status)")
                #expect(status.lastSyncs.first?.firstCaughtUp != nil, "seed \(seed): \(status)")
                #expect(try device.snapshot() == writer.snapshot(), "seed \(seed): the device differs from the writer")
            }
        }
    }
}

/// A snapshot and a compaction of one space run once, from a sync's event handler (a thread of its own),
/// waiting for it to finish.
private final class CompactionOnce: @unchecked Sendable {
    let store: any ServerStore
    let spaceID: Int64
    let force: Bool
    private let lock = NSLock()
    private(set) var ran = false
    private(set) var dropped = 0

    init(store: any ServerStore, spaceID: Int64, force: Bool) {
        self.store = store
        self.spaceID = spaceID
        self.force = force
    }

    func runOnce() throws {
        lock.lock()
        defer { lock.unlock() }
        guard !ran else { return }
        ran = true
        let done = DispatchSemaphore(value: 0)
        let result = ResultBox()
        let (store, spaceID, force) = (self.store, self.spaceID, self.force)
        Task {
            do {
                let compactor = SpaceCompactor(store: store)
                _ = try await compactor.makeSnapshot(spaceID: spaceID, at: 7)
                result.value = .success(try await compactor.compact(spaceID: spaceID, force: force).dropped)
            } catch {
                result.value = .failure(error)
            }
            done.signal()
        }
        done.wait()
        dropped = try result.value?.get() ?? 0
    }

    private final class ResultBox: @unchecked Sendable {
        var value: Result<Int, any Error>?
    }
}
