import Foundation
import Testing
import ServerTestSupport

@testable import VecSyncServer

/// A push is answered 201 only once it would survive a power loss: the SQLite store's writer
/// syncs the WAL at every commit (GRDB opens WAL databases with synchronous NORMAL).
@Suite("SQLite store durability")
struct SQLiteStoreDurabilityTests {
    @Test func everyCommitIsSynced() async throws {
        let directory = try temporaryDirectory("server-durability")
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try SQLiteServerStore(directory: directory)
        try await store.prepare()
        #expect(try await store.writerSynchronous() == 2)
        await store.close()
    }
}
