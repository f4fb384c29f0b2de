import Foundation
import VecSyncCore

extension MessageStore {
    /// Adds a message, `pending` approval, to an existing thread. The author is created in
    /// `users` if unknown. The embedding must have ``dimensions`` finite elements.
    @discardableResult
    public func addMessage(
        id: String, threadId: String, userId: String, content: String,
        embedding: Vector?, phase: MessagePhase
    ) throws -> Message {
        try embedding?.validate(dimensions: dimensions)
        return try write { db in
            guard try Bool.fetchOne(db, sql: "SELECT 1 FROM threads WHERE id = ?", arguments: [threadId]) != nil else {
                throw VecSyncError.notFound(kind: "thread", key: threadId)
            }
            let now = self.now
            try db.execute(
                sql: """
                    INSERT INTO users (id, last_active) VALUES (?, ?)
                    ON CONFLICT(id) DO UPDATE SET last_active = excluded.last_active
                    """,
                arguments: [userId, now])
            try db.execute(
                sql: """
                    INSERT INTO messages (id, thread_id, user_id, content, embedding, phase, created_at, approval_status)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    id, threadId, userId, content, embedding, phase.rawValue, now, ApprovalStatus.pending.rawValue,
                ])
            try db.execute(sql: "UPDATE threads SET updated_at = ? WHERE id = ?", arguments: [now, threadId])
            return Message(
                id: id, threadId: threadId, userId: userId, content: content, phase: phase,
                createdAt: Date(millisecondsSince1970: now), approvalStatus: .pending)
        }
    }

    /// The message with this id, or nil.
    public func message(id: String) throws -> Message? {
        try read { db in
            try Message.fetchOne(db, sql: "SELECT \(Message.columns) FROM messages WHERE id = ?", arguments: [id])
        }
    }

    /// The messages of a thread, oldest first.
    public func messages(inThread threadId: String) throws -> [Message] {
        try read { db in
            try Message.fetchAll(
                db, sql: "SELECT \(Message.columns) FROM messages WHERE thread_id = ? ORDER BY created_at, id",
                arguments: [threadId])
        }
    }

    /// A message's embedding, or nil when it has none (or the message does not exist).
    public func embedding(ofMessage id: String) throws -> Vector? {
        try storedEmbedding(in: "messages", keyColumn: "id", key: id)
    }

    /// Replaces a message's embedding (nil removes it from the vector index).
    public func setEmbedding(_ embedding: Vector?, ofMessage id: String) throws {
        try embedding?.validate(dimensions: dimensions)
        try updateExisting(
            "message", key: id, sql: "UPDATE messages SET embedding = ? WHERE id = ?", arguments: [embedding, id])
    }

    /// Deletes a message.
    public func deleteMessage(id: String) throws {
        try write { db in
            try db.execute(sql: "DELETE FROM messages WHERE id = ?", arguments: [id])
        }
    }

    /// Sets a message's approval status and, when it changes to approved or refused, moves
    /// its thread's parameters by the FQAHO rules (``ParameterSet/adjusted(for:)``) and
    /// records them in `parameter_history` as `message_approved` / `message_refused`, all in
    /// one transaction. Setting the status a message already has changes nothing.
    ///
    /// Returns the thread with its parameters after the change.
    @discardableResult
    public func setApprovalStatus(_ status: ApprovalStatus, ofMessage id: String) throws -> ChatThread {
        try write { db in
            guard
                let message = try Message.fetchOne(
                    db, sql: "SELECT \(Message.columns) FROM messages WHERE id = ?", arguments: [id])
            else { throw VecSyncError.notFound(kind: "message", key: id) }
            guard
                let thread = try ChatThread.fetchOne(
                    db, sql: "SELECT * FROM threads WHERE id = ?", arguments: [message.threadId])
            else { throw VecSyncError.notFound(kind: "thread", key: message.threadId) }
            guard message.approvalStatus != status else { return thread }

            try db.execute(
                sql: "UPDATE messages SET approval_status = ? WHERE id = ?", arguments: [status.rawValue, id])
            guard status == .approved || status == .refused else { return thread }
            let adjusted = thread.parameters.adjusted(for: status)
            let now = self.now
            try db.execute(
                sql: "UPDATE threads SET k0 = ?, alpha = ?, m = ?, updated_at = ? WHERE id = ?",
                arguments: [adjusted.k0, adjusted.alpha, adjusted.m, now, thread.id])
            try Self.recordParameters(
                db, threadId: thread.id, timestamp: now, parameters: adjusted,
                event: "message_\(status.rawValue)")
            var updated = thread
            updated.parameters = adjusted
            updated.updatedAt = Date(millisecondsSince1970: now)
            return updated
        }
    }
}
