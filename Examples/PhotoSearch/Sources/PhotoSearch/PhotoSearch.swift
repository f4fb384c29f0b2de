import Foundation
import VecSync

/// Two devices of one photo library: each opens its own database, stores photos with their
/// embeddings, searches them, and syncs with the other through a shared folder. Exits 1 if
/// any step does not give what it should.
@main
struct PhotoSearch {
    static let dimensions = 4

    /// The library's schema: embeddings in an ordinary column (what syncs), and a vec0 index
    /// derived from it (never synced, brought up to date after each merge).
    static let index = VectorIndex(
        table: "photos", primaryKey: "id", embeddingColumn: "embedding",
        dimensions: dimensions, metric: .cosine, name: "photos_vec")

    static func openLibrary(at path: String, site: SiteID) throws -> (VecSyncDatabase, Replica) {
        let db = try VecSyncDatabase(path: path)
        try db.write { db in
            try db.execute(sql: """
                CREATE TABLE IF NOT EXISTS photos (
                    id TEXT PRIMARY KEY NOT NULL, title TEXT, embedding F32_BLOB(\(dimensions)))
                """)
            if try !db.tableExists(index.name) { try index.create(db) }
        }
        let replica = try Replica(db.writer, site: site)
        try replica.track("photos")
        return (db, replica)
    }

    static func addPhoto(_ db: VecSyncDatabase, id: String, title: String, embedding: Vector) throws {
        try db.write { db in
            try db.execute(
                sql: "INSERT INTO photos (id, title, embedding) VALUES (?, ?, ?)",
                arguments: [id, title, embedding])
        }
    }

    static func nearest(_ db: VecSyncDatabase, to query: Vector) throws -> [String] {
        try db.read { db in try index.search(db, near: query, limit: 2, as: String.self).map(\.key) }
    }

    static func main() throws {
        let root = FileManager.default.temporaryDirectory
            .appendingPathComponent("photosearch-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: root) }
        let folder = FolderTransport(root.appendingPathComponent("sync"))

        let (mac, macReplica) = try openLibrary(at: root.appendingPathComponent("mac.db").path, site: "mac")
        let (phone, phoneReplica) = try openLibrary(at: root.appendingPathComponent("phone.db").path, site: "phone")

        try addPhoto(mac, id: "beach", title: "Sunset at the beach", embedding: [0.9, 0.1, 0, 0])
        try addPhoto(mac, id: "forest", title: "Forest walk", embedding: [0, 0.9, 0.1, 0])
        try addPhoto(phone, id: "harbour", title: "Boats in the harbour", embedding: [0.8, 0, 0, 0.2])

        let beforeSync = try nearest(phone, to: [1, 0, 0, 0])
        _ = try macReplica.sync(through: folder)
        _ = try phoneReplica.sync(through: folder)
        _ = try macReplica.sync(through: folder)
        let onPhone = try nearest(phone, to: [1, 0, 0, 0])
        let onMac = try nearest(mac, to: [1, 0, 0, 0])

        print("extension \(VecSyncExtension.version) on SQLite \(try mac.read { db in try String.fetchOne(db, sql: "SELECT sqlite_version()") ?? "?" })")
        print("phone, before sync: \(beforeSync)")
        print("phone, after sync:  \(onPhone)")
        print("mac, after sync:    \(onMac)")
        let expected = ["beach", "harbour"]
        guard beforeSync == ["harbour"], onPhone == expected, onMac == expected else {
            FileHandle.standardError.write(Data("PhotoSearch: expected \(expected) on both devices after sync\n".utf8))
            exit(1)
        }
        print("PhotoSearch: both devices find \(expected)")
    }
}
