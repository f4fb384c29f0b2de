import ArgumentParser

/// What each simulated device does in a round, and for how many rounds: the options a
/// ``Device`` runs with, declared once for the command and handed to every device whole.
struct Workload: ParsableArguments, Sendable {
    @Option(help: "The most rounds (push, list, downloads) a device makes.")
    var maxRounds = 100_000

    @Option(help: "Rows per pushed change set.")
    var rows = 4

    @Option(help: "Embedding dimensions of each row.")
    var dimensions = 768

    @Option(help: "Change sets a device downloads per round, at most.")
    var downloads = 2

    @Option(help: "The seed of the generated rows (device i draws from seed + i).")
    var seed: UInt64 = 0x5E4F
}
