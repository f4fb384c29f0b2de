import Foundation
import GRDB
import Testing
import VecSyncCore
import VecSyncTestSupport

@testable import VecSyncReplication

/// Foreign keys between tracked tables (notes → photos): a merge commits what it can, and a
/// child whose parent was deleted is deleted with it, on every replica.
@Suite("Foreign keys")
struct ForeignKeyTests: ReplicationSuite {
    /// The replicas of each test, new for every test.
    let laptop: Replica, phone: Replica, tablet: Replica
    init() throws {
        (laptop, phone, tablet) = (try Self.replica("laptop"), try Self.replica("phone"), try Self.replica("tablet"))
    }

    static let schema = """
        CREATE TABLE photos (id TEXT PRIMARY KEY, title TEXT);
        CREATE TABLE notes (id TEXT PRIMARY KEY, photo_id TEXT REFERENCES photos(id), body TEXT);
        """

    /// A replica of a fresh database with foreign keys enforced (GRDB's default), tracking
    /// photos and notes.
    static func replica(_ site: SiteID, schema: String = schema) throws -> Replica {
        let queue = try DatabaseQueue(configuration: Configuration.vecSync())
        try queue.write { db in try db.execute(sql: schema) }
        let replica = try Replica(queue, site: site)
        try replica.track("photos")
        try replica.track("notes")
        return replica
    }

    static func rows(_ replica: Replica, _ sql: String) throws -> [String] {
        try replica.writer.read { db in try String.fetchAll(db, sql: sql) }
    }

    /// Rows violating a foreign key: none in a healthy database.
    static func violations(_ replica: Replica) throws -> Int {
        try replica.writer.read { db in try Row.fetchAll(db, sql: "PRAGMA foreign_key_check").count }
    }

    /// Whichever replica hears of the other's write first finds the orphan and deletes it;
    /// its delete then reaches the other with the rest.
    @Test(
        "a note added to a photo deleted elsewhere is deleted, and the unrelated edits of the same change set arrive",
        arguments: [true, false])
    func noteOnADeletedPhotoIsDeletedAndTheRestMerges(laptopHearsFirst: Bool) throws {
        try #require(try laptop.writer.read { db in try Bool.fetchOne(db, sql: "PRAGMA foreign_keys") } == true)
        try Self.write(laptop, "INSERT INTO photos (id, title) VALUES ('p1', 'beach'), ('p2', 'forest')")
        try Self.deliver(laptop, to: phone)

        // The laptop deletes p1 and renames p2; meanwhile the phone adds a note to each photo.
        try Self.write(laptop, "DELETE FROM photos WHERE id = 'p1'")
        try Self.write(laptop, "UPDATE photos SET title = 'pine forest' WHERE id = 'p2'")
        try Self.write(
            phone, "INSERT INTO notes (id, photo_id, body) VALUES ('n1', 'p1', 'sunset'), ('n2', 'p2', 'moss')")

        let (first, second) = laptopHearsFirst ? (laptop, phone) : (phone, laptop)
        // The first to hear finds a note on a deleted photo (the laptop: a note arrives for
        // the photo it deleted; the phone: the delete arrives for a photo its note is on).
        let firstReport = try Self.deliver(second, to: first)
        #expect(firstReport.orphansDeleted == ["notes": 1], "\(firstReport)")
        #expect(try Self.rows(first, "SELECT id FROM notes") == ["n2"])
        #expect(try Self.rows(first, "SELECT title FROM photos") == ["pine forest"])
        // The other receives that delete with the rest: nothing is left to orphan.
        let secondReport = try Self.deliver(first, to: second)
        #expect(secondReport.orphansDeleted.isEmpty, "\(secondReport)")

        // Both settle on the same rows, with no violation, and further syncs do nothing new.
        try Self.deliver(second, to: first)
        for replica in [laptop, phone] {
            #expect(try Self.violations(replica) == 0)
            #expect(try Self.rows(replica, "SELECT id || ':' || photo_id FROM notes") == ["n2:p2"])
            #expect(try Self.rows(replica, "SELECT id || ':' || title FROM photos") == ["p2:pine forest"])
        }
        #expect(try Self.deliver(laptop, to: phone).orphansDeleted.isEmpty)
        #expect(try Self.deliver(phone, to: laptop).orphansDeleted.isEmpty)
    }

    @Test("a note that arrives before its photo waits in quarantine, and merges when the photo arrives")
    func noteBeforeItsPhotoWaitsForIt() throws {
        try Self.write(laptop, "INSERT INTO photos (id, title) VALUES ('p1', 'beach')")
        try Self.deliver(laptop, to: phone)
        try Self.write(phone, "INSERT INTO notes (id, photo_id, body) VALUES ('n1', 'p1', 'sunset')")
        // The tablet hears from the phone first, with only the note (the photo is the laptop's).
        let noteOnly = try phone.changes(since: 0, excluding: ["laptop"])
        #expect(noteOnly.records.count == 1)
        let first = try tablet.merge(noteOnly)
        #expect(first.quarantined.map(\.key) == [.text("n1")], "\(first)")
        #expect(first.quarantined.first?.reason.contains("photos") == true)
        #expect(try Self.rows(tablet, "SELECT id FROM notes").isEmpty)
        #expect(try tablet.quarantinedRecords().count == 1)

        let second = try Self.deliver(laptop, to: tablet)
        #expect(second.releasedFromQuarantine == 1, "\(second)")
        #expect(try tablet.quarantinedRecords().isEmpty)
        #expect(try Self.rows(tablet, "SELECT id || ':' || photo_id FROM notes") == ["n1:p1"])
        #expect(try Self.violations(tablet) == 0)
    }

    @Test("a note whose photo arrives with it but is quarantined waits with it, and both merge once the photo is fixed")
    func noteWaitsWithItsQuarantinedPhoto() throws {
        let tablet = try Self.replica(
            "tablet",
            schema: """
                CREATE TABLE photos (id TEXT PRIMARY KEY, title TEXT CHECK (title IS NOT 'untitled'));
                CREATE TABLE notes (id TEXT PRIMARY KEY, photo_id TEXT REFERENCES photos(id), body TEXT);
                """)
        try Self.write(laptop, "INSERT INTO photos (id, title) VALUES ('p1', 'untitled'), ('p2', 'lake')")
        try Self.write(
            laptop, "INSERT INTO notes (id, photo_id, body) VALUES ('n1', 'p1', 'first'), ('n2', 'p2', 'second')")
        let all = try laptop.changes(since: 0)
        let report = try tablet.merge(all)
        #expect(report.quarantined.map(\.key) == [.text("p1"), .text("n1")], "\(report.quarantined)")
        #expect(report.orphansDeleted.isEmpty, "the note is not deleted: its photo is not known to be deleted")
        #expect(report.inserted == 2 && report.applied == 2, "\(report)")
        #expect(try Self.rows(tablet, "SELECT id FROM notes") == ["n2"])
        #expect(try Self.violations(tablet) == 0)

        try Self.write(laptop, "UPDATE photos SET title = 'harbour' WHERE id = 'p1'")
        let fixed = try tablet.merge(laptop.changes(since: all.through))
        // The fix carries p1's only column, so it merges at once; the kept p1 is older and
        // released as superseded, and n1 finds its photo.
        #expect(fixed.releasedFromQuarantine == 2, "\(fixed)")
        #expect(try tablet.quarantinedRecords().isEmpty)
        #expect(try Self.rows(tablet, "SELECT id || ':' || photo_id FROM notes ORDER BY id") == ["n1:p1", "n2:p2"])
        #expect(try Self.rows(tablet, "SELECT title FROM photos ORDER BY id") == ["harbour", "lake"])
    }
}
