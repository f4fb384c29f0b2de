import ArgumentParser
import VecSync

/// `vecsync-cli`: vector search and sync for SQLite databases, from the shell.
@main
struct VecSyncCLI: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "vecsync-cli",
        abstract: "Exact vector search in SQLite, and sync that never loses an embedding.",
        discussion: """
            Works on any SQLite database file. Vectors are stored as F32 blobs in ordinary \
            columns (libSQL's F32_BLOB(n)); the search indexes (vec0 tables, libSQL vector \
            indexes, FTS5) are derived from them and can be verified and rebuilt at any time.

            Examples:
              vecsync-cli demo
              vecsync-cli import --db app.db --table docs --file vectors.npy --index vec0
              vecsync-cli query --db app.db --table docs --vector '[0.1, 0.2, 0.3]' -k 5
              vecsync-cli verify --db app.db
              vecsync-cli rebuild --db app.db
              vecsync-cli recall app.db docs_vec --nprobe 4 8 16
              vecsync-cli sqlite-vec migrate --db app.db --table vec_items
            """,
        version: VecSyncExtension.version,
        subcommands: [
            DemoCommand.self,
            QueryCommand.self,
            ImportCommand.self,
            RebuildCommand.self,
            VerifyCommand.self,
            RecallCommand.self,
            TrackCommand.self,
            SyncCommand.self,
            StatusCommand.self,
            ChangesCommand.self,
            SqliteVecCommand.self,
        ]
    )
}
