import Foundation
import GRDB
import ServerTestSupport
import VecSyncCore
import VecSyncReplication
import VecSyncStores
import VecSyncHTTP

/// A device with the photo library: photos with 768-d embeddings (vec0 index), notes and
/// albums (FTS5 over photos), all tracked; the indexes are derived and rebuilt locally.
struct PhotoDevice: Sendable {
    static let tables = ["photos", "notes", "albums", "album_photos"]

    let name: String
    let database: VecSyncDatabase
    let photos: PhotoStore
    let replica: Replica

    init(_ name: String, options: Replica.Options = Replica.Options()) throws {
        self.name = name
        database = try VecSyncDatabase.inMemory()
        photos = try PhotoStore(database, dimensions: 768, clock: { Date(timeIntervalSince1970: 1_700_000_000) })
        replica = try Replica(database.writer, site: SiteID(name), options: options)
        for table in Self.tables { try replica.track(table) }
    }

    /// The device `name` with its database replaced by `backup`, as after a restore.
    init(_ name: String, restoring backup: DatabaseQueue, options: Replica.Options = Replica.Options()) throws {
        self.name = name
        database = try VecSyncDatabase.inMemory()
        try backup.backup(to: database.writer)
        photos = try PhotoStore(database, dimensions: 768, clock: { Date(timeIntervalSince1970: 1_700_000_000) })
        replica = try Replica(database.writer, site: SiteID(name), options: options)
    }

    /// A new device `name` holding `count` random photos (`prefix`-0, …) drawn from a
    /// generator seeded with `seed` (``SeededRandom``: `VECSYNC_SEED` replays another).
    init(_ name: String, photos count: Int, prefix: String, seed: UInt64, options: Replica.Options = Replica.Options())
        throws
    {
        try self.init(name, options: options)
        var random = SeededRandom(defaultSeed: seed)
        try addPhotos(count, prefix: prefix, random: &random)
    }

    /// Syncs through `transport` on a thread of its own (``blocking(_:)``), so that the
    /// cooperative pool stays free to run the in-process server.
    @discardableResult
    func sync(through transport: HTTPTransport) async throws -> SyncReport {
        try await blocking { try replica.sync(through: transport) }
    }

    /// Adds `count` photos with random unit embeddings and a note on every third one.
    func addPhotos(_ count: Int, prefix: String, random: inout SeededRandom) throws {
        for index in 0..<count {
            let id = "\(prefix)-\(index)"
            let values = (0..<768).map { _ in Float.random(in: -1...1, using: &random) }
            let photo = Photo(
                sourceId: id, description: "\(prefix) photo \(index) of a \(["beach", "forest", "city"][index % 3])",
                mood: ["calm", "busy"][index % 2])
            _ = try photos.upsert(photo, embedding: Vector(values))
            if index % 3 == 0 {
                _ = try photos.addNote(toPhoto: id, content: "\(prefix) note \(index) about lanterns", id: "\(id)-note")
            }
        }
    }

    /// Every row of the tracked tables, in key order.
    /// The change sets of a new device `name` holding `count` random photos (`prefix`-0, …),
    /// `batchRows` rows a change set, serialized, with the seed that made them.
    static func serializedBatches(_ name: String, photos count: Int, prefix: String, batchRows: Int, seed: UInt64)
        throws -> (batches: [Data], seed: UInt64)
    {
        var random = SeededRandom(defaultSeed: seed)
        let device = try PhotoDevice(name, options: Replica.Options(maximumBatchRows: batchRows))
        try device.addPhotos(count, prefix: prefix, random: &random)
        var batches: [Data] = []
        try device.replica.forEachChangeSet(since: 0) { batches.append($0.serialized()) }
        return (batches, random.seed)
    }

    func snapshot() throws -> [String] {
        try database.writer.read { db in
            try Self.tables.flatMap { table in
                try Row.fetchAll(db, sql: "SELECT * FROM \(table.quotedDatabaseIdentifier) ORDER BY 1, 2").map {
                    "\(table) \($0)"
                }
            }
        }
    }

    /// What the derived indexes answer: the nearest photos to a fixed query through vec0,
    /// and the photos a word finds through FTS5.
    func searches(query: Vector) throws -> [String] {
        let nearest = try photos.search(similarTo: query, limit: 10).map { "\($0.photo.sourceId) \($0.distance)" }
        let found = try photos.search(text: "beach", limit: 1000).map(\.photo.sourceId).sorted()
        return nearest + found
    }
}
