import ArgumentParser
import Foundation
import VecSync
import VecSyncHTTP

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

            Merges commit in transactions of at most 400 rows or 1 MB of change sets, each \
            with its cursors, so a first sync of many rows can be interrupted at any moment \
            (Ctrl-C, a kill) and keeps what it merged; the next sync goes on from there. \
            While it pulls, a progress bar shows the change set bytes merged on standard \
            error when that is a terminal; --events prints one line per event instead.

            When a change set file of another replica is damaged or missing, the sync says \
            which changes it waits for; through a folder it asks that replica to publish \
            them again (the replica does on its next sync), through a server it downloads \
            them again on the next sync. `vecsync-cli status` shows the same without syncing.

            --until-quiet syncs again until a sync changes nothing on either side (pushes \
            nothing, applies nothing, skips no file, waits for nothing), at most --max-runs \
            times, printing each run's line; it exits with status 3 when the last run was \
            still not quiet. Scripts use it instead of a loop. `vecsync-cli status` says when \
            the first sync through a destination finished, however many runs it took.

            Examples:
              vecsync-cli sync --db phone.db --folder ~/Drive/photos-sync
              vecsync-cli sync --db phone.db --folder ~/Drive/photos-sync --until-quiet
              VECSYNC_TOKEN=vst_… vecsync-cli sync --db phone.db --server https://sync.example.com --space family
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

    @Flag(name: .long, help: "Print one line per sync event on standard error (phases, pushes, commits, waits).")
    var events = false

    @Flag(name: .long, help: "Never draw the progress bar.")
    var noProgress = false

    @Flag(name: .long, help: "Sync again until a sync changes nothing on either side (at most --max-runs times).")
    var untilQuiet = false

    @Option(name: .long, help: "With --until-quiet, the most syncs to run (default 20).")
    var maxRuns = 20

    /// The token from --token or VECSYNC_TOKEN.
    var resolvedToken: String? {
        token ?? ProcessInfo.processInfo.environment["VECSYNC_TOKEN"]
    }

    func validate() throws {
        if maxRuns < 1 { throw ValidationError("--max-runs must be at least 1") }
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
        let database = try CLIDatabase.open(db)
        let replica = try Replica(opening: database.writer)
        var bar: ProgressBar?
        let drawBar = !events && !noProgress && ProgressBar.stderrIsTerminal
        let printEvents = events
        let handler: (SyncEvent) throws -> Void = { event in
            if printEvents {
                FileHandle.standardError.write(Data((Self.line(for: event) + "\n").utf8))
            } else if drawBar, case .merged(let progress) = event, let expected = progress.expectedBytes {
                if bar == nil { bar = ProgressBar(total: expected, unit: "bytes", enabled: true) }
                bar?.update(progress.bytes)
            }
        }
        var runs = 0
        while true {
            runs += 1
            let report: SyncReport
            if let server, let url = URL(string: server), let space, let token = resolvedToken {
                report = try replica.sync(
                    through: HTTPTransport(server: url, space: space, token: token, deviceName: deviceName),
                    events: handler)
            } else {
                report = try replica.sync(through: FolderTransport(path: folder ?? ""), events: handler)
            }
            bar?.finish()
            bar = nil
            print(untilQuiet ? "run \(runs): \(report)" : "\(report)")
            for problem in report.problems { print("  \(problem)") }
            for record in report.quarantined { print("  quarantined: \(record)") }
            for gap in report.waiting {
                let asked =
                    server == nil
                    ? "asked '\(gap.origin)' to publish them again" : "the next sync downloads them again"
                print("  \(gap); \(asked)")
            }
            guard untilQuiet, !report.isQuiet else { break }
            if runs >= maxRuns {
                print("still not quiet after \(runs) runs")
                if compact { print("compacted \(try replica.compactTombstones()) tombstones") }
                throw ExitCode(3)
            }
        }
        if untilQuiet { print("quiet after \(runs == 1 ? "1 run" : "\(runs) runs")") }
        if compact {
            print("compacted \(try replica.compactTombstones()) tombstones")
        }
    }

    /// One line for an event, as --events prints it.
    static func line(for event: SyncEvent) -> String {
        switch event {
        case .phase(let phase): return "phase \(phase.rawValue)"
        case .pushed(let progress): return "pushed \(progress)"
        case .merged(let progress): return "merged \(progress)"
        case .waiting(let gap): return gap.description
        case .finished: return "finished"
        }
    }
}
