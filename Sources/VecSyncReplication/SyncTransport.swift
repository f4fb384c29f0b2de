import Foundation

/// What carries change sets between replicas: a shared folder (``FolderTransport``), a sync
/// server (``HTTPTransport``), or anything else that can push a replica's changes and pull
/// everyone else's.
///
/// The engine's guarantees hold whatever the transport: a transport pushes from the push
/// cursor kept in the database (``Replica/publishedThrough(to:)``), in bounded batches, and
/// moves it only past what the destination holds; it merges through ``Replica/merge(_:)``,
/// which applies a change set atomically with its cursor, so a transfer cut at any moment
/// loses nothing and the next sync resumes.
public protocol SyncTransport: Sendable {
    /// Sends the replica's changes after its push cursor; returns the change sets and rows
    /// sent.
    func push(_ replica: Replica) throws -> (files: Int, rows: Int)

    /// Fetches and merges other replicas' change sets; returns one report per change set
    /// merged, a line for each one skipped or refused, and how many unknown entries were
    /// left alone.
    func pull(into replica: Replica) throws -> (merges: [MergeReport], problems: [String], unknownFiles: Int)
}

extension FolderTransport: SyncTransport {}

extension Replica {
    /// Syncs through any transport (a shared folder, a server): records deletes that escaped
    /// capture, pushes (unless the replica is read-only), then pulls and merges, refreshing
    /// derived indexes as each merge commits. Change sets that cannot be read or merged are
    /// listed in ``SyncReport/problems`` and skipped; the rest of the sync goes on.
    ///
    /// ```swift
    /// let report = try replica.sync(through: FolderTransport(path: "/mnt/share/sync"))
    /// ```
    ///
    /// ```swift
    /// let server = HTTPTransport(server: URL(string: "https://sync.example.com")!,
    ///                            space: "family", token: token)
    /// print(try replica.sync(through: server))
    /// ```
    @discardableResult
    public func sync<Transport: SyncTransport>(through transport: Transport) throws -> SyncReport {
        var report = SyncReport(site: site)
        if try isReadOnly() {
            report.readOnly = true
        } else {
            report.reconciled = try reconcile()
            let pushed = try transport.push(self)
            report.pushedFiles = pushed.files
            report.pushedRows = pushed.rows
        }
        let pulled = try transport.pull(into: self)
        report.merges = pulled.merges
        report.problems = pulled.problems
        report.unknownFiles = pulled.unknownFiles
        return report
    }
}
