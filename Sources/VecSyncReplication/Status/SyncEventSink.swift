import Foundation

/// Where a transport reports what a sync does (see ``SyncEvent``): it keeps the running
/// totals and passes each event to a handler.
///
/// The handler runs on the syncing thread, between transactions, never inside one (nor
/// inside a read), so it may read the database. When it
/// throws, or when ``cancel()`` was called, the sync stops there with that error (or
/// `CancellationError`): every transaction committed before stays, with its cursors, and
/// the next sync goes on from them.
public final class SyncEventSink: @unchecked Sendable {
    private let handler: ((SyncEvent) throws -> Void)?
    private let lock = NSLock()
    private var cancelled = false
    /// Totals of the push so far.
    public private(set) var pushed = SyncProgress()
    /// Totals of the pull so far.
    public private(set) var merged = SyncProgress()

    /// A sink that passes every event to `handler` (or drops them when nil).
    public init(_ handler: ((SyncEvent) throws -> Void)? = nil) {
        self.handler = handler
    }

    /// Asks the sync to stop at its next event; safe from any thread.
    public func cancel() {
        lock.withLock { cancelled = true }
    }

    /// Whether ``cancel()`` was called.
    public var isCancelled: Bool {
        lock.withLock { cancelled }
    }

    /// Sends `event`, after checking for cancellation.
    package func send(_ event: SyncEvent) throws {
        if isCancelled { throw CancellationError() }
        try handler?(event)
    }

    /// A phase begins.
    func phase(_ phase: SyncPhase) throws {
        try send(.phase(phase))
    }

    /// The pull expects to read `bytes` of change sets in all.
    package func expect(bytes: Int) {
        merged.expectedBytes = bytes
    }

    /// Change sets were sent, each with its rows and bytes: one event per change set. Pushes
    /// report them once the scan of the clock tables has ended, so a handler never runs
    /// inside a read of the database.
    package func pushed(_ sent: [(rows: Int, bytes: Int)]) throws {
        for (rows, bytes) in sent {
            pushed.batches += 1
            pushed.changeSets += 1
            pushed.rows += rows
            pushed.bytes += bytes
            try send(.pushed(pushed))
        }
    }

    /// One merge transaction committed `changeSets` change sets of `rows` rows and `bytes`
    /// bytes.
    package func merged(changeSets: Int, rows: Int, bytes: Int) throws {
        merged.batches += 1
        merged.changeSets += changeSets
        merged.rows += rows
        merged.bytes += bytes
        if let expected = merged.expectedBytes, merged.bytes > expected { merged.expectedBytes = merged.bytes }
        try send(.merged(merged))
    }

    /// Change sets were read but not merged (refused, skipped): they count towards the
    /// expected bytes only.
    package func passed(bytes: Int) {
        if let expected = merged.expectedBytes { merged.expectedBytes = max(0, expected - bytes) }
    }
}
