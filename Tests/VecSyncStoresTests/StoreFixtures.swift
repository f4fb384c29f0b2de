import Foundation
import VecSyncCore
@testable import VecSyncStores

/// A clock that advances one second at each reading, so rows are ordered and times exact.
final class SteppingClock: @unchecked Sendable {
    private let lock = NSLock()
    private var current: Date

    init(start: Date = Date(timeIntervalSince1970: 1_700_000_000)) {
        current = start
    }

    func now() -> Date {
        lock.lock()
        defer { lock.unlock() }
        current += 1
        return current
    }
}

/// Deterministic synthetic embeddings clustered by topic: each topic has a random centre,
/// each item is its centre plus small noise. Items of one topic are each other's nearest.
struct TopicEmbeddings {
    let dimensions: Int
    private var state: UInt64
    private(set) var centres: [String: Vector] = [:]

    init(dimensions: Int, seed: UInt64) {
        self.dimensions = dimensions
        self.state = seed
    }

    private mutating func nextFloat() -> Float {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        z ^= z >> 31
        return Float(z >> 40) / Float(1 << 24) * 2 - 1
    }

    mutating func centre(_ topic: String) -> Vector {
        if let centre = centres[topic] { return centre }
        let centre = Vector((0..<dimensions).map { _ in nextFloat() }).normalized()
        centres[topic] = centre
        return centre
    }

    mutating func item(_ topic: String, noise: Float = 0.15) -> Vector {
        let centre = centre(topic)
        return Vector(centre.scalars.map { $0 + noise * nextFloat() / Float(dimensions).squareRoot() * 4 }).normalized()
    }
}
