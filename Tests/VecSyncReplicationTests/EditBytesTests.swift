import Foundation
import GRDB
import Testing
import VecSyncCore
import VecSyncTestSupport

@testable import VecSyncReplication

/// Edits travel as edits from every device: a device whose first sync only downloaded
/// pushes the columns it changed, not whole rows with their embeddings.
@Suite("Edit bytes")
struct EditBytesTests: FolderSuite {
    let scratch = ScratchFolder("edit-bytes")

    static let dimensions = 768

    /// A database with photos of 768-d embeddings, tracked.
    static func replica(_ site: SiteID) throws -> Replica {
        let queue = try DatabaseQueue(configuration: Configuration.vecSync())
        try queue.write { db in
            try db.execute(
                sql:
                    "CREATE TABLE photos (id TEXT PRIMARY KEY, title TEXT, tags TEXT, embedding F32_BLOB(\(dimensions)))"
            )
        }
        let replica = try Replica(queue, site: site)
        try replica.track("photos")
        return replica
    }

    /// A UUID-shaped key, as apps use.
    static func key(_ index: Int) -> String {
        "7d3c1f62-0b6e-4c55-9a57-" + String(format: "%012d", index)
    }

    /// Bytes of the change set files in `site`'s subfolder of `folder`.
    static func publishedBytes(_ folder: URL, _ site: SiteID) throws -> Int {
        let directory = folder.appendingPathComponent(FolderTransport.folderName(for: site))
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return try names.filter { $0.hasSuffix(".vcs") }.reduce(0) { sum, name in
            let attributes = try FileManager.default.attributesOfItem(
                atPath: directory.appendingPathComponent(name).path)
            return sum + ((attributes[.size] as? Int) ?? 0)
        }
    }

    @Test("a device whose first sync only downloaded pushes only the columns it edits")
    func downloadedDeviceSendsOnlyEditedColumns() throws {
        let mac = try Self.replica("mac")
        var random = SeededRandom(defaultSeed: 0xED17_0004)
        try mac.writer.write { db in
            for index in 0..<200 {
                let vector = Vector((0..<Self.dimensions).map { _ in Float.random(in: -1...1, using: &random) })
                try db.execute(
                    sql: "INSERT INTO photos VALUES (?, ?, ?, ?)",
                    arguments: [Self.key(index), "title \(index)", "[]", vector.blob])
            }
        }
        try mac.sync(through: transport)
        // The phone's first sync only downloads.
        let phone = try Self.replica("phone")
        try phone.sync(through: transport)
        #expect(try Self.publishedBytes(folder, "phone") == 0)

        // 100 one-column edits (a tag list of 50-odd bytes, a 36-byte key), then a sync.
        var edited = 0
        try phone.writer.write { db in
            for index in 0..<100 {
                let key = Self.key(index * 2)
                let tags = "[\"beach\",\"sunset\",\"family\",\"summer-2024\",\"edit-\(index)\"]"
                try db.execute(sql: "UPDATE photos SET tags = ? WHERE id = ?", arguments: [tags, key])
                edited += key.utf8.count + tags.utf8.count
            }
        }
        try phone.sync(through: transport)
        let pushed = try Self.publishedBytes(folder, "phone")
        let ratio = Double(pushed) / Double(edited)
        print("100 one-column edits: \(pushed) bytes pushed for \(edited) bytes of keys and values (\(ratio)x)")
        #expect(ratio <= 1.5, "\(pushed) bytes pushed for \(edited) bytes of edited keys and values")

        // The mac merges them: both hold the same rows.
        try mac.sync(through: transport)
        let tags = try mac.writer.read { db in
            try String.fetchAll(db, sql: "SELECT tags FROM photos WHERE tags != '[]' ORDER BY id")
        }
        #expect(tags.count == 100)
    }
}
