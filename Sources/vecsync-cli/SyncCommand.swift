import ArgumentParser
import Foundation
import VecSync

/// `vecsync-cli sync`: pushes, pulls and merges through a shared folder.
struct SyncCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync",
        abstract: "Sync a database with every other replica through a shared folder.",
        discussion: """
            Writes this replica's new changes into its own subfolder of --folder (one file per \
            batch of at most 400 rows or 1 MB, renamed into place so no reader sees half a \
            file), then merges every other replica's files it has not merged yet, and brings \
            the derived indexes (vec0, FTS5) up to date for the rows that changed. Prints one \
            line; files that cannot be merged are listed after it and skipped, and so are \
            rows kept in quarantine (an embedding an index cannot hold, a row a local \
            constraint refuses, a row whose parent row has not arrived): the rest of their \
            file merges, and later syncs try them again.

            Any number of replicas may sync through the same folder, in any order, as often \
            as they like: they converge.

            Example:
              vecsync-cli sync --db phone.db --folder ~/Drive/photos-sync
            """)

    @Option(name: .long, help: "The database file (tracked with `vecsync-cli track`).")
    var db: String

    @Option(name: .long, help: "The shared folder.")
    var folder: String

    @Flag(name: .long, help: "Also remove tombstones every known peer has acknowledged.")
    var compact = false

    func validate() throws {
        if folder.isEmpty { throw ValidationError("--folder cannot be empty") }
    }

    func run() throws {
        let database = try ReplicaFile.open(db)
        let replica = try Replica(opening: database.writer)
        let report = try replica.sync(through: FolderTransport(path: folder))
        print(report)
        for problem in report.problems { print("  \(problem)") }
        for record in report.quarantined { print("  quarantined: \(record)") }
        if compact {
            print("compacted \(try replica.compactTombstones()) tombstones")
        }
    }
}
