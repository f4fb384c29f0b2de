import Foundation
import VecSync

extension DemoCommand {
    /// Two replicas of the photo library, the Mac's built above and a phone's, kept in step
    /// through a shared folder: offline edits on both sides merge column by column, and each
    /// side's vec0 and FTS5 indexes follow the merged rows.
    func runSync(_ mac: VecSyncDatabase, macPhotos: PhotoStore, clock: DemoClock) throws {
        Self.heading("Sync: the Mac's library and a phone, through a shared folder")
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("vecsync-demo-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let transport = FolderTransport(folder)
        let phone = try VecSyncDatabase.inMemory()
        let phonePhotos = try PhotoStore(phone, dimensions: 768, clock: { clock.now() })
        let tables = ["photos", "notes", "albums", "album_photos"]
        let macReplica = try Replica(mac.writer, site: "mac")
        let phoneReplica = try Replica(phone.writer, site: "phone")
        for replica in [macReplica, phoneReplica] {
            for table in tables { try replica.track(table) }
        }
        print("Both track \(tables.joined(separator: ", ")); their vec0 and FTS5 indexes are never synced.")
        print("  \(try macReplica.sync(through: transport))")
        print("  \(try phoneReplica.sync(through: transport))")
        let identical = try Self.embeddings(mac) == Self.embeddings(phone)
        print(
            "The phone has \(try phonePhotos.count()) photos; their embeddings equal the Mac's bit for bit: \(identical ? "yes" : "NO")"
        )

        try mac.writer.write { db in
            try db.execute(sql: "UPDATE photos SET location_name = 'Fujikawaguchiko, Japan' WHERE source_id = 'PH-301'")
        }
        try phone.writer.write { db in
            try db.execute(sql: "UPDATE photos SET mood = 'serene' WHERE source_id = 'PH-301'")
        }
        try phonePhotos.addNote(toPhoto: "PH-301", content: "Cherry blossoms at their peak", id: "note-4")
        _ = try phonePhotos.delete(sourceId: "PH-502")
        print(
            "\nOffline, the Mac edits PH-301's place; the phone edits its mood, adds a note to it and deletes PH-502.")
        for replica in [phoneReplica, macReplica, phoneReplica] {
            print("  \(try replica.sync(through: transport))")
        }
        for (name, store) in [("Mac", macPhotos), ("phone", phonePhotos)] {
            let photo = try store.photo(sourceId: "PH-301")
            let found = try store.search(text: "blossoms", limit: 3).map(\.photo.sourceId)
            let gone = try store.photo(sourceId: "PH-502") == nil
            let nearest = try store.similar(toPhoto: "PH-501", limit: 2).map(\.photo.sourceId)
            print(
                "  \(name): PH-301 at \(photo?.locationName ?? "?"), mood \(photo?.mood ?? "?"); "
                    + "“blossoms” finds \(found); PH-502 \(gone ? "gone" : "still there"); nearest PH-501: \(nearest)")
        }
        let checks = try [macReplica, phoneReplica].map { try $0.verifyDerivedIndexes() }
        let consistent = checks.allSatisfy { $0.values.allSatisfy { $0 == 0 } }
        print(
            "Tables identical: \(try Self.snapshot(mac, tables) == Self.snapshot(phone, tables) ? "yes" : "NO"); "
                + "derived indexes in step on both: \(consistent ? "yes" : "NO")")
    }

    /// Every photo's embedding bytes, in key order.
    private static func embeddings(_ database: VecSyncDatabase) throws -> [Data?] {
        try database.writer.read { db in
            try Data?.fetchAll(db, sql: "SELECT embedding FROM photos ORDER BY source_id")
        }
    }

    /// Every row of `tables`, rendered, in key order.
    private static func snapshot(_ database: VecSyncDatabase, _ tables: [String]) throws -> [String] {
        try database.writer.read { db in
            try tables.flatMap { table in
                try Row.fetchAll(db, sql: "SELECT * FROM \(table.quotedSQLIdentifier) ORDER BY 1").map {
                    "\(table) \($0)"
                }
            }
        }
    }
}
