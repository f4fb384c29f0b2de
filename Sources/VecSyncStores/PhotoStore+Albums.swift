import Foundation
import VecSyncCore

extension PhotoStore {
    /// Creates an album.
    @discardableResult
    public func createAlbum(name: String, id: String = UUID().uuidString) throws -> Album {
        try write { db in
            let now = self.now
            try db.execute(
                sql: "INSERT INTO albums (id, name, created_at, updated_at) VALUES (?, ?, ?, ?)",
                arguments: [id, name, now, now])
            let date = Date(millisecondsSince1970: now)
            return Album(id: id, name: name, createdAt: date, updatedAt: date)
        }
    }

    /// Renames an album.
    public func renameAlbum(id: String, to name: String) throws {
        try updateExisting(
            "album", key: id, sql: "UPDATE albums SET name = ?, updated_at = ? WHERE id = ?",
            arguments: [name, now, id])
    }

    /// Deletes an album and its memberships (not its photos). Returns whether it existed.
    @discardableResult
    public func deleteAlbum(id: String) throws -> Bool {
        try deleteRows(["DELETE FROM album_photos WHERE album_id = ?", "DELETE FROM albums WHERE id = ?"], key: id)
    }

    /// The album with this id, or nil.
    public func album(id: String) throws -> Album? {
        try read { db in try Album.fetchOne(db, sql: "SELECT * FROM albums WHERE id = ?", arguments: [id]) }
    }

    /// Every album, by name.
    public func albums() throws -> [Album] {
        try read { db in try Album.fetchAll(db, sql: "SELECT * FROM albums ORDER BY name, id") }
    }

    /// The albums a photo belongs to, by name.
    public func albums(containing photoId: String) throws -> [Album] {
        try read { db in
            try Album.fetchAll(
                db,
                sql: """
                    SELECT a.* FROM albums AS a JOIN album_photos AS ap ON ap.album_id = a.id
                    WHERE ap.photo_id = ? ORDER BY a.name, a.id
                    """, arguments: [photoId])
        }
    }

    /// Adds photos to an album; photos already in it are left as they are. The membership
    /// row's key is `json_array(album_id, photo_id)`, so the same add on two devices is the
    /// same row.
    public func addPhotos(_ photoIds: [String], toAlbum albumId: String) throws {
        try write { db in
            guard try Bool.fetchOne(db, sql: "SELECT 1 FROM albums WHERE id = ?", arguments: [albumId]) != nil else {
                throw VecSyncError.notFound(kind: "album", key: albumId)
            }
            let now = self.now
            for photoId in photoIds {
                guard
                    try Bool.fetchOne(db, sql: "SELECT 1 FROM photos WHERE source_id = ?", arguments: [photoId]) != nil
                else { throw VecSyncError.notFound(kind: "photo", key: photoId) }
                try db.execute(
                    sql: """
                        INSERT INTO album_photos (id, album_id, photo_id, added_at) VALUES (json_array(?1, ?2), ?1, ?2, ?3)
                        ON CONFLICT(id) DO NOTHING
                        """,
                    arguments: [albumId, photoId, now])
            }
            try db.execute(sql: "UPDATE albums SET updated_at = ? WHERE id = ?", arguments: [now, albumId])
        }
    }

    /// Removes photos from an album.
    public func removePhotos(_ photoIds: [String], fromAlbum albumId: String) throws {
        try write { db in
            for photoId in photoIds {
                try db.execute(
                    sql: "DELETE FROM album_photos WHERE album_id = ? AND photo_id = ?",
                    arguments: [albumId, photoId])
            }
            try db.execute(sql: "UPDATE albums SET updated_at = ? WHERE id = ?", arguments: [now, albumId])
        }
    }

    /// The photos of an album, newest capture first.
    public func photos(inAlbum albumId: String) throws -> [Photo] {
        try read { db in
            try Photo.fetchAll(
                db,
                sql: """
                    SELECT \(Photo.columns("p")) FROM photos AS p JOIN album_photos AS ap ON ap.photo_id = p.source_id
                    WHERE ap.album_id = ? ORDER BY p.capture_date DESC, p.source_id
                    """, arguments: [albumId])
        }
    }
}
