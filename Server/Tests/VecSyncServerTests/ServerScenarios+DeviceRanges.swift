import Foundation
import ServerTestSupport
import Testing
import VecSyncReplication
import VecSyncServer
import VecSyncHTTP

extension ServerScenarios {
    /// No token can make another device's pushes vanish. Another space token can neither
    /// register, push nor record pulls as a device it does not own, nor as one with a device
    /// token; the device's own token cannot stretch its range past what it carries (an empty
    /// change set, or one reaching 2^33 past the head). The device's later rows reach a reader.
    static func noTokenCanBlackHoleAnotherDevice(_ backEnd: BackEnd) async throws {
        var random = SeededRandom(defaultSeed: 0x5E4F_0022)
        let seed = random.seed
        try await withServedSpace(backEnd, "black-hole", tokens: 3) { test, server, space, tokens, _ in
            let (tabletToken, tabletRecord) = AccessToken.issue(label: "tablet", device: "tablet", at: 2)
            try await test.store.addToken(tabletRecord, toSpaceNamed: space)
            let (phoneToken, attackerToken, readerToken) = (tokens[0], tokens[1], tokens[2])
            let base = server.url.appendingPathComponent("v1/spaces/\(space)")
            let phone = try PhotoDevice("phone")
            let tablet = try PhotoDevice("tablet")
            let reader = try PhotoDevice("reader")
            try phone.addPhotos(3, prefix: "phone", random: &random)
            try tablet.addPhotos(2, prefix: "tablet", random: &random)
            for (device, token) in [(phone, phoneToken), (tablet, tabletToken)] {
                let transport = HTTPTransport(server: server.url, space: space, token: token)
                let report = try await device.sync(through: transport)
                #expect(report.problems.isEmpty, "seed \(seed): \(report.problems)")
            }
            let spaceID = try await spaceID(test.store, phoneToken)
            let head = try await test.store.devices(inSpace: spaceID).first { $0.site == "phone" }?.head ?? -1
            #expect(head > 0)

            func push(_ changeSet: ChangeSet, token: String) async throws -> RawAnswer {
                try await rawPush(base, token: token, body: changeSet.serialized())
            }
            let blackHole = ChangeSet(origin: SiteID("phone"), since: head, through: Int64.max)
            let before = try await test.store.changeSets(inSpace: spaceID, after: 0, limit: 1000)

            // Another space token: refused as the phone (owned by its token) and as the tablet
            // (which has a device token), whatever it tries.
            for site in ["phone", "tablet"] {
                let register = try await rawRegister(base, token: attackerToken, site: site, name: "taken over")
                #expect(register.status == 403 && register.errorCode == "device-owned", "\(site): \(register.status)")
                var hole = blackHole
                hole.origin = SiteID(site)
                let pushed = try await push(hole, token: attackerToken)
                #expect(pushed.status == 403 && pushed.errorCode == "device-owned", "\(site): \(pushed.status)")
                let pull = try await raw(
                    "GET",
                    base.appendingPathComponent("changesets").appending(queryItems: [.init(name: "site", value: site)]),
                    token: attackerToken)
                #expect(pull.status == 403, "\(site): recording a pull as it: \(pull.status)")
            }
            // The phone's own token: an empty change set, or one reaching far past the head, is
            // an overreach.
            let empty = try await push(blackHole, token: phoneToken)
            #expect(empty.status == 422 && empty.errorCode == "overreach", "\(empty.status) \(empty.errorCode ?? "")")
            try phone.addPhotos(1, prefix: "phone-far", random: &random)
            var far = try phone.replica.changes(since: head)
            #expect(!far.isEmpty)
            far.through = head + (1 << 33)
            let farPush = try await push(far, token: phoneToken)
            #expect(farPush.status == 422 && farPush.errorCode == "overreach", "\(farPush.status)")
            #expect(try await test.store.changeSets(inSpace: spaceID, after: 0, limit: 1000) == before)
            let devices = try await test.store.devices(inSpace: spaceID)
            #expect(devices.allSatisfy { $0.name != "taken over" })

            // The phone's next rows are stored and reach a reader.
            try phone.addPhotos(2, prefix: "phone-later", random: &random)
            let phoneReport = try await blocking {
                try phone.replica.sync(through: HTTPTransport(server: server.url, space: space, token: phoneToken))
            }
            #expect(phoneReport.problems.isEmpty, "seed \(seed): \(phoneReport.problems)")
            _ = try await blocking {
                try reader.replica.sync(through: HTTPTransport(server: server.url, space: space, token: readerToken))
            }
            #expect(try reader.photos.count() == 8, "seed \(seed): 3 + 1 + 2 of the phone, 2 of the tablet")

            // Once the phone's token is revoked, another token may claim the phone.
            let phoneTokenID = try await test.store.tokens(ofSpaceNamed: space).first {
                $0.hash == AccessToken.hash(phoneToken)
            }?.id
            #expect(try await test.store.revokeToken(id: phoneTokenID ?? "", at: 3))
            let claim = try await rawRegister(base, token: attackerToken, site: "phone", name: "new phone")
            #expect(claim.status == 200, "\(claim.status)")
        }
    }
}
