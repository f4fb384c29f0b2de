import Foundation
import VecSyncCore
import VecSyncTestSupport

@testable import VecSyncStores

/// Deterministic synthetic embeddings clustered by topic: each topic has a random centre,
/// each item is its centre plus small noise. Items of one topic are each other's nearest.
struct TopicEmbeddings {
    let dimensions: Int
    private var random: SeededRandom
    private(set) var centres: [String: Vector] = [:]

    init(dimensions: Int, seed: UInt64) {
        self.dimensions = dimensions
        self.random = SeededRandom(seed: seed)
    }

    private mutating func nextFloat() -> Float {
        Float(random.next() >> 40) / Float(1 << 24) * 2 - 1
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
