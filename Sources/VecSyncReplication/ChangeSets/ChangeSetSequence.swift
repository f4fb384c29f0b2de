/// Every change of a replica after a sequence number, as change sets in order: the bounded
/// batches of ``Replica/changes(since:excluding:maximumRows:maximumBytes:)`` one after another
/// (``Replica/Options/maximumBatchRows`` and ``Replica/Options/maximumBatchBytes`` unless
/// given), each read when the loop asks for it (CRDT-SQLite's "changes since").
///
/// ```swift
/// var cursor = peerCursor
/// for try await batch in replica.changeSets(since: cursor) {
///     try await send(batch.serialized())
///     cursor = batch.through
/// }
/// ```
///
/// Each batch is read in a read transaction of its own, so writes made while the loop
/// runs are seen by later batches. Rows whose writers are all in `excluding` are left out
/// (see ``Replica/changes(since:excluding:maximumRows:maximumBytes:)``); the loop ends at
/// the first empty batch.
public struct ChangeSetSequence: AsyncSequence, Sendable {
    /// Each element is one batch.
    public typealias Element = ChangeSet

    let replica: Replica
    let since: Int64
    let excluding: Set<SiteID>
    let maximumRows: Int?
    let maximumBytes: Int?

    /// Reads the batches one by one.
    public struct AsyncIterator: AsyncIteratorProtocol {
        let sequence: ChangeSetSequence
        var cursor: Int64
        var finished = false

        /// The next batch, or nil once every change has been handed out.
        public mutating func next() async throws -> ChangeSet? {
            guard !finished else { return nil }
            let options = sequence.replica.options
            let batch = try sequence.replica.changes(
                since: cursor, excluding: sequence.excluding,
                maximumRows: sequence.maximumRows ?? options.maximumBatchRows,
                maximumBytes: sequence.maximumBytes ?? options.maximumBatchBytes)
            if batch.isEmpty {
                finished = true
                return nil
            }
            cursor = batch.through
            return batch
        }
    }

    /// An iterator from the sequence's start.
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(sequence: self, cursor: since)
    }
}

extension Replica {
    /// Every change after local sequence number `since`, as a sequence of change sets (see
    /// ``ChangeSetSequence``).
    public func changeSets(
        since: Int64, excluding: Set<SiteID> = [], maximumRows: Int? = nil, maximumBytes: Int? = nil
    ) -> ChangeSetSequence {
        ChangeSetSequence(
            replica: self, since: since, excluding: excluding, maximumRows: maximumRows, maximumBytes: maximumBytes)
    }
}
