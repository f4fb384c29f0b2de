import Foundation
import Testing
import VecSyncServer

/// The scenarios' harness: a scenario that fails still leaves no server running and no
/// store behind for the next one.
@Suite("Server test harness")
struct ServerHarnessTests {
    struct Planned: Error {}

    @Test func aThrowingScenarioStillStopsItsServerAndRemovesItsStore() async throws {
        var port = 0
        var directory: URL?
        do {
            try await withServedSpace(.sqlite, "harness") { test, server, _, _, _ in
                port = server.url.port ?? 0
                directory = test.directory
                throw Planned()
            }
            Issue.record("the scenario's error was not passed on")
        } catch is Planned {}
        #expect(port > 0)
        #expect(throws: ServerConfigurationError.self, "the server still listens on \(port)") {
            _ = try RawConnection(port: port, timeout: .seconds(2))
        }
        let path = try #require(directory).path
        #expect(!FileManager.default.fileExists(atPath: path), "the store's folder is still there: \(path)")
    }
}
