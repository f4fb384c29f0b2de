import Foundation
import GRDB
import Testing
import VecSyncCore
import VecSyncTestSupport

@testable import VecSyncReplication

/// Merging: no write lost, a total order for conflicts, atomic change sets, and refusal of
/// what cannot be merged.
@Suite("Merge")
struct MergeTests: ReplicationSuite {
    let a: Replica, b: Replica
    init() throws { (a, b) = (try Fixture.replica("a"), try Fixture.replica("b")) }

    static func photo(_ replica: Replica, _ id: String) throws -> Row? {
        try replica.writer.read { db in
            try Row.fetchOne(db, sql: "SELECT title, rating FROM photos WHERE id = ?", arguments: [id])
        }
    }

    /// Delivers each replica's changes to the other, until both have everything.
    static func exchange(_ a: Replica, _ b: Replica) throws {
        try deliver(a, to: b)
        try deliver(b, to: a)
        try deliver(a, to: b)
    }

    /// ``exchange(_:_:)``, then checks that both hold the same rows.
    static func converge(_ a: Replica, _ b: Replica, sourceLocation: SourceLocation = #_sourceLocation) throws {
        try exchange(a, b)
        #expect(try Fixture.snapshot(a) == Fixture.snapshot(b), sourceLocation: sourceLocation)
    }

    @Test("concurrent edits to different columns of one row both survive")
    func concurrentColumnEditsBothSurvive() throws {
        try Self.write(a, "INSERT INTO photos (id, title, rating) VALUES ('p1', 'old', 1)")
        try Self.deliver(a, to: b)
        try Self.write(a, "UPDATE photos SET title = 'new title' WHERE id = 'p1'")
        try Self.write(b, "UPDATE photos SET rating = 5 WHERE id = 'p1'")
        try Self.deliver(a, to: b)
        try Self.deliver(b, to: a)
        for replica in [a, b] {
            let row = try #require(try Self.photo(replica, "p1"))
            #expect(row["title"] as String? == "new title")
            #expect(row["rating"] as Int? == 5)
        }
    }

    @Test("equal clocks are broken by site id, the same way on every replica")
    func tiesAreBrokenBySiteId() throws {
        let a = try Fixture.replica("a", wallClock: 1_000)
        let b = try Fixture.replica("b", wallClock: 1_000)
        try Self.write(a, "INSERT INTO photos (id, title) VALUES ('p1', 'from a')")
        try Self.write(b, "INSERT INTO photos (id, title) VALUES ('p1', 'from b')")
        #expect(try a.currentClock() == b.currentClock())
        let report = try Self.deliver(b, to: a)
        #expect(report.conflicts == 1)
        try Self.deliver(a, to: b)
        #expect(try Self.photo(a, "p1")?["title"] as String? == "from b")
        #expect(try Self.photo(b, "p1")?["title"] as String? == "from b")
    }

    @Test("a delete wins over the row it saw, and a later re-insert brings the row back")
    func deleteAndReinsertOrderByCausalLength() throws {
        try Self.write(a, "INSERT INTO photos (id, title) VALUES ('p1', 'one')")
        try Self.deliver(a, to: b)
        try Self.write(b, "UPDATE photos SET title = 'edited' WHERE id = 'p1'")
        try Self.write(a, "DELETE FROM photos WHERE id = 'p1'")
        try Self.deliver(a, to: b)
        try Self.deliver(b, to: a)
        #expect(try Self.photo(a, "p1") == nil)
        #expect(try Self.photo(b, "p1") == nil)

        try Self.write(b, "INSERT INTO photos (id, title) VALUES ('p1', 'back')")
        try Self.deliver(b, to: a)
        #expect(try Self.photo(a, "p1")?["title"] as String? == "back")
    }

    @Test("a row learned with an equal value still reaches third peers")
    func equalValuesAreRecordedForThirdPeers() throws {
        let a = try Fixture.replica("a", wallClock: 1_000)
        let b = try Fixture.replica("b", wallClock: 2_000)
        let c = try Fixture.replica("c", wallClock: 3_000)
        try Self.write(a, "INSERT INTO photos (id, title) VALUES ('p1', 'same')")
        try Self.write(b, "INSERT INTO photos (id, title) VALUES ('p1', 'same')")
        let cursor = try a.currentSequence()
        let report = try Self.deliver(b, to: a)
        #expect(report.applied == 1, "b's later write wins though the value is equal")
        // a now forwards the row with b's versions; c learns it from a alone.
        let forwarded = try a.changes(since: cursor)
        #expect(forwarded.records.count == 1)
        try c.merge(forwarded)
        #expect(try Self.photo(c, "p1")?["title"] as String? == "same")
        #expect(try Self.deliver(b, to: c).applied == 0, "c already holds b's write")
    }

    @Test("a merge that fails halfway leaves the rows, the clocks and the cursor as they were")
    func failedMergeChangesNothing() throws {
        for index in 0..<10 {
            try Self.write(a, "INSERT INTO photos (id, title) VALUES (?, 'x')", ["p\(index)"])
        }
        try Self.write(b, "INSERT INTO photos (id, title) VALUES ('mine', 'kept')")
        // A failure of the database itself halfway (a row a constraint refuses is only
        // quarantined, see QuarantineTests): a trigger writing to a table that is gone.
        try Self.write(
            b,
            """
            CREATE TABLE gone (x);
            CREATE TRIGGER refuse_p5 BEFORE INSERT ON photos WHEN new.id = 'p5' BEGIN INSERT INTO gone VALUES (1); END;
            DROP TABLE gone;
            """)
        let before = try Fixture.snapshot(b)
        let sequence = try b.currentSequence()
        let changes = try a.changes(since: 0)
        #expect(throws: VecSyncError.self) { try b.merge(changes) }
        #expect(try Fixture.snapshot(b) == before)
        #expect(try b.currentSequence() == sequence)
        #expect(try b.peers().isEmpty)
        let merging = try b.writer.read { db in
            try Int.fetchOne(db, sql: "SELECT count(*) FROM vecsync_state WHERE key = 'merging'")
        }
        #expect(merging == 0)
        // Local writes are still captured after the failed merge.
        try Self.write(b, "UPDATE photos SET title = 'still captured' WHERE id = 'mine'")
        #expect(try b.changes(since: sequence).records.count == 1)

        try Self.write(b, "DROP TRIGGER refuse_p5")
        let report = try b.merge(changes)
        #expect(report.inserted == 10)
        #expect(try b.peers().first?.received == changes.through)
    }

    @Test("a replayed change set is harmless")
    func replayIsHarmless() throws {
        try Self.write(a, "INSERT INTO photos (id, title) VALUES ('p1', 'one')")
        let changes = try a.changes(since: 0)
        #expect(try b.merge(changes).inserted == 1)
        let snapshot = try Fixture.snapshot(b)
        let replay = try b.merge(changes)
        #expect(replay.alreadyMerged)
        #expect(try Fixture.snapshot(b) == snapshot)
    }

    @Test("a change set from an incompatible schema is quarantined, naming the table and the column")
    func schemaMismatchIsQuarantined() throws {
        let queue = try DatabaseQueue()
        try queue.write { db in
            try db.execute(
                sql:
                    "CREATE TABLE photos (id TEXT PRIMARY KEY, title BLOB, rating INTEGER, score REAL, embedding F32_BLOB(4))"
            )
        }
        let b = try Replica(queue, site: "b")
        try b.track("photos")
        try Self.write(a, "INSERT INTO photos (id, title) VALUES ('p1', 'one')")
        let report = try Self.deliver(a, to: b)
        #expect(report.quarantined.count == 1)
        let reason = report.quarantined.first?.reason ?? ""
        #expect(reason.contains("photos") && reason.contains("title is TEXT there"), "\(reason)")
        #expect(try b.writer.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM photos") } == 0)
    }

    @Test("a change set from a clock far in the future is refused before anything is applied")
    func clockTooFarAheadIsRefused() throws {
        let a = try Fixture.replica("a", wallClock: 1_700_000_000_000 + 3 * 86_400_000)
        let b = try Fixture.replica("b", wallClock: 1_700_000_000_000)
        try Self.write(a, "INSERT INTO photos (id, title) VALUES ('p1', 'future')")
        #expect {
            try Self.deliver(a, to: b)
        } throws: { error in
            guard case VecSyncError.clockTooFarAhead(let site, _, _, _) = error else { return false }
            return site == "a"
        }
        #expect(try Self.photo(b, "p1") == nil)
    }

    @Test("a replica's own change set is not merged back")
    func ownChangeSetIsRefused() throws {
        try Self.write(a, "INSERT INTO photos (id) VALUES ('p1')")
        #expect(throws: VecSyncError.ownChangeSet(site: "a")) { try a.merge(a.changes(since: 0)) }
    }

    /// Checks photo `id`'s title and rating on each of `replicas`.
    static func expectPhoto(
        _ id: String, title: String?, rating: Int?, on replicas: [Replica],
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        for replica in replicas {
            let row = try photo(replica, id)
            #expect(row?["title"] as String? == title, "\(replica.site)", sourceLocation: sourceLocation)
            #expect(row?["rating"] as Int? == rating, "\(replica.site)", sourceLocation: sourceLocation)
        }
    }

    /// A mac, authoritative for photos, and a phone whose clock runs far ahead of it; `sql`,
    /// when given, is written on the mac and delivered to the phone.
    static func macAndPhone(
        macClock: Int64 = 1_000_000, phoneClock: Int64 = 9_000_000, sharing sql: String? = nil
    ) throws -> (Replica, Replica) {
        let mac = try Fixture.replica("mac", wallClock: macClock)
        let phone = try Fixture.replica("phone", wallClock: phoneClock)
        for replica in [mac, phone] { try replica.setAuthority("mac", for: "photos") }
        if let sql {
            try write(mac, sql)
            try deliver(mac, to: phone)
        }
        return (mac, phone)
    }

    @Test("the authoritative site's writes win whatever the clocks say")
    func authoritativeSiteWins() throws {
        let (mac, phone) = try Self.macAndPhone(macClock: 1_000, phoneClock: 9_000)
        try Self.write(mac, "INSERT INTO photos (id, title) VALUES ('f1', 'scanned')")
        try Self.write(phone, "INSERT INTO photos (id, title) VALUES ('f1', 'edited on phone')")
        try Self.deliver(phone, to: mac)
        try Self.deliver(mac, to: phone)
        #expect(try Self.photo(mac, "f1")?["title"] as String? == "scanned")
        #expect(try Self.photo(phone, "f1")?["title"] as String? == "scanned")

        // A replica with another authority keeps the table's rows aside, naming the reason.
        let other = try Fixture.replica("other")
        let refused = try Self.deliver(mac, to: other)
        #expect(refused.applied == 0)
        #expect(refused.quarantined.first?.reason.contains("the authorities differ") == true, "\(refused)")
    }

    @Test("a write made after merging the authority's wins over it; a concurrent one loses")
    func authorityOrdersOnlyConcurrentWrites() throws {
        let (mac, phone) = try Self.macAndPhone(
            sharing: "INSERT INTO photos (id, title, rating) VALUES ('f1', 'scanned', 1)")

        // The phone renames after seeing the scan: a later write, which wins everywhere.
        try Self.write(phone, "UPDATE photos SET title = 'renamed' WHERE id = 'f1'")
        try Self.converge(mac, phone)
        #expect(try Self.photo(mac, "f1")?["title"] as String? == "renamed")

        // Both edit concurrently, the phone with a clock far ahead: the authority wins,
        // column by column — the phone's rating, which the mac did not touch, survives.
        try Self.write(mac, "UPDATE photos SET title = 'rescanned' WHERE id = 'f1'")
        try Self.write(phone, "UPDATE photos SET title = 'phone edit', rating = 5 WHERE id = 'f1'")
        try Self.converge(mac, phone)
        try Self.expectPhoto("f1", title: "rescanned", rating: 5, on: [mac, phone])
    }

    @Test("the authority's delete beats a concurrent delete and re-insert elsewhere; a later re-insert wins")
    func authorityDecidesRowExistence() throws {
        let (mac, phone) = try Self.macAndPhone(sharing: "INSERT INTO photos (id, title) VALUES ('f1', 'scanned')")

        // The file is gone on the mac while the phone deletes and re-creates the entry: the
        // phone's causal length is higher, but the authority's delete wins.
        try Self.write(mac, "DELETE FROM photos WHERE id = 'f1'")
        try Self.write(phone, "DELETE FROM photos WHERE id = 'f1'")
        try Self.write(phone, "INSERT INTO photos (id, title) VALUES ('f1', 'phone copy')")
        try Self.exchange(mac, phone)
        #expect(try Self.photo(mac, "f1") == nil)
        #expect(try Self.photo(phone, "f1") == nil)

        // Once the phone has seen the delete, its re-insert is a later write and stands.
        try Self.write(phone, "INSERT INTO photos (id, title) VALUES ('f1', 'restored')")
        try Self.converge(mac, phone)
        #expect(try Self.photo(mac, "f1")?["title"] as String? == "restored")

        // The authority's insert beats a concurrent insert of the same key elsewhere.
        try Self.write(mac, "INSERT INTO photos (id, title) VALUES ('f2', 'from the scan')")
        try Self.write(phone, "INSERT INTO photos (id, title, rating) VALUES ('f2', 'typed on the phone', 4)")
        try Self.converge(mac, phone)
        try Self.expectPhoto("f2", title: "from the scan", rating: nil, on: [mac, phone])
    }

    @Test("a read-only replica refuses local writes with a clear error and still merges")
    func readOnlyReplicaRefusesLocalWrites() throws {
        let b = try Fixture.replica("phone")
        try b.setReadOnly(true)
        do {
            try Self.write(b, "INSERT INTO photos (id) VALUES ('p1')")
            Issue.record("a local write was accepted")
        } catch let error as DatabaseError {
            #expect(
                error.message == "vecsync: table photos is read-only on replica 'phone'; its rows change only by sync")
        }
        try Self.write(a, "INSERT INTO photos (id, title) VALUES ('p1', 'synced')")
        try Self.deliver(a, to: b)
        #expect(try Self.photo(b, "p1")?["title"] as String? == "synced")
        try b.setReadOnly(false)
        try Self.write(b, "UPDATE photos SET title = 'mine' WHERE id = 'p1'")
    }

    @Test("tombstones go once every known peer has acknowledged them, not before")
    func compactionWaitsForAcknowledgement() throws {
        try Self.write(a, "INSERT INTO photos (id) VALUES ('p1'), ('p2')")
        try Self.write(a, "DELETE FROM photos WHERE id = 'p1'")
        try Self.deliver(a, to: b)
        try Self.write(b, "INSERT INTO albums (id, name) VALUES (1, 'x')")
        #expect(try a.compactTombstones() == 0, "no peer has acknowledged yet")
        try Self.deliver(b, to: a)  // b's change set acknowledges a's sequence
        #expect(try a.tombstoneCount() == 1)
        #expect(try a.compactTombstones() == 1)
        #expect(try a.tombstoneCount() == 0)
        // The row stays deleted everywhere.
        try Self.deliver(b, to: a)
        #expect(try Self.photo(a, "p1") == nil)

        // Re-using the compacted key: the new row beats the tombstone b still keeps.
        let cursor = try a.currentSequence()
        try Self.write(a, "INSERT INTO photos (id, title) VALUES ('p1', 'reborn')")
        try b.merge(a.changes(since: cursor))
        #expect(try Self.photo(b, "p1")?["title"] as String? == "reborn")
    }

    @Test("a registered FTS5 index is refreshed for the merged rows only")
    func registeredFTS5IndexIsRefreshed() throws {
        func make(_ site: SiteID) throws -> Replica {
            let queue = try DatabaseQueue()
            try queue.write { db in
                try db.execute(
                    sql:
                        "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT); CREATE VIRTUAL TABLE notes_fts USING fts5(body)"
                )
            }
            let replica = try Replica(queue, site: site)
            try replica.track("notes", authority: "a")  // integer keys: only a inserts
            try replica.register(DerivedIndex(fts5: "notes_fts", on: "notes", columns: ["body"]))
            return replica
        }
        let a = try make("a")
        let b = try make("b")
        try Self.write(a, "INSERT INTO notes VALUES (1, 'red fox'), (2, 'blue whale')")
        let report = try Self.deliver(a, to: b)
        #expect(report.refreshedIndexes == ["notes_fts": 2])
        let found = try b.writer.read { db in
            try Int.fetchAll(db, sql: "SELECT rowid FROM notes_fts WHERE notes_fts MATCH 'fox'")
        }
        #expect(found == [1])
        #expect(try b.verifyDerivedIndexes() == ["notes_fts": 0])
        let cursor = try a.currentSequence()
        try Self.write(a, "DELETE FROM notes WHERE id = 1")
        #expect(try b.merge(a.changes(since: cursor)).refreshedIndexes == ["notes_fts": 1])
        #expect(try b.writer.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM notes_fts") } == 1)
    }

    @Test("changes(since:excluding:) leaves out rows the peer already has, and still moves the cursor")
    func excludingSkipsRowsFromExcludedSites() throws {
        try Self.write(b, "INSERT INTO photos (id, title) VALUES ('from-b', 'b')")
        try Self.deliver(b, to: a)
        try Self.write(a, "INSERT INTO photos (id, title) VALUES ('from-a', 'a')")
        let all = try a.changes(since: 0)
        let forB = try a.changes(since: 0, excluding: ["b"])
        #expect(all.records.map(\.key).sorted { "\($0)" < "\($1)" } == [.text("from-a"), .text("from-b")])
        #expect(forB.records.map(\.key) == [.text("from-a")])
        #expect(forB.through == all.through)
    }

    @Test("derived indexes can be verified and rebuilt from the tracked rows")
    func derivedIndexesVerifyAndRebuild() throws {
        try Self.write(
            a, "INSERT INTO photos (id, embedding) VALUES ('p1', ?), ('p2', ?)",
            [Vector([1, 0, 0, 0]).blob, Vector([0, 1, 0, 0]).blob])
        #expect(try a.verifyDerivedIndexes() == ["photos_vec": 0])
        try a.writer.write { db in try db.execute(sql: "DELETE FROM photos_vec WHERE id = 'p1'") }
        #expect(try a.verifyDerivedIndexes() == ["photos_vec": 1])
        try a.rebuildDerivedIndexes()
        #expect(try a.verifyDerivedIndexes() == ["photos_vec": 0])
    }

    @Test("a column added to a tracked table after tracking is adopted by the next merge")
    func addedColumnIsAdoptedByMerge() throws {
        try Self.write(a, "INSERT INTO albums (id, name) VALUES (1, 'x')")
        try Self.write(b, "ALTER TABLE albums ADD COLUMN extra TEXT")
        let report = try Self.deliver(a, to: b)
        #expect(report.inserted == 1)
        #expect(try b.trackedTables().first { $0.name == "albums" }?.columns == ["name", "cover", "extra"])
    }

    @Test("a libSQL vector index follows merged inserts, updates and deletes: vector_top_k agrees everywhere")
    func libsqlVectorIndexFollowsMerges() throws {
        for replica in [a, b] {
            try Self.write(
                replica,
                """
                CREATE TABLE docs (id INTEGER PRIMARY KEY, title TEXT, embedding F32_BLOB(4));
                CREATE INDEX docs_idx ON docs (libsql_vector_idx(embedding));
                """)
            try replica.track("docs", authority: "a")  // integer keys: only a inserts
        }
        let query = Vector([0.1, 0.2, 0.3, 0.4])
        func nearest(_ replica: Replica) throws -> [Int64] {
            try replica.writer.read { db in try db.vectorTopK(index: "docs_idx", near: query, k: 8).map(\.key) }
        }
        func bruteForce(_ replica: Replica) throws -> [Int64] {
            let rows = try replica.writer.read { db in try Row.fetchAll(db, sql: "SELECT id, embedding FROM docs") }
            return try rows.map { row -> (Int64, Double) in
                let vector = try Vector(blob: row["embedding"])
                return (row["id"], 1 - Double(vector.dot(query)) / Double(vector.norm * query.norm))
            }.sorted { ($0.1, $0.0) < ($1.1, $1.0) }.prefix(8).map(\.0)
        }
        // b searches first, so its index data exists before the merges write to the table.
        #expect(try nearest(b).isEmpty)

        var random = SeededRandom(seed: 11)
        func embedding() -> Data { Vector((0..<4).map { _ in Float.random(in: -1...1, using: &random) }).blob }
        for id in 1...40 { try Self.write(a, "INSERT INTO docs VALUES (?, ?, ?)", [id, "doc \(id)", embedding()]) }
        try Self.deliver(a, to: b)
        #expect(try nearest(b) == bruteForce(a))

        for id in 1...10 { try Self.write(a, "UPDATE docs SET embedding = ? WHERE id = ?", [embedding(), id]) }
        try Self.write(a, "UPDATE docs SET title = 'renamed' WHERE id > 30")
        try Self.write(a, "DELETE FROM docs WHERE id IN (11, 12, 13, 14, 15)")
        try Self.deliver(a, to: b)
        #expect(try nearest(b) == bruteForce(a))
        #expect(try nearest(a) == nearest(b))
        #expect(try b.verifyDerivedIndexes()["docs_idx"] == 0)
        #expect(
            try b.derivedIndexes().indexes.map(\.name) == ["docs_idx"], "found in the schema, no registration needed")
    }

    @Test("a merge refreshes the vec0 index for the changed rows, so searches agree")
    func vectorIndexIsRefreshedAfterMerge() throws {
        let v1 = Vector([1, 0, 0, 0])
        let v2 = Vector([0, 1, 0, 0])
        try Self.write(a, "INSERT INTO photos (id, embedding) VALUES ('p1', ?), ('p2', ?)", [v1.blob, v2.blob])
        let report = try Self.deliver(a, to: b)
        #expect(report.refreshedIndexes["photos_vec"] == 2)
        let nearest = try b.writer.read { db in try Fixture.vectorIndex.search(db, near: v2, limit: 1, as: String.self)
        }
        #expect(nearest.map(\.key) == ["p2"])
        let stored = try b.writer.read { db in
            try Data.fetchOne(db, sql: "SELECT embedding FROM photos WHERE id = 'p1'")
        }
        #expect(stored == v1.blob, "embeddings arrive bit for bit")
    }
}
