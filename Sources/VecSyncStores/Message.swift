import Foundation
import VecSyncCore

/// A message of a thread (`messages` table). The embedding stays in the database; read it
/// with ``MessageStore/embedding(ofMessage:)``.
public struct Message: Sendable, Hashable, Codable, FetchableRecord {
    /// The message's id.
    public var id: String
    /// Its thread.
    public var threadId: String
    /// Its author.
    public var userId: String
    /// The text.
    public var content: String
    /// The Post Chain phase.
    public var phase: MessagePhase
    /// When it was written.
    public var createdAt: Date
    /// Whether it was approved or refused.
    public var approvalStatus: ApprovalStatus

    /// Creates a message value.
    public init(
        id: String, threadId: String, userId: String, content: String, phase: MessagePhase,
        createdAt: Date, approvalStatus: ApprovalStatus = .pending
    ) {
        self.id = id
        self.threadId = threadId
        self.userId = userId
        self.content = content
        self.phase = phase
        self.createdAt = createdAt
        self.approvalStatus = approvalStatus
    }

    /// Decodes a `messages` row.
    public init(row: Row) throws {
        id = try row.decode(forColumn: "id")
        threadId = try row.text("thread_id")
        userId = try row.text("user_id")
        content = try row.text("content")
        phase = MessagePhase(rawValue: try row.text("phase"))
        createdAt = try row.date("created_at")
        approvalStatus = ApprovalStatus(
            rawValue: try row.decode(String?.self, forColumn: "approval_status") ?? ApprovalStatus.pending.rawValue)
    }

    /// The columns read by ``init(row:)``, for SELECT lists.
    static let columns = "id, thread_id, user_id, content, phase, created_at, approval_status"
}
