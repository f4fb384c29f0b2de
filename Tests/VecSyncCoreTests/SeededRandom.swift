import Foundation

/// SplitMix64: a small, fast, seedable generator, so randomised host tests replay exactly.
/// The seed comes from `VECSYNC_SEED` when set, else from the test's default, and every
/// test prints it (and puts it in its failure messages).
struct SeededRandom: RandomNumberGenerator, Sendable {
    private var state: UInt64
    let seed: UInt64

    init(defaultSeed: UInt64) {
        let seed = ProcessInfo.processInfo.environment["VECSYNC_SEED"].flatMap { UInt64($0) } ?? defaultSeed
        self.seed = seed
        self.state = seed
        print("seed \(seed) (set VECSYNC_SEED=\(seed) to replay)")
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
