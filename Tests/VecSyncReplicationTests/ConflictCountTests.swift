import Foundation
import GRDB
import Testing
import VecSyncCore
import VecSyncTestSupport

@testable import VecSyncReplication

/// A merge report's `conflicts` counts concurrent writes only: writes made on top of a
/// value the writer had merged are not conflicts.
@Suite("Conflict counts")
struct ConflictCountTests: ReplicationSuite {
    /// a makes 1,000 photos and b merges them; then b retitles all 1,000 while a, not having
    /// seen that, retitles 100: exactly 100 pairs of writes are concurrent.
    static func history() throws -> (a: Replica, b: Replica, aCursor: Int64) {
        let a = try Fixture.replica("a")
        let b = try Fixture.replica("b")
        try a.writer.write { db in
            for row in 0..<1_000 {
                try db.execute(
                    sql: "INSERT INTO photos (id, title, rating) VALUES (?, 'new', 0)", arguments: ["p\(row)"])
            }
        }
        try b.merge(a.changes(since: 0, maximumRows: 10_000))
        let aCursor = try a.currentSequence()
        try write(b, "UPDATE photos SET title = 'seen by b'")
        try write(a, "UPDATE photos SET title = 'edited on a' WHERE CAST(substr(id, 2) AS INTEGER) % 10 = 0")
        return (a, b, aCursor)
    }

    @Test("1,000 edits made on top of merged rows, 100 of them concurrent with edits elsewhere: 100 conflicts")
    func onlyConcurrentWritesAreConflicts() throws {
        let (a, b, aCursor) = try Self.history()
        // Each merges the other's change set, made before either saw the other's edits.
        let fromB = try b.changes(since: 0, maximumRows: 10_000)
        let fromA = try a.changes(since: aCursor, maximumRows: 10_000)
        let onA = try a.merge(fromB)
        let onB = try b.merge(fromA)
        #expect(onA.conflicts == 100, "\(onA)")
        #expect(onB.conflicts == 100, "\(onB)")
        // Rows where b's edit stands on a value a wrote and b had merged: no conflict.
        #expect(onA.records == 1_000)
        let titles = try a.writer.read { db in
            try String.fetchAll(db, sql: "SELECT DISTINCT title FROM photos ORDER BY 1")
        }
        #expect(try Fixture.snapshot(a) == Fixture.snapshot(b))
        #expect(titles.count <= 2)
    }

    @Test("a change set made after merging the other side's edits reports no conflict for them")
    func editsOnTopOfMergedEditsAreNotConflicts() throws {
        let (a, b, aCursor) = try Self.history()
        let onB = try b.merge(a.changes(since: aCursor, maximumRows: 10_000))
        #expect(onB.conflicts == 100, "b resolves the 100 concurrent pairs")
        // b's next change set acknowledges a's edits: a learns the outcome, with no new conflict.
        let onA = try a.merge(b.changes(since: 0, maximumRows: 10_000))
        #expect(onA.conflicts == 0, "\(onA)")
        #expect(try Fixture.snapshot(a) == Fixture.snapshot(b))
        // A later edit on b, made after merging a's value, is not concurrent with it.
        let cursor = try b.currentSequence()
        try Self.write(b, "UPDATE photos SET title = 'later' WHERE id = 'p0'")
        #expect(try a.merge(b.changes(since: cursor)).conflicts == 0)
    }
}
