import Foundation
import GRDB
import Testing
import VecSyncCore
import VecSyncTestSupport

@testable import VecSyncReplication

/// One bad row never blocks a change set: it is quarantined and reported with its reason,
/// the rest merges, and a later fix releases it.
@Suite("Quarantine")
struct QuarantineTests {
    /// The origin has no index and no CHECK, so it can hold rows the receiver refuses.
    static let originSchema = "CREATE TABLE photos (id TEXT PRIMARY KEY, title TEXT, embedding F32_BLOB(4));"
    /// The receiver indexes the embeddings and refuses one title.
    static let receiverSchema = """
        CREATE TABLE photos (id TEXT PRIMARY KEY, title TEXT CHECK (title IS NOT 'forbidden'), embedding F32_BLOB(4));
        """
    static let index = VectorIndex(
        table: "photos", primaryKey: "id", embeddingColumn: "embedding",
        dimensions: 4, metric: .l2, name: "photos_vec")

    static func replica(_ site: SiteID, schema: String, indexed: Bool) throws -> Replica {
        let queue = try DatabaseQueue(configuration: Configuration.vecSync())
        try queue.write { db in
            try db.execute(sql: schema)
            if indexed { try index.create(db) }
        }
        let replica = try Replica(queue, site: site)
        try replica.track("photos")
        return replica
    }

    static func blob(_ values: [Float]) -> Data { Vector(values).blob }

    static func ids(_ replica: Replica) throws -> [String] {
        try replica.writer.read { db in try String.fetchAll(db, sql: "SELECT id FROM photos ORDER BY id") }
    }

    @Test("a wrong-length or NaN embedding and a row a local CHECK refuses are quarantined; the rest merges")
    func badRowsAreQuarantinedAndTheRestMerges() throws {
        let camera = try Self.replica("camera", schema: Self.originSchema, indexed: false)
        let library = try Self.replica("library", schema: Self.receiverSchema, indexed: true)
        try camera.writer.write { db in
            let rows: [(String, String, Data?)] = [
                ("a-good", "harbour", Self.blob([1, 0, 0, 0])),
                ("b-short", "short", Self.blob([1, 2, 3])),
                ("c-nan", "nan", Self.blob([1, .nan, 0, 0])),
                ("d-check", "forbidden", Self.blob([0, 1, 0, 0])),
                ("e-good", "no embedding", nil),
            ]
            for (id, title, embedding) in rows {
                try db.execute(
                    sql: "INSERT INTO photos (id, title, embedding) VALUES (?, ?, ?)",
                    arguments: [id, title, embedding])
            }
        }
        let changeSet = try camera.changes(since: 0)
        let report = try library.merge(changeSet)
        #expect(report.inserted == 2 && report.applied == 2, "\(report)")
        #expect(
            report.quarantined.map(\.key) == [.text("b-short"), .text("c-nan"), .text("d-check")],
            "\(report.quarantined)")
        let reasons = report.quarantined.map(\.reason)
        #expect(reasons[0].contains("12 bytes") && reasons[0].contains("photos_vec"), "\(reasons[0])")
        #expect(reasons[1].contains("element 1 = nan"), "\(reasons[1])")
        #expect(reasons[2].contains("CHECK constraint failed"), "\(reasons[2])")
        #expect(report.cursorAdvanced)
        #expect(try Self.ids(library) == ["a-good", "e-good"])
        #expect(try library.verifyDerivedIndexes() == ["photos_vec": 0])
        #expect(try library.quarantinedRecords() == report.quarantined)

        // Merging it again changes nothing and keeps the quarantine as it was.
        let again = try library.merge(changeSet)
        #expect(again.alreadyMerged && again.releasedFromQuarantine == 0)
        #expect(try library.quarantinedRecords().count == 3)

        // The camera fixes two rows; the library receives only what changed since its cursor
        // (the embedding alone, and the title alone), joined with the kept earlier changes.
        try camera.writer.write { db in
            try db.execute(
                sql: "UPDATE photos SET embedding = ? WHERE id = 'b-short'", arguments: [Self.blob([1, 2, 3, 4])])
            try db.execute(sql: "UPDATE photos SET title = 'allowed' WHERE id = 'd-check'")
        }
        let fixes = try camera.changes(since: changeSet.through)
        #expect(fixes.records.allSatisfy { !$0.isComplete }, "only the changed columns travel")
        let fixed = try library.merge(fixes)
        #expect(fixed.releasedFromQuarantine == 4, "\(fixed)")  // two kept changes for each of two rows
        #expect(try Self.ids(library) == ["a-good", "b-short", "d-check", "e-good"])
        #expect(try library.quarantinedRecords().map(\.key) == [.text("c-nan")])
        #expect(try library.verifyDerivedIndexes() == ["photos_vec": 0])
        let title = try library.writer.read { db in
            try String.fetchOne(db, sql: "SELECT title FROM photos WHERE id = 'd-check'")
        }
        #expect(title == "allowed")
    }

    @Test("kept changes of a row made before and after its origin added a column are joined by name: none is lost")
    func keptChangesAcrossAnAddedColumnAreJoined() throws {
        let camera = try Self.replica("camera", schema: Self.originSchema, indexed: false)
        let library = try Self.replica("library", schema: Self.receiverSchema, indexed: true)
        try camera.writer.write { db in
            try db.execute(
                sql: "INSERT INTO photos (id, title, embedding) VALUES ('b-short', 'short', ?)",
                arguments: [Self.blob([1, 2, 3])])
        }
        let first = try camera.changes(since: 0)
        #expect(try library.merge(first).quarantined.count == 1)
        // Both add a column; the camera then fixes the embedding and rates the photo: the
        // change travels under the wider definition, the kept one under the narrower.
        for replica in [camera, library] {
            try replica.writer.write { db in try db.execute(sql: "ALTER TABLE photos ADD COLUMN rating INTEGER") }
        }
        try camera.writer.write { db in
            try db.execute(
                sql: "UPDATE photos SET embedding = ?, rating = 5 WHERE id = 'b-short'",
                arguments: [Self.blob([1, 2, 3, 4])])
        }
        let fix = try library.merge(camera.changes(since: first.through))
        #expect(fix.releasedFromQuarantine >= 2, "\(fix)")
        #expect(try library.quarantinedRecords().isEmpty)
        let row = try library.writer.read { db in
            try Row.fetchOne(db, sql: "SELECT title, rating, embedding FROM photos WHERE id = 'b-short'")
        }
        #expect(row?["title"] as String? == "short")
        #expect(row?["rating"] as Int64? == 5)
        #expect(row?["embedding"] as Data? == Self.blob([1, 2, 3, 4]))
        #expect(try library.verifyDerivedIndexes() == ["photos_vec": 0])
    }
}
