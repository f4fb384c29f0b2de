import Foundation
import Testing
import VecSyncTestSupport

/// libSQL's vector SQL as libSQL users meet it: the compact vector types, partial indexes,
/// the checks `CREATE INDEX … libsql_vector_idx` makes (with libSQL's messages), each index's
/// own size, indexes of attached databases, `DROP INDEX`, and indexes made by the previous
/// version.
@Suite("libSQL vector index compatibility")
struct LibSQLVectorIndexCompatibilityTests {
    /// A partial index over the rows of type 0 (as the setup of libsql-vector-index.cases).
    static let partial = """
        create table docs(id integer primary key, type int, e F32_BLOB(4));
        create index docs_idx on docs(libsql_vector_idx(e)) where type = 0;
        insert into docs values (1, 0, vector32('[1,0,0,0]')), (2, 1, vector32('[0.9,0.1,0,0]')), (3, 0, vector32('[0,1,0,0]'));

        """

    @Test(
        "each of two vector indexes of a table refuses a vector of another size",
        arguments: SQLPath.allCases)
    func eachIndexRefusesAnotherSize(path: SQLPath) throws {
        let sql = """
            create table t(id integer primary key, a F32_BLOB(2), b F32_BLOB(3));
            create index ia on t(libsql_vector_idx(a));
            create index ib on t(libsql_vector_idx(b));
            select 1 from vector_top_k('ia', '[1,0]', 1);
            select 1 from vector_top_k('ib', '[1,0,0]', 1);
            insert into t values (1, '[1,0]', '[0,1,0]');
            insert into t values (2, '[1,0,0]', '[0,1,0]');
            insert into t values (3, '[1,0]', '[0,1]');
            select 'rows', group_concat(id) from t;
            select 'ia', id from vector_top_k('ia', '[1,0]', 5);
            select 'ib', id from vector_top_k('ib', '[0,1,0]', 5);
            """
        let run = try path.run(sql)
        #expect(run.rows == ["rows|1", "ia|1", "ib|1"], "\(sql)\ngot: \(run)")
        #expect(run.errors.count == 2, "\(sql)\ngot: \(run)")
        #expect(
            run.errors.first?.contains("vector index ia: the vector's size is not the 2 dimensions of t.a") == true,
            "\(run)")
        #expect(
            run.errors.last?.contains("vector index ib: the vector's size is not the 3 dimensions of t.b") == true,
            "\(run)")
    }

    /// Runs `sql` in the `sqlite3` shell on `path` without loading the extension.
    static func plainShell(_ sql: String, path: String) throws -> (stdout: String, stderr: String) {
        let process = Process()
        let out = Pipe()
        let err = Pipe()
        let input = Pipe()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [Shell.shellBinary, "-batch", path]
        process.standardInput = input
        process.standardOutput = out
        process.standardError = err
        try process.run()
        input.fileHandleForWriting.write(Data(sql.utf8))
        try input.fileHandleForWriting.close()
        let stdout = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let stderr = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (stdout, stderr)
    }

    @Test("after DROP INDEX a client without the extension can write the table again")
    func dropIndexLetsAClientWithoutTheExtensionWrite() throws {
        try withTemporaryFile("drop-index", named: "docs.sqlite") { path in
            let setUp = try Shell.run(
                Self.partial + """
                    select id from vector_top_k('docs_idx', vector32('[1,0,0,0]'), 5) where id < 0;
                    """, databasePath: path)
            #expect(setUp.stderr == "", "\(setUp.stderr)")
            // While the index exists SQLite needs libsql_vector_idx() to write the table.
            let before = try Self.plainShell("insert into docs values (7, 1, NULL);", path: path)
            #expect(before.stderr.contains("libsql_vector_idx"), "without the extension, before DROP INDEX: \(before)")
            let drop = try Shell.run("drop index docs_idx;", databasePath: path)
            #expect(drop.stderr == "", "\(drop.stderr)")
            let after = try Self.plainShell(
                """
                insert into docs values (8, 0, x'0000803f');
                update docs set type = 1 where id = 1;
                delete from docs where id = 3;
                select group_concat(id) from docs;
                """, path: path)
            #expect(after.stderr == "", "without the extension, after DROP INDEX: \(after.stderr)")
            #expect(after.stdout == "1,2,8\n", "\(after)")
        }
    }

    /// The schema and search data an index had under the previous version (triggers version
    /// 2, writing the vec0 table directly), as its `.dump`, the triggers written to the schema.
    static let previousVersionDump = """
        PRAGMA foreign_keys=OFF;
        BEGIN TRANSACTION;
        CREATE TABLE docs(id integer primary key, title text, e F32_BLOB(3));
        INSERT INTO docs VALUES(1,'a',X'0000803f0000000000000000');
        INSERT INTO docs VALUES(2,'b',X'000000000000803f00000000');
        INSERT INTO docs VALUES(3,'c',X'00000000000000000000803f');
        PRAGMA writable_schema=ON;
        INSERT INTO sqlite_schema(type,name,tbl_name,rootpage,sql)VALUES('table','vecsync_idx_docs_idx','vecsync_idx_docs_idx',0,'CREATE VIRTUAL TABLE "vecsync_idx_docs_idx" USING vec0(embedding float[3] distance_metric=l2)');
        CREATE TABLE IF NOT EXISTS "vecsync_idx_docs_idx_info"(key TEXT PRIMARY KEY, value);
        INSERT INTO vecsync_idx_docs_idx_info VALUES('format',1);
        INSERT INTO vecsync_idx_docs_idx_info VALUES('chunk_size',1024);
        INSERT INTO vecsync_idx_docs_idx_info VALUES('dimensions',3);
        INSERT INTO vecsync_idx_docs_idx_info VALUES('metric','l2');
        INSERT INTO vecsync_idx_docs_idx_info VALUES('vectors_per_blob',1024);
        INSERT INTO vecsync_idx_docs_idx_info VALUES('uid',5722761904882813665);
        INSERT INTO vecsync_idx_docs_idx_info VALUES('log_from',0);
        INSERT INTO vecsync_idx_docs_idx_info VALUES('generation',1);
        INSERT INTO vecsync_idx_docs_idx_info VALUES('next_slot',3);
        INSERT INTO vecsync_idx_docs_idx_info VALUES('backfilled',2);
        CREATE TABLE IF NOT EXISTS "vecsync_idx_docs_idx_changes"(generation INTEGER NOT NULL, slot INTEGER NOT NULL, rowid INTEGER, PRIMARY KEY(generation, slot)) WITHOUT ROWID;
        INSERT INTO vecsync_idx_docs_idx_changes VALUES(1,0,1);
        INSERT INTO vecsync_idx_docs_idx_changes VALUES(1,1,2);
        INSERT INTO vecsync_idx_docs_idx_changes VALUES(1,2,3);
        CREATE TABLE IF NOT EXISTS "vecsync_idx_docs_idx_vectors"(chunk_id INTEGER PRIMARY KEY, vectors BLOB NOT NULL);
        INSERT INTO vecsync_idx_docs_idx_vectors VALUES(0,(X'0000803F0000000000000000000000000000803F0000000000000000000000000000803F'||zeroblob(12252)));
        CREATE TABLE IF NOT EXISTS "vecsync_idx_docs_idx_free"(slot INTEGER PRIMARY KEY);
        CREATE TABLE IF NOT EXISTS "vecsync_idx_docs_idx_rows"(rowid INTEGER PRIMARY KEY, slot INTEGER NOT NULL);
        INSERT INTO vecsync_idx_docs_idx_rows VALUES(1,0);
        INSERT INTO vecsync_idx_docs_idx_rows VALUES(2,1);
        INSERT INTO vecsync_idx_docs_idx_rows VALUES(3,2);
        CREATE TABLE IF NOT EXISTS "vecsync_idx_docs_idx_pending"(rowid INTEGER PRIMARY KEY);
        CREATE INDEX docs_idx on docs(libsql_vector_idx(e, 'metric=l2'));
        INSERT INTO sqlite_schema(type,name,tbl_name,rootpage,sql)VALUES('trigger','vecsync_idx_docs_idx_bi','docs',0,'CREATE TRIGGER "vecsync_idx_docs_idx_bi" BEFORE INSERT ON "docs" BEGIN  INSERT OR IGNORE INTO "vecsync_idx_docs_idx_pending"(rowid)    SELECT rowid FROM "docs" WHERE rowid=new.rowid; END');
        INSERT INTO sqlite_schema(type,name,tbl_name,rootpage,sql)VALUES('trigger','vecsync_idx_docs_idx_bu','docs',0,'CREATE TRIGGER "vecsync_idx_docs_idx_bu" BEFORE UPDATE ON "docs" BEGIN  INSERT OR IGNORE INTO "vecsync_idx_docs_idx_pending"(rowid)    SELECT rowid FROM "docs" WHERE (rowid=new.rowid) AND rowid<>old.rowid; END');
        INSERT INTO sqlite_schema(type,name,tbl_name,rootpage,sql)VALUES('trigger','vecsync_idx_docs_idx_ai','docs',0,'CREATE TRIGGER "vecsync_idx_docs_idx_ai" AFTER INSERT ON "docs" BEGIN  DELETE FROM "vecsync_idx_docs_idx" WHERE rowid IN (SELECT p.rowid FROM "vecsync_idx_docs_idx_pending" p    WHERE NOT EXISTS (SELECT 1 FROM "docs" t WHERE t.rowid=p.rowid));  DELETE FROM "vecsync_idx_docs_idx_pending";  DELETE FROM "vecsync_idx_docs_idx" WHERE rowid=new.rowid;  INSERT INTO "vecsync_idx_docs_idx"(rowid, embedding)    SELECT new.rowid, new."e" WHERE new."e" IS NOT NULL; END');
        INSERT INTO sqlite_schema(type,name,tbl_name,rootpage,sql)VALUES('trigger','vecsync_idx_docs_idx_au','docs',0,'CREATE TRIGGER "vecsync_idx_docs_idx_au" AFTER UPDATE ON "docs" BEGIN  DELETE FROM "vecsync_idx_docs_idx" WHERE rowid IN (SELECT p.rowid FROM "vecsync_idx_docs_idx_pending" p    WHERE NOT EXISTS (SELECT 1 FROM "docs" t WHERE t.rowid=p.rowid));  DELETE FROM "vecsync_idx_docs_idx_pending";  DELETE FROM "vecsync_idx_docs_idx" WHERE rowid=old.rowid    AND (old.rowid IS NOT new.rowid OR old."e" IS NOT new."e");  INSERT OR REPLACE INTO "vecsync_idx_docs_idx"(rowid, embedding)    SELECT new.rowid, new."e" WHERE new."e" IS NOT NULL    AND (old.rowid IS NOT new.rowid OR old."e" IS NOT new."e"); END');
        INSERT INTO sqlite_schema(type,name,tbl_name,rootpage,sql)VALUES('trigger','vecsync_idx_docs_idx_ad','docs',0,'CREATE TRIGGER "vecsync_idx_docs_idx_ad" AFTER DELETE ON "docs" BEGIN  DELETE FROM "vecsync_idx_docs_idx" WHERE rowid=old.rowid; END');
        PRAGMA writable_schema=OFF;
        COMMIT;
        """

    @Test("an index made by the previous version keeps working: its writes, then a search")
    func indexMadeByThePreviousVersionKeepsWorking() throws {
        try withTemporaryFile("previous-index", named: "docs.sqlite") { path in
            let load = try Shell.run(Self.previousVersionDump, databasePath: path)
            #expect(load.stderr == "", "\(load.stderr)")
            // Writes go through the old triggers first; the search then rebuilds with the new ones.
            let run = try Shell.run(
                """
                insert into docs values (4, 'd', vector32('[0.9,0.1,0]'));
                update docs set e = vector32('[0,0.2,1]') where id = 2;
                delete from docs where id = 3;
                select id, printf('%.4f', distance) from vector_top_k('docs_idx', vector32('[1,0,0]'), 5);
                insert into docs values (5, 'e', vector32('[1,1,1]'));
                select id from vector_top_k('docs_idx', vector32('[1,1,1]'), 1);
                select value from vecsync_idx_docs_idx_info where key = 'backfilled';
                """, databasePath: path)
            #expect(run.stderr == "", "\(run.stderr)")
            #expect(run.stdout == "1|0.0000\n4|0.1414\n2|1.4283\n5\n3\n", "\(run.stdout)")
        }
    }
}
