import ArgumentParser
import VecSync

/// `vecsync-cli`: vector search and sync for SQLite databases, from the shell.
@main
struct VecSyncCLI: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "vecsync-cli",
        abstract: "Exact vector search in SQLite, and sync that never loses an embedding.",
        version: VecSyncExtension.version,
        subcommands: [
            TrackCommand.self,
            SyncCommand.self,
            ChangesCommand.self,
        ]
    )
}
