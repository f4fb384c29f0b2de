import ArgumentParser
import Foundation
import VecSyncServer

/// `vecsync-server backup --to FILE`.
struct BackupCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "backup",
        abstract: "Copy the SQLite store to a new file while the server serves.",
        discussion: """
            Writes a consistent copy of --data's store to FILE (SQLite's VACUUM INTO, from one \
            read snapshot: pushes go on meanwhile, and the copy is compacted). The copy gets a \
            new generation, so that after it is restored every device notices, pulls again \
            from the start and pushes again what the copy lacks: no row is lost.

            To restore: stop the server, replace DATA/vecsync-server.sqlite with the copy \
            (removing vecsync-server.sqlite-wal and -shm), start the server.

            PostgreSQL: back up with pg_dump; after restoring with pg_restore (or from any \
            other backup), run `vecsync-server new-epoch --postgres URL` before serving.
            """)

    @OptionGroup var store: StoreOptions

    @Option(name: .long, help: ArgumentHelp("The file to write (it must not exist).", valueName: "file"))
    var to: String

    func validate() throws {
        if store.postgres != nil {
            throw ValidationError(
                "backup copies a SQLite store; for PostgreSQL use pg_dump, then new-epoch after a restore")
        }
        if FileManager.default.fileExists(atPath: to) { throw ValidationError("'\(to)' exists: give a new file") }
    }

    func run() async throws {
        let (path, epoch) = try await store.withStore { opened in
            guard let sqlite = opened as? SQLiteServerStore else {
                throw ValidationError("backup copies a SQLite store")
            }
            return (sqlite.path, try await sqlite.backup(to: to))
        }
        print("backed up \(path) to \(to) (generation \(epoch))")
    }
}
