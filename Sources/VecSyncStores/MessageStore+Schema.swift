import Foundation
import VecSyncCore

extension MessageStore {
    /// Creates the Choir tables and the vector index if they are missing, and checks that
    /// an existing `messages.embedding` column has `dimensions` elements. A thread's `k0`,
    /// `alpha` and `m` are declared counters (``CounterColumns``): every approval or refusal
    /// moves them by a step, so when the threads table syncs, the steps taken on each device
    /// add up instead of the last device's value winning. (The schema itself is unchanged.)
    static func createSchema(_ db: Database, dimensions: Int) throws {
        try db.execute(sql: schemaSQL(dimensions: dimensions))
        try CounterColumns.declare(db, table: "threads", columns: ["k0", "alpha", "m"])
        let declared = try db.columns(in: "messages").first { $0.name.lowercased() == "embedding" }?.type ?? ""
        let expected = "F32_BLOB(\(dimensions))"
        if declared.replacingOccurrences(of: " ", with: "").uppercased() != expected {
            throw VecSyncError.schemaMismatch(
                table: "messages", reason: "embedding is declared \(declared), expected \(expected)")
        }
        // The extension fills a new vector index from the table on its first search, which
        // writes. Search once here, inside this write transaction, so that later searches
        // run in GRDB's read-only accesses (a DatabasePool's readers) without writing.
        _ = try Int.fetchOne(
            db, sql: "SELECT count(*) FROM vector_top_k(?, ?, 1)",
            arguments: [indexName, Vector(repeating: 1, dimensions: dimensions)])
    }

    /// The Choir schema as SQL, with `dimensions`-element embeddings. `sql/choir.sql` holds
    /// the same text for 1536 dimensions, so the shell script and the store share one
    /// schema (a test keeps them identical).
    static func schemaSQL(dimensions: Int) -> String {
        """
        CREATE TABLE IF NOT EXISTS users (
          id TEXT PRIMARY KEY,
          name TEXT,
          last_active INTEGER
        );
        CREATE TABLE IF NOT EXISTS threads (
          id TEXT PRIMARY KEY,
          title TEXT,
          created_at INTEGER,
          updated_at INTEGER,
          k0 REAL,           -- FQAHO K0
          alpha REAL,        -- FQAHO alpha (fractional)
          m REAL             -- FQAHO m
        );
        CREATE TABLE IF NOT EXISTS messages (
          id TEXT PRIMARY KEY,
          thread_id TEXT REFERENCES threads(id),
          user_id TEXT REFERENCES users(id),
          content TEXT,
          embedding F32_BLOB(\(dimensions)),  -- float32, 4 bytes an element
          phase TEXT,        -- Post Chain phase
          created_at INTEGER,
          approval_status TEXT
        );
        CREATE INDEX IF NOT EXISTS messages_thread_idx ON messages(thread_id, approval_status);
        CREATE INDEX IF NOT EXISTS messages_embedding_idx
          ON messages(libsql_vector_idx(embedding, 'metric=cosine'));
        CREATE TABLE IF NOT EXISTS parameter_history (
          id INTEGER PRIMARY KEY AUTOINCREMENT,
          thread_id TEXT REFERENCES threads(id),
          timestamp INTEGER,
          k0 REAL,
          alpha REAL,
          m REAL,
          event_type TEXT
        );
        CREATE INDEX IF NOT EXISTS parameter_history_thread_idx ON parameter_history(thread_id, timestamp);
        """
    }
}
