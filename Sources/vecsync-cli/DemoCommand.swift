import ArgumentParser
import Foundation
import VecSync

/// `vecsync-cli demo`: a message and a photo library built with synthetic embeddings, then
/// searched, and the photo library synced with a second replica.
struct DemoCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Build a sample chat history and photo library, search them, and sync the library.",
        discussion: """
            The embeddings are synthetic and deterministic: each topic (temples, ramen, \
            beaches, mountains, …) is a fixed direction in 1536 (messages) or 768 (photos) \
            dimensions, and each text is its topic's direction plus some noise. So the answers \
            can be checked by eye: a question about temples finds the temple messages.

            It shows, in order: filtered recall in a chat thread (exactly k rows even when the \
            nearest messages belong to other threads); the thread's FQAHO parameters moving \
            with approvals; vector search over photos with album and date filters; full-text \
            and hybrid search; an index that is tampered with, verified and rebuilt; and the \
            photo library synced with a phone's copy through a shared folder, with offline \
            edits on both sides.
            """)

    @Option(name: .long, help: "Write the sample library to this database file instead of memory.")
    var db: String?

    func run() throws {
        let database: VecSyncDatabase
        if let db {
            if FileManager.default.fileExists(atPath: db) { try FileManager.default.removeItem(atPath: db) }
            database = try VecSyncDatabase(path: db)
        } else {
            database = try VecSyncDatabase.inMemory()
        }
        // A fixed clock one minute apart per reading: the same output on every run.
        let clock = DemoClock(start: Self.date("2024-06-01"))
        try runMessages(database, clock: clock)
        let photos = try runPhotos(database, clock: clock)
        try runSync(database, macPhotos: photos, clock: clock)
        if let db { print("\nThe sample library is in \(db): try `vecsync-cli verify --db \(db)`.") }
    }

    static func date(_ text: String) -> Date {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withFullDate]
        return formatter.date(from: text) ?? Date(timeIntervalSince1970: 0)
    }

    static func heading(_ text: String) {
        print("\n== \(text) ==")
    }

    static func distance(_ value: Double) -> String {
        String(format: "%.3f", value)
    }
}
