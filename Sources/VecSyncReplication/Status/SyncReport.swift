/// What one ``Replica/sync(through:)`` did: files written, files merged, and the files it
/// had to skip, with the reason for each.
public struct SyncReport: Sendable, Hashable, CustomStringConvertible {
    /// The replica that synced.
    public var site: SiteID
    /// Change set files written.
    public var pushedFiles: Int = 0
    /// Rows in them.
    public var pushedRows: Int = 0
    /// True when nothing was pushed because the replica is read-only.
    public var readOnly: Bool = false
    /// One report per change set merged.
    public var merges: [MergeReport] = []
    /// Files skipped or refused: corrupt, incompatible, from another schema; one line each.
    public var problems: [String] = []
    /// Files and folders that are not change sets, left alone.
    public var unknownFiles: Int = 0
    /// Missed deletes found and recorded before pushing (see ``Replica/reconcile()``).
    public var reconciled: Int = 0
    /// Origins whose changes this replica waits for after the pull, one range each (see
    /// ``SyncGap``).
    public var waiting: [SyncGap] = []

    /// Creates an empty report.
    public init(site: SiteID) {
        self.site = site
    }

    /// Rows applied over all merges.
    public var applied: Int { merges.reduce(0) { $0 + $1.applied } }
    /// Rows ignored over all merges.
    public var ignored: Int { merges.reduce(0) { $0 + $1.ignored } }
    /// Conflicts over all merges.
    public var conflicts: Int { merges.reduce(0) { $0 + $1.conflicts } }
    /// Rows quarantined by this sync's merges and still in quarantine when it ended, each
    /// with its reason (the last one, for a row quarantined twice); a row a later merge of
    /// the same sync released is not among them.
    public var quarantined: [QuarantinedRecord] {
        var order: [[SyncValue]] = []
        var kept: [[SyncValue]: QuarantinedRecord] = [:]
        for merge in merges {
            for record in merge.quarantined {
                if kept[record.rowID] == nil { order.append(record.rowID) }
                kept[record.rowID] = record
            }
            for record in merge.released { kept[record.rowID] = nil }
        }
        return order.compactMap { kept[$0] }
    }
    /// Rows released from quarantine over all merges.
    public var releasedFromQuarantine: Int { merges.reduce(0) { $0 + $1.releasedFromQuarantine } }
    /// Rows deleted because their parent row was deleted, over all merges.
    public var orphansDeleted: Int { merges.reduce(0) { $0 + $1.orphansDeleted.values.reduce(0, +) } }

    /// True when the pull brought everything there was: no file skipped, no range waited
    /// for. (A sync interrupted before its end returns no report.)
    public var isCaughtUp: Bool { problems.isEmpty && waiting.isEmpty }

    /// True when this sync changed nothing on either side: nothing pushed, nothing applied,
    /// nothing released from quarantine, and caught up. `vecsync-cli sync --until-quiet`
    /// syncs again until a sync is quiet.
    public var isQuiet: Bool { pushedRows == 0 && applied == 0 && releasedFromQuarantine == 0 && isCaughtUp }

    /// One line, as `vecsync-cli sync` prints it.
    public var description: String {
        let origins = Set(merges.filter { !$0.alreadyMerged }.map(\.origin)).count
        let indexes = Set(merges.flatMap(\.refreshedIndexes.keys)).sorted()
        var line = "\(site): "
        line += readOnly ? "read-only, pushed nothing" : "pushed \(pushedRows) rows in \(pushedFiles) files"
        line +=
            "; pulled \(merges.count) files from \(origins) sites: \(applied) applied, \(ignored) ignored, \(conflicts) conflicts"
        if !quarantined.isEmpty { line += "; \(quarantined.count) rows quarantined" }
        if releasedFromQuarantine > 0 { line += "; \(releasedFromQuarantine) released from quarantine" }
        if orphansDeleted > 0 { line += "; \(orphansDeleted) rows deleted with their deleted parent rows" }
        if !indexes.isEmpty { line += "; refreshed \(indexes.joined(separator: ", "))" }
        if reconciled > 0 { line += "; recorded \(reconciled) missed deletes" }
        if !problems.isEmpty { line += "; \(problems.count) files skipped" }
        if !waiting.isEmpty { line += "; waiting for changes of \(waiting.count) sites" }
        return line
    }
}
