import Foundation

extension Replica {
    /// Whether a merge group of `rows` rows and `bytes` change set bytes is over the limits:
    /// transports commit the group they hold before a change set would take it over (see
    /// ``Options/maximumMergeRows``).
    func mergeGroupExceedsLimits(rows: Int, bytes: Int) -> Bool {
        rows > options.maximumMergeRows || bytes > options.maximumMergeBytes
    }

    /// Merges a group of change sets, read by a transport, in one bounded transaction
    /// (``merge(_:)-([ChangeSet])``), then reports it to `events`; returns one result per
    /// change set, in order.
    ///
    /// When the group fails for a reason of its own (a change set that cannot be merged),
    /// its change sets are merged one by one, so the bad one is refused alone and the others
    /// land. A failure of the database itself (``VecSyncError/isDatabaseFailure(_:)``)
    /// is thrown: what committed before it stays. `bytes` are the group's serialized bytes.
    package func mergeGroup(
        _ changeSets: [ChangeSet], bytes: Int, events: SyncEventSink
    ) throws -> [Result<MergeReport, any Error>] {
        guard !changeSets.isEmpty else { return [] }
        var results: [Result<MergeReport, any Error>]
        do {
            results = try merge(changeSets).map { .success($0) }
        } catch  where VecSyncError.isDatabaseFailure(error) {
            throw error
        } catch {
            results = []
            for changeSet in changeSets {
                do {
                    results.append(.success(try merge(changeSet)))
                } catch  where VecSyncError.isDatabaseFailure(error) {
                    throw error
                } catch {
                    results.append(.failure(error))
                }
            }
        }
        var rows = 0
        var merged = 0
        for result in results {
            if case .success(let report) = result {
                // A row counts as merged once it is in its table: not while quarantined,
                // and when a later merge releases it.
                rows += report.rowsMerged
                merged += 1
            }
        }
        try events.merged(changeSets: merged, rows: rows, bytes: bytes)
        return results
    }
}
