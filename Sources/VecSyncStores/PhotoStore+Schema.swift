import Foundation
import VecSyncCore

extension PhotoStore {
    /// Creates the tables, indexes and triggers when missing. Notes and album entries declare
    /// their relations (`REFERENCES … ON DELETE CASCADE`): deleting a photo or an album takes
    /// them along, and the sync engine, which follows declared foreign keys between tracked
    /// tables, deletes a note or an album entry added on one device to a photo deleted
    /// concurrently on another, on every device. (A database made before the relations were
    /// declared keeps its tables as they are.)
    static func createSchema(_ db: Database, dimensions: Int, index: VectorIndex) throws {
        try db.execute(
            sql: """
                CREATE TABLE IF NOT EXISTS photos (
                  source_id TEXT PRIMARY KEY,
                  capture_date INTEGER,
                  latitude REAL,
                  longitude REAL,
                  location_name TEXT,
                  description TEXT NOT NULL DEFAULT '',
                  objects TEXT NOT NULL DEFAULT '[]',
                  tags TEXT NOT NULL DEFAULT '[]',
                  mood TEXT,
                  scene_type TEXT,
                  text_detected TEXT,
                  analysis_version TEXT NOT NULL DEFAULT '',
                  updated_at INTEGER NOT NULL DEFAULT 0,
                  embedding F32_BLOB(\(dimensions))
                );
                CREATE TABLE IF NOT EXISTS notes (
                  id TEXT PRIMARY KEY,
                  photo_id TEXT NOT NULL REFERENCES photos(source_id) ON DELETE CASCADE,
                  content TEXT NOT NULL DEFAULT '',
                  created_at INTEGER NOT NULL DEFAULT 0,
                  updated_at INTEGER NOT NULL DEFAULT 0
                );
                CREATE INDEX IF NOT EXISTS notes_photo_idx ON notes(photo_id);
                CREATE TABLE IF NOT EXISTS albums (
                  id TEXT PRIMARY KEY,
                  name TEXT NOT NULL DEFAULT '',
                  created_at INTEGER NOT NULL DEFAULT 0,
                  updated_at INTEGER NOT NULL DEFAULT 0
                );
                CREATE INDEX IF NOT EXISTS albums_name_idx ON albums(name);
                CREATE TABLE IF NOT EXISTS album_photos (
                  id TEXT PRIMARY KEY,              -- json_array(album_id, photo_id): the same on every device
                  album_id TEXT NOT NULL REFERENCES albums(id) ON DELETE CASCADE,
                  photo_id TEXT NOT NULL REFERENCES photos(source_id) ON DELETE CASCADE,
                  added_at INTEGER NOT NULL DEFAULT 0
                );
                CREATE INDEX IF NOT EXISTS album_photos_album_idx ON album_photos(album_id, photo_id);
                CREATE INDEX IF NOT EXISTS album_photos_photo_idx ON album_photos(photo_id);
                """)
        let declared = try db.columns(in: "photos").first { $0.name.lowercased() == "embedding" }?.type ?? ""
        let expected = "F32_BLOB(\(dimensions))"
        if declared.replacingOccurrences(of: " ", with: "").uppercased() != expected {
            throw VecSyncError.schemaMismatch(
                table: "photos", reason: "embedding is declared \(declared), expected \(expected)")
        }
        try index.create(db)
        try createTextIndex(db)
    }

    /// The FTS5 row of one photo: its text columns and the text of its notes.
    static let textRowSelect = """
        SELECT p.rowid, p.source_id, p.description, p.tags, p.objects, p.text_detected,
               (SELECT group_concat(n.content, char(10)) FROM notes AS n WHERE n.photo_id = p.source_id)
        FROM photos AS p
        """

    static let textColumns = "rowid, source_id, description, tags, objects, text_detected, notes"

    /// Creates `photos_fts` and the triggers that keep it current, and fills it if new.
    ///
    /// The FTS row of a photo has the photo's rowid. These triggers stay active while the
    /// sync engine merges, so merged photos and notes are searchable at once.
    static func createTextIndex(_ db: Database) throws {
        let exists = try db.tableExists(textIndexName)
        try db.execute(
            sql: """
                CREATE VIRTUAL TABLE IF NOT EXISTS photos_fts USING fts5(
                  source_id UNINDEXED, description, tags, objects, text_detected, notes,
                  tokenize = 'unicode61 remove_diacritics 2');

                CREATE TRIGGER IF NOT EXISTS photos_fts_after_insert AFTER INSERT ON photos BEGIN
                  DELETE FROM photos_fts WHERE rowid = NEW.rowid;
                  INSERT INTO photos_fts(\(textColumns)) \(textRowSelect) WHERE p.rowid = NEW.rowid;
                END;
                CREATE TRIGGER IF NOT EXISTS photos_fts_after_update
                AFTER UPDATE OF source_id, description, tags, objects, text_detected ON photos BEGIN
                  DELETE FROM photos_fts WHERE rowid = OLD.rowid;
                  INSERT INTO photos_fts(\(textColumns)) \(textRowSelect) WHERE p.rowid = NEW.rowid;
                END;
                CREATE TRIGGER IF NOT EXISTS photos_fts_after_delete AFTER DELETE ON photos BEGIN
                  DELETE FROM photos_fts WHERE rowid = OLD.rowid;
                END;

                CREATE TRIGGER IF NOT EXISTS notes_fts_after_insert AFTER INSERT ON notes BEGIN
                  DELETE FROM photos_fts WHERE rowid = (SELECT rowid FROM photos WHERE source_id = NEW.photo_id);
                  INSERT INTO photos_fts(\(textColumns)) \(textRowSelect) WHERE p.source_id = NEW.photo_id;
                END;
                CREATE TRIGGER IF NOT EXISTS notes_fts_after_update AFTER UPDATE OF photo_id, content ON notes BEGIN
                  DELETE FROM photos_fts WHERE rowid IN (SELECT rowid FROM photos WHERE source_id IN (OLD.photo_id, NEW.photo_id));
                  INSERT INTO photos_fts(\(textColumns)) \(textRowSelect) WHERE p.source_id IN (OLD.photo_id, NEW.photo_id);
                END;
                CREATE TRIGGER IF NOT EXISTS notes_fts_after_delete AFTER DELETE ON notes BEGIN
                  DELETE FROM photos_fts WHERE rowid = (SELECT rowid FROM photos WHERE source_id = OLD.photo_id);
                  INSERT INTO photos_fts(\(textColumns)) \(textRowSelect) WHERE p.source_id = OLD.photo_id;
                END;
                """)
        if !exists {
            try fillTextIndex(db)
        }
    }

    static func fillTextIndex(_ db: Database) throws {
        try db.execute(sql: "INSERT INTO photos_fts(\(textColumns)) \(textRowSelect)")
    }

    /// Checks both derived indexes against the canonical rows: the vec0 report, and the
    /// photos whose FTS row is missing or differs (or FTS rows with no photo).
    public func verifyIndexes() throws -> (vector: VectorIndexReport, textOutOfStep: [String]) {
        try read { db in
            (try vectorIndex.verify(db), try Self.verifyTextIndex(db))
        }
    }

    /// Whether `db` holds the photo library's text index (`photos_fts` beside `photos`).
    public static func hasTextIndex(_ db: Database) throws -> Bool {
        try db.tableExists(textIndexName) && db.tableExists("photos")
    }

    /// The source ids of photos whose `photos_fts` row is missing or differs from the
    /// canonical rows, and of FTS rows with no photo. Empty when the text index is current.
    public static func verifyTextIndex(_ db: Database) throws -> [String] {
        try VecSyncError.wrap {
            try String.fetchAll(
                db,
                sql: """
                    WITH expected(rowid, source_id, description, tags, objects, text_detected, notes) AS (\(Self.textRowSelect))
                    SELECT e.source_id FROM expected AS e LEFT JOIN photos_fts AS f ON f.rowid = e.rowid
                    WHERE f.rowid IS NULL OR f.source_id IS NOT e.source_id OR f.description IS NOT e.description
                       OR f.tags IS NOT e.tags OR f.objects IS NOT e.objects
                       OR f.text_detected IS NOT e.text_detected OR f.notes IS NOT e.notes
                    UNION
                    SELECT f.source_id FROM photos_fts AS f
                    WHERE NOT EXISTS (SELECT 1 FROM photos AS p WHERE p.rowid = f.rowid AND p.source_id = f.source_id)
                    ORDER BY 1
                    """)
        }
    }

    /// Rebuilds `photos_vec` and `photos_fts` from the canonical rows.
    public func rebuildIndexes() throws {
        let index = vectorIndex
        try write { db in
            try index.rebuild(db)
            try Self.rebuildTextIndex(db)
        }
    }

    /// Refills `photos_fts` from the canonical photos and notes.
    public static func rebuildTextIndex(_ db: Database) throws {
        try VecSyncError.wrap {
            try db.execute(sql: "DELETE FROM photos_fts")
            try fillTextIndex(db)
        }
    }
}
