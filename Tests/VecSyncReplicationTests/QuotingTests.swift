import Foundation
import GRDB
import Testing
import VecSyncCore
import VecSyncTestSupport

@testable import VecSyncReplication

/// Tables and columns whose names need quoting (a `"`, a `'`, SQL punctuation) are
/// tracked, captured, merged, indexed and synced like any other.
@Suite("Identifier quoting")
struct QuotingTests: FolderSuite {
    let scratch = ScratchFolder("quoting")

    static let schema = #"""
        CREATE TABLE a (id TEXT PRIMARY KEY, only_in_a TEXT);
        CREATE TABLE "a"")--" ("k""ey" TEXT PRIMARY KEY, "ti""tle" TEXT, "it's" INTEGER, "x"")--" BLOB);
        CREATE VIRTUAL TABLE "fts ""odd""" USING fts5("k""ey" UNINDEXED, "ti""tle");
        """#

    static func replica(_ site: SiteID) throws -> Replica {
        let queue = try DatabaseQueue(configuration: Configuration.vecSync())
        try queue.write { db in try db.execute(sql: schema) }
        let replica = try Replica(queue, site: site)
        try replica.track("a\")--")
        try replica.register(DerivedIndex(fts5: "fts \"odd\"", on: "a\")--", keyColumn: "k\"ey", columns: ["ti\"tle"]))
        return replica
    }

    @Test("the identifier helper doubles quotes")
    func helperDoublesQuotes() {
        #expect("a\")--".quotedSQLIdentifier == #""a"")--""#)
        #expect("it's".quotedSQLString == "'it''s'")
    }

    @Test("a table named a\")-- is read as itself, not as table a, and syncs everywhere")
    func quotedNamesWorkEverywhere() throws {
        let a = try Self.replica("a")
        let b = try Self.replica("b")
        let tracked = try a.trackedTables()
        #expect(tracked.map(\.name) == ["a\")--"])
        #expect(tracked.first?.primaryKey == "k\"ey")
        #expect(tracked.first?.columns == ["ti\"tle", "it's", "x\")--"])

        let insert = #"INSERT INTO "a"")--" ("k""ey", "ti""tle", "it's", "x"")--") VALUES (?, ?, ?, ?)"#
        try a.writer.write { db in
            try db.execute(sql: insert, arguments: ["r1", "red fox", 1, Data([1])])
            try db.execute(sql: insert, arguments: ["r2", "blue whale", 2, Data([2])])
        }
        try b.writer.write { db in try db.execute(sql: insert, arguments: ["r3", "grey seal", 3, nil]) }
        try a.sync(through: transport)
        try b.sync(through: transport)
        try a.writer.write { db in
            try db.execute(sql: #"UPDATE "a"")--" SET "ti""tle" = 'red panda' WHERE "k""ey" = 'r1'"#)
        }
        try b.writer.write { db in try db.execute(sql: #"DELETE FROM "a"")--" WHERE "k""ey" = 'r2'"#) }
        try a.sync(through: transport)
        try b.sync(through: transport)
        try a.sync(through: transport)
        #expect(try a.reconcile() == 0)

        for replica in [a, b] {
            let rows = try replica.writer.read { db in
                try String.fetchAll(db, sql: #"SELECT "k""ey" || ':' || "ti""tle" FROM "a"")--" ORDER BY 1"#)
            }
            #expect(rows == ["r1:red panda", "r3:grey seal"], "\(replica.site)")
            // Merges refresh the index for the rows they bring; local writes are the app's to
            // index, so rebuild it from the rows, as an app does once.
            try replica.rebuildDerivedIndexes()
            let found = try replica.writer.read { db in
                try String.fetchAll(db, sql: #"SELECT "k""ey" FROM "fts ""odd""" WHERE "fts ""odd""" MATCH 'panda'"#)
            }
            #expect(found == ["r1"], "\(replica.site)")
            #expect(try replica.verifyDerivedIndexes() == ["fts \"odd\"": 0])
            #expect(try replica.compactTombstones() >= 0)
        }
        try a.untrack("a\")--")
        #expect(try a.trackedTables().isEmpty)
    }
}
