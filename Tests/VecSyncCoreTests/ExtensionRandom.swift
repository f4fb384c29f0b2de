import VecSyncTestSupport

/// The core suites' name for the shared seeded generator, ``SeededRandom``.
///
/// ```swift
/// var random = ExtensionRandom.fromEnvironment()
/// let dims = Int.random(in: 0...2000, using: &random)
/// ```
typealias ExtensionRandom = SeededRandom
