import Foundation
import Testing
import VecSyncTestSupport

@testable import VecSyncCore

/// How the extension reaches a connection: installed on each one (what works on every SQLite,
/// Apple's included), or registered for the process where the SQLite allows it.
///
/// `make test-apple-sqlite` runs this suite with Apple's behaviour simulated
/// (`VECSYNC_APPLE_SQLITE=1`): `sqlite3_auto_extension` answers SQLITE_MISUSE.
@Suite("Installing the extension on connections", .serialized)
struct ExtensionInstallTests {
    /// True in the Apple-SQLite lane, where process-wide registration is refused.
    static let appleSQLite = ProcessInfo.processInfo.environment["VECSYNC_APPLE_SQLITE"] == "1"

    static func hasExtension(_ queue: DatabaseQueue) -> Bool {
        queue.inDatabase { db in
            (try? String.fetchOne(db, sql: "SELECT vecsync_version()")) == VecSyncExtension.version
        }
    }

    @Test func aPlainConnectionHasNoExtensionUntilInstalledOnIt() throws {
        let queue = try DatabaseQueue()
        #expect(!Self.hasExtension(queue))
        try queue.inDatabase { db in
            try VecSyncExtension.install(on: db)
            try VecSyncExtension.install(on: db)  // a second time changes nothing
            try db.execute(sql: "CREATE VIRTUAL TABLE v USING vec0(embedding float[2])")
            try db.execute(sql: "INSERT INTO v(rowid, embedding) VALUES (1, '[1, 0]'), (2, '[0, 1]')")
            let nearest = try Int64.fetchOne(
                db, sql: "SELECT rowid FROM v WHERE embedding MATCH '[0.1, 0.9]' AND k = 1")
            #expect(nearest == 2)
        }
    }

    @Test func everyConnectionOfAPoolOpenedWithTheConfigurationHasIt() throws {
        try withTemporaryFile("install", named: "pool.db") { path in
            var configuration = Configuration.vecSync()
            configuration.maximumReaderCount = 3
            let pool = try DatabasePool(path: path, configuration: configuration)
            try pool.write { db in
                try db.execute(sql: "CREATE VIRTUAL TABLE v USING vec0(embedding float[2])")
                try db.execute(sql: "INSERT INTO v(rowid, embedding) VALUES (1, '[1, 0]')")
            }
            // Readers open one by one as concurrent reads need them.
            let versions = try (0..<6).map { _ in
                try pool.read { db in try String.fetchOne(db, sql: "SELECT vecsync_version()") }
            }
            #expect(versions.allSatisfy { $0 == VecSyncExtension.version })
            let count = try pool.read { db in
                try Int.fetchOne(db, sql: "SELECT count(*) FROM v WHERE embedding MATCH '[1, 0]' AND k = 5")
            }
            #expect(count == 1)
        }
    }

    @Test func aConnectionWithoutItIsRefusedWithAdviceThatWorksHere() throws {
        let queue = try DatabaseQueue()
        do {
            _ = try VecSyncDatabase(queue)
            Issue.record("a connection without the extension was accepted")
        } catch let error as VecSyncError {
            guard case .extensionMissing = error else {
                Issue.record("unexpected \(error)")
                return
            }
            #expect("\(error)".contains("VecSyncExtension.install(on:)"), "\(error)")
            #expect(!"\(error)".contains("register()") || "\(error)".contains("ignores"), "\(error)")
        }
    }

    /// Registration for the whole process reports what SQLite answered: refused under Apple's
    /// behaviour, accepted on Debian's SQLite (and undone at once, so that no later
    /// connection of this process gets the extension without installing it).
    @Test func registerReportsWhatSQLiteAnswers() throws {
        if Self.appleSQLite {
            do {
                try VecSyncExtension.register()
                Issue.record("register() succeeded where sqlite3_auto_extension is refused")
            } catch let error as VecSyncError {
                guard case .extensionInstall(let resultCode, let reason) = error else {
                    Issue.record("unexpected \(error)")
                    return
                }
                #expect(resultCode == 21)
                #expect(reason.contains("install the extension on each connection"), "\(reason)")
            }
            #expect(!Self.hasExtension(try DatabaseQueue()))
        } else {
            try VecSyncExtension.register()
            defer { VecSyncExtension.unregister() }
            #expect(Self.hasExtension(try DatabaseQueue()))
        }
    }
}
