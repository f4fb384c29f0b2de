import Foundation
import GRDB
import Testing
import VecSyncCore
import VecSyncTestSupport

@testable import VecSyncReplication

/// Replicas that have seen the same change sets hold the same rows, whatever the order,
/// duplication, batching, loss and damage of delivery, whatever the clocks say, and when a
/// replica is restored from a backup; rows of integer-keyed tables written on every site,
/// whose ids differ per replica, by identity.
@Suite("Convergence")
struct ConvergencePropertyTests {
    /// Random histories a run tries: 25 by default; `VECSYNC_PROPERTY_RUNS=5000` for a long
    /// soak. Each history is a test case of its own, so they run side by side on every core.
    static let runs: Int = ProcessInfo.processInfo.environment["VECSYNC_PROPERTY_RUNS"].flatMap { Int($0) } ?? 25

    /// The first history's seed: `VECSYNC_PROPERTY_SEED`; else a fixed one, so `make test`
    /// tries the same histories on every run, or a new one under `make soak`
    /// (`VECSYNC_EXPLORE=1`), whose failures become seeds of
    /// ``historiesThatOnceDivergedConverge(seed:)``. History `n` uses this plus `n`.
    static let baseSeed: UInt64 =
        ProcessInfo.processInfo.environment["VECSYNC_PROPERTY_SEED"].flatMap { UInt64($0) }
        ?? (SeededRandom.isExploring ? UInt64.random(in: 1...UInt64(UInt32.max)) : 2_026_112_800)

    @Test("replicas converge byte for byte under random writes and random delivery", arguments: 0..<runs)
    func replicasConvergeUnderRandomDelivery(history: Int) throws {
        let seed = Self.baseSeed &+ UInt64(history)
        if history == 0 { print("convergence: \(Self.runs) histories from seed \(Self.baseSeed)") }
        let rerun = "seed \(seed) (rerun with VECSYNC_PROPERTY_SEED=\(seed) VECSYNC_PROPERTY_RUNS=1)"
        do {
            if let failure = try Self.run(seed: seed) { Issue.record("\(rerun): \(failure)") }
        } catch {
            Issue.record("\(rerun): \(error)")
        }
    }

    /// Histories that once diverged, replayed (every seed that ever failed is kept here): a
    /// restored device taking back its lost future gave its own row's id (not written yet) to
    /// a row from elsewhere of the same merge (958956619); a restored device's new row took the
    /// id, and the identity, of a row of its lost future, the two writes of its foreign key
    /// tied, and each replica ordered them by its own local ids instead of by identity (7031);
    /// a row of a renamed table, quarantined on a replica that had not renamed it yet, came
    /// back after the delete that beat it merged and its tombstone was compacted: released
    /// with nothing left to lose to (3822651117).
    @Test("histories that once diverged converge", arguments: [958_956_619, 7031, 3_822_651_117] as [UInt64])
    func historiesThatOnceDivergedConverge(seed: UInt64) throws {
        #expect(try Self.run(seed: seed) == nil, "seed \(seed)")
    }

    /// Photos and notes on them, written before the tables are tracked.
    static func writeBeforeTracking(_ db: Database) throws {
        for index in 0..<3 {
            try db.execute(
                sql: "INSERT INTO photos (id, title, rating) VALUES (?, ?, ?)",
                arguments: ["early-\(index)", "early \(index)", index])
            try db.execute(
                sql: "INSERT INTO notes (id, photo, body) VALUES (?, ?, ?)",
                arguments: ["early-note-\(index)", "early-\(index)", "note \(index)"])
        }
    }

    /// The name of the shared log in each replica's `vecsync_published`: its push cursor.
    static let logDestination = "log"

    /// Merges a serialized change set, or returns nil when it was refused for coming before
    /// the earlier change sets of its origin (nothing applied).
    static func mergeUnlessEarlierChangesAreMissing(_ replica: Replica, _ data: Data) throws -> MergeReport? {
        do {
            return try replica.merge(serialized: data)
        } catch VecSyncError.missingEarlierChanges {
            return nil
        }
    }

    /// Delivers a damaged copy of `data` (a byte changed, or the end cut off), as a bad disk
    /// or a cut transfer would: it must be refused whole and change nothing. Returns a
    /// description of what went wrong, or nil.
    static func deliverDamaged(_ data: Data, to replica: Replica, random: inout SeededRandom) throws -> String? {
        var damaged = data
        if damaged.count > 1 && Bool.random(using: &random) {
            damaged.removeLast(Int.random(in: 1...(damaged.count - 1), using: &random))
        } else {
            let at = damaged.startIndex + Int.random(in: 0..<damaged.count, using: &random)
            damaged[at] ^= UInt8.random(in: 1...255, using: &random)
        }
        let before = try snapshot(replica)
        if (try? replica.merge(serialized: damaged)) != nil {
            return "\(replica.site) merged a damaged change set (\(damaged.count) of \(data.count) bytes)"
        }
        if try snapshot(replica) != before {
            return "\(replica.site) changed when it refused a damaged change set"
        }
        return nil
    }

    /// One random history; returns a description of the divergence, or nil.
    static func run(seed: UInt64) throws -> String? {
        var random = SeededRandom(seed: seed)
        let count = Int.random(in: 3...5, using: &random)
        let batchRows = Int.random(in: 1...6, using: &random)
        // Clocks: all equal (every write ties with the others' on version), or skewed.
        let tie = Bool.random(using: &random)
        // Some histories track notes (whose foreign key refers to photos) before photos, with
        // rows written on the first replica before it tracks them (its backfill numbers the
        // notes first), and the integer-keyed visits before people; some make photos.rating a
        // counter (a PN-counter, not last writer wins). Integer-keyed tables are written on
        // every site.
        let childrenFirst = Bool.random(using: &random)
        let counters: [String: [String]] = Bool.random(using: &random) ? ["photos": ["rating"]] : [:]
        let trackingOrder: [String] = childrenFirst ? Fixture.trackedTables.reversed() : Fixture.trackedTables
        var replicas: [Replica] = []
        for index in 0..<count {
            let skew = tie ? 0 : Int64.random(in: 0...5_000, using: &random) * Int64(index)
            var before: ((Database) throws -> Void)?
            if childrenFirst && index == 0 { before = { db in try Self.writeBeforeTracking(db) } }
            let replica = try Fixture.replica(
                "site-\(index)", options: Replica.Options(maximumBatchRows: batchRows),
                wallClock: 1_700_000_000_000 + skew, trackingOrder: trackingOrder, counters: counters,
                before: before)
            // Every replica starts with rows of its own there, ids 1 and 2 everywhere.
            try replica.writer.write { db in
                try db.execute(sql: integerSchema)
                try db.execute(
                    sql: "INSERT INTO people (name) VALUES (?), (?); INSERT INTO visits (person, place) VALUES (2, ?)",
                    arguments: ["first \(index)", "second \(index)", "start \(index)"])
            }
            for table in childrenFirst ? integerTables.reversed() : integerTables { try replica.track(table) }
            try replica.writer.write { db in try db.execute(sql: Self.shelvesSchema) }
            try replica.track("shelves")
            replicas.append(replica)
        }

        for replica in replicas {
            for other in replicas { try replica.addPeer(other.site) }
        }
        // Half the histories make one replica authoritative for photos: its writes must win
        // concurrent ones and replicas must still converge.
        if Bool.random(using: &random) {
            let authority = replicas[Int.random(in: 0..<count, using: &random)].site
            for replica in replicas { try replica.setAuthority(authority, for: "photos") }
        }
        // What the shared log holds of each replica: the end of its last change set there.
        var published = [Int64](repeating: 0, count: count)
        // Schema versions: each replica adds two columns (to albums, and to the BLOB-keyed
        // tags) at a random step, or only before the final sync; meanwhile replicas on
        // different schemas exchange change sets.
        var altered = [Bool](repeating: false, count: count)
        // Renames: each replica renames shelves to racks (`alter`) at a random step, or only
        // before the final sync; meanwhile replicas under either name exchange change sets.
        var renamed = [Bool](repeating: false, count: count)
        var log: [(origin: Int, data: Data)] = []
        // Publishes what replica `r` changed since its push cursor, in bounded batches, as
        // a folder transport does, leaving out rows the log holds from their authors: a
        // replica restored from a backup finds more of its own change sets in the log than its
        // cursor says, takes them back (its lost future), and moves its new changes above them.
        func publish(_ r: Int) throws {
            let replica = replicas[r]
            let cursor = try replica.publishedThrough(to: Self.logDestination)
            if published[r] > cursor {
                let lost = try log.filter { $0.origin == r }.map { try ChangeSet(serialized: $0.data) }
                try replica.recoverLostChanges(lost.filter { $0.through > cursor })
                // Then what the others published (as transports pull here): tombstones its
                // lost future acknowledged may be compacted away elsewhere.
                for message in log where message.origin != r {
                    _ = try mergeUnlessEarlierChangesAreMissing(replica, message.data)
                }
                try replica.moveChanges(after: cursor, above: published[r])
            }
            // No echo: the log holds every other site's change sets, so rows they last
            // wrote are left out, and a site's lost future comes back from its own only.
            let others = Set(replicas.map(\.site)).subtracting([replica.site])
            while true {
                let batch = try replica.changes(since: published[r], excluding: others)
                if batch.isEmpty && batch.through == published[r] { break }
                log.append((r, batch.serialized()))
                published[r] = batch.through
            }
            try replica.setPublishedThrough(published[r], to: Self.logDestination)
        }
        // Backups: one replica at a time may be copied, and later restored from the copy,
        // losing what it did since — published change sets included (the log keeps them).
        var backup: (replica: Int, copy: DatabaseQueue, altered: Bool, renamed: Bool)?
        let steps = Int.random(in: 10...80, using: &random)
        for _ in 0..<steps {
            let r = Int.random(in: 0..<count, using: &random)
            switch Int.random(in: 0..<10, using: &random) {
            case 0..<6:
                if Int.random(in: 0..<6, using: &random) == 0 {
                    try shelfWrite(replicas[r], &random, renamed: renamed[r])
                } else {
                    try randomWrite(replicas[r], &random, altered: altered[r])
                }
            case 6..<8:
                try publish(r)
            default:
                // Deliver a random published change set, sometimes twice; some are never
                // delivered until the final sync (dropped, then resent).
                guard !log.isEmpty else { continue }
                let message = log[Int.random(in: 0..<log.count, using: &random)]
                let receiver = Int.random(in: 0..<count, using: &random)
                guard receiver != message.origin else { continue }
                if Int.random(in: 0..<8, using: &random) == 0,
                    let failure = try Self.deliverDamaged(message.data, to: replicas[receiver], random: &random)
                {
                    return failure
                }
                // Out of order, a change set that carries only some columns of a row the
                // receiver lacks is refused whole; it is delivered again later.
                guard let report = try mergeUnlessEarlierChangesAreMissing(replicas[receiver], message.data) else {
                    continue
                }
                if ProcessInfo.processInfo.environment["VECSYNC_PROPERTY_TRACE"] != nil {
                    print(replicas[receiver].site, "merged", report)
                }
                if Bool.random(using: &random) { try replicas[receiver].merge(serialized: message.data) }
            }
            if ProcessInfo.processInfo.environment["VECSYNC_PROPERTY_TRACE"] != nil {
                for replica in replicas {
                    let report = try replica.writer.read { db in try Fixture.vectorIndex.verify(db) }
                    if !report.isConsistent {
                        return "vec0 index out of step on \(replica.site) after step on \(replicas[r].site): \(report)"
                    }
                }
            }
            if Int.random(in: 0..<12, using: &random) == 0 {
                // Now and then one replica catches up with everything published, in order,
                // which gives its peers acknowledgements to compact with.
                let everyone = Bool.random(using: &random)
                let receivers =
                    everyone ? Array(0..<count) + Array(0..<count) : [Int.random(in: 0..<count, using: &random)]
                for receiver in receivers {
                    for message in log where message.origin != receiver {
                        // A row an origin changed after merging it from a third site travels
                        // without the third site's columns: refused until those arrive.
                        let report = try mergeUnlessEarlierChangesAreMissing(replicas[receiver], message.data)
                        if ProcessInfo.processInfo.environment["VECSYNC_PROPERTY_TRACE"] != nil {
                            print(
                                "catch-up", replicas[receiver].site, "merged",
                                report.map { "\($0)" } ?? "nothing: refused")
                        }
                    }
                    try publish(receiver)
                }
            }
            if !altered[r] && Int.random(in: 0..<15, using: &random) == 0 {
                try addColumns(replicas[r])
                altered[r] = true
            }
            if !renamed[r] && Int.random(in: 0..<15, using: &random) == 0 {
                try renameShelves(replicas[r])
                renamed[r] = true
            }
            if backup == nil && Int.random(in: 0..<20, using: &random) == 0 {
                let copy = try DatabaseQueue(configuration: Configuration.vecSync())
                try replicas[r].writer.backup(to: copy)
                backup = (r, copy, altered[r], renamed[r])
                if ProcessInfo.processInfo.environment["VECSYNC_PROPERTY_TRACE"] != nil {
                    print(replicas[r].site, "backed up")
                }
            } else if let taken = backup, Int.random(in: 0..<10, using: &random) == 0 {
                // The device's database is replaced by its backup: it goes on from there.
                replicas[taken.replica] = try Replica(
                    taken.copy, site: replicas[taken.replica].site,
                    options: Replica.Options(maximumBatchRows: batchRows))
                altered[taken.replica] = taken.altered
                renamed[taken.replica] = taken.renamed
                backup = nil
                if ProcessInfo.processInfo.environment["VECSYNC_PROPERTY_TRACE"] != nil {
                    print(replicas[taken.replica].site, "restored from its backup")
                }
            }
            if Int.random(in: 0..<6, using: &random) == 0 {
                // Tombstones every known peer has acknowledged may go at any time.
                try replicas[r].compactTombstones()
            }
            if Int.random(in: 0..<20, using: &random) == 0 {
                // A clock jump on one replica, as when a device corrects its time.
                try replicas[r].setWallClockOverride(
                    milliseconds: 1_700_000_000_000 + Int64.random(in: -2_000...20_000, using: &random))
            }
        }

        for r in 0..<count where !altered[r] { try addColumns(replicas[r]) }
        for r in 0..<count where !renamed[r] { try renameShelves(replicas[r]) }
        // Full sync: everyone publishes everything, everyone merges everything, in random
        // order with duplicates, until nothing changes.
        for _ in 0..<8 {
            for r in 0..<count { try publish(r) }
            var anyApplied = false
            for receiver in 0..<count {
                // Each origin's change sets in order, the origins interleaved at random, and
                // a few delivered twice.
                var queues = (0..<count).map { origin in log.filter { $0.origin == origin && origin != receiver } }
                var messages: [(origin: Int, data: Data)] = []
                while let origin = queues.indices.filter({ !queues[$0].isEmpty }).randomElement(using: &random) {
                    messages.append(queues[origin].removeFirst())
                }
                messages += messages.shuffled(using: &random).prefix(Int.random(in: 0...3, using: &random))
                if Bool.random(using: &random) {
                    // Several change sets in one transaction, as a transport catching up does;
                    // all or nothing, so one refused sends them one by one, as transports do.
                    do {
                        let reports = try replicas[receiver].merge(messages.map { try ChangeSet(serialized: $0.data) })
                        if ProcessInfo.processInfo.environment["VECSYNC_PROPERTY_TRACE"] != nil {
                            print("full sync", replicas[receiver].site, "merged", reports)
                        }
                        if reports.contains(where: Self.changedSomething) { anyApplied = true }
                        continue
                    } catch VecSyncError.missingEarlierChanges {
                    }
                }
                for message in messages {
                    // Refused (a third site's columns missing): merged in a later round.
                    guard let report = try mergeUnlessEarlierChangesAreMissing(replicas[receiver], message.data) else {
                        anyApplied = true
                        continue
                    }
                    if ProcessInfo.processInfo.environment["VECSYNC_PROPERTY_TRACE"] != nil {
                        print("full sync", replicas[receiver].site, "merged", report)
                    }
                    if Self.changedSomething(report) { anyApplied = true }
                }
            }
            if !anyApplied { break }
            for replica in replicas where Bool.random(using: &random) { try replica.compactTombstones() }
        }

        for replica in replicas {
            let kept = try replica.quarantinedRecords()
            if !kept.isEmpty { return "\(replica.site) still holds quarantined rows after the full sync: \(kept)" }
            let violations = try replica.writer.read { db in try Row.fetchAll(db, sql: "PRAGMA foreign_key_check") }
            if !violations.isEmpty { return "\(replica.site) violates foreign keys: \(violations)" }
        }
        let expected = try snapshot(replicas[0])
        for replica in replicas.dropFirst() {
            let actual = try snapshot(replica)
            if actual != expected {
                return "\(replica.site) differs from \(replicas[0].site):\n\(actual)\nvs\n\(expected)"
            }
        }
        for replica in replicas {
            let report = try replica.writer.read { db in try Fixture.vectorIndex.verify(db) }
            if !report.isConsistent { return "vec0 index out of step on \(replica.site): \(report)" }
        }
        for probe in 0..<3 {
            let query = try Vector(blob: Fixture.embedding(&random))
            let word = ["alpha", "beta", "gamma"][probe]
            let expectedSearch = try Fixture.searches(replicas[0], query: query, word: word)
            for replica in replicas.dropFirst() {
                let actual = try Fixture.searches(replica, query: query, word: word)
                if actual != expectedSearch {
                    return "search differs on \(replica.site): \(actual) vs \(expectedSearch)"
                }
            }
        }
        return nil
    }

    /// Tables with INTEGER PRIMARY KEYs and no authority, written on every site: each replica
    /// keeps its own ids, so they are compared by identity (``identitySnapshot(_:)``). Visits
    /// refer to people by a foreign key, translated on merge.
    static let integerSchema = """
        CREATE TABLE people (id INTEGER PRIMARY KEY, name TEXT, score REAL);
        CREATE TABLE visits (id INTEGER PRIMARY KEY AUTOINCREMENT, person INTEGER REFERENCES people(id), place TEXT);
        """

    /// The tables of ``integerSchema``, parents first.
    static let integerTables = ["people", "visits"]

    /// Every row of every tracked table: the fixture's as they are, and the integer-keyed
    /// ones by identity.
    static func snapshot(_ replica: Replica) throws -> [String: [String]] {
        var tables = try Fixture.snapshot(replica).merging(identitySnapshot(replica)) { $1 }
        // Under the name it has on this replica (a damaged delivery compares a replica with
        // itself mid-history, renamed or not).
        tables["racks"] = try replica.writer.read { db in
            let name = try db.tableExists("racks") ? "racks" : "shelves"
            return try Row.fetchAll(db, sql: "SELECT * FROM \(name) ORDER BY 1").map { row in
                row.databaseValues.map(Fixture.render).joined(separator: "|")
            }
        }
        return tables
    }

    /// A table every replica renames (`shelves` to `racks`) at its own moment.
    static let shelvesSchema = "CREATE TABLE shelves (id TEXT PRIMARY KEY, label TEXT, slots INTEGER)"

    /// Renames shelves to racks through `alter`, so it keeps syncing under its new name.
    static func renameShelves(_ replica: Replica) throws {
        try replica.alter("shelves") { db in try db.execute(sql: "ALTER TABLE shelves RENAME TO racks") }
        if ProcessInfo.processInfo.environment["VECSYNC_PROPERTY_TRACE"] != nil { print(replica.site, "renamed shelves") }
    }

    /// A write to shelves, under the name it has on this replica.
    static func shelfWrite(_ replica: Replica, _ random: inout SeededRandom, renamed: Bool) throws {
        let table = renamed ? "racks" : "shelves"
        let id = "s\(Int.random(in: 0..<4, using: &random))"
        let label = ["top", "middle", "bottom"].randomElement(using: &random)!
        let slots = Int64.random(in: 0...9, using: &random)
        let writes: [(String, StatementArguments)] = [
            ("INSERT OR REPLACE INTO \(table) (id, label, slots) VALUES (?, ?, ?)", [id, label, slots]),
            ("UPDATE \(table) SET slots = ? WHERE id = ?", [slots, id]),
            ("UPDATE \(table) SET label = ? WHERE id = ?", [label, id]),
            ("DELETE FROM \(table) WHERE id = ?", [id]),
        ]
        let (sql, arguments) = writes[Int.random(in: 0..<writes.count, using: &random)]
        try replica.writer.write { db in try db.execute(sql: sql, arguments: arguments) }
        if ProcessInfo.processInfo.environment["VECSYNC_PROPERTY_TRACE"] != nil { print(replica.site, sql, arguments) }
    }

    /// The rows of ``integerTables`` with each key, and each person a visit refers to, as its
    /// identity (creating site and id there, from the identity map), sorted: ids differ from
    /// replica to replica by design, identities do not.
    static func identitySnapshot(_ replica: Replica) throws -> [String: [String]] {
        func identity(_ table: String, _ column: String) -> String {
            """
            CASE WHEN \(column) IS NULL THEN 'null' ELSE coalesce((SELECT s.site || ':' || m.oid FROM vecsync_ids AS m
            JOIN vecsync_sites AS s ON s.ordinal = m.origin WHERE m.tbl = '\(table)' AND m.local = \(column)),
            (SELECT site FROM vecsync_replica) || ':' || \(column)) END
            """
        }
        return try replica.writer.read { db in
            let people = try Row.fetchAll(
                db, sql: "SELECT \(identity("people", "p.id")) AS key, name, score FROM people AS p"
            ).map { row in
                ([row["key"] as String] + [row["name"], row["score"]].map { Fixture.render($0 as DatabaseValue) })
                    .joined(separator: "|")
            }
            let visits = try Row.fetchAll(
                db,
                sql: """
                    SELECT \(identity("visits", "v.id")) AS key, \(identity("people", "v.person")) AS person, place
                    FROM visits AS v
                    """
            ).map { row in
                [row["key"] as String, row["person"] as String, Fixture.render(row["place"] as DatabaseValue)]
                    .joined(separator: "|")
            }
            return ["people": people.sorted(), "visits": visits.sorted()]
        }
    }

    /// A write to ``integerTables`` as an app makes it: by its own ids, chosen by position
    /// (the ids differ between replicas), with plain inserts that take the next id (reusing
    /// the id of a deleted last row: it comes back as that row), replaced rows and key
    /// changes.
    static func integerWrite(
        _ random: inout SeededRandom
    ) -> (String, StatementArguments) {
        func person(_ random: inout SeededRandom) -> String {
            "(SELECT id FROM people ORDER BY id LIMIT 1 OFFSET \(Int.random(in: 0..<5, using: &random)))"
        }
        func visit(_ random: inout SeededRandom) -> String {
            "(SELECT id FROM visits ORDER BY id LIMIT 1 OFFSET \(Int.random(in: 0..<5, using: &random)))"
        }
        let name = ["ada", "bo", "cy", ""].randomElement(using: &random)!
        let score: DatabaseValue = [1.0, -0.0, 2.5].randomElement(using: &random)!.databaseValue
        let place = ["home", "park", "sea"].randomElement(using: &random)!
        let writes: [(String, StatementArguments)] = [
            ("INSERT INTO people (name, score) VALUES (?, ?)", [name, score]),
            ("INSERT INTO people (name, score) VALUES (?, ?)", [name, score]),
            ("UPDATE people SET name = ? WHERE id = \(person(&random))", [name]),
            ("UPDATE people SET score = ? WHERE id = \(person(&random))", [score]),
            ("INSERT OR REPLACE INTO people (id, name) SELECT id, ? FROM people WHERE id = \(person(&random))", [name]),
            (
                "DELETE FROM people WHERE id = \(person(&random)) AND NOT EXISTS (SELECT 1 FROM visits WHERE person = people.id)",
                []
            ),
            ("INSERT INTO visits (person, place) VALUES (\(person(&random)), ?)", [place]),
            ("INSERT INTO visits (person, place) VALUES (\(person(&random)), ?)", [place]),
            ("UPDATE visits SET person = \(person(&random)) WHERE id = \(visit(&random))", []),
            ("UPDATE visits SET place = ? WHERE id = \(visit(&random))", [place]),
            ("DELETE FROM visits WHERE id = \(visit(&random))", []),
            ("UPDATE visits SET id = (SELECT max(id) + 1 FROM visits) WHERE id = \(visit(&random))", []),
        ]
        return writes[Int.random(in: 0..<writes.count, using: &random)]
    }

    /// Whether a merge changed this replica: rows applied, released from quarantine, or
    /// deleted with their parent (a new local change, to publish again).
    static func changedSomething(_ report: MergeReport) -> Bool {
        report.applied > 0 || report.releasedFromQuarantine > 0 || !report.orphansDeleted.isEmpty
    }

    /// The schema change of a history: a column with a default (and a quoted name) in albums,
    /// and one without in the BLOB-keyed tags, as an app's migration adds them. The default
    /// differs from replica to replica on purpose (`'none-<site>'`): rows that existed when the
    /// column was added must still converge, on one replica's default.
    static func addColumns(_ replica: Replica) throws {
        try replica.writer.write { db in
            try db.execute(
                sql: #"ALTER TABLE albums ADD COLUMN "ex""tra" TEXT DEFAULT 'none-"# + replica.site.rawValue + "'")
            try db.execute(sql: "ALTER TABLE \(Fixture.tags.quotedSQLIdentifier) ADD COLUMN n INTEGER")
        }
        if ProcessInfo.processInfo.environment["VECSYNC_PROPERTY_TRACE"] != nil { print(replica.site, "added columns") }
    }

    /// One write, in one of the ways SQLite clients write; on a replica that added the
    /// history's columns, writes to them too.
    static func randomWrite(
        _ replica: Replica, _ random: inout SeededRandom, altered: Bool
    ) throws {
        let photo = "p\(Int.random(in: 0..<6, using: &random))"
        let album = Int64.random(in: 1...5, using: &random)
        let title: DatabaseValue =
            Bool.random(using: &random)
            ? ["sunset", "cat", "sunset", "beach", "", "Cat"].randomElement(using: &random)!.databaseValue : .null
        let rating = Int64.random(in: 0...5, using: &random)
        let score: DatabaseValue = [1.0, -0.0, 0.0, 2.5, 1.0].randomElement(using: &random)!.databaseValue
        let embedding: DatabaseValue =
            Int.random(in: 0..<5, using: &random) == 0 ? .null : Fixture.embedding(&random).databaseValue
        let name = ["alpha", "beta", "gamma", "alpha beta"].randomElement(using: &random)!
        // BLOB keys: a few 16-byte UUIDs, so writes meet on the same keys; one differs from
        // another in its last byte only.
        let uuids = [
            Data(repeating: 0, count: 16), Data(repeating: 0, count: 15) + [1],
            Data((0..<16).map { UInt8($0 * 17) }), Data(repeating: 0xFF, count: 16),
        ]
        let tag = uuids.randomElement(using: &random)!
        let otherTag = uuids.randomElement(using: &random)!
        let label: DatabaseValue =
            Bool.random(using: &random) ? ["it's", "a\"b", ""].randomElement(using: &random)!.databaseValue : .null
        let weight = [0.5, -0.0, 0.0, 3.0].randomElement(using: &random)!
        let tags = Fixture.tags.quotedSQLIdentifier
        let note = "n\(Int.random(in: 0..<4, using: &random))"
        // Notes refer to three of the photos, so deletes and notes meet often.
        let notePhoto = "p\(Int.random(in: 0..<3, using: &random))"
        let statements: [(String, StatementArguments)] = [
            (
                "INSERT INTO photos (id, title, rating, score, embedding) VALUES (?, ?, ?, ?, ?)",
                [photo, title, rating, score, embedding]
            ),
            (
                "INSERT OR REPLACE INTO photos (id, title, rating, score, embedding) VALUES (?, ?, ?, ?, ?)",
                [photo, title, rating, score, embedding]
            ),
            (
                "INSERT INTO photos (id, title, embedding) VALUES (?, ?, ?) ON CONFLICT(id) DO UPDATE SET title = excluded.title, embedding = excluded.embedding",
                [photo, title, embedding]
            ),
            ("UPDATE photos SET rating = ? WHERE id = ?", [rating, photo]),
            ("UPDATE photos SET embedding = ?, score = ? WHERE id = ?", [embedding, score, photo]),
            ("UPDATE photos SET title = ? WHERE id = ?", [title, photo]),
            ("DELETE FROM photos WHERE id = ?", [photo]),
            ("UPDATE photos SET id = ? WHERE id = ?", ["p\(Int.random(in: 0..<6, using: &random))", photo]),
            ("INSERT OR REPLACE INTO albums (id, name, cover) VALUES (?, ?, ?)", [album, name, photo]),
            ("UPDATE albums SET name = ? WHERE id = ?", [name, album]),
            ("UPDATE albums SET cover = ? WHERE id = ?", [photo, album]),
            ("DELETE FROM albums WHERE id = ?", [album]),
            (
                "INSERT INTO albums (id, name) VALUES (?, ?) ON CONFLICT(id) DO UPDATE SET name = excluded.name",
                [album, name]
            ),
            ("UPDATE photos SET rating = rating WHERE id = ?", [photo]),
            (
                #"INSERT OR REPLACE INTO \#(tags) ("k""ey", "la'bel", "wei""ght") VALUES (?, ?, ?)"#,
                [tag, label, weight]
            ),
            (
                #"INSERT INTO \#(tags) ("k""ey", "la'bel") VALUES (?, ?) ON CONFLICT DO UPDATE SET "la'bel" = excluded."la'bel""#,
                [tag, label]
            ),
            (#"UPDATE \#(tags) SET "wei""ght" = ? WHERE "k""ey" = ?"#, [weight, tag]),
            (#"UPDATE \#(tags) SET "k""ey" = ? WHERE "k""ey" = ?"#, [otherTag, tag]),
            (#"DELETE FROM \#(tags) WHERE "k""ey" = ?"#, [tag]),
            // A text key in the BLOB key column: refused when written, never synced.
            (#"INSERT INTO \#(tags) ("k""ey") VALUES (?)"#, ["not a blob"]),
        ]
        // Notes on photos (a foreign key), a third of the writes: refused here when the
        // photo is missing here; a photo deleted elsewhere takes its notes with it when the
        // delete arrives, and a note that arrives before its photo waits for it.
        let notes: [(String, StatementArguments)] = [
            ("INSERT OR REPLACE INTO notes (id, photo, body) VALUES (?, ?, ?)", [note, notePhoto, name]),
            ("INSERT OR REPLACE INTO notes (id, photo, body) VALUES (?, ?, ?)", [note, notePhoto, name]),
            ("INSERT OR REPLACE INTO notes (id, photo, body) VALUES (?, ?, ?)", [note, notePhoto, name]),
            ("UPDATE notes SET body = ? WHERE id = ?", [name, note]),
            ("UPDATE notes SET photo = ? WHERE id = ?", [notePhoto, note]),
            ("DELETE FROM notes WHERE id = ?", [note]),
            ("INSERT OR IGNORE INTO photos (id, title) VALUES (?, ?)", [notePhoto, title]),
            (
                "DELETE FROM photos WHERE id = ? AND NOT EXISTS (SELECT 1 FROM notes WHERE photo = ?)",
                [notePhoto, notePhoto]
            ),
        ]
        let extra: DatabaseValue =
            Bool.random(using: &random) ? ["none", "x", "y"].randomElement(using: &random)!.databaseValue : .null
        let added: [(String, StatementArguments)] = [
            (#"UPDATE albums SET "ex""tra" = ? WHERE id = ?"#, [extra, album]),
            (#"INSERT OR REPLACE INTO albums (id, name, "ex""tra") VALUES (?, ?, ?)"#, [album, name, extra]),
            (#"UPDATE \#(tags) SET n = ? WHERE "k""ey" = ?"#, [Int64.random(in: 0...3, using: &random), tag]),
            (
                #"INSERT OR REPLACE INTO \#(tags) ("k""ey", n) VALUES (?, ?)"#,
                [tag, Int64.random(in: 0...3, using: &random)]
            ),
        ]
        let integer = integerWrite(&random)
        let (sql, arguments) =
            altered && Int.random(in: 0..<4, using: &random) == 0
            ? added[Int.random(in: 0..<added.count, using: &random)]
            : Int.random(in: 0..<3, using: &random) == 0
                ? integer
                : Int.random(in: 0..<3, using: &random) == 0
                    ? notes[Int.random(in: 0..<notes.count, using: &random)]
                    : statements[Int.random(in: 0..<statements.count, using: &random)]
        do {
            try replica.writer.write { db in try db.execute(sql: sql, arguments: arguments) }
            if ProcessInfo.processInfo.environment["VECSYNC_PROPERTY_TRACE"] != nil {
                print(replica.site, sql, arguments)
            }
        } catch let error as DatabaseError where error.resultCode == .SQLITE_CONSTRAINT {
            // A plain INSERT of an existing key, or a key change onto one: refused, as in any app.
        }
    }
}
