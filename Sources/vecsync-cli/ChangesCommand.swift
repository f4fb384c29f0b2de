import ArgumentParser
import Foundation
import VecSync

/// `vecsync-cli changes`: prints a replica's pending change set as JSON.
struct ChangesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "changes",
        abstract: "Print the changes of a replica since a sequence number, as JSON.",
        discussion: """
            For debugging a sync: shows the rows that `sync` would push after --since, with \
            each column's value, version and site. Blobs (embeddings) appear in base64.

            Example:
              vecsync-cli changes --db phone.db --since 0 --limit 10
            """)

    @Option(name: .long, help: "The database file.")
    var db: String

    @Option(name: .long, help: "Show changes after this local sequence number.")
    var since: Int64 = 0

    @Option(name: .long, help: "At most this many rows.")
    var limit: Int = 400

    func validate() throws {
        if since < 0 { throw ValidationError("--since must be 0 or more") }
        if limit < 1 { throw ValidationError("--limit must be at least 1") }
    }

    func run() throws {
        let database = try CLIDatabase.open(db)
        let replica = try Replica(opening: database.writer)
        print(try replica.changes(since: since, maximumRows: limit).jsonString())
    }
}
