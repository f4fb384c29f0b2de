import Foundation
import GRDB
import Testing
import VecSyncCore
import VecSyncTestSupport

@testable import VecSyncReplication

/// The API CRDT-SQLite users expect: changes as a sequence of batches, merges that say what
/// they accepted, a `Codable` change set whose JSON round-trips, compaction with an explicit
/// acknowledged version.
@Suite("Change set API")
struct ChangeSetAPITests: ReplicationSuite {
    let a: Replica, b: Replica
    init() throws { (a, b) = (try Fixture.replica("a"), try Fixture.replica("b")) }

    /// A value of every storage class, the hard cases on purpose.
    static func randomValue(_ random: inout SeededRandom) -> SyncValue {
        switch Int.random(in: 0..<5, using: &random) {
        case 0: return .null
        case 1:
            return .integer(
                [Int64.max, .min, 0, -1, 1 << 53 + 1, -(1 << 53) - 1, Int64.random(in: .min ... .max, using: &random)]
                    .randomElement(using: &random) ?? 0)
        case 2:
            let bits = random.next()
            let arbitrary = Double(bitPattern: bits)
            return .real(
                [
                    1.0, -0.0, 0.0, 0.1, 1e300, -1e-300, .leastNonzeroMagnitude, .greatestFiniteMagnitude, .pi,
                    9_007_199_254_740_993.0, .infinity, -.infinity, .nan, arbitrary.isNaN ? 2.5 : arbitrary,
                ].randomElement(using: &random) ?? 0)
        case 3:
            return .text(
                [
                    "", "héllo", "日本語のテキスト", "emoji 🧪👩🏽‍🔬", "quote \" back\\slash / tab\t", "nul \u{0} inside",
                    "\u{FEFF}bom",
                ]
                .randomElement(using: &random) ?? "")
        default:
            return .blob(
                Data(
                    (0..<Int.random(in: 0...40, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) })
            )
        }
    }

    /// A change set with random tables (some with an authority), keys of each kind, live and
    /// deleted rows, some columns carried, versions up to `Int64.max`.
    static func randomChangeSet(_ random: inout SeededRandom) -> ChangeSet {
        let sites: [SiteID] = ["mac", "phone", "Ünïcode site"]
        var tables: [ChangeSet.Table] = []
        for index in 0..<Int.random(in: 1...3, using: &random) {
            let kind = [TrackedTable.KeyKind.text, .blob, .integer].randomElement(using: &random) ?? .text
            let columns = (0..<Int.random(in: 0...4, using: &random)).map { "c\($0) \"q\"" }
            let tracked = TrackedTable(
                name: "t\(index)", primaryKey: "id", keyKind: kind, columns: columns,
                declaredTypes: columns.map { _ in
                    ["TEXT", "REAL", "F32_BLOB(4)", ""].randomElement(using: &random) ?? ""
                },
                authority: kind == .integer || Bool.random(using: &random) ? "mac" : nil)
            tables.append(tracked.changeSetTable)
        }
        var records: [ChangeSet.Record] = []
        for _ in 0..<Int.random(in: 0...12, using: &random) {
            let table = Int.random(in: 0..<tables.count, using: &random)
            let kind = tables[table].definition?.keyKind ?? .text
            let key: SyncValue =
                switch kind {
                case .integer: .integer(Int64.random(in: .min ... .max, using: &random))
                case .text: .text("k\(Int.random(in: 0..<100, using: &random)) é")
                case .blob: .blob(Data((0..<16).map { _ in UInt8.random(in: 0...255, using: &random) }))
                }
            let causalLength = Int64.random(in: 1...6, using: &random)
            let version = HybridLogicalClock(rawValue: Int64.random(in: 0 ... .max, using: &random))
            let columns: [ChangeSet.Column?] =
                causalLength % 2 == 1
                ? tables[table].columns.map { _ in
                    Bool.random(using: &random)
                        ? nil
                        : ChangeSet.Column(
                            authorityCount: Int64.random(in: 0...3, using: &random),
                            version: HybridLogicalClock(rawValue: Int64.random(in: 0 ... .max, using: &random)),
                            site: sites.randomElement(using: &random) ?? "mac", value: randomValue(&random))
                } : []
            records.append(
                ChangeSet.Record(
                    table: table, key: key, causalLength: causalLength,
                    authorityCount: Int64.random(in: 0...3, using: &random), rowVersion: version,
                    rowSite: sites.randomElement(using: &random) ?? "mac", columns: columns))
        }
        return ChangeSet(
            origin: "mac", since: Int64.random(in: 0...100, using: &random),
            through: 100 + Int64.random(in: 0...1 << 40, using: &random),
            acknowledgements: ["phone": Int64.random(in: 0 ... .max, using: &random)], tables: tables, records: records)
    }

    @Test("the JSON form round-trips every change set bit for bit (seeded)")
    func jsonRoundTripsExactly() throws {
        var random = SeededRandom.fromEnvironment()
        let seed = random.seed
        for run in 0..<300 {
            let changeSet = Self.randomChangeSet(&random)
            let json = changeSet.jsonString(prettyPrinted: run % 2 == 0)
            let decoded: ChangeSet
            do {
                decoded = try ChangeSet(json: json)
            } catch {
                Issue.record("seed \(seed) (VECSYNC_SEED=\(seed)), run \(run): \(error)\n\(json)")
                return
            }
            // The binary form compares reals by their bits and keeps the storage class.
            if decoded.serialized() != changeSet.serialized() {
                Issue.record("seed \(seed) (VECSYNC_SEED=\(seed)), run \(run): differs after a round trip\n\(json)")
                return
            }
            // Through the generic Codable path too.
            let data = try JSONEncoder().encode(changeSet)
            #expect(
                try JSONDecoder().decode(ChangeSet.self, from: data).serialized() == changeSet.serialized(),
                "seed \(seed)")
        }
    }

    @Test("versions are decimal strings, a whole REAL stays REAL, blobs are base64")
    func jsonSpellsValuesExactly() throws {
        let table = TrackedTable(
            name: "photos", primaryKey: "id", keyKind: .text, columns: ["score", "count", "blob"],
            declaredTypes: ["REAL", "INTEGER", "BLOB"], authority: nil)
        let version = HybridLogicalClock(rawValue: 111_410_952_978_432_000)
        let changeSet = ChangeSet(
            origin: "a", since: 0, through: 1, tables: [table.changeSetTable],
            records: [
                ChangeSet.Record(
                    table: 0, key: .text("p1"), causalLength: 1, rowVersion: version, rowSite: "a",
                    columns: [
                        ChangeSet.Column(version: version, site: "a", value: .real(1.0)),
                        ChangeSet.Column(version: version, site: "a", value: .integer(Int64.max)),
                        ChangeSet.Column(version: version, site: "a", value: .blob(Data([0, 1, 2, 255]))),
                    ])
            ])
        let json = changeSet.jsonString(prettyPrinted: false)
        #expect(json.contains(#""version":"111410952978432000""#), "\(json)")
        #expect(json.contains(#""integer":9223372036854775807"#), "\(json)")
        #expect(json.contains(#""base64":"AAEC/w==""#) || json.contains(#""base64":"AAEC\/w==""#), "\(json)")
        let decoded = try ChangeSet(json: json)
        #expect(decoded.records.first?.columns.first??.value == .real(1.0))
        // Versions written as numbers are read as well.
        let numeric = json.replacingOccurrences(of: #""111410952978432000""#, with: "111410952978432000")
        #expect(try ChangeSet(json: numeric) == decoded)
        // A changed definition no longer matches its fingerprint.
        let tampered = json.replacingOccurrences(of: #""REAL""#, with: #""TEXT""#)
        #expect(throws: VecSyncError.self) { try ChangeSet(json: tampered) }
        #expect(throws: VecSyncError.self) { try ChangeSet(json: "{\"formatVersion\": 3}") }
    }

    @Test("changes come as a sequence of batches that together carry every change")
    func changeSetsSequenceCoversEveryBatch() async throws {
        for index in 0..<7 { try Self.write(a, "INSERT INTO photos (id, title) VALUES (?, 'x')", ["p\(index)"]) }
        var batches: [ChangeSet] = []
        for try await batch in a.changeSets(since: 0, maximumRows: 2) { batches.append(batch) }
        #expect(batches.map(\.records.count) == [2, 2, 2, 1])
        #expect(zip(batches, batches.dropFirst()).allSatisfy { $0.through == $1.since })
        for batch in batches { try b.merge(batch) }
        #expect(try Fixture.snapshot(a) == Fixture.snapshot(b))
        var after: [ChangeSet] = []
        for try await batch in a.changeSets(since: batches.last?.through ?? 0) { after.append(batch) }
        #expect(after.isEmpty)
    }

    @Test("a merge reports the rows it accepted, with their columns")
    func mergeReportsWhatItAccepted() throws {
        try Self.write(a, "INSERT INTO photos (id, title) VALUES ('p1', 'one'), ('p2', 'two')")
        let first = try b.merge(a.changes(since: 0))
        #expect(first.accepted.map(\.key) == [.text("p1"), .text("p2")])
        #expect(first.accepted.first?.columns == ["title", "rating", "score", "embedding"])
        #expect(first.accepted.count == first.applied)
        try Self.write(a, "UPDATE photos SET title = 'uno' WHERE id = 'p1'")
        try Self.write(a, "DELETE FROM photos WHERE id = 'p2'")
        let second = try b.merge(a.changes(since: 0))
        #expect(
            second.accepted == [
                MergeReport.AcceptedChange(table: "photos", key: .text("p1"), isLive: true, columns: ["title"]),
                MergeReport.AcceptedChange(table: "photos", key: .text("p2"), isLive: false, columns: []),
            ])
        #expect(try b.merge(a.changes(since: 0)).accepted.isEmpty)
    }

    @Test("tombstones go up to an explicit acknowledged version, and no further")
    func compactionWithAcknowledgedVersion() throws {
        try Self.write(a, "INSERT INTO photos (id) VALUES ('p1'), ('p2'), ('p3')")
        try Self.write(a, "DELETE FROM photos WHERE id = 'p1'")
        let afterFirst = try a.currentSequence()
        try Self.write(a, "DELETE FROM photos WHERE id = 'p2'")
        #expect(try a.tombstoneCount() == 2)
        #expect(try a.compactTombstones(acknowledgedThrough: afterFirst) == 1)
        #expect(try a.tombstoneCount() == 1)
        #expect(try a.compactTombstones(acknowledgedThrough: a.currentSequence()) == 1)
        #expect(try a.tombstoneCount() == 0)
        #expect {
            try a.compactTombstones(acknowledgedThrough: a.currentSequence() + 1)
        } throws: { error in
            guard case VecSyncError.invalidArgument(let name, _, _) = error else { return false }
            return name == "acknowledgedThrough"
        }
        #expect(throws: VecSyncError.self) { try a.compactTombstones(acknowledgedThrough: -1) }
        // A key re-used after its tombstone went still wins over a peer that kept it.
        try Self.write(a, "INSERT INTO photos (id, title) VALUES ('p1', 'back')")
        try b.merge(a.changes(since: 0))
        #expect(
            try b.writer.read { db in try String.fetchOne(db, sql: "SELECT title FROM photos WHERE id = 'p1'") }
                == "back")
    }
}
