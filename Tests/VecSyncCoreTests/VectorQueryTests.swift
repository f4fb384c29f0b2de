import Foundation
import Testing

@testable import VecSyncCore

@Suite("Typed vec0 and vector_top_k queries")
struct VectorQueryTests {
    @Test func vec0SearchReturnsKeysNearestFirstWithDistances() throws {
        let db = try HostFixtures.database()
        try db.write { db in
            try db.execute(
                sql:
                    "CREATE VIRTUAL TABLE v USING vec0(key text primary key, embedding float[2] distance_metric=l2, tag text)"
            )
            for (key, x, tag) in [("a", 0.0, "x"), ("b", 1.0, "y"), ("c", 3.0, "x"), ("d", 6.0, "y")]
                as [(String, Float, String)]
            {
                try db.execute(
                    sql: "INSERT INTO v (key, embedding, tag) VALUES (?, ?, ?)", arguments: [key, Vector([x, 0]), tag])
            }
            let hits = try db.vec0Search(table: "v", keyColumn: "key", near: [2.5, 0], k: 3, as: String.self)
            #expect(
                hits == [
                    VectorMatch(key: "c", distance: 0.5), VectorMatch(key: "b", distance: 1.5),
                    VectorMatch(key: "a", distance: 2.5),
                ])
            let tagged = try db.vec0Search(
                table: "v", keyColumn: "key", near: [2.5, 0], k: 3, where: [.equal("tag", "y")], as: String.self)
            #expect(tagged.map(\.key) == ["b", "d"])
        }
    }

    @Test func valuesAreBoundNeverSpliced() throws {
        let db = try HostFixtures.database()
        try db.write { db in
            try db.execute(sql: "CREATE VIRTUAL TABLE v USING vec0(key text primary key, embedding float[2], tag text)")
            let evil = "x' OR 1=1; DROP TABLE v; --"
            try db.execute(
                sql: "INSERT INTO v (key, embedding, tag) VALUES (?, ?, ?)", arguments: [evil, Vector([1, 0]), evil])
            try db.execute(
                sql: "INSERT INTO v (key, embedding, tag) VALUES ('plain', ?, 'plain')", arguments: [Vector([1, 0])])
            let hits = try db.vec0Search(
                table: "v", keyColumn: "key", near: [1, 0], k: 5, where: [.equal("tag", evil)], as: String.self)
            #expect(hits.map(\.key) == [evil])
            #expect(try db.tableExists("v"))
        }
    }

    @Test func missingVec0TableIsAnErrorWithTheSQL() throws {
        let db = try HostFixtures.database()
        try db.read { (db: Database) throws in
            _ = #expect {
                try db.vec0Search(table: "absent", keyColumn: "key", near: [1], k: 1)
            } throws: { error in
                guard case .sqlite(let message, _, let sql)? = error as? VecSyncError else { return false }
                return message.contains("absent") && sql?.contains("\"absent\"") == true
            }
        }
    }

    @Test func vectorTopKReturnsRowidsNearestFirst() throws {
        let db = try HostFixtures.database()
        try db.write { db in
            try db.execute(
                sql: """
                    CREATE TABLE docs (id TEXT PRIMARY KEY, embedding F32_BLOB(2));
                    CREATE INDEX docs_idx ON docs(libsql_vector_idx(embedding, 'metric=cosine'));
                    """)
            for (id, v) in [("east", Vector([1, 0])), ("north", Vector([0, 1])), ("northeast", Vector([1, 1]))] {
                try db.execute(sql: "INSERT INTO docs (id, embedding) VALUES (?, ?)", arguments: [id, v])
            }
            let hits = try db.vectorTopK(index: "docs_idx", near: [1, 0.1], k: 2)
            let ids = try hits.map {
                try String.fetchOne(db, sql: "SELECT id FROM docs WHERE rowid = ?", arguments: [$0.key])
            }
            #expect(ids == ["east", "northeast"])
            #expect(hits[0].distance < hits[1].distance)
        }
    }
}
