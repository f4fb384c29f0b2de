import Foundation
import GRDB
import Testing
import VecSyncCore
import VecSyncTestSupport

@testable import VecSyncReplication

/// The binary change set: exact round trips, bounded batches, and refusal of damaged,
/// truncated and incompatible bytes.
@Suite("Change set format")
struct ChangeSetFormatTests {
    /// A replica with `count` photos carrying `dimensions`-element embeddings.
    static func replicaWithPhotos(_ count: Int, dimensions: Int, site: String = "a") throws -> Replica {
        let queue = try DatabaseQueue()
        try queue.write { db in
            try db.execute(
                sql:
                    "CREATE TABLE photos (id TEXT PRIMARY KEY, title TEXT, taken REAL, embedding F32_BLOB(\(dimensions)))"
            )
        }
        let replica = try Replica(queue, site: SiteID(site))
        try replica.track("photos")
        var random = SeededRandom(seed: 7)
        try queue.write { db in
            for index in 0..<count {
                let vector = Vector((0..<dimensions).map { _ in Float.random(in: -1...1, using: &random) })
                try db.execute(
                    sql: "INSERT INTO photos VALUES (?, ?, ?, ?)",
                    arguments: ["photo-\(index)", "title \(index)", Double(index) / 3, vector.blob])
            }
        }
        return replica
    }

    @Test("a change set round-trips with blobs, reals, negative zero and text bit for bit")
    func roundTripIsExact() throws {
        let replica = try Self.replicaWithPhotos(3, dimensions: 768)
        try replica.writer.write { db in
            try db.execute(sql: "UPDATE photos SET taken = -0.0, title = 'naïve ☃' WHERE id = 'photo-1'")
        }
        let changes = try replica.changes(since: 0)
        let decoded = try ChangeSet(serialized: changes.serialized())
        #expect(decoded == changes)
        #expect(decoded.records.count == 3)
    }

    @Test("every truncation of a change set is refused")
    func truncatedChangeSetsAreRefused() throws {
        let data = try Self.replicaWithPhotos(2, dimensions: 8).changes(since: 0).serialized()
        for length in 0..<data.count {
            #expect(throws: VecSyncError.self) { try ChangeSet(serialized: data.prefix(length)) }
        }
    }

    @Test("a change set with any byte altered is refused")
    func tamperedChangeSetsAreRefused() throws {
        let data = try Self.replicaWithPhotos(2, dimensions: 8).changes(since: 0).serialized()
        for index in 0..<data.count {
            var tampered = data
            tampered[index] ^= 0x40
            #expect(throws: VecSyncError.self, "byte \(index)") { try ChangeSet(serialized: tampered) }
        }
    }

    @Test("a change set of another format version is refused with both versions")
    func incompatibleFormatIsRefused() throws {
        var data = try Self.replicaWithPhotos(1, dimensions: 4).changes(since: 0).serialized()
        data[4] = 9
        #expect(throws: VecSyncError.incompatibleFormat(found: 9, supported: ChangeSet.formatVersion)) {
            try ChangeSet(serialized: data)
        }
        #expect(VecSyncError.incompatibleFormat(found: 9, supported: 2).description.contains("version 9"))
    }

    @Test("a change set in format 1, written before authority counts, still reads and merges")
    func formatOneStillReads() throws {
        let a = try Self.replicaWithPhotos(3, dimensions: 8)
        let changes = try a.changes(since: 0)
        let old = changes.serialized(formatVersion: 1)
        #expect(old[4] == 1 && old.count < changes.serialized().count)
        // Format 1 carries no table definitions beyond names, key and fingerprint.
        var expected = changes
        for index in expected.tables.indices { expected.tables[index].definition = nil }
        #expect(try ChangeSet(serialized: old) == expected)
        let b = try Self.replicaWithPhotos(0, dimensions: 8, site: "b")
        #expect(try b.merge(serialized: old).inserted == 3)
    }

    @Test("bounded batches hold at most 400 rows and about 1 MB, and together hold every row once")
    func batchesAreBounded() throws {
        let replica = try Self.replicaWithPhotos(1_000, dimensions: 768)
        var cursor: Int64 = 0
        var seen = Set<SyncValue>()
        var batches = 0
        while true {
            let batch = try replica.changes(since: cursor, maximumRows: 400, maximumBytes: 1_000_000)
            if batch.isEmpty { break }
            batches += 1
            #expect(batch.records.count <= 400)
            #expect(batch.serialized().count <= 1_000_000 + 4_000)
            for record in batch.records { #expect(seen.insert(record.key).inserted) }
            #expect(batch.since == cursor)
            cursor = batch.through
        }
        #expect(seen.count == 1_000)
        #expect(batches >= 4, "1,000 rows of 3 KB need at least 4 batches of 1 MB")
    }

    @Test("a change set of 768-d embeddings is within 1.2x of the raw bytes it carries")
    func encodingOverheadIsSmall() throws {
        let replica = try Self.replicaWithPhotos(300, dimensions: 768)
        let changes = try replica.changes(since: 0)
        let ratio = Double(changes.serialized().count) / Double(changes.payloadByteCount)
        #expect(ratio < 1.2, "size ratio \(ratio)")
    }

    @Test("editing titles sends the titles, not the embeddings; the receiver ends with both")
    func onlyChangedColumnsTravel() throws {
        let a = try Self.replicaWithPhotos(100, dimensions: 768)
        let b = try Self.replicaWithPhotos(0, dimensions: 768, site: "b")
        let first = try a.changes(since: 0, maximumRows: 1_000)
        try b.merge(first)
        try a.writer.write { db in try db.execute(sql: "UPDATE photos SET title = 'renamed ' || id") }
        let edits = try a.changes(since: first.through, maximumRows: 1_000)
        #expect(edits.records.count == 100)
        #expect(edits.records.allSatisfy { $0.presentColumns.map(\.index) == [0] })
        let bytes = edits.serialized().count
        #expect(bytes < 100 * 60, "\(bytes) bytes for 100 title edits (one embedding is 3,072)")
        #expect(try b.merge(ChangeSet(serialized: edits.serialized())).updated == 100)
        let rows = { (replica: Replica) in
            try replica.writer.read { db in
                try Row.fetchAll(db, sql: "SELECT * FROM photos ORDER BY id").map(\.description)
            }
        }
        #expect(try rows(a) == rows(b))
    }

    @Test("out of order, a change set with only some columns of a row the receiver lacks is refused whole")
    func partialRowsNeedEarlierChangeSets() throws {
        let a = try Self.replicaWithPhotos(3, dimensions: 4)
        let b = try Self.replicaWithPhotos(0, dimensions: 4, site: "b")
        let first = try a.changes(since: 0)
        try a.writer.write { db in
            try db.execute(sql: "INSERT INTO photos (id, title) VALUES ('new', 'complete row')")
            try db.execute(sql: "UPDATE photos SET title = 'edited' WHERE id = 'photo-1'")
        }
        let second = try a.changes(since: first.through)
        #expect(second.records.contains { !$0.isComplete })
        #expect(throws: VecSyncError.missingEarlierChanges(origin: "a", since: first.through, received: 0)) {
            try b.merge(second)
        }
        #expect(
            try b.writer.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM photos") } == 0, "nothing applied"
        )
        #expect(
            VecSyncError.missingEarlierChanges(origin: "a", since: 4, received: 0).description
                .contains("merge 'a''s change sets in order"))
        try b.merge(first)
        try b.merge(second)
        #expect(
            try b.writer.read { db in try String.fetchAll(db, sql: "SELECT title FROM photos ORDER BY id") }
                == ["complete row", "title 0", "edited", "title 2"])
    }

    @Test("the JSON rendering names tables, columns, versions and sites")
    func jsonRenderingIsReadable() throws {
        let replica = try Self.replicaWithPhotos(1, dimensions: 2)
        let json = try replica.changes(since: 0).jsonString()
        for fragment in [
            "\"origin\" : \"a\"", "\"table\" : \"photos\"", "\"title\"", "\"base64\"", "\"bytes\" : 8",
            "\"causalLength\" : 1",
        ] {
            #expect(json.contains(fragment), "\(fragment) in \(json)")
        }
    }
}
