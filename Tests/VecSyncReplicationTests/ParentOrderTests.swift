import Foundation
import GRDB
import Testing
import VecSyncCore
import VecSyncTestSupport

@testable import VecSyncReplication

/// Tables tracked children first (DriveIndex tracks `files`, whose foreign key refers to
/// `drives`, before `drives`): parents travel before their children, a quarantined row is
/// tried again when what it waits for arrives (and only then), and a sync counts a row as
/// merged once it is in its table.
@Suite("Parent order")
struct ParentOrderTests: FolderSuite {
    let scratch = ScratchFolder("parent-order")

    static let schema = """
        CREATE TABLE drives (uuid TEXT PRIMARY KEY, name TEXT NOT NULL);
        CREATE TABLE files (
          id TEXT PRIMARY KEY,
          drive_uuid TEXT NOT NULL REFERENCES drives(uuid) ON DELETE CASCADE,
          name TEXT, size INTEGER);
        """

    /// A database with the DriveIndex shape, foreign keys enforced (GRDB's default), with
    /// `files` files on 3 drives (none when `files` is 0) written before anything is
    /// tracked; then `files` is tracked before `drives`, as DriveIndex does.
    static func replica(_ site: SiteID, files: Int, options: Replica.Options = Replica.Options()) throws -> Replica {
        let queue = try DatabaseQueue(configuration: Configuration.vecSync())
        try queue.write { db in
            try db.execute(sql: schema)
            for drive in 0..<(files > 0 ? 3 : 0) {
                try db.execute(sql: "INSERT INTO drives VALUES (?, ?)", arguments: ["d\(drive)", "Drive \(drive)"])
            }
            for file in 0..<files {
                try db.execute(
                    sql: "INSERT INTO files VALUES (?, ?, ?, ?)",
                    arguments: [String(format: "f%04d", file), "d\(file % 3)", "file \(file)", file * 10])
            }
        }
        let replica = try Replica(queue, site: site, options: options)
        try replica.track("files")
        try replica.track("drives")
        return replica
    }

    static func rows(_ replica: Replica, _ sql: String) throws -> [String] {
        try replica.writer.read { db in try String.fetchAll(db, sql: sql) }
    }

    /// Every change of `mac`, and the same change set holding only its files (those `keep`
    /// accepts), without the drives they refer to: as if the drives were still on their way.
    static func filesAlone(
        of mac: Replica, keep: (ChangeSet.Record) -> Bool = { _ in true }
    ) throws -> (all: ChangeSet, filesOnly: ChangeSet) {
        let all = try mac.changes(since: 0, maximumRows: 1_000)
        var filesOnly = all
        filesOnly.records = all.records.filter { all.tables[$0.table].name == "files" && keep($0) }
        return (all, filesOnly)
    }

    static func quarantineIDs(_ replica: Replica) throws -> [Int64] {
        try replica.writer.read { db in try Int64.fetchAll(db, sql: "SELECT id FROM vecsync_quarantine ORDER BY id") }
    }

    @Test("a first sync of a child table tracked before its parent merges every batch without quarantine")
    func childTableTrackedFirstArrivesAfterItsParents() throws {
        let mac = try Self.replica("mac", files: 60)
        let phone = try Self.replica("phone", files: 0)
        // The backfill numbered the 60 files before the 3 drives; batches of 10 rows.
        var cursor: Int64 = 0
        var batches = 0
        while true {
            let batch = try mac.changes(since: cursor, maximumRows: 10)
            if batch.isEmpty { break }
            let report = try phone.merge(batch)
            #expect(report.quarantined.isEmpty, "batch \(batches): \(report)")
            // Every file merged is in its table, with its drive.
            #expect(
                try Self.rows(phone, "SELECT count(*) FROM files WHERE drive_uuid NOT IN (SELECT uuid FROM drives)")
                    == ["0"])
            cursor = batch.through
            batches += 1
        }
        #expect(batches >= 6)
        #expect(try Self.rows(phone, "SELECT count(*) FROM files") == ["60"])
        #expect(try Self.rows(phone, "SELECT group_concat(uuid) FROM drives") == ["d0,d1,d2"])
        #expect(try phone.quarantinedRecords().isEmpty)

        // The same through one scan of the whole backlog (what transports push).
        let tablet = try Self.replica("tablet", files: 0)
        var quarantined = 0
        try mac.forEachChangeSet(since: 0, maximumRows: 7) { batch in
            quarantined += try tablet.merge(batch).quarantined.count
        }
        #expect(quarantined == 0)
        #expect(try Self.rows(tablet, "SELECT count(*) FROM files") == ["60"])
        // A parent sent ahead of its place is not sent a second time by the same scan.
        var drivesSent = 0
        try mac.forEachChangeSet(since: 0, maximumRows: 7) { batch in
            drivesSent += batch.records.filter { batch.tables[$0.table].name == "drives" }.count
        }
        #expect(drivesSent == 3)
    }

    @Test("a quarantined row is tried again only when the row it waits for arrives")
    func quarantinedRowWaitsForItsParentAlone() throws {
        let mac = try Self.replica("mac", files: 30)
        let phone = try Self.replica("phone", files: 0)
        // The phone hears of the files alone (the drives left out, as if still on their way).
        let (all, filesOnly) = try Self.filesAlone(of: mac)
        let first = try phone.merge(filesOnly)
        #expect(first.quarantined.count == 30)
        let kept = try Self.quarantineIDs(phone)
        #expect(kept.count == 30)
        // Every kept change a retry takes out of the quarantine is counted.
        try phone.writer.writeWithoutTransaction { db in
            try db.execute(
                sql: """
                    CREATE TEMP TABLE taken_out (n INTEGER NOT NULL); INSERT INTO taken_out VALUES (0);
                    CREATE TEMP TRIGGER count_taken_out AFTER DELETE ON vecsync_quarantine
                    BEGIN UPDATE taken_out SET n = n + 1; END;
                    """)
        }
        func takenOut() throws -> Int {
            try phone.writer.read { db in try Int.fetchOne(db, sql: "SELECT n FROM taken_out") ?? -1 }
        }

        // A change no quarantined row waits for leaves the quarantine untouched (the rows
        // are not taken out and kept again).
        try mac.writer.write { db in try db.execute(sql: "INSERT INTO drives VALUES ('d9', 'Spare')") }
        let unrelated = try mac.changes(since: all.through)
        let second = try phone.merge(unrelated)
        #expect(second.releasedFromQuarantine == 0)
        #expect(try takenOut() == 0)
        #expect(try Self.quarantineIDs(phone) == kept)

        // One drive arrives: its 10 files are released, the other 20 stay as they were.
        var oneDrive = all
        oneDrive.records = all.records.filter { $0.key == .text("d1") }
        oneDrive.since = 0
        oneDrive.through = 0
        let third = try phone.merge(oneDrive)
        #expect(third.releasedFromQuarantine == 10, "\(third)")
        #expect(third.released.count == 10)
        #expect(try takenOut() == 10)
        #expect(try Self.rows(phone, "SELECT count(*) FROM files") == ["10"])
        let left = try Self.quarantineIDs(phone)
        #expect(left.count == 20)
        #expect(Set(left).isSubset(of: Set(kept)))

        // The rest arrives; nothing is left waiting.
        var rest = all
        rest.since = 0
        rest.through = 0
        let fourth = try phone.merge(rest)
        #expect(fourth.releasedFromQuarantine == 20, "\(fourth)")
        #expect(try Self.rows(phone, "SELECT count(*) FROM files") == ["30"])
        #expect(try phone.quarantinedRecords().isEmpty)
    }

    @Test("a quarantined row whose parent is written here is released by the next merge")
    func quarantinedRowReleasedByALocalParent() throws {
        let mac = try Self.replica("mac", files: 3)
        let phone = try Self.replica("phone", files: 0)
        let (all, filesOnly) = try Self.filesAlone(of: mac) { $0.key == .text("f0000") }
        #expect(try phone.merge(filesOnly).quarantined.count == 1)
        try phone.writer.write { db in try db.execute(sql: "INSERT INTO drives VALUES ('d0', 'Drive 0 (phone)')") }
        try mac.writer.write { db in try db.execute(sql: "INSERT INTO drives VALUES ('d5', 'Spare')") }
        let next = try phone.merge(try mac.changes(since: all.through))
        #expect(next.releasedFromQuarantine == 1, "\(next)")
        #expect(try Self.rows(phone, "SELECT id FROM files") == ["f0000"])
    }

    @Test("a sync counts a row as merged once it is in its table, and reports only rows still in quarantine")
    func syncCountsRowsInTheirTables() throws {
        // "alpha" writes a file on a drive that "zulu" made and alpha's change sets do not
        // carry (alpha enforces no foreign keys): a reader merges alpha's change set first
        // (origins in name order), one change set per transaction.
        let zulu = try Self.replica("zulu", files: 0)
        let alpha = try Self.replica("alpha", files: 0)
        try zulu.writer.write { db in try db.execute(sql: "INSERT INTO drives VALUES ('d7', 'Travel')") }
        try alpha.writer.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA foreign_keys = OFF") }
        try alpha.writer.write { db in try db.execute(sql: "INSERT INTO files VALUES ('f7', 'd7', 'trip.jpg', 7)") }
        try zulu.sync(through: transport)
        try alpha.sync(through: transport)

        let reader = try Self.replica("reader", files: 0, options: Replica.Options(maximumMergeRows: 1))
        var merged: [Int] = []
        let report = try reader.sync(through: transport) { event in
            if case .merged(let progress) = event { merged.append(progress.rows) }
        }
        // alpha's file waits for zulu's drive: 0 rows in their tables after the first
        // commit; then the drive and the released file.
        #expect(merged.first == 0, "\(merged)")
        #expect(merged.last == 2, "\(merged)")
        #expect(report.quarantined.isEmpty, "\(report.quarantined)")
        #expect(report.releasedFromQuarantine == 1)
        #expect(try Self.rows(reader, "SELECT id FROM files") == ["f7"])
    }
}
