import Foundation
import Testing
import VecSyncTestSupport

/// A table written by sqlite-vec 0.1.9 answers plain statements as it is, read from a
/// migrated copy: reading never changes the file. Writes wait for
/// `vecsync_migrate_sqlite_vec(table)`, which migrates it in place (every row and value
/// kept); `vecsync_export_sqlite_vec(table)` writes it back in sqlite-vec's format. The files below are sqlite-vec's own layout, written by pip `sqlite-vec` 0.1.9 and
/// rebuilt here table by table with plain SQL (its shadow tables' rows as it wrote them,
/// then the declarations put back in sqlite_schema), so the test needs no sqlite-vec at run
/// time.
@Suite("vec0 on a sqlite-vec database")
struct Vec0SqliteVecMigrationTests {
    /// `docs(doc_id text primary key, e float[2])`.
    static let docs = SqliteVecTable(
        name: "docs", columns: "doc_id text primary key, e float[2], chunk_size=8", slots: [1, 2],
        textKeys: ["alpha", "beta"],
        vectorChunks: ["0000803f000000400000404000008040000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"],
        versionParts: true)

    /// `items(e float[2] distance_metric=cosine, cat text, n integer, f float, b boolean,
    /// +note text, chunk_size=8)`: rows 1, 2 and 4 (3 was deleted), a text longer than 12
    /// bytes, a NULL auxiliary value.
    static let items = SqliteVecTable(
        name: "items",
        columns: "e float[2] distance_metric=cosine, cat text, n integer, f float, b boolean, +note text, chunk_size=8",
        slots: [1, 2, nil, 4],
        vectorChunks: ["0000803f00000000000000000000803f0000000000000000000080bf0000003f0000000000000000000000000000000000000000000000000000000000000000"],
        metadataChunks: [
            "0300000072656400000000000000000004000000626c756500000000000000000000000000000000000000000000000028000000612063617465676f7279206e00000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000",
            "0a00000000000000ecffffffffffffff000000000000000028000000000000000000000000000000000000000000000000000000000000000000000000000000",
            "000000000000e03f000000000000f43f00000000000000000000000000000cc00000000000000000000000000000000000000000000000000000000000000000",
            "01"
        ],
        metadataTexts: [(4, "a category name longer than twelve bytes")], versionParts: true)

    /// The auxiliary column of `items`, and `parts(user_id integer partition key, e
    /// float[2])`, whose chunks carry a partition: as sqlite-vec wrote them.
    static let itemsAuxiliary = """
        CREATE TABLE "items_auxiliary"( rowid integer PRIMARY KEY , value00);
        insert into "items_auxiliary"(rowid, value00) values (1, 'first');
        insert into "items_auxiliary"(rowid, value00) values (2, NULL);
        insert into "items_auxiliary"(rowid, value00) values (4, 'fourth');

        """
    static let parts = """
        CREATE TABLE "parts_chunks"(chunk_id INTEGER PRIMARY KEY AUTOINCREMENT,size INTEGER NOT NULL,sequence_id integer,partition00,validity BLOB NOT NULL, rowids BLOB NOT NULL);
        insert into "parts_chunks"(chunk_id, size, sequence_id, partition00, validity, rowids) values (1, 8, NULL, 5, X'03', X'01000000000000000300000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000');
        insert into "parts_chunks"(chunk_id, size, sequence_id, partition00, validity, rowids) values (2, 8, NULL, 6, X'01', X'02000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000');
        CREATE TABLE "parts_info" (key text primary key, value any);
        insert into "parts_info"(key, value) values ('CREATE_VERSION', 'v0.1.9');
        insert into "parts_info"(key, value) values ('CREATE_VERSION_MAJOR', 0);
        insert into "parts_info"(key, value) values ('CREATE_VERSION_MINOR', 1);
        insert into "parts_info"(key, value) values ('CREATE_VERSION_PATCH', 9);
        CREATE TABLE "parts_rowids"(rowid INTEGER PRIMARY KEY AUTOINCREMENT,id,chunk_id INTEGER,chunk_offset INTEGER);
        insert into "parts_rowids"(rowid, id, chunk_id, chunk_offset) values (1, NULL, 1, 0);
        insert into "parts_rowids"(rowid, id, chunk_id, chunk_offset) values (2, NULL, 2, 0);
        insert into "parts_rowids"(rowid, id, chunk_id, chunk_offset) values (3, NULL, 1, 1);
        CREATE TABLE "parts_vector_chunks00"(rowid PRIMARY KEY,vectors BLOB NOT NULL);
        insert into "parts_vector_chunks00"(rowid, vectors) values (1, X'0000803f000000000000803f0000803f000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000');
        insert into "parts_vector_chunks00"(rowid, vectors) values (2, X'000000000000803f0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000');

        """

    static let partsDeclaration =
        "insert into sqlite_schema values ('table', 'parts', 'parts', 0, 'CREATE VIRTUAL TABLE parts using vec0(user_id integer partition key, e float[2], chunk_size=8)');"

    /// `docs`, `items` and `parts` in one file.
    static let sqliteVecFile =
        docs.shadowTables + itemsAuxiliary + items.shadowTables + parts + "pragma writable_schema = on;\n"
        + [items.declaration, docs.declaration, partsDeclaration].map { $0 + "\n" }.joined()

    /// What sqlite-vec 0.1.9 itself answered on that file.
    static let answers = """
        select rowid, round(distance, 9) from items where e match '[1,0]' and k = 3;
        select rowid, cat, n, f, b, quote(note) from items order by rowid;
        select doc_id, vec_to_json(e) from docs order by doc_id;
        select rowid, distance from parts where e match '[1,0]' and k = 3 and user_id = 5;
        """
    static let expected = [
        "1|0.0", "2|1.0", "4|1.89442718",
        "1|red|10|0.5|1|'first'", "2|blue|-20|1.25|0|NULL",
        "4|a category name longer than twelve bytes|40|-3.5|0|'fourth'",
        "alpha|[1.000000,2.000000]", "beta|[3.000000,4.000000]",
        "1|0.0", "3|1.0",
    ]

    /// sqlite-vec's tables of `items`, and whether ours are there, as rows of one query.
    static let layout = """
        select count(*) from sqlite_schema where name = 'items_rowids';
        select count(*) from sqlite_schema where name = 'items_rows';
        """

    @Test("Plain statements answer as sqlite-vec did and leave the table sqlite-vec's", arguments: SQLPath.allCases)
    func answersThroughPlainStatements(path: SQLPath) throws {
        try path.verify(
            onFileAfter: Self.sqliteVecFile,
            [
                SQLCase("the tables answer as sqlite-vec did", Self.answers + Self.layout, rows: Self.expected + ["1", "0"]),
                SQLCase("the next connection answers the same", Self.answers, rows: Self.expected),
                SQLCase(
                    "a write is refused, naming the migration and the way back",
                    "insert into items(rowid, e, cat, n, f, b, note) values (9, '[1, 0.1]', 'red', 1, 1.0, 1, 'new');",
                    error: [
                        "items", "sqlite-vec's format", "vecsync_migrate_sqlite_vec('items')",
                        "vecsync_export_sqlite_vec('items')",
                    ]
                ),
                SQLCase(
                    "migrated by hand: sqlite-vec's shadow tables are gone, ours are there",
                    """
                    select vecsync_migrate_sqlite_vec('items');
                    select name from sqlite_schema where type = 'table' and name like 'items%' order by name;
                    """,
                    rows: [
                        "items: 3 rows migrated", "items", "items_changes", "items_free", "items_info", "items_rows",
                        "items_vectors",
                    ]
                ),
                SQLCase("migrated, the tables answer the same", Self.answers, rows: Self.expected),
                SQLCase(
                    "a migrated table takes writes",
                    """
                    insert into items(rowid, e, cat, n, f, b, note) values (9, '[1, 0.1]', 'red', 1, 1.0, 1, 'new');
                    select rowid from items where e match '[1, 0]' and k = 2 and cat = 'red';
                    """,
                    rows: ["1", "9"]
                ),
                SQLCase(
                    "a second migration is refused",
                    "select vecsync_migrate_sqlite_vec('items');",
                    error: ["already in this extension's storage"]
                ),
                SQLCase(
                    "exported, the table is sqlite-vec's again, with the row written",
                    "select vecsync_export_sqlite_vec('items');\n" + Self.layout
                        + "select rowid, cat, quote(note) from items where e match '[1, 0]' and k = 2 and cat = 'red';",
                    rows: ["items: 4 rows exported", "1", "0", "1|red|'first'", "9|red|'new'"]
                ),
                SQLCase(
                    "exported, the tables answer as before, with the row written",
                    Self.answers,
                    rows: [
                        "1|0.0", "9|0.004962805", "2|1.0", "1|red|10|0.5|1|'first'", "2|blue|-20|1.25|0|NULL",
                        "4|a category name longer than twelve bytes|40|-3.5|0|'fourth'", "9|red|1|1.0|1|'new'",
                        "alpha|[1.000000,2.000000]", "beta|[3.000000,4.000000]", "1|0.0", "3|1.0",
                    ]),
                SQLCase(
                    "a second export is refused",
                    "select vecsync_export_sqlite_vec('items');",
                    error: ["vecsync_export_sqlite_vec", "in sqlite-vec's format already"]
                ),
            ])
    }

    @Test("Writes wait for the migration, then the table takes them", arguments: SQLPath.allCases)
    func writesWaitForTheMigration(path: SQLPath) throws {
        let writes = """
            insert into items(rowid, e, cat, n, f, b, note) values (9, '[1, 0.1]', 'red', 1, 1.0, 1, 'new');
            update docs set e = '[5, 6]' where doc_id = 'beta';
            delete from parts where rowid = 3;
            """
        // The three tables as the writes leave them, read back after each step.
        let readBack = """
            select rowid, cat, quote(note) from items order by rowid;
            select doc_id, vec_to_json(e) from docs order by doc_id;
            select rowid, user_id from parts order by rowid;
            """
        let written = [
            "1|red|'first'", "2|blue|NULL", "4|a category name longer than twelve bytes|'fourth'",
            "9|red|'new'", "alpha|[1.000000,2.000000]", "beta|[5.000000,6.000000]", "1|5", "2|6",
        ]
        try path.verify(
            onFileAfter: Self.sqliteVecFile,
            [
                SQLCase("an insert first is refused", "insert into items(rowid, e) values (9, '[1, 0.1]');", error: ["sqlite-vec's format"]),
                SQLCase("an update first is refused", "update docs set e = '[5, 6]' where doc_id = 'beta';", error: ["sqlite-vec's format"]),
                SQLCase("a delete first is refused", "delete from parts where rowid = 3;", error: ["sqlite-vec's format"]),
                SQLCase("nothing was written", Self.answers + Self.layout, rows: Self.expected + ["1", "0"]),
                SQLCase(
                    "migrated, an insert, an update and a delete",
                    """
                    select vecsync_migrate_sqlite_vec('items'), vecsync_migrate_sqlite_vec('docs'), vecsync_migrate_sqlite_vec('parts');
                    """ + writes + readBack,
                    rows: ["items: 3 rows migrated|docs: 2 rows migrated|parts: 3 rows migrated"] + written
                ),
                SQLCase(
                    "exported, every table reads back the same, partitions included",
                    """
                    select vecsync_export_sqlite_vec('items'), vecsync_export_sqlite_vec('docs'), vecsync_export_sqlite_vec('parts');
                    """ + readBack + """
                    select rowid from parts where e match '[1, 0]' and k = 3 and user_id = 6;
                    select count(*) from sqlite_schema where name in ('items_rows', 'docs_rows', 'parts_rows');
                    """,
                    rows: ["items: 4 rows exported|docs: 2 rows exported|parts: 2 rows exported"] + written + ["2", "0"]
                ),
            ])
    }

    @Test(
        "A migration inside a transaction that rolls back leaves the file as it was",
        arguments: SQLPath.allCases)
    func migrationRollsBackWithItsTransaction(path: SQLPath) throws {
        try path.verify(
            onFileAfter: Self.sqliteVecFile,
            [
                SQLCase(
                    "begin, migrate, read, roll back",
                    """
                    begin;
                    select vecsync_migrate_sqlite_vec('items');
                    select count(*) from items;
                    select count(*) from sqlite_schema where name = 'items_rows';
                    rollback;
                    """ + Self.layout,
                    rows: ["items: 3 rows migrated", "3", "1", "1", "0"]
                ),
                SQLCase("the file still answers as sqlite-vec did", Self.answers, rows: Self.expected),
            ])
    }

    @Test(
        "A connection that opened the file read-only reads the table as it is, and the file is unchanged",
        arguments: SQLPath.allCases)
    func readOnlyConnectionReadsACopy(path: SQLPath) throws {
        try withTemporaryFile("migrate", named: "sv.db") { file in
            _ = try path.run(Self.sqliteVecFile, databasePath: file)
            let before = try Data(contentsOf: URL(fileURLWithPath: file))
            SQLCase(
                "read-only, the tables answer as sqlite-vec did", Self.answers + Self.layout,
                rows: Self.expected + ["1", "0"]
            )
            .verify(path, databasePath: file, readOnly: true)
            SQLCase(
                "filters and scans of the copy",
                """
                select rowid from items where e match '[0, 1]' and k = 3 and cat = 'blue';
                select count(*), sum(n) from items;
                select rowid from items where rowid = 4;
                select doc_id from docs where doc_id = 'beta';
                """,
                rows: ["2", "3|30", "4", "beta"]
            )
            .verify(path, databasePath: file, readOnly: true)
            SQLCase(
                "a write is refused",
                "insert into items(rowid, e) values (9, '[1, 1]');",
                error: ["readonly"]
            )
            .verify(path, databasePath: file, readOnly: true)
            SQLCase(
                "file:…?mode=ro reads it too",
                Self.answers,
                rows: Self.expected
            )
            .verify(path, databasePath: "file:\(file)?mode=ro")
            #expect(try Data(contentsOf: URL(fileURLWithPath: file)) == before, "the file changed")
            SQLCase(
                "a connection that can write reads it the same",
                Self.answers + "select rowid from items where e match '[0, 1]' and k = 3 and cat = 'blue';",
                rows: Self.expected + ["2"]
            )
            .verify(path, databasePath: file)
            #expect(
                try Data(contentsOf: URL(fileURLWithPath: file)) == before,
                "reads on a connection that can write changed the file")
            SQLCase(
                "under query_only the migration is refused and nothing changes",
                "pragma query_only = 1;\nselect vecsync_migrate_sqlite_vec('items');",
                error: ["vecsync_migrate_sqlite_vec"]
            )
            .verify(path, databasePath: file)
            SQLCase(
                "a write before the migration is refused, saying why",
                "insert into items(rowid, e) values (9, '[1, 1]');",
                error: ["items", "sqlite-vec's format", "vecsync_migrate_sqlite_vec('items')"]
            )
            .verify(path, databasePath: file)
            SQLCase(
                "the explicit migration then writes the file",
                """
                select vecsync_migrate_sqlite_vec('items');
                insert into items(rowid, e) values (9, '[1, 1]');
                select count(*) from items;
                """ + Self.layout,
                rows: ["items: 3 rows migrated", "4", "0", "1"]
            )
            .verify(path, databasePath: file)
        }
    }

    /// `w(e float64[2] distance_metric=cosine, chunk_size=8)` as pip `sqlite-vec` 0.1.9 wrote
    /// it: a float64[N] column is a float32 one, 4 bytes an element.
    static let sqliteVecFloat64File = SqliteVecTable.file([
        SqliteVecTable(
            name: "w", columns: "e float64[2] distance_metric=cosine, chunk_size=8", slots: [1, 2],
            vectorChunks: ["0000803F00000000000000000000803F000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"])
    ])

    @Test("A float64[N] table sqlite-vec wrote reads as float32, as sqlite-vec reads it", arguments: SQLPath.allCases)
    func float64TableReads(path: SQLPath) throws {
        try path.verify(
            onFileAfter: Self.sqliteVecFloat64File,
            [
                SQLCase(
                    "read-only, from a copy",
                    "select rowid, distance, vec_to_json(e) from w where e match '[0, 1]' and k = 2;",
                    rows: ["2|0.0|[0.000000,1.000000]", "1|1.0|[1.000000,0.000000]"]
                ).readingOnly,
                SQLCase(
                    "migrated",
                    """
                    select vecsync_migrate_sqlite_vec('w');
                    select rowid, distance from w where e match '[0, 1]' and k = 1;
                    select hex(e) from w where rowid = 1;
                    """,
                    rows: ["w: 2 rows migrated", "2|0.0", "0000803F00000000"]
                ),
            ])
    }

    /// `bytes8(e int8[4] distance_metric=l1, cat text, chunk_size=8)` with rows 1, 2 and 4 (3
    /// was deleted: sqlite-vec zeroed its bytes) and `signs(id text primary key, e bit[16],
    /// chunk_size=8)`, as pip `sqlite-vec` 0.1.9 wrote them: a slot of an int8[N] column is N
    /// bytes of its vector chunk, a bit[N] slot N/8.
    static let sqliteVecTypedFile = SqliteVecTable.file([
        SqliteVecTable(
            name: "bytes8", columns: "e int8[4] distance_metric=l1, cat text, chunk_size=8", slots: [1, 2, nil, 4],
            vectorChunks: ["01fe037f8000050500000000000100ff00000000000000000000000000000000"],
            metadataChunks: [
                "0100000061000000000000000000000001000000620000000000000000000000000000000000000000000000000000000100000061000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
            ],
            metadataTexts: []),
        SqliteVecTable(
            name: "signs", columns: "id text primary key, e bit[16], chunk_size=8", slots: [1, 2, 3],
            textKeys: ["x", "y", "z"], vectorChunks: ["0f00ffff550f00000000000000000000"]),
    ])

    @Test(
        "int8[N] and bit[N] tables come over with their bytes, and answer as sqlite-vec did",
        arguments: SQLPath.allCases)
    func migratesTypedColumns(path: SQLPath) throws {
        // sqlite-vec 0.1.9's answers on the file, read from a copy (read-only, then on a
        // connection that can write), then migrated and exported.
        let answers = SQLCase(
            "the tables answer as sqlite-vec did",
            """
            select rowid, distance from bytes8 where e match vec_int8('[0, 0, 4, 4]') and k = 3;
            select rowid, distance from bytes8 where e match vec_int8('[0, 0, 4, 4]') and k = 3 and cat = 'a';
            select rowid, hex(e), vec_type(e), cat from bytes8 order by rowid;
            select id, distance from signs where e match vec_bit(x'0000') and k = 3;
            select id, hex(e), vec_type(e) from signs order by id;
            """,
            rows: [
                "4|10.0", "1|127.0", "2|130.0", "4|10.0", "1|127.0",
                "1|01FE037F|int8|a", "2|80000505|int8|b", "4|000100FF|int8|a",
                "x|4.0", "z|8.0", "y|16.0", "x|0F00|bit", "y|FFFF|bit", "z|550F|bit",
            ])
        try path.verify(
            onFileAfter: Self.sqliteVecTypedFile,
            [
                answers.readingOnly,
                answers,
                SQLCase(
                    "a migrated int8 table takes writes",
                    """
                    select vecsync_migrate_sqlite_vec('bytes8'), vecsync_migrate_sqlite_vec('signs');
                    insert into bytes8(rowid, e, cat) values (9, vec_int8('[0, 0, 4, 5]'), 'a');
                    select rowid, distance from bytes8 where e match vec_int8('[0, 0, 4, 4]') and k = 2;
                    """,
                    rows: ["bytes8: 3 rows migrated|signs: 3 rows migrated", "9|1.0", "4|10.0"]),
                SQLCase(
                    "exported, int8 and bit tables read back their bytes",
                    """
                    select vecsync_export_sqlite_vec('bytes8'), vecsync_export_sqlite_vec('signs');
                    select rowid, distance from bytes8 where e match vec_int8('[0, 0, 4, 4]') and k = 2 and cat = 'a';
                    select id, hex(e), vec_type(e) from signs order by id;
                    """,
                    rows: [
                        "bytes8: 4 rows exported|signs: 3 rows exported", "9|1.0", "4|10.0", "x|0F00|bit",
                        "y|FFFF|bit", "z|550F|bit",
                    ]),
            ])
    }

    /// `multi(a float[2], tag text, b float[2] distance_metric=cosine, c int8[2]
    /// distance_metric=l1, d bit[8], chunk_size=8)` with rows 1, 2 and 4 (3 was deleted), as
    /// pip `sqlite-vec` 0.1.9 wrote it: one T_vector_chunksNN for each vector column, in
    /// declared order.
    static let sqliteVecMultiFile = SqliteVecTable.file([
        SqliteVecTable(
            name: "multi",
            columns: "a float[2], tag text, b float[2] distance_metric=cosine, c int8[2] distance_metric=l1, d bit[8], chunk_size=8",
            slots: [1, 2, nil, 4],
            vectorChunks: [
                "0000803f00000000000000000000803f0000000000000000000080bf0000003f0000000000000000000000000000000000000000000000000000000000000000",
                "0000803f0000004000000040000080bf0000000000000000000040c00000803f0000000000000000000000000000000000000000000000000000000000000000",
                "01fe64030000807f0000000000000000",
                "0ff000ff00000000"
            ],
            metadataChunks: [
                "0100000078000000000000000000000001000000790000000000000000000000000000000000000000000000000000000100000078000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
            ],
            metadataTexts: [])
    ])

    @Test(
        "A table of several vector columns comes over, each column from its own chunks, and answers as sqlite-vec did",
        arguments: SQLPath.allCases)
    func migratesSeveralVectorColumns(path: SQLPath) throws {
        try path.verify(
            onFileAfter: Self.sqliteVecMultiFile,
            [
                // sqlite-vec 0.1.9's answers on the file before the migration.
                SQLCase(
                    "the table answers as sqlite-vec did, migrated by hand after the reads",
                    """
                    select rowid, round(distance, 6) from multi where b match '[1, 0.5]' and k = 3;
                    select rowid, distance from multi where c match vec_int8('[0, 0]') and k = 3 and tag = 'x';
                    select rowid, distance from multi where d match vec_bit(x'07') and k = 3;
                    select rowid, round(distance, 6) from multi where a match '[1, 0.5]' and k = 3;
                    select rowid, hex(a), hex(b), hex(c), hex(d), tag from multi order by rowid;
                    select vecsync_migrate_sqlite_vec('multi');
                    select name from sqlite_schema where name like 'multi_vector_chunks%';
                    select rowid, hex(a), hex(b), hex(c), hex(d), tag from multi order by rowid;
                    """,
                    rows: [
                        "1|0.2", "2|0.4", "4|1.707107", "1|3.0", "4|255.0", "1|1.0", "4|5.0", "2|7.0",
                        "1|0.5", "2|1.118034", "4|2.0",
                        "1|0000803F00000000|0000803F00000040|01FE|0F|x",
                        "2|000000000000803F|00000040000080BF|6403|F0|y",
                        "4|000080BF0000003F|000040C00000803F|807F|FF|x",
                        "multi: 3 rows migrated",
                        "1|0000803F00000000|0000803F00000040|01FE|0F|x",
                        "2|000000000000803F|00000040000080BF|6403|F0|y",
                        "4|000080BF0000003F|000040C00000803F|807F|FF|x",
                    ]
                ),
                SQLCase(
                    "exported, each vector column back in its own chunks",
                    """
                    select vecsync_export_sqlite_vec('multi');
                    select name from sqlite_schema where name like 'multi_vector_chunks%' order by name;
                    select rowid, round(distance, 6) from multi where b match '[1, 0.5]' and k = 3;
                    select rowid, hex(a), hex(b), hex(c), hex(d), tag from multi order by rowid;
                    """,
                    rows: [
                        "multi: 3 rows exported", "multi_vector_chunks00", "multi_vector_chunks01",
                        "multi_vector_chunks02", "multi_vector_chunks03", "1|0.2", "2|0.4", "4|1.707107",
                        "1|0000803F00000000|0000803F00000040|01FE|0F|x",
                        "2|000000000000803F|00000040000080BF|6403|F0|y",
                        "4|000080BF0000003F|000040C00000803F|807F|FF|x",
                    ]
                ),
            ])
    }

    /// `table` is still sqlite-vec's, with its `rows` rows: none of this extension's tables.
    static func stillSqliteVecs(_ table: String, rows: Int) -> SQLCase {
        SQLCase(
            "the table is still sqlite-vec's",
            "select count(*) from \(table)_rowids;\nselect count(*) from sqlite_schema where name = '\(table)_rows';",
            rows: ["\(rows)", "0"])
    }

    /// Damage to a second vector column, and to an int8 column: the file, the damage, the
    /// statement that meets it with the words of its error, by the damaged table.
    static let damagedTables: [String: (file: String, damage: String, meeting: SQLCase)] = [
        "multi": (
            sqliteVecMultiFile, "update multi_vector_chunks01 set vectors = x'0000803f';",
            SQLCase(
                "a second column's chunk cut short", "select count(*) from multi;",
                error: ["was written by sqlite-vec and cannot be read", "multi_vector_chunks01 row 1", "past its end"])
        ),
        "bytes8": (
            sqliteVecTypedFile, "update bytes8_rowids set chunk_offset = 8 where rowid = 4;",
            SQLCase(
                "an int8 slot past its chunk",
                "select rowid from bytes8 where e match vec_int8('[0, 0, 4, 4]') and k = 3;",
                error: ["bytes8_vector_chunks00 row 1", "past its end"])
        ),
    ]

    @Test(
        "A damaged sqlite-vec table (a second vector column, an int8 slot) is an error naming the damage, and nothing changes",
        arguments: SQLPath.allCases, damagedTables.keys.sorted())
    func damagedTableChangesNothing(path: SQLPath, table: String) throws {
        let (file, damage, meeting) = try #require(Self.damagedTables[table])
        try path.verify(onFileAfter: file + damage + "\n", [meeting, Self.stillSqliteVecs(table, rows: 3)])
    }

    @Test(
        "A damaged sqlite-vec file is an error naming the damage, and nothing changes",
        arguments: SQLPath.allCases)
    func damagedFileChangesNothing(path: SQLPath) throws {
        // Row 4 points past the end of its vector chunk.
        try path.verify(
            onFileAfter: Self.sqliteVecFile + "update items_rowids set chunk_offset = 9 where rowid = 4;\n",
            [
                SQLCase(
                    "a chunk offset past the chunk: a read is an error",
                    "select rowid from items where e match '[1, 0]' and k = 3;",
                    error: [
                        "items", "was written by sqlite-vec and cannot be read", "items_vector_chunks00 row 1",
                        "past its end",
                    ]
                ),
                SQLCase(
                    "a chunk offset past the chunk: a write is an error",
                    "insert into items(rowid, e) values (9, '[1, 1]');",
                    error: ["items_vector_chunks00 row 1", "past its end"]
                ),
                SQLCase(
                    "the table is still sqlite-vec's, whole, and so is the undamaged table beside it",
                    """
                    select count(*) from docs;
                    select count(*) from items_rowids;
                    select count(*) from sqlite_schema where name in ('items_info', 'items_chunks') ;
                    select count(*) from sqlite_schema where name = 'items_rows';
                    select count(*) from sqlite_schema where name = 'docs_rows';
                    """,
                    rows: ["2", "3", "2", "0", "0"]
                ),
                SQLCase(
                    "repaired, it is migrated by hand",
                    """
                    update items_rowids set chunk_offset = 3 where rowid = 4;
                    select vecsync_migrate_sqlite_vec('items');
                    select rowid from items where e match '[1, 0]' and k = 3;
                    """,
                    rows: ["items: 3 rows migrated", "1", "2", "4"]
                ),
                SQLCase(
                    "a table that is not sqlite-vec's is refused",
                    """
                    create virtual table fresh using vec0(e float[2]);
                    select vecsync_migrate_sqlite_vec('fresh');
                    """,
                    error: ["already in this extension's storage"]
                ),
            ])
    }
}
