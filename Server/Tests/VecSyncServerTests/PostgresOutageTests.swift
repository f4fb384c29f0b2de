import Foundation
import ServerFixtures
import Testing

@testable import VecSyncServer

/// PostgreSQL away for longer than PostgresNIO's connection pool keeps trying before it
/// trips its circuit breaker (60 s): the server, reaching its database through a relay the
/// test cuts, answers every request 503 `store-unavailable` with `Retry-After` for the whole
/// outage (before the breaker trips and after: the tripped breaker's error was an empty 500),
/// at once once a first call has failed, but for one request at a time that finds out
/// whether the database is back (it waits up to the store's time limit), logs no 500, and
/// serves again by itself once the database is back.
@Suite("PostgreSQL away for minutes")
struct PostgresOutageTests {
    @Test(.enabled(if: BackEnd.postgresURL != nil, BackEnd.postgresSkipReason), .timeLimit(.minutes(4)))
    func anOutageLongerThanThePoolsBreakerIsUnavailableThroughout() async throws {
        let url = try #require(BackEnd.postgresURL)
        let direct = try #require(URLComponents(string: url))
        let relay = try TCPRelay(to: direct.host ?? "127.0.0.1", port: direct.port ?? 5432)
        var relayed = direct
        relayed.port = relay.port
        let store = try PostgresServerStore(url: try #require(relayed.string))
        try await store.prepare()
        let log = CollectedLog()
        let server = try await RunningServer.start(
            store, limits: SyncServer.Limits(requestsPerSecond: 0), logger: log.logger())
        let (space, tokens) = try await makeSpace(store, "outage")
        let base = server.url.appendingPathComponent("v1/spaces/\(space)")
        #expect(try await rawRegister(base, token: tokens[0], site: "phone", name: "Phone").status == 200)
        let (batches, seed) = try PhotoDevice.serializedBatches(
            "phone", photos: 20, prefix: "o", batchRows: 10, seed: 0x0D7A_6E01)
        #expect(try await rawPush(base, token: tokens[0], body: batches[0]).status == 201, "seed \(seed)")

        relay.cut()
        let outage = ContinuousClock.now
        let statusURL = base.appendingPathComponent("status")
        let token = tokens[0]
        // 70 s: past the breaker's 60 s. Each round a status read, and beside it after a
        // second, while the read may still be waiting for the database, a push.
        let answers = try await withThrowingTaskGroup(of: [Seen].self) { group in
            group.addTask {
                var seen: [Seen] = []
                while ContinuousClock.now - outage < .seconds(70) {
                    let round = ContinuousClock.now
                    seen.append(Seen("status", try await raw("GET", statusURL, token: token), since: outage, round))
                    let spent = ContinuousClock.now - round
                    if spent < .seconds(2) { try await Task.sleep(for: .seconds(2) - spent) }
                }
                return seen
            }
            group.addTask {
                var seen: [Seen] = []
                try await Task.sleep(for: .seconds(1))
                while ContinuousClock.now - outage < .seconds(70) {
                    let round = ContinuousClock.now
                    seen.append(Seen("push", try await rawPush(base, token: token, body: batches[1]), since: outage, round))
                    let spent = ContinuousClock.now - round
                    if spent < .seconds(2) { try await Task.sleep(for: .seconds(2) - spent) }
                }
                return seen
            }
            return try await group.reduce(into: []) { $0 += $1 }
        }
        let wrong = answers.filter { !$0.unavailable }
        #expect(wrong.isEmpty, "answers during the outage other than 503 store-unavailable: \(wrong)")
        // Until a first call has failed (the store's limit, 30 s), requests wait for it; after
        // that one request at a time finds out and waits (up to the limit again, or until the
        // breaker trips), every other answer comes at once. Here: the first status read and
        // push, then a status read or two.
        let slow = answers.filter { $0.took > .seconds(2) }
        #expect(answers.count >= 20 && slow.count <= 5, "\(answers.count) answers, slow: \(slow)")

        try relay.restore()
        let back = ContinuousClock.now
        var status = try await raw("GET", base.appendingPathComponent("status"), token: tokens[0])
        while status.status != 200 && ContinuousClock.now - back < .seconds(60) {
            try await Task.sleep(for: .seconds(1))
            status = try await raw("GET", base.appendingPathComponent("status"), token: tokens[0])
        }
        #expect(status.status == 200, "not serving 60 s after the database came back: \(status.status)")
        let stored = try await rawPush(base, token: tokens[0], body: batches[1])
        #expect(stored.status == 201, "\(stored.status) \(stored.json ?? [:])")
        let fivehundreds = log.lines.filter { $0.contains(" 500 ") || $0.contains("internal") }
        #expect(fivehundreds.isEmpty, "\(fivehundreds)")
        await server.stop()
        await store.close()
        relay.cut()
    }

    /// One answer during the outage: when it was asked, how long it took, what it was.
    struct Seen: CustomStringConvertible {
        let what: String
        let at: Duration
        let took: Duration
        let answer: RawAnswer

        init(_ what: String, _ answer: RawAnswer, since outage: ContinuousClock.Instant, _ asked: ContinuousClock.Instant) {
            self.what = what
            self.answer = answer
            at = asked - outage
            took = ContinuousClock.now - asked
        }

        var unavailable: Bool {
            answer.status == 503 && answer.errorCode == "store-unavailable" && answer.headers["retry-after"] != nil
        }

        var description: String {
            "\(what) at \(at.components.seconds) s: \(answer.status) \(answer.errorCode ?? "-") "
                + "retry-after \(answer.headers["retry-after"] ?? "-") in \(took.components.seconds) s"
        }
    }
}
