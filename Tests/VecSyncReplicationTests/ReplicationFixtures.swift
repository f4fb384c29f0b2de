import Foundation
import GRDB
import Testing
import VecSyncCore
import VecSyncTestSupport

@testable import VecSyncReplication

/// The schema every test replica starts from: photos with embeddings, albums with an
/// FTS5 index kept by user triggers (keyed by an UNINDEXED copy of the album's TEXT key),
/// a vec0 index over the embeddings, ``tags``: BLOB keys (16-byte UUIDs) and names that
/// need quoting, and notes whose foreign key refers to a photo (GRDB enforces foreign keys).
enum Fixture {
    static let dimensions = 4

    static let schema = """
        CREATE TABLE photos (
          id TEXT PRIMARY KEY NOT NULL,
          title TEXT,
          rating INTEGER,
          score REAL,
          embedding F32_BLOB(4));
        CREATE TABLE albums (
          id TEXT PRIMARY KEY,
          name TEXT NOT NULL DEFAULT '',
          cover TEXT);
        CREATE VIRTUAL TABLE albums_fts USING fts5(id UNINDEXED, name);
        CREATE TRIGGER albums_fts_insert AFTER INSERT ON albums BEGIN
          DELETE FROM albums_fts WHERE id = new.id;  -- a row INSERT OR REPLACE removed silently
          INSERT INTO albums_fts (id, name) VALUES (new.id, new.name);
        END;
        CREATE TRIGGER albums_fts_update AFTER UPDATE ON albums BEGIN
          DELETE FROM albums_fts WHERE id IN (old.id, new.id);
          INSERT INTO albums_fts (id, name) VALUES (new.id, new.name);
        END;
        CREATE TRIGGER albums_fts_delete AFTER DELETE ON albums BEGIN
          DELETE FROM albums_fts WHERE id = old.id;
        END;
        CREATE TABLE "tag ""s"")--" ("k""ey" BLOB PRIMARY KEY, "la'bel" TEXT, "wei""ght" REAL);
        CREATE TABLE notes (id TEXT PRIMARY KEY, photo TEXT REFERENCES photos(id), body TEXT);
        """

    /// The tracked table with BLOB keys and quoted names, as SQLite stores its name.
    static let tags = "tag \"s\")--"

    /// The tracked tables, in the order snapshots list them.
    static let trackedTables = ["photos", "albums", tags, "notes"]

    static let vectorIndex = VectorIndex(
        table: "photos", primaryKey: "id", embeddingColumn: "embedding",
        dimensions: dimensions, metric: .l2, name: "photos_vec")

    /// An in-memory database with the extension, the schema, and the vec0 index.
    static func database() throws -> DatabaseQueue {
        let queue = try DatabaseQueue(configuration: Configuration.vecSync())
        try queue.write { db in
            try db.execute(sql: schema)
            try vectorIndex.create(db)
        }
        return queue
    }

    /// A replica of a fresh database, tracking photos, albums, tags and notes.
    /// `wallClock` fixes the replica's wall clock (milliseconds) before anything is tracked.
    /// `before` writes rows before anything is tracked, `counters` declares counter columns
    /// (``CounterColumns``) by table, and `trackingOrder` is the order tables are tracked in
    /// (notes before photos tracks a child before its parent).
    static func replica(
        _ site: String, options: Replica.Options = Replica.Options(),
        wallClock: Int64? = nil, trackingOrder: [String] = trackedTables,
        counters: [String: [String]] = [:], before: ((Database) throws -> Void)? = nil
    ) throws -> Replica {
        let queue = try database()
        try queue.write { db in
            for (table, columns) in counters { try CounterColumns.declare(db, table: table, columns: columns) }
            try before?(db)
        }
        let replica = try Replica(queue, site: SiteID(site), options: options)
        if let wallClock { try replica.setWallClockOverride(milliseconds: wallClock) }
        for table in trackingOrder { try replica.track(table) }
        return replica
    }

    /// Every row of every tracked table, each value rendered with its exact type and bytes.
    static func snapshot(_ replica: Replica) throws -> [String: [String]] {
        try replica.writer.read { db in
            var tables: [String: [String]] = [:]
            for table in trackedTables {
                let rows = try Row.fetchAll(db, sql: "SELECT * FROM \(table.quotedSQLIdentifier) ORDER BY 1")
                tables[table] = rows.map { row in
                    row.databaseValues.map(render).joined(separator: "|")
                }
            }
            // Counter contributions converge too, not only the sums.
            if try db.tableExists("vecsync_counters") {
                tables["vecsync_counters"] = try Row.fetchAll(
                    db, sql: "SELECT id, value FROM vecsync_counters ORDER BY id"
                ).map { row in row.databaseValues.map(render).joined(separator: "|") }
            }
            return tables
        }
    }

    static func render(_ value: DatabaseValue) -> String {
        switch value.storage {
        case .null: "null"
        case .int64(let integer): "i\(integer)"
        case .double(let real): "r\(String(real.bitPattern, radix: 16))"
        case .string(let text): "t" + text.utf8.map { String($0, radix: 16) }.joined()
        case .blob(let blob): "b" + blob.map { String($0, radix: 16) }.joined()
        }
    }

    /// The photos by distance to `query` through the vec0 index, and albums matching a word
    /// through FTS5.
    ///
    /// vec0 returns rows at equal distances in its storage order, which depends on the order
    /// rows reached each replica's index; so the ranking asks for every row and orders ties
    /// by key before comparing.
    static func searches(_ replica: Replica, query: Vector, word: String) throws -> [String] {
        try replica.writer.read { db in
            let nearest = try vectorIndex.search(db, near: query, limit: 100, as: String.self)
                .sorted { ($0.distance, $0.key) < ($1.distance, $1.key) }
                .map { "\($0.key):\(String($0.distance.bitPattern, radix: 16))" }
            let found = try String.fetchAll(
                db, sql: "SELECT id FROM albums_fts WHERE albums_fts MATCH ? ORDER BY id", arguments: [word]
            )
            .map { "album \($0)" }
            return nearest + found
        }
    }

    /// A random embedding with a few repeated values, so distances tie.
    static func embedding(_ random: inout SeededRandom) -> Data {
        let choices: [Float] = [0, 0.5, -1, 0.25, 2]
        return Vector(
            (0..<dimensions).map { _ in
                Bool.random(using: &random)
                    ? choices.randomElement(using: &random) ?? 0 : Float.random(in: -1...1, using: &random)
            }
        ).blob
    }
}
