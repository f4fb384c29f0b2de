/// What a sync is doing, as it does it: the phase it entered, each change set it pushed,
/// each merge transaction it committed, each origin whose changes it waits for, and the
/// final report.
///
/// Counts in ``SyncProgress`` are running totals of the sync, so the last `.merged` event
/// holds what the whole pull merged. Read them from ``Replica/syncEvents(through:)`` (an
/// `AsyncSequence`), or pass a handler to ``Replica/sync(through:events:)``.
///
/// ```swift
/// for try await event in replica.syncEvents(through: folder) {
///     if case .merged(let progress) = event { print("\(progress.rows) rows merged") }
/// }
/// ```
public enum SyncEvent: Sendable, Hashable {
    /// A phase began.
    case phase(SyncPhase)
    /// A change set was written to the destination; the totals of the push so far.
    case pushed(SyncProgress)
    /// A merge transaction committed, with its cursors; the totals of the pull so far.
    case merged(SyncProgress)
    /// Changes of an origin are missing or damaged here: the sync waits for them, and has
    /// asked for them again where the transport can ask.
    case waiting(SyncGap)
    /// The sync finished.
    case finished(SyncReport)
}

/// The phases of one sync, in order.
public enum SyncPhase: String, Sendable, Hashable, CaseIterable {
    /// Recording deletes that escaped capture (``Replica/reconcile()``).
    case reconciling
    /// Sending this replica's changes.
    case pushing
    /// Listing, reading and merging other replicas' changes.
    case pulling
}

/// Running totals of a push or a pull.
public struct SyncProgress: Sendable, Hashable, CustomStringConvertible {
    /// Transactions committed (pull) or change sets sent (push).
    public var batches: Int = 0
    /// Change sets merged or sent.
    public var changeSets: Int = 0
    /// Rows merged or sent.
    public var rows: Int = 0
    /// Change set bytes merged or sent.
    public var bytes: Int = 0
    /// Change set bytes this pull expects to read in all (the files or listed change sets
    /// past the cursors), or nil when not known in advance.
    public var expectedBytes: Int?

    /// Empty totals.
    public init() {}

    /// The share of ``expectedBytes`` done, from 0 to 1, or nil when not known.
    public var fraction: Double? {
        guard let expectedBytes, expectedBytes > 0 else { return nil }
        return min(1, Double(bytes) / Double(expectedBytes))
    }

    /// `3 batches, 1200 rows, 480000 bytes of 960000`.
    public var description: String {
        "\(batches) batches, \(rows) rows, \(bytes) bytes" + (expectedBytes.map { " of \($0)" } ?? "")
    }
}
