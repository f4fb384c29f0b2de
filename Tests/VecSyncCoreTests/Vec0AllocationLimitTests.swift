import Testing

/// No statement allocates without bound: a vec0 block (`chunk_size` vectors) takes at most
/// 256 MiB (`VEC0_MAX_BLOCK_BYTES`), and the errors name the limit and what would fit.
@Suite("vec0 allocations are bounded, with errors that name the limit")
struct Vec0AllocationLimitTests {
    /// A table declared before the limit existed: its declaration and T_info edited to a
    /// block of 1 GiB, then the schema read again.
    static let declaredBeforeTheLimit = """
        create virtual table old using vec0(e float[4096], chunk_size=8192);
        pragma writable_schema=1;
        update sqlite_master set sql = replace(sql, '8192', '65536') where name = 'old';
        update old_info set value = 65536 where key = 'chunk_size';
        pragma writable_schema=RESET;

        """

    static let cases: [SQLCase] = [
        SQLCase(
            "float[65536] with chunk_size=65536 (16 GiB a block) is refused at CREATE",
            "create virtual table v using vec0(e float[65536], chunk_size=65536);",
            error: ["16384 MiB", "limit of 256 MiB", "VEC0_MAX_BLOCK_BYTES", "chunk_size=1024 or less"]),
        SQLCase(
            "int8[65536] with chunk_size=8192 (512 MiB a block) is refused, naming what fits",
            "create virtual table v using vec0(e int8[65536], chunk_size=8192);",
            error: ["512 MiB", "limit of 256 MiB", "chunk_size=4096 or less"]),
        SQLCase(
            "a block at the limit is accepted, and the default chunk_size fits the largest vectors",
            """
            create virtual table a using vec0(e float[16384], chunk_size=4096);
            create virtual table b using vec0(e float[65536]);
            select count(*) from a;
            select count(*) from b;
            """, rows: ["0", "0"]),
        SQLCase(
            "a table declared past the limit earlier answers with the limit",
            declaredBeforeTheLimit + "select count(*) from old;",
            error: ["vec0 \"old\"", "1024 MiB", "limit of 256 MiB"]),
        SQLCase(
            "and can still be dropped",
            declaredBeforeTheLimit + "drop table old;\nselect count(*) from sqlite_master;",
            rows: ["0"]),
        SQLCase(
            "vecsync_knn_batch refuses more candidates than a block",
            """
            create virtual table t using vec0(e float[1]);
            with recursive c(i) as (select 1 union all select i + 1 from c where i < 20000)
            insert into t(rowid, e) select i, vector32('[' || i || ']') from c;
            select count(*) from vecsync_knn_batch('t', zeroblob(4 * 1000), 100000);
            """, error: ["1000 queries with k = 100000", "limit of 256 MiB", "fewer queries"]),
    ]

    @Test("Block and batch limits", arguments: SQLPath.allCases, cases)
    func limits(path: SQLPath, sqlCase: SQLCase) {
        sqlCase.verify(path)
    }
}
