import Foundation
import Testing
import VecSyncCore
import VecSyncTestSupport

@testable import VecSyncStores

/// Seeded random libraries, searched with random filters, checked against brute force.
@Suite("Store searches equal brute force under random filters")
struct StorePropertyTests {
    /// True when `got` holds the `limit` nearest of `truth` (ids with true distances),
    /// nearest first, allowing float rounding between the SQL kernels and Swift.
    static func matches(_ got: [(String, Double)], _ truth: [(String, Float)], limit: Int) -> Bool {
        let sorted = truth.sorted { $0.1 < $1.1 }
        guard got.count == Swift.min(limit, truth.count) else { return false }
        let byId = Dictionary(truth.map { ($0.0, Double($0.1)) }, uniquingKeysWith: { a, _ in a })
        for (i, (id, distance)) in got.enumerated() {
            guard let own = byId[id], abs(own - distance) < 1e-5, abs(Double(sorted[i].1) - distance) < 1e-5 else {
                return false
            }
        }
        return Set(got.map(\.0)).count == got.count
    }

    @Test func messageRecallIsTheFilteredTopKForRandomThreadsApprovalsAndLimits() throws {
        var rng = SeededRandom(defaultSeed: 0x5EED_0401)
        let seed = rng.seed
        let dims = 8
        let clock = SteppingClock()
        let messages = try MessageStore(VecSyncDatabase.inMemory(), dimensions: dims, clock: { clock.now() })
        // Thread sizes from tiny to large, so k has to grow for the small ones.
        let sizes = ["big": 400, "mid": 60, "small": 7, "tiny": 2, "none": 0]
        var rows: [(id: String, thread: String, approved: Bool, vector: Vector?)] = []
        for (thread, size) in sizes.sorted(by: { $0.key < $1.key }) {
            try messages.createThread(id: thread, title: thread, k0: 1, alpha: 1, m: 1)
            for i in 0..<size {
                let id = "\(thread)-\(i)"
                let vector: Vector? =
                    Int.random(in: 0..<10, using: &rng) == 0 ? nil : Vector.random(dimensions: dims, using: &rng)
                try messages.addMessage(
                    id: id, threadId: thread, userId: "u", content: id, embedding: vector, phase: .action)
                let approved = Bool.random(using: &rng)
                if approved { try messages.setApprovalStatus(.approved, ofMessage: id) }
                rows.append((id, thread, approved, vector))
            }
        }
        for round in 0..<40 {
            let thread = sizes.keys.sorted()[Int.random(in: 0..<sizes.count, using: &rng)]
            let approvedOnly = Bool.random(using: &rng)
            let limit = Int.random(in: 1...25, using: &rng)
            let query = Vector.random(dimensions: dims, using: &rng)
            let got = try messages.similar(to: query, inThread: thread, approvedOnly: approvedOnly, limit: limit)
            let truth = rows.compactMap { row -> (String, Float)? in
                guard row.thread == thread, !approvedOnly || row.approved, let v = row.vector else { return nil }
                return (row.id, v.cosineDistance(to: query))
            }
            #expect(
                Self.matches(got.map { ($0.message.id, $0.distance) }, truth, limit: limit),
                "seed \(seed) round \(round): thread \(thread) approvedOnly \(approvedOnly) limit \(limit) got \(got.count) of \(truth.count)"
            )
        }
    }

    @Test func photoSearchIsTheFilteredTopKForRandomFilters() throws {
        var rng = SeededRandom(defaultSeed: 0x5EED_0402)
        let seed = rng.seed
        let dims = 12
        let clock = SteppingClock()
        let photos = try PhotoStore(VecSyncDatabase.inMemory(), dimensions: dims, clock: { clock.now() })
        let start = Date(timeIntervalSince1970: 1_600_000_000)
        let moods = ["calm", "festive", nil]
        let scenes = ["beach", "street", nil]
        struct Row {
            var id: String
            var date: Date?
            var mood: String?
            var scene: String?
            var vector: Vector?
            var albums: Set<String>
        }
        var rows: [Row] = []
        try photos.createAlbum(name: "A", id: "a")
        try photos.createAlbum(name: "B", id: "b")
        for i in 0..<300 {
            let row = Row(
                id: String(format: "P%03d", i),
                date: Int.random(in: 0..<8, using: &rng) == 0
                    ? nil : start + Double(Int.random(in: 0..<1000, using: &rng)) * 3600,
                mood: moods[Int.random(in: 0..<3, using: &rng)],
                scene: scenes[Int.random(in: 0..<3, using: &rng)],
                vector: Int.random(in: 0..<10, using: &rng) == 0 ? nil : Vector.random(dimensions: dims, using: &rng),
                albums: Set(["a", "b"].filter { _ in Int.random(in: 0..<4, using: &rng) == 0 }))
            rows.append(row)
            try photos.upsert(
                Photo(sourceId: row.id, captureDate: row.date, mood: row.mood, sceneType: row.scene),
                embedding: row.vector)
            for album in row.albums { try photos.addPhotos([row.id], toAlbum: album) }
        }
        for round in 0..<60 {
            var filter = PhotoFilter.none
            var predicates: [(Row) -> Bool] = []
            var described: [String] = []
            if Bool.random(using: &rng) {
                let cut = start + Double(Int.random(in: 0..<1000, using: &rng)) * 3600
                filter = filter && .takenAfter(cut)
                predicates.append { row in
                    row.date.map { $0.timeIntervalSince1970 > cut.timeIntervalSince1970 } ?? false
                }
                described.append("after \(cut.timeIntervalSince1970)")
            }
            if Int.random(in: 0..<3, using: &rng) == 0 {
                let mood = ["calm", "festive"][Int.random(in: 0..<2, using: &rng)]
                filter = filter && .mood(mood)
                predicates.append { $0.mood == mood }
                described.append("mood \(mood)")
            }
            if Int.random(in: 0..<3, using: &rng) == 0 {
                let scene = ["beach", "street"][Int.random(in: 0..<2, using: &rng)]
                filter = filter && .sceneType(scene)
                predicates.append { $0.scene == scene }
                described.append("scene \(scene)")
            }
            if Int.random(in: 0..<3, using: &rng) == 0 {
                let album = ["a", "b"][Int.random(in: 0..<2, using: &rng)]
                filter = filter && (album == "a" ? .album("A") : .albumId("b"))
                predicates.append { $0.albums.contains(album) }
                described.append("album \(album)")
            }
            let limit = Int.random(in: 1...30, using: &rng)
            let query = Vector.random(dimensions: dims, using: &rng)
            let got = try photos.search(similarTo: query, limit: limit, filter: filter)
            let truth = rows.compactMap { row -> (String, Float)? in
                guard let v = row.vector, predicates.allSatisfy({ $0(row) }) else { return nil }
                return (row.id, v.cosineDistance(to: query))
            }
            #expect(
                Self.matches(got.map { ($0.photo.sourceId, $0.distance) }, truth, limit: limit),
                "seed \(seed) round \(round): \(described) limit \(limit) got \(got.count) of \(truth.count)")
        }
        let (vector, text) = try photos.verifyIndexes()
        #expect(vector.isConsistent && text.isEmpty, "seed \(seed): \(vector)")
    }
}
