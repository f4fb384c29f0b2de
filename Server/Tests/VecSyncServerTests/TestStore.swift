import Foundation
import ServerTestSupport
import VecSyncServer

/// A store of one back end, with what to remove afterwards.
struct TestStore: Sendable {
    let store: any ServerStore
    let directory: URL?

    /// A fresh SQLite store in a temporary folder, or a connection to the test PostgreSQL
    /// database (shared: each test uses spaces of its own).
    static func make(_ backEnd: BackEnd) async throws -> TestStore {
        switch backEnd {
        case .sqlite:
            let directory = try temporaryDirectory("server")
            let store = try SQLiteServerStore(directory: directory)
            try await store.prepare()
            return TestStore(store: store, directory: directory)
        case .postgres:
            guard let url = BackEnd.postgresURL else {
                throw ServerConfigurationError("VECSYNC_TEST_POSTGRES_URL is not set")
            }
            let store = try PostgresServerStore(url: url)
            try await store.prepare()
            return TestStore(store: store, directory: nil)
        }
    }

    /// Another connection to the same data, as a restarted server would open.
    func reopen(_ backEnd: BackEnd) async throws -> any ServerStore {
        switch backEnd {
        case .sqlite:
            guard let directory else { throw ServerConfigurationError("no directory") }
            return try SQLiteServerStore(directory: directory)
        case .postgres:
            return try PostgresServerStore(url: BackEnd.postgresURL ?? "")
        }
    }

    func close() async {
        await store.close()
        if let directory { try? FileManager.default.removeItem(at: directory) }
    }
}
