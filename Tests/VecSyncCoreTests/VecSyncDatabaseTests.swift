import Foundation
import Testing
import VecSyncTestSupport

@testable import VecSyncCore

@Suite("Opening databases with the extension, binding vectors")
struct VecSyncDatabaseTests {
    @Test func inMemoryDatabaseHasTheVectorFunctions() throws {
        let db = try HostFixtures.database()
        let text = try db.read { db in try String.fetchOne(db, sql: "SELECT vector_extract(vector32('[1, 2.5]'))") }
        #expect(text == "[1,2.5]")
    }

    @Test func vectorBindsAsF32BlobAndFetchesFromBlobOrText() throws {
        let db = try HostFixtures.database()
        let v: Vector = [0.5, -1, 3]
        try db.read { (db: Database) throws in
            #expect(try String.fetchOne(db, sql: "SELECT vector_extract(?)", arguments: [v]) == "[0.5,-1,3]")
            #expect(try Data.fetchOne(db, sql: "SELECT ?", arguments: [v]) == v.blob)
            #expect(try Vector.fetchOne(db, sql: "SELECT vector32('[0.5,-1,3]')") == v)
            #expect(try Vector.fetchOne(db, sql: "SELECT '[0.5, -1, 3]'") == v)
            #expect(try Vector.fetchOne(db, sql: "SELECT NULL") == nil)
        }
    }

    @Test func sqlDistancesAgreeWithSwift() throws {
        var rng = ExtensionRandom(defaultSeed: 0x5EED_0002)
        let db = try HostFixtures.database()
        try db.read { db in
            for _ in 0..<50 {
                let a = Vector.random(dimensions: 32, using: &rng)
                let b = Vector.random(dimensions: 32, using: &rng)
                let cos = try Double.fetchOne(db, sql: "SELECT vector_distance_cos(?, ?)", arguments: [a, b]) ?? .nan
                let l2 = try Double.fetchOne(db, sql: "SELECT vector_distance_l2(?, ?)", arguments: [a, b]) ?? .nan
                #expect(abs(cos - Double(a.cosineDistance(to: b))) < 1e-5, "seed \(rng.seed)")
                #expect(abs(l2 - Double(a.l2Distance(to: b))) < 1e-4, "seed \(rng.seed)")
            }
        }
    }

    @Test func fileDatabaseIsAPoolWhoseReadersHaveTheExtension() throws {
        let dir = try temporaryDirectory("host")
        defer { try? FileManager.default.removeItem(at: dir) }
        let db = try VecSyncDatabase(path: dir.appendingPathComponent("app.db").path)
        #expect(db.writer is DatabasePool)
        try db.write { db in
            try db.execute(sql: "CREATE TABLE t(v BLOB)")
            try db.execute(sql: "INSERT INTO t VALUES (?)", arguments: [Vector([1, 2])])
        }
        let text = try db.read { db in try String.fetchOne(db, sql: "SELECT vector_extract(v) FROM t") }
        #expect(text == "[1,2]")
    }

    @Test func aWriteWaitsForAnotherConnectionsWriteInsteadOfFailing() throws {
        try withTemporaryFile("busy", named: "busy.db") { path in
            let app = try VecSyncDatabase(path: path)
            let sync = try VecSyncDatabase(path: path)  // a second pool, as a sync in another process
            try app.write { db in try db.execute(sql: "CREATE TABLE t(x)") }
            let holding = DispatchSemaphore(value: 0)
            let released = DispatchSemaphore(value: 0)
            let thread = Thread {
                try? app.write { db in
                    try db.execute(sql: "INSERT INTO t VALUES (1)")
                    holding.signal()
                    Thread.sleep(forTimeInterval: 0.3)  // the write lock stays taken meanwhile
                }
                released.signal()
            }
            thread.start()
            holding.wait()
            try sync.write { db in try db.execute(sql: "INSERT INTO t VALUES (2)") }
            released.wait()
            #expect(try sync.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM t") } == 2)
        }
    }

    @Test func ownDatabaseQueueBecomesVectorCapableWithTheConfigurationHelper() throws {
        let queue = try DatabaseQueue(configuration: .vecSync())
        let db = try VecSyncDatabase(queue)
        #expect(
            try db.read { db in try String.fetchOne(db, sql: "SELECT vecsync_version()") } == VecSyncExtension.version)
    }

    @Test func sqliteErrorsCarryTheSQL() throws {
        let db = try HostFixtures.database()
        do {
            try db.read { db in
                try VecSyncError.wrap { _ = try Row.fetchAll(db, sql: "SELECT vector_distance_cos('[1,2]', '[1]')") }
            }
            Issue.record("a dimension mismatch in SQL should throw")
        } catch let error as VecSyncError {
            guard case .sqlite(let message, _, let sql) = error else {
                Issue.record("unexpected \(error)")
                return
            }
            #expect(message.contains("different dimensions"))
            #expect(sql == "SELECT vector_distance_cos('[1,2]', '[1]')")
        }
    }
}
