import Foundation
import VecSyncCore

extension PhotoStore {
    /// Inserts or updates a photo's metadata, stamping `updated_at`. With an embedding, it
    /// replaces the stored one (it must have ``dimensions`` finite elements); with nil, the
    /// stored embedding is kept. The derived indexes follow through their triggers.
    ///
    /// Returns the photo as stored.
    @discardableResult
    public func upsert(_ photo: Photo, embedding: Vector? = nil) throws -> Photo {
        try embedding?.validate(dimensions: dimensions)
        return try write { db in
            let now = self.now
            try db.execute(
                sql: """
                    INSERT INTO photos (source_id, capture_date, latitude, longitude, location_name, description,
                                        objects, tags, mood, scene_type, text_detected, analysis_version,
                                        updated_at, embedding)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    ON CONFLICT(source_id) DO UPDATE SET
                      capture_date = excluded.capture_date, latitude = excluded.latitude,
                      longitude = excluded.longitude, location_name = excluded.location_name,
                      description = excluded.description, objects = excluded.objects, tags = excluded.tags,
                      mood = excluded.mood, scene_type = excluded.scene_type,
                      text_detected = excluded.text_detected, analysis_version = excluded.analysis_version,
                      updated_at = excluded.updated_at,
                      embedding = coalesce(excluded.embedding, photos.embedding)
                    """,
                arguments: [
                    photo.sourceId, photo.captureDate?.millisecondsSince1970, photo.latitude, photo.longitude,
                    photo.locationName, photo.description, Photo.encodeList(photo.objects),
                    Photo.encodeList(photo.tags), photo.mood, photo.sceneType, photo.textDetected,
                    photo.analysisVersion, now, embedding,
                ])
            var stored = photo
            stored.updatedAt = Date(millisecondsSince1970: now)
            return stored
        }
    }

    /// The photo with this source id, or nil.
    public func photo(sourceId: String) throws -> Photo? {
        try read { db in
            try Photo.fetchOne(
                db, sql: "SELECT \(Photo.columns("p")) FROM photos AS p WHERE p.source_id = ?",
                arguments: [sourceId])
        }
    }

    /// Every photo, newest capture first.
    public func allPhotos() throws -> [Photo] {
        try read { db in
            try Photo.fetchAll(
                db,
                sql: """
                    SELECT \(Photo.columns("p")) FROM photos AS p ORDER BY p.capture_date DESC, p.source_id
                    """)
        }
    }

    /// The number of photos.
    public func count() throws -> Int {
        try read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM photos") ?? 0 }
    }

    /// A photo's embedding, or nil when it has none.
    public func embedding(ofPhoto sourceId: String) throws -> Vector? {
        try storedEmbedding(in: "photos", keyColumn: "source_id", key: sourceId)
    }

    /// Replaces a photo's embedding; nil removes it (and the photo from vector search).
    public func setEmbedding(_ embedding: Vector?, ofPhoto sourceId: String) throws {
        try embedding?.validate(dimensions: dimensions)
        try updateExisting(
            "photo", key: sourceId, sql: "UPDATE photos SET embedding = ?, updated_at = ? WHERE source_id = ?",
            arguments: [embedding, now, sourceId])
    }

    /// Deletes a photo with its notes and album memberships. Returns whether it existed.
    @discardableResult
    public func delete(sourceId: String) throws -> Bool {
        try deleteRows(
            [
                "DELETE FROM notes WHERE photo_id = ?", "DELETE FROM album_photos WHERE photo_id = ?",
                "DELETE FROM photos WHERE source_id = ?",
            ], key: sourceId)
    }
}
