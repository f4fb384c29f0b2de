import VecSync

/// Deterministic synthetic embeddings clustered by topic, for the demo: each topic is a
/// fixed random direction, and each text is its topic's direction plus noise drawn from a
/// hash of the text. Texts of one topic are each other's nearest neighbours, as real
/// embeddings of texts about one subject are; no model is needed and every run is the same.
struct DemoEmbedder {
    let dimensions: Int
    /// How far an item strays from its topic (0: on the topic's direction).
    let spread: Float

    /// The topic's direction, a unit vector.
    func centre(_ topic: String) -> Vector {
        randomUnit(seed: Self.hash("topic:" + topic))
    }

    /// The embedding of `text` about `topic`.
    func embed(_ text: String, topic: String) -> Vector {
        let centre = centre(topic)
        let noise = randomUnit(seed: Self.hash("text:" + text))
        return Vector(zip(centre.scalars, noise.scalars).map { $0 + spread * $1 }).normalized()
    }

    /// The embedding of a text about two topics at once (`weight` of the second).
    func embed(_ text: String, topic: String, and second: String, weight: Float) -> Vector {
        let a = embed(text, topic: topic)
        let b = centre(second)
        return Vector(zip(a.scalars, b.scalars).map { (1 - weight) * $0 + weight * $1 }).normalized()
    }

    private func randomUnit(seed: UInt64) -> Vector {
        var state = seed
        var scalars: [Float] = []
        scalars.reserveCapacity(dimensions)
        for _ in 0..<dimensions {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            z ^= z >> 31
            scalars.append(Float(z >> 40) / Float(1 << 24) * 2 - 1)
        }
        return Vector(scalars).normalized()
    }

    /// FNV-1a, 64 bits: the same on every platform and run (unlike `Hasher`).
    static func hash(_ text: String) -> UInt64 {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in text.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01B3
        }
        return hash
    }
}
