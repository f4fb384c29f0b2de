import Foundation

/// A seeded random number generator (SplitMix64) for property tests.
///
/// The seed is `$VECSYNC_SEED` when set, so a failure reproduces with
/// `VECSYNC_SEED=<seed> swift test --filter …`; otherwise a fresh one each run. Tests put
/// ``seed`` in every failure message.
///
/// ```swift
/// var random = ExtensionRandom.fromEnvironment()
/// let dims = Int.random(in: 0...2000, using: &random)
/// ```
struct ExtensionRandom: RandomNumberGenerator, Sendable {
    /// The seed this generator started from.
    let seed: UInt64
    private var state: UInt64

    /// A generator that starts from `seed`.
    init(seed: UInt64) {
        self.seed = seed
        self.state = seed
    }

    /// A generator seeded from `$VECSYNC_SEED` (decimal or 0x-hex), else at random.
    static func fromEnvironment() -> ExtensionRandom {
        ExtensionRandom(seed: environmentSeed() ?? UInt64.random(in: .min ... .max))
    }

    /// A generator seeded from `$VECSYNC_SEED` when set, else from `defaultSeed`, so a
    /// test replays the same values on every run; it prints the seed.
    init(defaultSeed: UInt64) {
        self.init(seed: Self.environmentSeed() ?? defaultSeed)
        print("seed \(seed) (set VECSYNC_SEED=\(seed) to replay)")
    }

    /// `$VECSYNC_SEED`, decimal or 0x-hex, when set.
    private static func environmentSeed() -> UInt64? {
        guard let text = ProcessInfo.processInfo.environment["VECSYNC_SEED"], !text.isEmpty else { return nil }
        return text.lowercased().hasPrefix("0x") ? UInt64(text.dropFirst(2), radix: 16) : UInt64(text)
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
