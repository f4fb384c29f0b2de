import Foundation
import ServerFixtures
import ServerTestSupport
import Testing
import VecSyncReplication
import VecSyncServer
import VecSyncHTTP

/// Background sync on an interval, backing off while the server cannot be reached.
@Suite("Background sync", .serialized)
struct BackgroundSyncTests {
    @Test func pauseDoublesAfterEachFailureUpToTheMaximum() throws {
        let device = try PhotoDevice("clock")
        let transport = HTTPTransport(server: URL(string: "http://127.0.0.1:1")!, space: "s", token: "vst_x")
        let background = BackgroundSync(
            replica: device.replica, transport: transport, interval: .seconds(1), maximumBackoff: .seconds(10))
        #expect(
            (0...5).map { background.pause(afterFailures: $0) } == [
                .seconds(1), .seconds(2), .seconds(4), .seconds(8), .seconds(10), .seconds(10),
            ])
        #expect(background.pause(afterFailures: 1000) == .seconds(10))
    }

    @Test func backsOffWhileTheServerIsDownThenSyncs() async throws {
        let test = try await TestStore.make(.sqlite)
        let stopped = try await RunningServer.start(test.store)
        await stopped.stop()
        let (space, tokens) = try await makeSpace(test.store, "background")
        let device = try PhotoDevice("laptop", photos: 3, prefix: "l", seed: 0x5E4F_0006)

        var down = HTTPTransport(server: stopped.url, space: space, token: tokens[0])
        down.attempts = 1
        let failing = BackgroundSync(
            replica: device.replica, transport: down, interval: .milliseconds(10), maximumBackoff: .milliseconds(50))
        var pauses: [Duration] = []
        for await event in failing.events(maximumRounds: 4) {
            if case .failed(_, let retryIn) = event { pauses.append(retryIn) }
        }
        #expect(pauses == [.milliseconds(20), .milliseconds(40), .milliseconds(50), .milliseconds(50)])

        let server = try await RunningServer.start(test.store)
        let up = HTTPTransport(server: server.url, space: space, token: tokens[0])
        let working = BackgroundSync(replica: device.replica, transport: up, interval: .milliseconds(10))
        var pushed = 0
        for await event in working.events(maximumRounds: 2) {
            guard case .synced(let report) = event else {
                Issue.record("\(event)")
                continue
            }
            pushed += report.pushedRows
        }
        #expect(pushed == 4, "3 photos and 1 note pushed once, in the first round")
        await server.stop()
        await test.close()
    }
}
