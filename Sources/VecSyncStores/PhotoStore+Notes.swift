import Foundation
import VecSyncCore

extension PhotoStore {
    /// Adds a note to a photo. Its text becomes searchable with the photo's.
    @discardableResult
    public func addNote(toPhoto photoId: String, content: String, id: String = UUID().uuidString) throws -> Note {
        try write { db in
            guard try Bool.fetchOne(db, sql: "SELECT 1 FROM photos WHERE source_id = ?", arguments: [photoId]) != nil
            else {
                throw VecSyncError.notFound(kind: "photo", key: photoId)
            }
            let now = self.now
            try db.execute(
                sql: "INSERT INTO notes (id, photo_id, content, created_at, updated_at) VALUES (?, ?, ?, ?, ?)",
                arguments: [id, photoId, content, now, now])
            let date = Date(millisecondsSince1970: now)
            return Note(id: id, photoId: photoId, content: content, createdAt: date, updatedAt: date)
        }
    }

    /// Replaces a note's text.
    public func updateNote(id: String, content: String) throws {
        try updateExisting(
            "note", key: id, sql: "UPDATE notes SET content = ?, updated_at = ? WHERE id = ?",
            arguments: [content, now, id])
    }

    /// Deletes a note. Returns whether it existed.
    @discardableResult
    public func deleteNote(id: String) throws -> Bool {
        try deleteRows(["DELETE FROM notes WHERE id = ?"], key: id)
    }

    /// The note with this id, or nil.
    public func note(id: String) throws -> Note? {
        try read { db in try Note.fetchOne(db, sql: "SELECT * FROM notes WHERE id = ?", arguments: [id]) }
    }

    /// A photo's notes, oldest first.
    public func notes(forPhoto photoId: String) throws -> [Note] {
        try read { db in
            try Note.fetchAll(
                db, sql: "SELECT * FROM notes WHERE photo_id = ? ORDER BY created_at, id",
                arguments: [photoId])
        }
    }
}
