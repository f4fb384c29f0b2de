import Foundation
import GRDB

@testable import VecSyncReplication

/// The helpers every replication suite shares; a suite that conforms calls them as
/// `Self.write(…)`, `Self.deliver(…)`.
protocol ReplicationSuite {}

extension ReplicationSuite {
    /// Runs `sql` on `replica`'s database as an app would, so the capture triggers see it.
    static func write(_ replica: Replica, _ sql: String, _ arguments: StatementArguments = []) throws {
        try replica.writer.write { db in try db.execute(sql: sql, arguments: arguments) }
    }

    /// Merges everything `from` has into `to` (since 0: merges are idempotent).
    @discardableResult
    static func deliver(_ from: Replica, to: Replica) throws -> MergeReport {
        try to.merge(from.changes(since: 0, maximumRows: 10_000))
    }
}
