import Foundation

/// The events of one sync, as ``Replica/syncEvents(through:)`` yields them: an
/// `AsyncSequence` that asks the syncing thread for each event as it is read, so the sync
/// never runs more than one event ahead of its reader.
public struct SyncEventStream: AsyncSequence, Sendable {
    /// Each element is one ``SyncEvent``.
    public typealias Element = SyncEvent

    let events: AsyncThrowingStream<SyncEvent, any Error>
    /// Signalled once per event asked for; the syncing thread waits on it before each event.
    let demand: DispatchSemaphore

    /// Reads the events in order.
    public struct AsyncIterator: AsyncIteratorProtocol {
        var base: AsyncThrowingStream<SyncEvent, any Error>.AsyncIterator
        let demand: DispatchSemaphore

        /// The next event, or nil once the sync finished; throws the sync's error.
        public mutating func next() async throws -> SyncEvent? {
            demand.signal()
            return try await base.next()
        }
    }

    /// An iterator over the events.
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(base: events.makeAsyncIterator(), demand: demand)
    }
}
