import Foundation
import VecSyncCore

/// One row of `parameter_history`: a thread's parameters after an event.
public struct ParameterChange: Sendable, Hashable, Codable, FetchableRecord {
    /// The row id (increasing in the order changes were recorded on this device).
    public var id: Int64
    /// The thread.
    public var threadId: String
    /// When the change happened.
    public var timestamp: Date
    /// The parameters from then on.
    public var parameters: ParameterSet
    /// What caused it: `thread_creation`, `message_approved`, `message_refused`.
    public var eventType: String

    /// Decodes a `parameter_history` row.
    public init(row: Row) throws {
        id = try row.decode(forColumn: "id")
        threadId = try row.text("thread_id")
        timestamp = try row.date("timestamp")
        parameters = try row.parameters()
        eventType = try row.text("event_type")
    }
}
