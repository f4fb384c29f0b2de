import ArgumentParser
import Foundation
import VecSync

/// `vecsync-cli sync`: pushes, pulls and merges through a shared folder or a sync server.
struct SyncCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync",
        abstract: "Sync a database with every other replica through a shared folder or a vecsync-server.",
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

            With --server, --space and --token instead of --folder, the same happens through \
            a vecsync-server: the device registers (host name and platform), posts its change \
            sets (each with its SHA-256; a retried one is stored once), then downloads and \
            merges the space's change sets it lacks. Both cursors live in the database, so an \
            interrupted sync resumes. The token may also come from VECSYNC_TOKEN.

            Examples:
              vecsync-cli sync --db phone.db --folder ~/Drive/photos-sync
              vecsync-cli sync --db phone.db --server https://sync.example.com --space family --token vst_…
            """)

    @Option(name: .long, help: "The database file (tracked with `vecsync-cli track`).")
    var db: String

    @Option(name: .long, help: "The shared folder.")
    var folder: String?

    @Option(name: .long, help: "The sync server's URL (http://host:port), instead of --folder.")
    var server: String?

    @Option(name: .long, help: "The space on the server.")
    var space: String?

    @Option(name: .long, help: "A device token of the space (or set VECSYNC_TOKEN).")
    var token: String?

    @Option(name: .long, help: "The name this device registers with on the server (default: the host name).")
    var deviceName: String?

    @Flag(name: .long, help: "Also remove tombstones every known peer has acknowledged.")
    var compact = false

    /// The token from --token or VECSYNC_TOKEN.
    var resolvedToken: String? {
        token ?? ProcessInfo.processInfo.environment["VECSYNC_TOKEN"]
    }

    func validate() throws {
        switch (folder, server) {
        case (nil, nil):
            throw ValidationError("give --folder, or --server with --space and --token")
        case (.some, .some):
            throw ValidationError("give --folder or --server, not both")
        case (let folder?, nil):
            if folder.isEmpty { throw ValidationError("--folder cannot be empty") }
            if space != nil || token != nil { throw ValidationError("--space and --token go with --server") }
        case (nil, let server?):
            guard let url = URL(string: server), ["http", "https"].contains(url.scheme ?? ""), url.host != nil else {
                throw ValidationError("--server must be an http:// or https:// URL, not '\(server)'")
            }
            guard let space, !space.isEmpty else { throw ValidationError("--server needs --space") }
            guard let token = resolvedToken, !token.isEmpty else {
                throw ValidationError("--server needs --token (or VECSYNC_TOKEN)")
            }
        }
    }

    func run() throws {
        let database = try ReplicaFile.open(db)
        let replica = try Replica(opening: database.writer)
        let report: SyncReport
        if let server, let url = URL(string: server), let space, let token = resolvedToken {
            report = try replica.sync(
                through: HTTPTransport(server: url, space: space, token: token, deviceName: deviceName))
        } else {
            report = try replica.sync(through: FolderTransport(path: folder ?? ""))
        }
        print(report)
        for problem in report.problems { print("  \(problem)") }
        for record in report.quarantined { print("  quarantined: \(record)") }
        if compact {
            print("compacted \(try replica.compactTombstones()) tombstones")
        }
    }
}
