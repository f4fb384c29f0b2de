import Foundation

/// The seeded random number generator (SplitMix64) every randomised test draws from.
///
/// A test that should replay the same values on every run starts from a fixed default seed;
/// `$VECSYNC_SEED` (decimal or 0x-hex) overrides it, so a failure reproduces with
/// `VECSYNC_SEED=<seed> swift test --filter …`. Tests put ``seed`` in every failure message.
///
/// ```swift
/// var random = SeededRandom(defaultSeed: 0x5EED_0001)   // prints "seed 1592590337 …"
/// let dims = Int.random(in: 0...2000, using: &random)
/// ```
public struct SeededRandom: RandomNumberGenerator, Sendable {
    /// The seed this generator started from.
    public let seed: UInt64
    private var state: UInt64

    /// A generator that starts from `seed`, whatever the environment says.
    public init(seed: UInt64) {
        self.seed = seed
        self.state = seed
    }

    /// A generator seeded from `$VECSYNC_SEED` when set, else from `defaultSeed`, so a
    /// test replays the same values on every run; it prints the seed.
    public init(defaultSeed: UInt64) {
        self.init(seed: Self.environmentSeed() ?? defaultSeed)
        print("seed \(seed) (set VECSYNC_SEED=\(seed) to replay)")
    }

    /// A generator seeded from `$VECSYNC_SEED` when set; else from a fixed seed, so that
    /// `make test` passes or fails the same way on the same code, or at random under
    /// `make soak` (``isExploring``), where each run explores new values and the seed in a
    /// failure message replays them (and becomes a fixed case of the test that found it).
    public static func fromEnvironment() -> SeededRandom {
        SeededRandom(seed: environmentSeed() ?? (isExploring ? UInt64.random(in: .min ... .max) : fixedSeed))
    }

    /// The seed of ``fromEnvironment()`` outside `make soak`.
    public static let fixedSeed: UInt64 = 0x5EED_2026

    /// True under `make soak` (`VECSYNC_EXPLORE=1`): randomised tests draw new seeds on each
    /// run instead of their fixed ones.
    public static var isExploring: Bool {
        ProcessInfo.processInfo.environment["VECSYNC_EXPLORE"] == "1"
    }

    /// `$VECSYNC_SEED`, decimal or 0x-hex, when set.
    public static func environmentSeed() -> UInt64? {
        guard let text = ProcessInfo.processInfo.environment["VECSYNC_SEED"], !text.isEmpty else { return nil }
        return text.lowercased().hasPrefix("0x") ? UInt64(text.dropFirst(2), radix: 16) : UInt64(text)
    }

    /// The next 64 random bits.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
