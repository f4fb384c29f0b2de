import Foundation
import VecSyncCore

extension MessageStore {
    /// Creates a thread with its initial parameters, recorded in `parameter_history` as
    /// `thread_creation`.
    @discardableResult
    public func createThread(id: String, title: String, k0: Double, alpha: Double, m: Double) throws -> ChatThread {
        let parameters = ParameterSet(k0: k0, alpha: alpha, m: m)
        return try write { db in
            let now = self.now
            try db.execute(
                sql:
                    "INSERT INTO threads (id, title, created_at, updated_at, k0, alpha, m) VALUES (?, ?, ?, ?, ?, ?, ?)",
                arguments: [id, title, now, now, k0, alpha, m])
            try Self.recordParameters(
                db, threadId: id, timestamp: now, parameters: parameters, event: "thread_creation")
            return ChatThread(
                id: id, title: title, createdAt: Date(millisecondsSince1970: now),
                updatedAt: Date(millisecondsSince1970: now), parameters: parameters)
        }
    }

    /// The thread with this id, or nil.
    public func thread(id: String) throws -> ChatThread? {
        try record(in: "threads", id: id)
    }

    /// Every thread, most recently updated first.
    public func threads() throws -> [ChatThread] {
        try read { db in try ChatThread.fetchAll(db, sql: "SELECT * FROM threads ORDER BY updated_at DESC, id") }
    }

    /// Creates or renames a user.
    public func upsertUser(id: String, name: String?) throws {
        try write { db in
            try db.execute(
                sql: "INSERT INTO users (id, name) VALUES (?, ?) ON CONFLICT(id) DO UPDATE SET name = excluded.name",
                arguments: [id, name])
        }
    }

    /// The user with this id, or nil.
    public func user(id: String) throws -> ChatUser? {
        try record(in: "users", id: id)
    }

    /// The parameter changes of a thread, oldest first.
    public func parameterHistory(ofThread threadId: String) throws -> [ParameterChange] {
        try records(in: "parameter_history", where: "thread_id", is: threadId, orderBy: "timestamp, id")
    }

    static func recordParameters(
        _ db: Database, threadId: String, timestamp: Int64,
        parameters: ParameterSet, event: String
    ) throws {
        try db.execute(
            sql:
                "INSERT INTO parameter_history (thread_id, timestamp, k0, alpha, m, event_type) VALUES (?, ?, ?, ?, ?, ?)",
            arguments: [threadId, timestamp, parameters.k0, parameters.alpha, parameters.m, event])
    }
}
