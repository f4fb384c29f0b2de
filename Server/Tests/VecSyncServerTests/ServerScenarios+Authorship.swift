import Foundation
import GRDB
import ServerTestSupport
import Testing
import VecSyncReplication
import VecSyncServer
import VecSyncHTTP

extension ServerScenarios {
    /// A device cannot push a row in another site's name, nor outrank the table's authority
    /// with an inflated count: the server refuses both (422 `forged-write`, nothing stored),
    /// the device's honest pushes — its own rows and the authority's rows it relays — are
    /// stored, and the authority's later edit wins everywhere.
    static func forgedAuthorshipIsRefused(_ backEnd: BackEnd) async throws {
        var random = SeededRandom(defaultSeed: 0x5E4F_0023)
        let seed = random.seed
        try await withServedSpace(backEnd, "authorship", tokens: 3) { test, server, space, tokens, _ in
            let desk = try PhotoDevice("desk")
            let phone = try PhotoDevice("phone")
            let reader = try PhotoDevice("reader")
            for device in [desk, phone, reader] { try device.replica.setAuthority(SiteID("desk"), for: "photos") }
            let transports = zip([desk, phone, reader], tokens).map { device, token in
                (device, HTTPTransport(server: server.url, space: space, token: token))
            }
            @Sendable func syncAll() async throws {
                for (device, transport) in transports {
                    let report = try await device.sync(through: transport)
                    #expect(report.problems.isEmpty, "seed \(seed), \(device.name): \(report.problems)")
                }
            }
            try desk.addPhotos(4, prefix: "desk", random: &random)
            try phone.addPhotos(2, prefix: "phone", random: &random)
            try await syncAll()
            try await syncAll()
            #expect(try reader.photos.count() == 6, "seed \(seed)")

            // The phone edits a photo of the desk, then forges its change set before pushing.
            try await phone.database.writer.write { db in
                try db.execute(sql: "UPDATE photos SET mood = 'forged' WHERE source_id = 'desk-1'")
            }
            try phone.addPhotos(1, prefix: "phone-new", random: &random)
            let spaceID = try await spaceID(test.store, tokens[1])
            let head = try await test.store.devices(inSpace: spaceID).first { $0.site == "phone" }?.head ?? 0
            let honest = try phone.replica.changes(since: head)
            guard let (recordIndex, columnIndex) = Self.moodWrite(in: honest) else {
                Issue.record("seed \(seed): the phone's change set has no mood write")
                return
            }
            #expect(honest.records[recordIndex].columns[columnIndex]?.site == SiteID("phone"))
            let base = server.url.appendingPathComponent("v1/spaces/\(space)")
            func push(_ changeSet: ChangeSet) async throws -> RawAnswer {
                try await rawPush(base, token: tokens[1], body: changeSet.serialized())
            }
            let before = try await test.store.changeSets(inSpace: spaceID, after: 0, limit: 1000)
            // In the authority's name, with a count above the authority's own.
            var asDesk = honest
            asDesk.records[recordIndex].columns[columnIndex]?.site = SiteID("desk")
            asDesk.records[recordIndex].columns[columnIndex]?.authorityCount += 100
            let forgedSite = try await push(asDesk)
            #expect(forgedSite.status == 422 && forgedSite.errorCode == "forged-write", "\(forgedSite.status)")
            // The authority's row state, claimed for a row it never wrote.
            var rowAsDesk = honest
            let phoneRow = rowAsDesk.records.firstIndex { $0.rowSite == SiteID("phone") }
            #expect(phoneRow != nil, "seed \(seed): the phone's new photo is in its change set")
            if let phoneRow {
                rowAsDesk.records[phoneRow].rowSite = SiteID("desk")
                let forgedRow = try await push(rowAsDesk)
                #expect(forgedRow.status == 422 && forgedRow.errorCode == "forged-write", "\(forgedRow.status)")
            }
            // In its own name, with an inflated count.
            var inflated = honest
            inflated.records[recordIndex].columns[columnIndex]?.authorityCount = 1000
            let forgedCount = try await push(inflated)
            #expect(forgedCount.status == 422 && forgedCount.errorCode == "forged-write", "\(forgedCount.status)")
            #expect(try await test.store.changeSets(inSpace: spaceID, after: 0, limit: 1000) == before)

            // The honest change set — the phone's own write and the desk's rows it relays — is
            // stored; then the authority's later edit wins on every replica.
            try await syncAll()
            #expect(try reader.photos.photo(sourceId: "desk-1")?.mood == "forged", "the phone's honest edit arrives")
            try await desk.database.writer.write { db in
                try db.execute(sql: "UPDATE photos SET mood = 'from the desk' WHERE source_id = 'desk-1'")
            }
            try await syncAll()
            try await syncAll()
            for device in [desk, phone, reader] {
                #expect(
                    try device.photos.photo(sourceId: "desk-1")?.mood == "from the desk",
                    "seed \(seed): \(device.name)")
            }
            #expect(try phone.snapshot() == desk.snapshot() && reader.snapshot() == desk.snapshot(), "seed \(seed)")
        }
    }

    /// The record and column index of the `mood` write to photo `desk-1` in a change set.
    static func moodWrite(in changeSet: ChangeSet) -> (Int, Int)? {
        for (index, record) in changeSet.records.enumerated() {
            let table = changeSet.tables[record.table]
            guard table.name == "photos", record.key == .text("desk-1"),
                let column = table.columns.firstIndex(of: "mood"),
                record.columns.indices.contains(column), record.columns[column] != nil
            else { continue }
            return (index, column)
        }
        return nil
    }
}
