import Foundation
import Testing
import VecSyncTestSupport

@testable import VecSyncCore

@Suite("VectorIndex: a derived vec0 index kept current, verified and rebuilt")
struct VectorIndexTests {
    static let dims = 8

    func rows(_ db: Database) throws -> [(String, Vector)] {
        try Row.fetchAll(db, sql: "SELECT id, embedding FROM items WHERE embedding IS NOT NULL").compactMap { row in
            guard let id: String = row["id"], let v: Vector = row["embedding"] else { return nil }
            return (id, v)
        }
    }

    @Test func createBackfillsExistingRowsAndSearchIsExact() throws {
        try HostFixtures.withItems(dimensions: Self.dims, count: 300, seed: 0x5EED_0101) { db, index, rng in
            try index.create(db)
            let all = try rows(db)
            for _ in 0..<20 {
                let q = Vector.random(dimensions: Self.dims, using: &rng)
                let got = try index.search(db, near: q, limit: 10, as: String.self)
                #expect(HostFixtures.isExactTopK(got, rows: all, query: q, metric: .cosine, k: 10), "seed \(rng.seed)")
                #expect(got.map(\.distance) == got.map(\.distance).sorted())
            }
            #expect(try index.verify(db).isConsistent)
        }
    }

    @Test func filteredSearchReturnsKRowsWhenFilterMatchesFew() throws {
        try HostFixtures.withItems(dimensions: Self.dims, count: 600, seed: 0x5EED_0102) { db, index, rng in
            try index.create(db)
            // 'blue' rows with score >= 590: 590, 593, 596, 599 → only 4 match.
            let q = Vector.random(dimensions: Self.dims, using: &rng)
            let few = try index.search(
                db, near: q, limit: 10,
                where: [.equal("category", "blue"), .greaterOrEqual("score", 590)], as: String.self)
            #expect(Set(few.map(\.key)) == ["item-0590", "item-0593", "item-0596", "item-0599"])
            // 200 'green' rows match: exactly 10 come back, the 10 nearest greens.
            let greens = try Row.fetchAll(db, sql: "SELECT id, embedding FROM items WHERE category = 'green'")
                .compactMap { row -> (String, Vector)? in
                    guard let id: String = row["id"], let v: Vector = row["embedding"] else { return nil }
                    return (id, v)
                }
            let got = try index.search(db, near: q, limit: 10, where: [.equal("category", "green")], as: String.self)
            #expect(got.count == 10)
            #expect(HostFixtures.isExactTopK(got, rows: greens, query: q, metric: .cosine, k: 10), "seed \(rng.seed)")
        }
    }

    @Test func triggersFollowInsertUpdateUpsertReplaceAndDelete() throws {
        try HostFixtures.withItems(dimensions: Self.dims, count: 20, seed: 0x5EED_0103) { db, index, rng in
            try index.create(db)
            let target = Vector.random(dimensions: Self.dims, using: &rng)
            try db.execute(
                sql: "INSERT INTO items (id, embedding, category, score) VALUES ('new', ?, 'red', 1)",
                arguments: [target])
            #expect(try index.search(db, near: target, limit: 1, as: String.self).first?.key == "new")

            try db.execute(
                sql: "UPDATE items SET embedding = ? WHERE id = 'item-0003'", arguments: [target.normalized()])
            try db.execute(
                sql: "UPDATE items SET embedding = ? WHERE id = 'new'",
                arguments: [Vector.random(dimensions: Self.dims, using: &rng)])
            #expect(try index.search(db, near: target, limit: 1, as: String.self).first?.key == "item-0003")

            try db.execute(
                sql: """
                    INSERT INTO items (id, embedding, category, score) VALUES ('item-0004', ?, 'green', 7)
                    ON CONFLICT(id) DO UPDATE SET embedding = excluded.embedding, category = excluded.category
                    """, arguments: [target])
            try db.execute(
                sql: "INSERT OR REPLACE INTO items (id, embedding, category, score) VALUES ('item-0005', ?, 'blue', 9)",
                arguments: [target])
            try db.execute(sql: "UPDATE items SET embedding = NULL WHERE id = 'item-0003'")
            try db.execute(sql: "DELETE FROM items WHERE id = 'item-0006'")
            try db.execute(sql: "UPDATE items SET category = 'blue' WHERE id = 'item-0007'")

            let report = try index.verify(db)
            #expect(report.isConsistent, "\(report)")
            #expect(report.indexedRows == 19)  // 20 + new − item-0003 (NULL) − item-0006
            let top = try index.search(
                db, near: target, limit: 2, where: [.equal("category", "green")], as: String.self)
            #expect(top.first?.key == "item-0004")
        }
    }

    /// SQLite deletes the row a REPLACE replaces without firing delete triggers (unless
    /// `PRAGMA recursive_triggers` is on, which it is not here): the index must still follow.
    @Test func replacingRowsKeepsTheIndexInStepWithoutRecursiveTriggers() throws {
        var rng = ExtensionRandom(defaultSeed: 0x5EED_0106)
        let db = try HostFixtures.database()
        try db.write { db in
            #expect(try Bool.fetchOne(db, sql: "PRAGMA recursive_triggers") == false)
            let index = try HostFixtures.itemsTable(db, dimensions: Self.dims, count: 10, using: &rng)
            try index.create(db)
            // A row replaced by one without an embedding leaves the index.
            try db.execute(
                sql:
                    "INSERT OR REPLACE INTO items (id, embedding, category, score) VALUES ('item-0001', NULL, 'red', 1)"
            )
            // A row whose key moves onto another's replaces it: one index row for that key.
            try db.execute(sql: "UPDATE OR REPLACE items SET id = 'item-0003' WHERE id = 'item-0002'")
            // An ignored insert and an upsert that updates leave the index row where it is.
            try db.execute(
                sql: "INSERT OR IGNORE INTO items (id, embedding, category, score) VALUES ('item-0004', NULL, 'red', 1)"
            )
            try db.execute(
                sql: """
                    INSERT INTO items (id, embedding, category, score) VALUES ('item-0005', NULL, 'red', 1)
                    ON CONFLICT(id) DO UPDATE SET score = excluded.score
                    """)
            let report = try index.verify(db)
            #expect(report.isConsistent, "\(report)")
            #expect(report.indexedRows == 8)  // 10 − item-0001 (NULL) − item-0002 (moved onto item-0003)
            let moved = try Vector.fetchOne(db, sql: "SELECT embedding FROM items WHERE id = 'item-0003'")
            let found = try index.search(db, near: try #require(moved), limit: 1, as: String.self)
            #expect(found.first?.key == "item-0003")
        }
    }

    @Test func triggersAreSilentWhileMergingAndRefreshUpdatesExactlyTheGivenRows() throws {
        try HostFixtures.withItems(dimensions: Self.dims, count: 30, seed: 0x5EED_0104) { db, index, rng in
            try index.create(db)
            try HostFixtures.whileMerging(db) {
                try db.execute(
                    sql: "INSERT INTO items (id, embedding, category, score) VALUES ('merged', ?, 'red', 0)",
                    arguments: [Vector.random(dimensions: Self.dims, using: &rng)])
                try db.execute(sql: "UPDATE items SET category = 'green' WHERE id = 'item-0000'")
                try db.execute(sql: "DELETE FROM items WHERE id = 'item-0001'")
            }

            let before = try index.verify(db)
            #expect(before.missing == ["merged".databaseValue])
            #expect(before.stale == ["item-0000".databaseValue])
            #expect(before.extra == ["item-0001".databaseValue])

            try index.refresh(db, keys: ["merged", "item-0000", "item-0001"])
            let after = try index.verify(db)
            #expect(after.isConsistent, "\(after)")
        }
    }

    @Test func refreshFindsTextKeysJSONMustEscapeAndMoreKeysThanOneStatementTakes() throws {
        try HostFixtures.withIndexedTable("notes", keyType: "TEXT", seed: 0x5EED_0109) { db, index, rng in
            let awkward = ["quote \"q\"", "back\\slash", "line\nbreak", "tab\t", "bell\u{7}", "é 🧭", "a/b", "", "123"]
            let keys = awkward + (0...VectorIndex.refreshBatchKeys).map { "note-\($0)" }
            try HostFixtures.whileMerging(db) {
                for key in keys {
                    try db.execute(
                        sql: "INSERT INTO notes (id, embedding) VALUES (?, ?)",
                        arguments: [key, Vector.random(dimensions: 4, using: &rng)])
                }
            }
            #expect(try index.verify(db).missing.count == keys.count)

            try index.refresh(db, keys: keys)
            let report = try index.verify(db)
            #expect(report.isConsistent, "\(report)")
            #expect(report.indexedRows == keys.count)
        }
    }

    @Test func refreshFindsIntegerKeysAtTheEndsOfTheirRangeAndDropsDeletedRows() throws {
        try HostFixtures.withIndexedTable("counts", keyType: "INTEGER", seed: 0x5EED_010A) { db, index, rng in
            let keys: [Int64] = [Int64.min, -1, 0, 1, 1 << 53 + 1, Int64.max]
            for key in keys {
                try db.execute(
                    sql: "INSERT INTO counts (id, embedding) VALUES (?, ?)",
                    arguments: [key, Vector.random(dimensions: 4, using: &rng)])
            }
            try HostFixtures.whileMerging(db) {
                try db.execute(sql: "DELETE FROM counts WHERE id = 0")
                try db.execute(
                    sql: "UPDATE counts SET embedding = ? WHERE id = ?",
                    arguments: [Vector.random(dimensions: 4, using: &rng), Int64.max])
            }
            let before = try index.verify(db)
            #expect(before.extra == [0.databaseValue])
            #expect(before.stale == [Int64.max.databaseValue])

            try index.refresh(db, keys: keys)
            let after = try index.verify(db)
            #expect(after.isConsistent, "\(after)")
            #expect(after.indexedRows == keys.count - 1)
        }
    }

    @Test func verifyCatchesATamperedIndex() throws {
        try HostFixtures.withItems(dimensions: Self.dims, count: 40, seed: 0x5EED_0105) { db, index, rng in
            try index.create(db)
            #expect(try index.verify(db).isConsistent)
            // Tamper with the derived table directly, bypassing the triggers.
            try db.execute(sql: "DELETE FROM items_vec WHERE id = 'item-0010'")
            try db.execute(
                sql: "UPDATE items_vec SET embedding = ? WHERE id = 'item-0011'",
                arguments: [Vector.random(dimensions: Self.dims, using: &rng)])
            try db.execute(
                sql: "INSERT INTO items_vec (id, embedding, category, score) VALUES ('ghost', ?, 'red', 0)",
                arguments: [Vector.random(dimensions: Self.dims, using: &rng)])
            // A canonical row that is not a vector, written while the index triggers are
            // silent (as during a merge): the extension refuses it through the triggers.
            try HostFixtures.whileMerging(db) {
                try db.execute(sql: "UPDATE items SET embedding = x'00' WHERE id = 'item-0012'")
            }
            let report = try index.verify(db)
            #expect(!report.isConsistent)
            #expect(report.missing == ["item-0010".databaseValue])
            #expect(report.stale == ["item-0011".databaseValue])
            #expect(Set(report.extra) == ["ghost".databaseValue, "item-0012".databaseValue])
            #expect(report.invalid == ["item-0012".databaseValue])
        }
    }

    @Test func rebuildAfterDroppingTheIndexGivesIdenticalResults() throws {
        try HostFixtures.withItems(dimensions: Self.dims, count: 200, seed: 0x5EED_0106) { db, index, rng in
            try index.create(db)
            let queries = (0..<10).map { _ in Vector.random(dimensions: Self.dims, using: &rng) }
            let before = try queries.map {
                try index.search(db, near: $0, limit: 7, where: [.notEqual("category", "red")])
            }
            try db.execute(sql: "DROP TABLE items_vec")
            let dropped = try index.verify(db)
            #expect(!dropped.exists && dropped.missing.count == 200)
            try index.rebuild(db)
            let after = try queries.map {
                try index.search(db, near: $0, limit: 7, where: [.notEqual("category", "red")])
            }
            #expect(before == after, "seed \(rng.seed)")
            #expect(try index.verify(db).isConsistent)
        }
    }

    @Test func createRegistersTheIndexAndIsIdempotent() throws {
        try HostFixtures.withItems(dimensions: Self.dims, count: 5, seed: 0x5EED_0107) { db, index, rng in
            try index.create(db)
            try index.create(db)
            #expect(try VectorIndex.registered(in: db) == [index])
            #expect(try VectorIndex.registered(forTable: "items", in: db) == [index])
            #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM items_vec") == 5)
            try index.drop(db)
            #expect(try VectorIndex.registered(in: db).isEmpty)
            #expect(try !index.exists(db))
        }
    }

    @Test func createRefusesAnExistingIndexOfAnotherDefinitionAndRebuildReplacesIt() throws {
        try HostFixtures.withItems(dimensions: Self.dims, count: 10, seed: 0x5EED_010A) { db, index, rng in
            try index.create(db)
            var l2 = index
            l2.metric = .l2
            #expect(throws: VecSyncError.self) { try l2.create(db) }
            try l2.rebuild(db)
            #expect(try VectorIndex.registered(named: "items_vec", in: db)?.metric == .l2)
            #expect(try l2.verify(db).isConsistent)
        }
    }

    @Test func searchRefusesAWrongDimensionAndAnUnknownFilterColumn() throws {
        try HostFixtures.withItems(dimensions: Self.dims, count: 5, seed: 0x5EED_0108) { db, index, rng in
            try index.create(db)
            #expect(throws: VecSyncError.dimensionMismatch(expected: Self.dims, got: 3)) {
                try index.search(db, near: [1, 2, 3], limit: 1)
            }
            #expect(throws: VecSyncError.self) {
                try index.search(
                    db, near: Vector(repeating: 1, dimensions: Self.dims), limit: 1, where: [.equal("nope", 1)])
            }
            #expect(throws: VecSyncError.invalidArgument(name: "k", value: "0", reason: "must be at least 1")) {
                try index.search(db, near: Vector(repeating: 1, dimensions: Self.dims), limit: 0)
            }
        }
    }

    @Test func createOnAMissingTableOrColumnSaysWhich() throws {
        let db = try HostFixtures.database()
        try db.write { db in
            #expect(throws: VecSyncError.notFound(kind: "table", key: "nowhere")) {
                try VectorIndex(table: "nowhere", dimensions: 4).create(db)
            }
            try db.execute(sql: "CREATE TABLE t (id TEXT PRIMARY KEY, v BLOB)")
            #expect(throws: VecSyncError.schemaMismatch(table: "t", reason: "no column embedding")) {
                try VectorIndex(table: "t", dimensions: 4).create(db)
            }
        }
    }

    @Test func integerKeysAndOddIdentifiersWork() throws {
        var rng = ExtensionRandom(defaultSeed: 0x5EED_0109)
        let db = try HostFixtures.database()
        try db.write { db in
            try db.execute(
                sql: #"CREATE TABLE "my docs" ("doc id" INTEGER PRIMARY KEY, "the vec" F32_BLOB(4), "kind" TEXT)"#)
            var rows: [(Int64, Vector)] = []
            for i in 1...50 {
                let v = Vector.random(dimensions: 4, using: &rng)
                rows.append((Int64(i), v))
                try db.execute(
                    sql: #"INSERT INTO "my docs" VALUES (?, ?, ?)"#,
                    arguments: [i, v, i.isMultiple(of: 2) ? "it's \"even\"" : "odd"])
            }
            let index = VectorIndex(
                table: "my docs", primaryKey: "doc id", embeddingColumn: "the vec", dimensions: 4,
                metric: .l2, name: "my docs vec", metadata: [.init("kind", .text)])
            try index.create(db)
            let q = Vector.random(dimensions: 4, using: &rng)
            let got = try index.search(db, near: q, limit: 5, as: Int64.self)
            #expect(HostFixtures.isExactTopK(got, rows: rows, query: q, metric: .l2, k: 5), "seed \(rng.seed)")
            let even = try index.search(db, near: q, limit: 5, where: [.equal("kind", "it's \"even\"")], as: Int64.self)
            #expect(even.count == 5 && even.allSatisfy { $0.key % 2 == 0 })
            #expect(try index.verify(db).isConsistent)
        }
    }

    @Test func anIvfDeclarationIsRegisteredAndSurvivesRebuild() throws {
        try HostFixtures.withItems(dimensions: Self.dims, count: 300, seed: 0x5EED_0103) { db, plain, _ in
            // A registry written before ivf indexes: no ivf column, and its rows have none.
            try db.execute(
                sql: """
                    CREATE TABLE vecsync_vector_indexes(
                      name TEXT PRIMARY KEY, source_table TEXT NOT NULL, primary_key TEXT NOT NULL,
                      embedding_column TEXT NOT NULL, dimensions INTEGER NOT NULL, metric TEXT NOT NULL,
                      metadata TEXT NOT NULL DEFAULT '[]')
                    """)
            try plain.create(db)
            #expect(try VectorIndex.registered(in: db) == [plain])
            var index = plain
            index.name = "items_ivf"
            index.ivf = .init(lists: 4, probes: 2)
            try index.create(db)
            let registered = try VectorIndex.registered(in: db)
            #expect(registered.first { $0.name == plain.name }?.ivf == nil)
            #expect(registered.first { $0.name == "items_ivf" } == index)
            _ = try Int.fetchOne(db, sql: "SELECT vecsync_ivf_retrain('items_ivf')")
            try index.rebuild(db)
            let declaration = try String.fetchOne(db, sql: "SELECT sql FROM sqlite_schema WHERE name = 'items_ivf'")
            #expect(declaration?.contains("indexed by ivf(nlist=4, nprobe=2)") == true, "\(declaration ?? "")")
            #expect(try index.verify(db).isConsistent)
            #expect(try String.fetchOne(db, sql: "SELECT vecsync_ivf_retrain('items_ivf')") == "4")
        }
    }

    @Test func ivfOptionsStatusRetrainRecallAndProbesFromSwift() throws {
        try HostFixtures.withItems(dimensions: Self.dims, count: 300, seed: 0x5EED_0104) { db, plain, rng in
            var lean = plain
            lean.name = "items_lean"
            lean.ivf = .init(lists: 8, probes: 2, quantizer: .binary, oversample: 8, storesCodes: false)
            try lean.create(db)
            let declaration = try String.fetchOne(db, sql: "SELECT sql FROM sqlite_schema WHERE name = 'items_lean'")
            #expect(
                declaration?.contains("indexed by ivf(nlist=8, nprobe=2, quantizer=binary, oversample=8, stored_codes=0)")
                    == true, "\(declaration ?? "")")
            #expect(try VectorIndex.registered(in: db).first { $0.name == "items_lean" } == lean)

            var coded = plain
            coded.name = "items_coded"
            coded.ivf = .init(lists: 8)
            try coded.create(db)

            // 300 rows: under the 4,096 at which an index trains itself.
            #expect(try coded.ivfStatus(db).trained == false)
            #expect(try coded.retrainIVF(db) == 8)
            #expect(try lean.retrainIVF(db, lists: 6) == 6)
            let status = try coded.ivfStatus(db)
            #expect(status.trained && status.lists == 8 && status.rows == 300 && status.listedRows == 300)
            #expect(status.codesStored && status.nprobe == 8 && status.trainedRows == 300)  // the default 10, at most nlist
            #expect(status.listMin <= status.listMax && !status.retrainSuggested && status.rowsWithoutCodes == 0)
            #expect(status.trainedImbalance == status.imbalance)  // nothing written since the training
            // int8 codes: a byte a dimension, then the norm and the scale a row.
            #expect(status.codesInPacks == 300 && status.packBytes == 300 * (Self.dims + 8) && status.stalePackCodes == 0)
            let leanStatus = try db.ivfStatus(table: "items_lean")
            #expect(leanStatus.lists == 6 && !leanStatus.codesStored && leanStatus.nprobe == 2)
            #expect(leanStatus.rowsWithoutCodes == 300)  // stored_codes=0: every row coded when its list is read

            // Every list probed is the exact scan; one list still returns `limit` rows.
            let all = try rows(db)
            for _ in 0..<10 {
                let q = Vector.random(dimensions: Self.dims, using: &rng)
                let exact = try coded.search(db, near: q, limit: 10, probes: 8, as: String.self)
                #expect(HostFixtures.isExactTopK(exact, rows: all, query: q, metric: .cosine, k: 10), "seed \(rng.seed)")
                #expect(try coded.search(db, near: q, limit: 10, probes: 1, as: String.self).count == 10)
                #expect(try lean.search(db, near: q, limit: 10, probes: 1).count == 10)
            }
            #expect(try coded.ivfRecall(db, queries: 20, k: 5, probes: 8) == 1.0)
            let recall = try #require(try lean.ivfRecall(db, queries: 20, k: 5))
            #expect(recall > 0 && recall <= 1)

            // No ivf index: refused before any SQL, and by the extension for a bare name.
            #expect(throws: VecSyncError.self) { try plain.search(db, near: Vector(repeating: 1, dimensions: Self.dims), limit: 3, probes: 2) }
            #expect(throws: VecSyncError.self) { try plain.retrainIVF(db) }
            try plain.create(db)
            do {
                _ = try db.ivfStatus(table: plain.name)
                Issue.record("a status of a table without an ivf index")
            } catch VecSyncError.sqlite(let message, _, _) {
                #expect(message.contains("has no ivf index"), "\(message)")
            }
            // Options the extension refuses name themselves.
            var bad = plain
            bad.name = "items_bad"
            bad.ivf = .init(quantizer: .float32, oversample: 4)
            do {
                try bad.create(db)
                Issue.record("oversample with quantizer=none was accepted")
            } catch VecSyncError.sqlite(let message, _, _) {
                #expect(message.contains("oversample"), "\(message)")
            }
        }
    }
}
