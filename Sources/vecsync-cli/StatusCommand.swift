import ArgumentParser
import Foundation
import VecSync

/// `vecsync-cli status`: where a replica stands with sync, read from its database.
struct StatusCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show when a database last synced, what it has not pushed, and how far it merged each peer.",
        discussion: """
            Reads the database only (no folder, no server): the end of the last sync through \
            each folder or server and its outcome; the rows changed here after each push \
            cursor (pending local changes); each peer's cursors — how far its changes are \
            merged here, how far it has merged ours — and the changes this replica waits for \
            (a damaged or missing change set; see `vecsync-cli sync`); rows in quarantine.

            Examples:
              vecsync-cli status --db phone.db
              vecsync-cli status --db phone.db --json
            """)

    @Option(name: .long, help: "The database file (tracked with `vecsync-cli track`).")
    var db: String

    @Flag(name: .long, help: "Print one JSON object instead of lines.")
    var json = false

    func run() throws {
        let database = try CLIDatabase.open(db)
        let replica = try Replica(opening: database.writer)
        let status = try replica.syncStatus()
        guard json else {
            print(status)
            return
        }
        let format = ISO8601DateFormatter()
        let object: [String: Any] = [
            "site": status.site.rawValue,
            "sequence": status.sequence,
            "lastSync": status.lastSync.map { format.string(from: $0) } ?? NSNull(),
            "pendingLocalChanges": status.pendingLocalChanges,
            "quarantined": status.quarantined,
            "lastSyncs": status.lastSyncs.map {
                [
                    "destination": $0.destination, "finished": format.string(from: $0.finished),
                    "succeeded": $0.succeeded, "summary": $0.summary,
                ] as [String: Any]
            },
            "destinations": status.destinations.map {
                ["destination": $0.destination, "publishedThrough": $0.publishedThrough, "pendingRows": $0.pendingRows]
                    as [String: Any]
            },
            "peers": status.peers.map { peer -> [String: Any] in
                var entry: [String: Any] = [
                    "site": peer.site.rawValue, "received": peer.received, "acknowledged": peer.acknowledged,
                ]
                if let gap = peer.waitingFor {
                    entry["waitingFor"] = ["since": gap.since, "through": gap.through, "reason": gap.reason]
                }
                return entry
            },
        ]
        let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
        print(String(decoding: data, as: UTF8.self))
    }
}
