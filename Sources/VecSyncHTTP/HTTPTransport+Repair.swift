import Foundation
import VecSyncReplication
import VecSyncCore

/// Re-publishing change sets the server holds damaged.
///
/// A server that finds a stored change set's bytes no longer match their SHA-256 (damaged
/// at rest) answers its downloads with 409 `damaged` and lists it under its origin in the
/// status (``ServerDevice/damaged``). Readers record a gap and wait; the origin, on its next
/// push, sends the same range again and the server replaces the stored bytes (its push rule
/// accepts a push of exactly a damaged range), after which the readers' next pull merges it.
///
/// The replacement for `(since, through]` is made from what the replica holds now: every
/// row whose first change after `since` lies at or before `through` (the batches of one scan
/// from `since`, up to the one that reaches `through`), with every column changed after
/// `since` — all of them for a row created after it — joined into one change set labelled
/// `(since, through]`. A receiver that merged this site through `since` and then merges it
/// holds every change through `through`, as it would from the original: rows changed since
/// carry newer values, which merging takes or ignores as it would later anyway (merges are
/// idempotent and commutative), and a row whose every change after `since` now lies past
/// `through` travels in the later change sets, which carry its columns changed after their
/// own `since`. The last batch may run past `through`: its extra rows are harmless the same way.
extension HTTPTransport {
    /// Pushes a replacement for each of `replica`'s change sets the server holds damaged
    /// (`damaged`, from the status); returns how many it re-published and their rows.
    ///
    /// Throws ``HTTPTransportError/refused(url:status:code:message:)`` with code `too-large`
    /// when a replacement exceeds the server's body limit (the range then stays damaged, and
    /// its readers wait until the server's `--max-body-mib` is raised), and with
    /// `range-conflict` when the server no longer holds the range as damaged with other bytes.
    func republishDamaged(_ damaged: [ServerDamagedChangeSet], of replica: Replica) throws -> (files: Int, rows: Int) {
        var files = 0
        var rows = 0
        for entry in damaged.sorted(by: { $0.seq < $1.seq }) {
            let replacement = try self.replacement(for: entry, of: replica)
            let posted: (answer: PostAnswer, bytes: Int)
            do {
                posted = try post(replacement)
            } catch HTTPTransportError.refused(let url, 413, let code, let message) {
                throw HTTPTransportError.refused(
                    url: url, status: 413, code: code,
                    message:
                        "cannot re-publish damaged change set \(entry.seq) (\(replica.site.rawValue) \(entry.since)-\(entry.through)): its replacement of \(replacement.serialized().count) bytes (\(replacement.records.count) rows) exceeds the server's body limit (\(message)); its readers wait until the server's --max-body-mib is raised"
                )
            }
            if posted.answer == .conflict {
                throw HTTPTransportError.refused(
                    url: destination + "/changesets", status: 409, code: "range-conflict",
                    message:
                        "damaged change set \(entry.seq) (\(replica.site.rawValue) \(entry.since)-\(entry.through)) was not replaced: the server holds the range with other bytes and no longer as damaged"
                )
            }
            files += 1
            rows += replacement.records.count
        }
        return (files, rows)
    }

    /// What `replica` holds now of its changes in `(since, through]` of a damaged entry, as one
    /// change set labelled with that range (see the extension's summary for why it is enough).
    func replacement(for entry: ServerDamagedChangeSet, of replica: Replica) throws -> ChangeSet {
        var batches: [ChangeSet] = []
        do {
            try replica.forEachChangeSet(since: entry.since) { batch in
                batches.append(batch)
                if batch.through >= entry.through { throw ReachedThrough() }
            }
        } catch is ReachedThrough {
        }
        // One table list for all batches: each batch numbers the tables it uses on its own.
        let (tables, records) = ChangeSet.withOneTableList(
            batches.flatMap { batch in batch.records.map { (batch.tables[$0.table], $0) } })
        return ChangeSet(
            origin: replica.site, since: entry.since, through: entry.through,
            acknowledgements: batches.last?.acknowledgements ?? [:], tables: tables, records: records)
    }

    /// Ends the scan once a batch reaches the damaged entry's `through`.
    private struct ReachedThrough: Error {}
}
