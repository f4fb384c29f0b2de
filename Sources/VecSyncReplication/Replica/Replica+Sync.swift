import Foundation

extension Replica {
    /// Syncs through any transport (a shared folder, a server): records deletes that escaped
    /// capture, pushes (unless the replica is read-only), then pulls and merges in bounded
    /// transactions, refreshing derived indexes as each commits. Change sets that cannot be
    /// read or merged are listed in ``SyncReport/problems`` and skipped; the rest of the
    /// sync goes on, and ``SyncReport/waiting`` says which origins' changes it waits for.
    ///
    /// `events` receives what the sync does as it does it (see ``SyncEvent``); when it
    /// throws, the sync stops there, keeping every transaction committed before, and the
    /// next sync resumes from the cursors. How the sync ended is kept for
    /// ``syncStatus()``.
    ///
    /// ```swift
    /// let report = try replica.sync(through: FolderTransport(path: "/mnt/share/sync"))
    /// ```
    ///
    /// ```swift
    /// let server = HTTPTransport(server: URL(string: "https://sync.example.com")!,
    ///                            space: "family", token: token)
    /// print(try replica.sync(through: server) { event in print(event) })
    /// ```
    @discardableResult
    public func sync<Transport: SyncTransport>(
        through transport: Transport, events handler: ((SyncEvent) throws -> Void)? = nil
    ) throws -> SyncReport {
        try sync(through: transport, sink: SyncEventSink(handler))
    }

    /// ``sync(through:events:)`` reporting to a sink the caller may cancel.
    @discardableResult
    public func sync<Transport: SyncTransport>(through transport: Transport, sink events: SyncEventSink) throws
        -> SyncReport
    {
        let started = Date()
        do {
            var report = SyncReport(site: site)
            if try isReadOnly() {
                report.readOnly = true
            } else {
                try events.phase(.reconciling)
                report.reconciled = try reconcile()
                try events.phase(.pushing)
                if let lost = try transport.recoverLostChanges(of: self, events: events) {
                    // Peers may have compacted tombstones the lost future acknowledged: what
                    // this replica writes next must follow their deletes, so it merges first,
                    // then numbers its newer changes past the lost future, so no reader's
                    // cursor passes over them.
                    _ = try transport.pull(into: self, events: events)
                    try moveChanges(after: lost.published, above: lost.claimed, settingCursor: lost.pushCursor)
                }
                let pushed = try transport.push(self, events: events)
                report.pushedFiles = pushed.files
                report.pushedRows = pushed.rows
            }
            try events.phase(.pulling)
            let pulled = try transport.pull(into: self, events: events)
            report.merges = pulled.merges
            report.problems = pulled.problems
            report.unknownFiles = pulled.unknownFiles
            report.waiting = try gaps()
            try? recordSync(
                to: transport.destination, started: started, succeeded: true, summary: report.description,
                merged: events.merged.rows, caughtUp: report.isCaughtUp)
            try events.send(.finished(report))
            return report
        } catch {
            try? recordSync(
                to: transport.destination, started: started, succeeded: false, summary: "\(error)",
                merged: events.merged.rows)
            throw error
        }
    }

    /// Syncs through `transport` on a thread of its own and yields what it does, ending with
    /// ``SyncEvent/finished(_:)`` (or the sync's error). The sync runs one event ahead of
    /// the reader at most: it waits for each event to be asked for before going on. Ending
    /// the iteration early (`break`, or cancelling the reading task) stops the sync at its
    /// next event — the transaction in progress commits — keeping what committed; the next
    /// sync goes on from there.
    ///
    /// ```swift
    /// for try await event in replica.syncEvents(through: server) {
    ///     switch event {
    ///     case .merged(let progress): bar.fraction = progress.fraction ?? 0
    ///     case .finished(let report): print(report)
    ///     default: break
    ///     }
    /// }
    /// ```
    public func syncEvents<Transport: SyncTransport>(through transport: Transport) -> SyncEventStream {
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: SyncEvent.self)
        let demand = DispatchSemaphore(value: 0)
        let stopped = SyncEventSink()
        let sink = SyncEventSink { event in
            demand.wait()
            if stopped.isCancelled { throw CancellationError() }
            continuation.yield(event)
        }
        continuation.onTermination = { _ in
            stopped.cancel()
            sink.cancel()
            demand.signal()
        }
        let thread = Thread { [self] in
            do {
                _ = try sync(through: transport, sink: sink)
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }
        thread.start()
        return SyncEventStream(events: stream, demand: demand)
    }
}
