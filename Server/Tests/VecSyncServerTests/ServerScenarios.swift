import Foundation
import ServerFixtures
import ServerTestSupport
import Testing
import VecSyncCore
import VecSyncReplication
import VecSyncServer
import VecSyncStores
import VecSyncHTTP

/// Every scenario, written once and run on each back end by the suites below.
enum ServerScenarios {
    /// Three devices with photos (768-d embeddings) and notes sync through the server until
    /// they hold the same rows, and each one's vec0 and FTS5 answers match.
    static func threeReplicasConverge(_ backEnd: BackEnd) async throws {
        var random = SeededRandom(defaultSeed: 0x5E4F_0001)
        let seed = random.seed
        try await withServedSpace(backEnd, "photos", tokens: 3) { test, server, space, tokens, _ in
            let devices = try ["mac", "phone", "tablet"].map {
                try PhotoDevice($0, options: Replica.Options(maximumBatchRows: 40))
            }
            try devices[0].addPhotos(60, prefix: "mac", random: &random)
            try devices[1].addPhotos(25, prefix: "phone", random: &random)
            try devices[2].addPhotos(10, prefix: "tablet", random: &random)
            let transports = devices.indices.map {
                var transport = HTTPTransport(
                    server: server.url, space: space, token: tokens[$0], deviceName: devices[$0].name, platform: "test")
                // Small pages and ranges, so pagination and ranged downloads are exercised.
                transport.pageSize = 3
                transport.rangeBytes = 64 << 10
                return transport
            }
            for round in 0..<2 {
                for index in devices.indices {
                    let report = try await devices[index].sync(through: transports[index])
                    #expect(
                        report.problems.isEmpty,
                        "seed \(seed), round \(round), \(devices[index].name): \(report.problems)")
                }
            }
            // Concurrent edits of one photo's columns on two devices, then a delete on the third.
            try await devices[1].database.writer.write { db in
                try db.execute(sql: "UPDATE photos SET mood = 'serene' WHERE source_id = 'mac-1'")
            }
            try await devices[2].database.writer.write { db in
                try db.execute(sql: "UPDATE photos SET location_name = 'Kyoto' WHERE source_id = 'mac-1'")
            }
            _ = try devices[0].photos.delete(sourceId: "phone-4")
            for _ in 0..<2 {
                for index in devices.indices {
                    try await devices[index].sync(through: transports[index])
                }
            }
            let reference = try devices[0].snapshot()
            #expect(reference.filter { $0.hasPrefix("photos ") }.count == 94, "seed \(seed)")
            let query = Vector((0..<768).map { Float($0 % 7) - 3 })
            let searches = try devices[0].searches(query: query)
            for device in devices.dropFirst() {
                #expect(try device.snapshot() == reference, "seed \(seed): \(device.name) differs from mac")
                #expect(
                    try device.searches(query: query) == searches,
                    "seed \(seed): \(device.name)'s indexes answer differently")
            }
            for device in devices {
                let outOfStep = try device.replica.verifyDerivedIndexes()
                #expect(outOfStep.values.allSatisfy { $0 == 0 }, "\(device.name): \(outOfStep)")
                let photo = try device.photos.photo(sourceId: "mac-1")
                #expect(
                    photo?.mood == "serene" && photo?.locationName == "Kyoto", "both concurrent column edits survive")
                #expect(try device.photos.photo(sourceId: "phone-4") == nil)
            }
            let status = try await blocking { try transports[0].status() }
            #expect(status.devices.map(\.site) == ["mac", "phone", "tablet"])
            #expect(status.devices.allSatisfy { $0.lastPullAt != nil && $0.lastPushAt != nil && $0.changeSets > 0 })
            #expect(status.serverVersion == SyncServer.version)
        }
    }

    /// Two server instances on one database, as behind a load balancer: devices that push
    /// and pull through either converge, and each change set is stored once.
    static func twoInstancesServeOneDatabase(_ backEnd: BackEnd) async throws {
        var random = SeededRandom(defaultSeed: 0x5E4F_0007)
        let seed = random.seed
        try await withTwoInstances(backEnd) { test, otherStore, servers in
            let (space, tokens) = try await makeSpace(test.store, "instances", tokens: 3)
            let devices = try ["one", "two", "three"].map {
                try PhotoDevice($0, options: Replica.Options(maximumBatchRows: 7))
            }
            for device in devices { try device.addPhotos(12, prefix: device.name, random: &random) }
            // Each round, a device uses the other instance than the round before.
            for round in 0..<3 {
                for index in devices.indices {
                    let transport = HTTPTransport(
                        server: servers[(index + round) % 2].url, space: space, token: tokens[index])
                    let report = try await devices[index].sync(through: transport)
                    #expect(report.problems.isEmpty, "seed \(seed): \(report.problems)")
                }
            }
            let reference = try devices[0].snapshot()
            for device in devices.dropFirst() {
                #expect(try device.snapshot() == reference, "seed \(seed): \(device.name) differs")
            }
            let spaceID = try await spaceID(test.store, tokens[0])
            let entries = try await otherStore.changeSets(inSpace: spaceID, after: 0, limit: 1000)
            #expect(entries.map(\.seq) == Array(1...Int64(entries.count)), "one sequence, no gaps, across instances")
            for site in ["one", "two", "three"] {
                let ranges = entries.filter { $0.origin == site }
                #expect(
                    zip(ranges, ranges.dropFirst()).allSatisfy { $0.through == $1.since },
                    "\(site): each range stored once: \(ranges.map { "\($0.since)-\($0.through)" })")
            }
        }
    }

    /// A token opens its own space only: another space's routes answer 401 whatever the
    /// request, and each space lists only its own change sets.
    static func spacesAreIsolated(_ backEnd: BackEnd) async throws {
        try await withServer(backEnd) { test, server in
            let (first, firstTokens) = try await makeSpace(test.store, "first")
            let (second, secondTokens) = try await makeSpace(test.store, "second")
            let alice = try PhotoDevice("alice", photos: 5, prefix: "alice", seed: 0x5E4F_0002)
            try await alice.sync(through: HTTPTransport(server: server.url, space: first, token: firstTokens[0]))

            let base = server.url.appendingPathComponent("v1/spaces/\(first)")
            for (method, path) in [
                ("GET", "status"), ("GET", "changesets"), ("GET", "changesets/1"), ("POST", "changesets"),
                ("POST", "devices"),
            ] {
                let wrongSpace = try await raw(
                    method, base.appendingPathComponent(path), token: secondTokens[0],
                    body: method == "POST" ? Data("{}".utf8) : nil)
                #expect(wrongSpace.status == 401, "\(method) \(path) with another space's token: \(wrongSpace.status)")
                let none = try await raw(method, base.appendingPathComponent(path))
                #expect(none.status == 401, "\(method) \(path) without a token")
                let bogus = try await raw(
                    method, base.appendingPathComponent(path), token: "vst_" + String(repeating: "0", count: 64))
                #expect(bogus.status == 401, "\(method) \(path) with an unknown token")
            }
            // The second space sees nothing of the first.
            let bob = try PhotoDevice("bob")
            let bobTransport = HTTPTransport(server: server.url, space: second, token: secondTokens[0])
            let report = try await bob.sync(through: bobTransport)
            #expect(report.merges.isEmpty)
            #expect(try bob.photos.count() == 0)
            let page = try await raw(
                "GET", server.url.appendingPathComponent("v1/spaces/\(second)/changesets"), token: secondTokens[0])
            #expect((page.json?["changeSets"] as? [Any])?.isEmpty == true)
            let own = try await raw(
                "GET", server.url.appendingPathComponent("v1/spaces/\(first)/changesets"), token: firstTokens[0])
            #expect(((own.json?["changeSets"] as? [Any])?.count ?? 0) > 0)

            // A revoked token is refused from its next request on.
            let tokenID = try await test.store.tokens(ofSpaceNamed: first)[0].id
            #expect(try await test.store.revokeToken(id: tokenID, at: 2))
            let revoked = try await raw("GET", base.appendingPathComponent("status"), token: firstTokens[0])
            #expect(revoked.status == 401)
        }
    }

    /// The push protocol: a change set stored once however often it is sent, a gap refused
    /// with the head, a damaged body or a wrong SHA-256 refused with nothing stored.
    static func pushProtocol(_ backEnd: BackEnd) async throws {
        try await withServedSpace(backEnd, "push") { test, server, space, tokens, _ in
            let token = tokens[0]
            var random = SeededRandom(defaultSeed: 0x5E4F_0003)
            let device = try PhotoDevice("pusher", options: Replica.Options(maximumBatchRows: 4))
            try device.addPhotos(12, prefix: "p", random: &random)
            var batches: [ChangeSet] = []
            try device.replica.forEachChangeSet(since: 0) { batches.append($0) }
            #expect(batches.count >= 3)
            let base = server.url.appendingPathComponent("v1/spaces/\(space)")
            func push(_ body: Data, sha: String? = nil) async throws -> RawAnswer {
                try await rawPush(base, token: token, body: body, sha256: sha)
            }
            // Not registered yet.
            let unregistered = try await push(batches[0].serialized())
            #expect(unregistered.status == 403 && unregistered.errorCode == "unregistered-device")
            let registered = try await rawRegister(base, token: token, site: "pusher", name: "Test device")
            #expect(registered.status == 200 && registered.json?["name"] as? String == "Test device")

            // A gap: the second batch before the first.
            let gap = try await push(batches[1].serialized())
            #expect(
                gap.status == 409 && gap.errorCode == "gap" && gap.json?["head"] as? Int == 0,
                "\(String(decoding: gap.body, as: UTF8.self))")

            // A wrong SHA-256, a damaged body, a body that is no change set: 400, nothing stored.
            let first = batches[0].serialized()
            let wrongSHA = try await push(first, sha: String(repeating: "ab", count: 32))
            #expect(wrongSHA.status == 400 && wrongSHA.errorCode == "sha256-mismatch")
            var damaged = first
            damaged[damaged.count / 2] ^= 0x40
            let damagedAnswer = try await push(damaged)
            #expect(damagedAnswer.status == 400 && damagedAnswer.errorCode == "malformed")
            let garbage = try await push(Data("hello".utf8))
            #expect(garbage.status == 400 && garbage.errorCode == "malformed")
            let missingSHA = try await raw("POST", base.appendingPathComponent("changesets"), token: token, body: first)
            #expect(missingSHA.status == 400)
            #expect(try await test.store.changeSets(inSpace: spaceID(test.store, token), after: 0, limit: 10).isEmpty)

            // Stored once, however often it is pushed.
            let stored = try await push(first)
            #expect(stored.status == 201 && stored.json?["result"] as? String == "stored")
            let again = try await push(first)
            #expect(again.status == 200 && again.json?["result"] as? String == "duplicate")
            #expect(again.json?["seq"] as? Int == stored.json?["seq"] as? Int)
            // The same range with other bytes is a conflict.
            var other = batches[0]
            other.acknowledgements = ["someone": 7]
            let conflict = try await push(other.serialized())
            #expect(conflict.status == 409 && conflict.errorCode == "range-conflict")
            let list = try await raw("GET", base.appendingPathComponent("changesets"), token: token)
            #expect((list.json?["changeSets"] as? [Any])?.count == 1)

            // Download: whole, with a range, and a range past the end.
            let whole = try await raw("GET", base.appendingPathComponent("changesets/1"), token: token)
            #expect(whole.status == 200 && whole.body == first && whole.headers["x-vecsync-sha256"] == sha256Hex(first))
            let part = try await raw(
                "GET", base.appendingPathComponent("changesets/1"), token: token, headers: ["Range": "bytes=10-19"])
            #expect(
                part.status == 206 && part.body == first[10..<20]
                    && part.headers["content-range"] == "bytes 10-19/\(first.count)")
            let past = try await raw(
                "GET", base.appendingPathComponent("changesets/1"), token: token,
                headers: ["Range": "bytes=\(first.count)-"])
            #expect(past.status == 416)
            let missing = try await raw("GET", base.appendingPathComponent("changesets/99"), token: token)
            #expect(missing.status == 404)
        }
    }

    /// The id of the space a token opens.
    static func spaceID(_ store: any ServerStore, _ token: String) async throws -> Int64 {
        guard let grant = try await store.grant(forTokenHash: AccessToken.hash(token)) else {
            throw ServerConfigurationError("no grant")
        }
        return grant.spaceID
    }

    /// A compactor of `store` and the snapshot it makes of space `spaceID` (at time 5);
    /// throws when it makes none.
    static func snapshot(of spaceID: Int64, in store: any ServerStore) async throws -> (SpaceCompactor, ServerSnapshot)
    {
        let compactor = SpaceCompactor(store: store)
        guard let snapshot = try await compactor.makeSnapshot(spaceID: spaceID, at: 5) else {
            throw ServerConfigurationError("no snapshot of space \(spaceID)")
        }
        return (compactor, snapshot)
    }

    /// Stores, straight into `store`, a change set of three photos by device `author` whose
    /// bytes were damaged after their SHA-256 was taken (as at rest): what a download must
    /// refuse. Returns it as it was made, and what the store did with it.
    static func storeDamagedChangeSet(in store: any ServerStore, spaceID: Int64, seed: UInt64)
        async throws -> (batch: ChangeSet, outcome: PushOutcome)
    {
        let author = try PhotoDevice("author", photos: 3, prefix: "a", seed: seed)
        let batch = try author.replica.changes(since: 0)
        var body = batch.serialized()
        let honestSHA = sha256Hex(body)
        body[body.count / 3] ^= 0x01
        _ = try await store.registerDevice(
            DeviceRegistration(site: "author", name: "a", platform: "p"), inSpace: spaceID, at: 1)
        let outcome = try await store.push(
            IncomingChangeSet(
                origin: "author", since: batch.since, through: batch.through, rows: 3, sha256: honestSHA, body: body),
            inSpace: spaceID, at: 1)
        return (batch, outcome)
    }

    /// A device restored from a backup takes back, at its next push, what it had pushed
    /// after the backup (its lost future, which no peer sends back to its author), and the
    /// photos it adds after the restore reach the others: every device ends with every row.
    static func restoredDeviceGetsItsLostFutureBack(_ backEnd: BackEnd) async throws {
        var random = SeededRandom(defaultSeed: 0x5E4F_000D)
        try await withServedSpace(backEnd, "photos", tokens: 2) { test, server, space, tokens, _ in
            let options = Replica.Options(maximumBatchRows: 7)
            let phone = try PhotoDevice("phone", options: options)
            let mac = try PhotoDevice("mac", options: options)
            let url = server.url
            @Sendable func transport(_ device: PhotoDevice, _ token: String) -> HTTPTransport {
                var transport = HTTPTransport(
                    server: url, space: space, token: token, deviceName: device.name, platform: "test")
                transport.pageSize = 4
                return transport
            }
            try phone.addPhotos(20, prefix: "before", random: &random)
            try await phone.sync(through: transport(phone, tokens[0]))
            let backup = try DatabaseQueue(configuration: Configuration.vecSync())
            try phone.database.writer.backup(to: backup)
            try phone.addPhotos(15, prefix: "lost", random: &random)
            try await phone.sync(through: transport(phone, tokens[0]))
            try mac.addPhotos(5, prefix: "mac", random: &random)
            try await mac.sync(through: transport(mac, tokens[1]))

            let restored = try PhotoDevice("phone", restoring: backup, options: options)
            try restored.addPhotos(10, prefix: "after", random: &random)
            for _ in 0..<2 {
                let report = try await restored.sync(through: transport(restored, tokens[0]))
                #expect(report.problems.isEmpty, "\(report.problems)")
                try await mac.sync(through: transport(mac, tokens[1]))
            }
            let reference = try mac.snapshot()
            #expect(reference.filter { $0.hasPrefix("photos ") }.count == 50)
            #expect(try restored.snapshot() == reference, "the restored phone differs from the mac")
            let outOfStep = try restored.replica.verifyDerivedIndexes()
            #expect(outOfStep.values.allSatisfy { $0 == 0 }, "\(outOfStep)")
        }
    }

    /// A change set damaged at rest is refused by the receiver (its SHA-256 does not match),
    /// nothing of it is merged, the pull cursor stays before it, and once it is repaired
    /// the next pull merges it.
    static func tamperedDownloadIsRefused(_ backEnd: BackEnd) async throws {
        try await withServedSpace(backEnd, "tamper", tokens: 1) { test, server, space, tokens, spaceID in
            let (_, outcome) = try await storeDamagedChangeSet(in: test.store, spaceID: spaceID, seed: 0x5E4F_0004)
            guard case .stored = outcome else { throw ServerConfigurationError("not stored: \(outcome)") }
            let reader = try PhotoDevice("reader")
            let transport = HTTPTransport(server: server.url, space: space, token: tokens[0])
            let report = try await reader.sync(through: transport)
            #expect(report.merges.isEmpty)
            #expect(report.problems.count == 1 && report.problems[0].contains("SHA-256"), "\(report.problems)")
            #expect(try reader.photos.count() == 0)
            let storeID = try await test.store.storeID()
            #expect(try reader.replica.publishedThrough(to: transport.pullCursorKey(storeID: storeID)) == 0)
        }
    }

    /// A server stopped while a device pushes, and again while another pulls, then started
    /// again on the same data: the next syncs finish the work and nothing is lost.
    static func serverStoppedMidTransferLosesNothing(_ backEnd: BackEnd) async throws {
        var random = SeededRandom(defaultSeed: 0x5E4F_0005)
        let seed = random.seed
        try await withServedSpace(backEnd, "restart", tokens: 2) { test, server, space, tokens, spaceID in
            let writer = try PhotoDevice("writer", options: Replica.Options(maximumBatchRows: 10))
            try writer.addPhotos(300, prefix: "w", random: &random)
            let reader = try PhotoDevice("reader")

            // Stop the server once it has stored a few of the writer's change sets.
            @Sendable func transport(_ index: Int, _ server: RunningServer) -> HTTPTransport {
                var transport = HTTPTransport(server: server.url, space: space, token: tokens[index])
                transport.attempts = 1
                transport.pageSize = 5
                return transport
            }
            let firstServer = server
            let pushing = Task { try await writer.sync(through: transport(0, firstServer)) }
            let deadline = ContinuousClock.now + .seconds(60)
            while ContinuousClock.now < deadline {
                if try await test.store.changeSets(inSpace: spaceID, after: 0, limit: 5).count >= 5 { break }
                try await Task.sleep(for: .milliseconds(5))
            }
            await server.stop()
            let firstPush = await pushing.result
            let storedBefore = try await test.store.changeSets(inSpace: spaceID, after: 0, limit: 1000).count
            print(
                "seed \(seed), \(backEnd): the first push \(firstPush.isSuccess ? "finished" : "was cut") with \(storedBefore) change sets stored"
            )

            // Started again on the same data: the writer finishes, the reader starts pulling and
            // is cut off in turn.
            let reopened = try await test.reopen(backEnd)
            let secondServer = try await RunningServer.start(reopened)
            try await writer.sync(through: transport(0, secondServer))
            let pulling = Task { try await reader.sync(through: transport(1, secondServer)) }
            while ContinuousClock.now < deadline, try reader.photos.count() < 50 {
                try await Task.sleep(for: .milliseconds(2))
            }
            await secondServer.stop()
            _ = await pulling.result
            let thirdServer = try await RunningServer.start(reopened)
            try await reader.sync(through: transport(1, thirdServer))
            #expect(try reader.snapshot() == writer.snapshot(), "seed \(seed)")
            #expect(try reader.photos.count() == 300)
            let entries = try await reopened.changeSets(inSpace: spaceID, after: 0, limit: 1000)
            // Each change set stored once, whatever was retried: the ranges follow each other
            // without an overlap or a hole, from 0 to the writer's last change.
            let ranges = entries.map { "\($0.since)-\($0.through)" }
            let last = try writer.replica.currentSequence()
            #expect(entries.first?.since == 0 && entries.last?.through == last, "\(ranges)")
            #expect(zip(entries, entries.dropFirst()).allSatisfy { $0.through == $1.since }, "\(ranges)")
            #expect(entries.count == 40, "400 rows (300 photos, 100 notes) in batches of 10: \(ranges)")
            await thirdServer.stop()
            await reopened.close()
        }
    }

    /// Per-token rate limit and the body size limit.
    static func limitsAreEnforced(_ backEnd: BackEnd) async throws {
        let limits = SyncServer.Limits(maximumBodyBytes: 1000, requestsPerSecond: 0.5, burst: 3)
        try await withServedSpace(backEnd, "limits", tokens: 2, limits: limits) { _, server, space, tokens, _ in
            let status = server.url.appendingPathComponent("v1/spaces/\(space)/status")
            var codes: [Int] = []
            for _ in 0..<5 { codes.append(try await raw("GET", status, token: tokens[0]).status) }
            #expect(codes == [200, 200, 200, 429, 429])
            // The other token has its own bucket.
            #expect(try await raw("GET", status, token: tokens[1]).status == 200)
            let big = try await raw(
                "POST", server.url.appendingPathComponent("v1/spaces/\(space)/changesets"), token: tokens[1],
                headers: ["X-VecSync-SHA256": String(repeating: "0", count: 64)], body: Data(count: 5000))
            #expect(big.status == 413)
        }
    }

    /// With PostgreSQL the rate limit is one bucket per token over every instance on the
    /// database; a SQLite store counts in its own memory, so each store object (each
    /// process) has its own bucket, as documented.
    static func rateLimitAcrossInstances(_ backEnd: BackEnd) async throws {
        let limits = SyncServer.Limits(requestsPerSecond: 0.2, burst: 3)
        try await withTwoInstances(backEnd, limits: limits) { test, _, servers in
            let (space, tokens) = try await makeSpace(test.store, "shared-limit", tokens: 1)
            var codes: [Int] = []
            for index in 0..<6 {
                let url = servers[index % 2].url.appendingPathComponent("v1/spaces/\(space)/status")
                codes.append(try await raw("GET", url, token: tokens[0]).status)
            }
            switch backEnd {
            case .postgres:
                #expect(codes == [200, 200, 200, 429, 429, 429], "one bucket over both instances: \(codes)")
            case .sqlite:
                #expect(codes == [200, 200, 200, 200, 200, 200], "a bucket of 3 in each of the two stores: \(codes)")
            }
        }
    }

    /// A device token reads its space but registers, pushes and records pulls only as its
    /// own device; another space stays closed to it.
    static func deviceTokensActAsTheirDeviceOnly(_ backEnd: BackEnd) async throws {
        try await withServer(backEnd) { test, server in
            let (space, spaceTokens) = try await makeSpace(test.store, "device-tokens")
            let (otherSpace, _) = try await makeSpace(test.store, "other")
            let (phoneToken, record) = AccessToken.issue(label: "phone", device: "phone", at: 2)
            try await test.store.addToken(record, toSpaceNamed: space)
            #expect(try await test.store.tokens(ofSpaceNamed: space).map(\.device) == [nil, "phone"])
            var random = SeededRandom(defaultSeed: 0x5E4F_0008)
            let seed = random.seed
            let mac = try PhotoDevice("mac")
            try mac.addPhotos(4, prefix: "mac", random: &random)
            let phone = try PhotoDevice("phone")
            try phone.addPhotos(3, prefix: "phone", random: &random)
            let base = server.url.appendingPathComponent("v1/spaces/\(space)")

            // As its own device: register, push and pull through the transport.
            let macTransport = HTTPTransport(server: server.url, space: space, token: spaceTokens[0])
            try await mac.sync(through: macTransport)
            let phoneTransport = HTTPTransport(server: server.url, space: space, token: phoneToken)
            let report = try await phone.sync(through: phoneTransport)
            #expect(report.problems.isEmpty, "seed \(seed): \(report.problems)")
            #expect(try phone.photos.count() == 7, "seed \(seed)")

            // As another device: refused, nothing stored.
            let spaceID = try await spaceID(test.store, phoneToken)
            let before = try await test.store.changeSets(inSpace: spaceID, after: 0, limit: 1000)
            let registration = try JSONEncoder().encode(["site": "mac", "name": "not the phone", "platform": "Linux"])
            let register = try await raw(
                "POST", base.appendingPathComponent("devices"), token: phoneToken,
                headers: ["Content-Type": "application/json"], body: registration)
            #expect(register.status == 403 && register.errorCode == "wrong-device")
            try mac.addPhotos(2, prefix: "mac-later", random: &random)
            let macBatch = try mac.replica.changes(since: try mac.replica.currentSequence() - 2)
            #expect(macBatch.origin.rawValue == "mac" && !macBatch.isEmpty)
            let body = macBatch.serialized()
            let push = try await rawPush(base, token: phoneToken, body: body)
            #expect(push.status == 403 && push.errorCode == "wrong-device", "\(push.status) \(push.errorCode ?? "")")
            let pullAsMac = try await raw(
                "GET",
                base.appendingPathComponent("changesets").appending(queryItems: [.init(name: "site", value: "mac")]),
                token: phoneToken)
            #expect(pullAsMac.status == 403)
            #expect(try await test.store.changeSets(inSpace: spaceID, after: 0, limit: 1000) == before)
            let devices = try await test.store.devices(inSpace: spaceID)
            #expect(devices.first { $0.site == "mac" }?.name != "not the phone")

            // Another space: closed, like to any token of this one.
            for (method, path) in [("GET", "status"), ("GET", "changesets"), ("GET", "changesets/1")] {
                let answer = try await raw(
                    method, server.url.appendingPathComponent("v1/spaces/\(otherSpace)/\(path)"), token: phoneToken)
                #expect(answer.status == 401, "\(method) \(path) of another space: \(answer.status)")
            }
        }
    }

    /// A device joining after 1,000 changes (and edits and deletes on another device)
    /// bootstraps from the snapshot — downloaded in byte ranges — then pulls what came
    /// after it, and holds the same rows and index answers as the others. The history the
    /// snapshot holds is dropped first, so replaying it is not possible.
    static func newDeviceBootstrapsFromSnapshot(_ backEnd: BackEnd) async throws {
        var random = SeededRandom(defaultSeed: 0x5E4F_0009)
        let seed = random.seed
        try await withServedSpace(backEnd, "bootstrap", tokens: 3) { test, server, space, tokens, spaceID in
            let writer = try PhotoDevice("writer", options: Replica.Options(maximumBatchRows: 50))
            let editor = try PhotoDevice("editor", options: Replica.Options(maximumBatchRows: 50))
            // 750 photos and 250 notes: 1,000 changes.
            try writer.addPhotos(750, prefix: "w", random: &random)
            let writerTransport = HTTPTransport(server: server.url, space: space, token: tokens[0])
            let editorTransport = HTTPTransport(server: server.url, space: space, token: tokens[1])
            try await writer.sync(through: writerTransport)
            try await editor.sync(through: editorTransport)
            try await editor.database.writer.write { db in
                try db.execute(sql: "UPDATE photos SET mood = 'edited' WHERE rowid % 7 = 0")
            }
            for index in stride(from: 0, to: 60, by: 3) { _ = try editor.photos.delete(sourceId: "w-\(index)") }
            try await editor.sync(through: editorTransport)
            try await writer.sync(through: writerTransport)

            // Parts of at most 256 KiB: a snapshot of several, each row in one of them.
            let compactor = SpaceCompactor(store: test.store, snapshotPartBytes: 256 << 10)
            let made = try await compactor.makeSnapshot(spaceID: spaceID, at: 5)
            let snapshot = try #require(made)
            let parts = try #require(snapshot.parts, "\(backEnd): \(snapshot.size) bytes in one part")
            let history = try await test.store.changeSets(inSpace: spaceID, after: 0, limit: 10_000)
            let historyBytes = history.reduce(0) { $0 + $1.size }
            print(
                "seed \(seed), \(backEnd): \(history.count) change sets, \(historyBytes) bytes folded into a snapshot of \(snapshot.rows) rows, \(snapshot.size) bytes in \(parts.count) parts"
            )
            #expect(parts.count > 1 && parts.allSatisfy { $0.size <= 256 << 10 && $0.rows > 0 }, "\(parts)")
            #expect(parts.reduce(0) { $0 + $1.size } == snapshot.size)
            var whole = Data()
            for (index, part) in parts.enumerated() {
                let bytes = try await test.store.snapshotBytes(
                    inSpace: spaceID, seq: snapshot.seq, part: index, range: 0..<Int(part.size))
                let body = try #require(bytes)
                #expect(sha256Hex(body) == part.sha256)
                #expect(try ChangeSet(serialized: body).records.count == part.rows)
                whole += body
            }
            #expect(sha256Hex(whole) == snapshot.sha256)
            // A snapshot in parts is not served whole; a part past the last is not found.
            let base = server.url.appendingPathComponent("v1/spaces/\(space)/snapshot/\(snapshot.seq)")
            let asWhole = try await raw("GET", base, token: tokens[2])
            #expect(asWhole.status == 409 && asWhole.errorCode == "in-parts", "\(asWhole.status) \(asWhole.json ?? [:])")
            let pastLast = try await raw("GET", base.appendingPathComponent("parts/\(parts.count)"), token: tokens[2])
            #expect(pastLast.status == 404, "\(pastLast.status) \(pastLast.json ?? [:])")
            #expect(snapshot.seq == history.last?.seq)
            #expect(snapshot.rows == 1000, "each row once, tombstones included")
            #expect(snapshot.size < historyBytes, "overwritten values are not kept")
            #expect(snapshot.heads.keys.sorted() == ["editor", "writer"])
            // Nothing new: the same snapshot.
            #expect(try await compactor.makeSnapshot(spaceID: spaceID, at: 6) == snapshot)

            // Changes after the snapshot, then everything the snapshot holds dropped.
            try writer.addPhotos(12, prefix: "late", random: &random)
            try await writer.sync(through: writerTransport)
            let (through, dropped) = try await compactor.compact(spaceID: spaceID, force: true)
            #expect(through == snapshot.seq && dropped == history.count)
            #expect(try await test.store.changeSets(inSpace: spaceID, after: 0, limit: 10_000).count >= 1)
            await #expect(
                throws: ServerStoreError.compactionPastSnapshot(requested: snapshot.seq + 1, snapshot: snapshot.seq)
            ) {
                _ = try await test.store.compact(inSpace: spaceID, through: snapshot.seq + 1)
            }

            let newcomer = try PhotoDevice("newcomer")
            var rangedTransport = HTTPTransport(server: server.url, space: space, token: tokens[2])
            rangedTransport.rangeBytes = 256 << 10
            let transport = rangedTransport
            let report = try await newcomer.sync(through: transport)
            #expect(report.problems.isEmpty, "seed \(seed): \(report.problems)")
            let storeID = try await test.store.storeID()
            #expect(try newcomer.replica.publishedThrough(to: transport.pullCursorKey(storeID: storeID)) > snapshot.seq)
            // The newcomer's own change, then everyone in step.
            try newcomer.addPhotos(2, prefix: "new", random: &random)
            for (device, deviceTransport) in [
                (newcomer, transport), (writer, writerTransport), (editor, editorTransport),
            ] {
                let again = try await device.sync(through: deviceTransport)
                #expect(again.problems.isEmpty, "seed \(seed), \(device.name): \(again.problems)")
            }
            let reference = try writer.snapshot()
            let photoCount = reference.filter { $0.hasPrefix("photos ") }.count
            let expectedPhotos = 750 - 20 + 12 + 2
            #expect(photoCount == expectedPhotos, "seed \(seed)")
            let query = Vector((0..<768).map { Float($0 % 5) - 2 })
            for device in [newcomer, editor] {
                #expect(try device.snapshot() == reference, "seed \(seed): \(device.name) differs from the writer")
                #expect(try device.searches(query: query) == writer.searches(query: query), "seed \(seed)")
            }
            let peers = Dictionary(try newcomer.replica.peers().map { ($0.site.rawValue, $0.received) }) { max($0, $1) }
            let heads = Dictionary(try await test.store.devices(inSpace: spaceID).map { ($0.site, $0.head) }) {
                max($0, $1)
            }
            #expect(
                peers["writer"] == heads["writer"] && peers["editor"] == heads["editor"],
                "cursors: \(peers), heads: \(heads)")

            // The parts folded again with what came after them, into one change set this time;
            // a fourth device bootstraps from it and holds what the others hold.
            let (_, again) = try await Self.snapshot(of: spaceID, in: test.store)
            #expect(again.parts == nil && again.seq > snapshot.seq, "\(again)")
            #expect(try await test.store.snapshotBytes(inSpace: spaceID, seq: snapshot.seq, part: 0, range: 0..<1) == nil)
            let fourth = try PhotoDevice("fourth")
            let fourthReport = try await fourth.sync(through: transport)
            #expect(fourthReport.problems.isEmpty, "seed \(seed): \(fourthReport.problems)")
            #expect(try fourth.snapshot() == writer.snapshot(), "seed \(seed): the fourth device differs")
        }
    }

    /// Compaction keeps what a registered device has not pulled unless forced; a device
    /// left behind by a forced compaction is told so (410), bootstraps again, keeps and
    /// pushes its own unsynced changes, and converges.
    static func deviceBehindCompactionRecovers(_ backEnd: BackEnd) async throws {
        var random = SeededRandom(defaultSeed: 0x5E4F_000A)
        let seed = random.seed
        try await withServedSpace(backEnd, "behind", tokens: 2) { test, server, space, tokens, spaceID in
            let writer = try PhotoDevice("writer", options: Replica.Options(maximumBatchRows: 20))
            let laggard = try PhotoDevice("laggard")
            let writerTransport = HTTPTransport(server: server.url, space: space, token: tokens[0])
            let laggardTransport = HTTPTransport(server: server.url, space: space, token: tokens[1])
            try writer.addPhotos(30, prefix: "early", random: &random)
            try await writer.sync(through: writerTransport)
            // Twice: a pull tells the server the cursor it starts from, so the second one tells
            // it everything the first merged.
            for _ in 0..<2 { try await laggard.sync(through: laggardTransport) }
            let storeID = try await test.store.storeID()
            let laggardCursor = try laggard.replica.publishedThrough(
                to: laggardTransport.pullCursorKey(storeID: storeID))
            // The laggard goes away with changes of its own; the writer goes on.
            try laggard.addPhotos(3, prefix: "offline", random: &random)
            try writer.addPhotos(120, prefix: "later", random: &random)
            try await writer.database.writer.write { db in
                try db.execute(sql: "UPDATE photos SET mood = 'revised' WHERE source_id LIKE 'early-%'")
            }
            try await writer.sync(through: writerTransport)
            try await writer.sync(through: writerTransport)

            let (compactor, snapshot) = try await snapshot(of: spaceID, in: test.store)
            // Safe compaction stops at the laggard's pull point.
            let safe = try await compactor.compact(spaceID: spaceID, force: false)
            #expect(
                safe.through == laggardCursor && safe.through < snapshot.seq, "seed \(seed): \(safe), \(laggardCursor)")
            let pageAfterSafe = try await raw(
                "GET",
                server.url.appendingPathComponent("v1/spaces/\(space)/changesets")
                    .appending(queryItems: [.init(name: "after", value: String(laggardCursor))]), token: tokens[1])
            #expect(pageAfterSafe.status == 200)
            // Forced: the laggard is behind.
            let forced = try await compactor.compact(spaceID: spaceID, force: true)
            #expect(forced.through == snapshot.seq && forced.dropped > 0)
            let gone = try await raw(
                "GET",
                server.url.appendingPathComponent("v1/spaces/\(space)/changesets")
                    .appending(queryItems: [.init(name: "after", value: String(laggardCursor))]), token: tokens[1])
            #expect(gone.status == 410 && gone.errorCode == "compacted", "\(gone.status)")

            let report = try await laggard.sync(through: laggardTransport)
            #expect(report.problems.isEmpty, "seed \(seed): \(report.problems)")
            try await writer.sync(through: writerTransport)
            #expect(try laggard.snapshot() == writer.snapshot(), "seed \(seed)")
            #expect(try writer.photos.photo(sourceId: "offline-1") != nil, "the laggard's own changes were pushed")
            #expect(try laggard.photos.photo(sourceId: "early-3")?.mood == "revised")
        }
    }

    /// The store alone: sequence numbers, heads, and the push rule.
    static func storeAppliesThePushRule(_ backEnd: BackEnd) async throws {
        let test = try await TestStore.make(backEnd)
        let store = test.store
        let space = uniqueSpace("rule")
        let record = try await store.createSpace(named: space, at: 1)
        await #expect(throws: ServerStoreError.spaceExists(space)) { try await store.createSpace(named: space, at: 2) }
        func incoming(_ since: Int64, _ through: Int64, _ tag: String = "") -> IncomingChangeSet {
            let body = Data("\(since)-\(through)\(tag)".utf8)
            return IncomingChangeSet(
                origin: "o", since: since, through: through, rows: 1, sha256: sha256Hex(body), body: body)
        }
        #expect(try await store.push(incoming(0, 5), inSpace: record.id, at: 1) == .unregisteredOrigin)
        _ = try await store.registerDevice(
            DeviceRegistration(site: "o", name: "n", platform: "p"), inSpace: record.id, at: 1)
        guard case .stored(let first) = try await store.push(incoming(0, 5), inSpace: record.id, at: 2) else {
            Issue.record("not stored")
            return
        }
        #expect(first.seq == 1)
        #expect(try await store.push(incoming(0, 5), inSpace: record.id, at: 3) == .duplicate(first))
        if case .conflict = try await store.push(incoming(0, 5, "x"), inSpace: record.id, at: 3) {
        } else {
            Issue.record("no conflict")
        }
        #expect(try await store.push(incoming(6, 9), inSpace: record.id, at: 3) == .gap(head: 5))
        #expect(try await store.push(incoming(2, 4), inSpace: record.id, at: 3) == .covered(head: 5))
        guard case .stored(let overlap) = try await store.push(incoming(3, 8), inSpace: record.id, at: 4) else {
            Issue.record("overlap not stored")
            return
        }
        #expect(overlap.seq == 2)
        let devices = try await store.devices(inSpace: record.id)
        #expect(devices.count == 1 && devices[0].head == 8 && devices[0].changeSets == 2 && devices[0].lastPushAt == 4)
        let listed = try await store.changeSets(inSpace: record.id, after: 1, limit: 10)
        #expect(listed.map(\.seq) == [2])
        #expect(try await store.changeSet(inSpace: record.id, seq: 2)?.body == Data("3-8".utf8))

        // A damaged entry: a push of its range with other bytes replaces it in place, once.
        try await store.prepare()  // the migrations run again on a prepared store: no-ops
        try await store.markDamaged(inSpace: record.id, seq: 1, sha256: "not its sha256")
        #expect(try await store.devices(inSpace: record.id)[0].damaged == nil, "a mark needs the stored SHA-256")
        try await store.markDamaged(inSpace: record.id, seq: 1, sha256: first.sha256)
        #expect(
            try await store.devices(inSpace: record.id)[0].damaged == [
                ServerDamagedChangeSet(seq: 1, since: 0, through: 5)
            ])
        let replacement = IncomingChangeSet(
            origin: "o", since: 0, through: 5, rows: 3, sha256: sha256Hex(Data("0-5 again".utf8)),
            body: Data("0-5 again".utf8))
        guard case .repaired(let repaired) = try await store.push(replacement, inSpace: record.id, at: 5) else {
            Issue.record("not repaired")
            return
        }
        #expect(repaired.seq == 1 && repaired.rows == 3 && repaired.sha256 == replacement.sha256)
        #expect(try await store.changeSet(inSpace: record.id, seq: 1)?.body == Data("0-5 again".utf8))
        let afterRepair = try await store.devices(inSpace: record.id)[0]
        #expect(afterRepair.damaged == nil && afterRepair.changeSets == 2 && afterRepair.head == 8)
        #expect(afterRepair.rows == 4 && afterRepair.bytes == Int64("0-5 again".utf8.count + "3-8".utf8.count))
        #expect(try await store.push(replacement, inSpace: record.id, at: 6) == .duplicate(repaired))
        #expect(try await store.push(incoming(0, 5), inSpace: record.id, at: 6) == .conflict(repaired))
        await test.close()
    }

    /// A stored change set damaged at rest: the server refuses to serve it (409 `damaged`, whole
    /// or from byte 0 of a ranged download) and marks it; readers record a gap; the author's
    /// next sync re-publishes the range from what it holds, which replaces the damaged bytes;
    /// the readers' next sync merges it, their gaps close and they converge with the author.
    static func damagedChangeSetIsRepublishedByItsOrigin(_ backEnd: BackEnd) async throws {
        var random = SeededRandom(defaultSeed: 0x5E4F_0010)
        let seed = random.seed
        try await withServedSpace(backEnd, "repair", tokens: 3) { test, server, space, tokens, spaceID in
            let storeID = try await test.store.storeID()
            let author = try PhotoDevice("author", options: Replica.Options(maximumBatchRows: 4))
            try author.addPhotos(10, prefix: "a", random: &random)
            let authorTransport = HTTPTransport(server: server.url, space: space, token: tokens[0])

            // The author's first change set is stored with one byte flipped under its honest
            // SHA-256 — as a disk or a hand edit would leave it — and the author's push cursor
            // says it was pushed; its next sync pushes the rest.
            let first = try author.replica.changes(since: 0)
            var body = first.serialized()
            let honestSHA = sha256Hex(body)
            body[body.count / 2] ^= 0x01
            _ = try await blocking { try authorTransport.register(author.replica) }
            guard
                case .stored(let damagedEntry) = try await test.store.push(
                    IncomingChangeSet(
                        origin: "author", since: first.since, through: first.through, rows: Int64(first.records.count),
                        sha256: honestSHA, body: body),
                    inSpace: spaceID, at: 1)
            else {
                Issue.record("seed \(seed): the damaged change set was not stored")
                return
            }
            try author.replica.setPublishedThrough(first.through, to: authorTransport.pushCursorKey(storeID: storeID))
            let pushed = try await author.sync(through: authorTransport)
            #expect(pushed.problems.isEmpty, "seed \(seed): \(pushed.problems)")

            // Two readers: one downloads whole bodies, one in byte ranges of 256 bytes.
            let readers = try ["reader", "ranged"].map { try PhotoDevice($0) }
            let readerTransports = readers.indices.map {
                var transport = HTTPTransport(server: server.url, space: space, token: tokens[$0 + 1])
                if $0 == 1 { transport.rangeBytes = 256 }
                return transport
            }
            for index in readers.indices {
                let report = try await readers[index].sync(through: readerTransports[index])
                #expect(
                    report.problems.first?.contains("409 damaged") == true,
                    "seed \(seed), \(readers[index].name): \(report.problems)")
                let gaps = try readers[index].replica.gaps()
                #expect(
                    gaps.count == 1 && gaps.first?.origin == "author" && gaps.first?.since == 0
                        && gaps.first?.through == first.through,
                    "seed \(seed), \(readers[index].name): \(gaps)")
                #expect(try readers[index].photos.count() < 10)
            }
            let marked = try await test.store.devices(inSpace: spaceID).first { $0.site == "author" }?.damaged
            #expect(
                marked == [ServerDamagedChangeSet(seq: damagedEntry.seq, since: first.since, through: first.through)])
            let status = try await blocking { try authorTransport.status() }
            #expect(status.devices.first { $0.site == "author" }?.damaged == marked, "the status tells the author")

            // Behind a server whose body limit the replacement exceeds, the author's sync fails
            // with a 413 that names the damaged change set; the range stays marked.
            let small = try await RunningServer.start(test.store, limits: SyncServer.Limits(maximumBodyBytes: 4096))
            let smallTransport = HTTPTransport(server: small.url, space: space, token: tokens[0])
            let refused = await #expect(throws: HTTPTransportError.self) {
                try await author.sync(through: smallTransport)
            }
            if case .refused(_, 413, "too-large", let message) = refused {
                #expect(message.contains("cannot re-publish damaged change set \(damagedEntry.seq)"), "\(message)")
            } else {
                Issue.record("seed \(seed): not a 413: \(String(describing: refused))")
            }
            await small.stop()
            #expect(try await test.store.devices(inSpace: spaceID).first { $0.site == "author" }?.damaged == marked)

            // The author writes more — new photos, an edit and a delete of rows the damaged
            // change set carried — and its sync re-publishes the damaged range.
            try author.addPhotos(2, prefix: "b", random: &random)
            try await author.database.writer.write { db in
                try db.execute(sql: "UPDATE photos SET mood = 'mended' WHERE source_id = 'a-0'")
            }
            _ = try author.photos.delete(sourceId: "a-1")
            let repairing = try await author.sync(through: authorTransport)
            #expect(repairing.problems.isEmpty, "seed \(seed): \(repairing.problems)")
            #expect(try await test.store.devices(inSpace: spaceID).first { $0.site == "author" }?.damaged == nil)
            guard let repaired = try await test.store.changeSet(inSpace: spaceID, seq: damagedEntry.seq) else {
                Issue.record("seed \(seed): the repaired change set is gone")
                return
            }
            #expect(sha256Hex(repaired.body) == repaired.entry.sha256)
            #expect(repaired.entry.since == first.since && repaired.entry.through == first.through)

            // The readers merge it on their next sync: no gap, the author's rows.
            let reference = try author.snapshot()
            #expect(reference.filter { $0.hasPrefix("photos ") }.count == 11, "seed \(seed)")
            for index in readers.indices {
                let report = try await readers[index].sync(through: readerTransports[index])
                #expect(report.problems.isEmpty, "seed \(seed), \(readers[index].name): \(report.problems)")
                #expect(try readers[index].replica.gaps().isEmpty, "seed \(seed), \(readers[index].name)")
                #expect(try readers[index].snapshot() == reference, "seed \(seed): \(readers[index].name) differs")
            }
        }
    }

    /// Concurrent pushes from several devices while a reader pages through the list: every
    /// page is in order, and the reader sees every change set exactly once.
    static func pagesAreStableUnderConcurrentPushes(_ backEnd: BackEnd) async throws {
        let test = try await TestStore.make(backEnd)
        let store = test.store
        let space = try await store.createSpace(named: uniqueSpace("pages"), at: 1)
        let writers = 4
        let perWriter = 40
        for index in 0..<writers {
            _ = try await store.registerDevice(
                DeviceRegistration(site: "w\(index)", name: "w", platform: "p"), inSpace: space.id, at: 1)
        }
        let pushes = Task {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 0..<writers {
                    group.addTask {
                        for step in 0..<Int64(perWriter) {
                            let body = Data("w\(index)-\(step)".utf8)
                            _ = try await store.push(
                                IncomingChangeSet(
                                    origin: "w\(index)", since: step, through: step + 1, rows: 1,
                                    sha256: sha256Hex(body), body: body), inSpace: space.id, at: 1)
                        }
                    }
                }
                try await group.waitForAll()
            }
        }
        var cursor: Int64 = 0
        var seen: [Int64] = []
        let deadline = ContinuousClock.now + .seconds(60)
        while seen.count < writers * perWriter, ContinuousClock.now < deadline {
            let page = try await store.changeSets(inSpace: space.id, after: cursor, limit: 7)
            seen += page.map(\.seq)
            cursor = page.last?.seq ?? cursor
        }
        try await pushes.value
        #expect(seen == Array(1...Int64(writers * perWriter)), "every change set once, in order")
        await test.close()
    }
}

extension Result {
    var isSuccess: Bool {
        if case .success = self { return true }
        return false
    }
}
