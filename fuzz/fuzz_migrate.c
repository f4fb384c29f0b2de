/*
** fuzz_migrate.c: a sqlite-vec 0.1.9 file damaged behind its back, read from a migrated
** copy, migrated in place by vecsync_migrate_sqlite_vec(), written, and written back in
** sqlite-vec's format by vecsync_export_sqlite_vec().
**
** Each input gets a fresh :memory: connection holding the layout sqlite-vec 0.1.9 writes
** for five tables (the rows pip sqlite-vec wrote, rebuilt with plain SQL as the migration
** test does):
**
**   items(e float[2] distance_metric=cosine, cat text, n integer, f float, b boolean,
**         +note text, chunk_size=8)                                  -- 3 rows
**   docs(doc_id text primary key, e float[2], chunk_size=8)           -- 2 rows
**   parts(user_id integer partition key, e float[2], chunk_size=8)    -- 3 rows
**   bytes8(e int8[4] distance_metric=l1, cat text, chunk_size=8)      -- 3 rows
**   signs(id text primary key, e bit[16], chunk_size=8)               -- 3 rows
**
** then 1..8 input-chosen damages with plain SQL on sqlite-vec's tables (a row's chunk id
** or offset set to an interesting integer, a blob replaced by input bytes, cut short or
** turned into text or NULL, a text length rewritten, a row or a whole table deleted), then
** a KNN query, a filtered query and a scan of each table, read from a migrated copy (and
** a write, refused); then the explicit migration of each (refused under PRAGMA
** query_only, when the input chose it) and the same queries, and writes; then the export
** of each back to sqlite-vec's format, the queries again (from a copy), and the migration
** again. A migration or export that fails must leave the file as it was; one that
** succeeds must leave a table that answers. Only a crash, a sanitizer report or a leak is
** a finding.
*/
#include "fuzz_common.h"

#define MAX_DAMAGE 8

static const char zLayout[] =
  "CREATE TABLE \"docs_chunks\"(chunk_id INTEGER PRIMARY KEY AUTOINCREMENT,size INTEGER NOT NULL,validity BLOB NOT NULL,rowids BLOB NOT NULL);\n"
  "insert into \"docs_chunks\"(chunk_id, size, validity, rowids) values (1, 8, X'03', X'01000000000000000200000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000');\n"
  "CREATE TABLE \"docs_info\" (key text primary key, value any);\n"
  "insert into \"docs_info\"(key, value) values ('CREATE_VERSION', 'v0.1.9');\n"
  "insert into \"docs_info\"(key, value) values ('CREATE_VERSION_MAJOR', 0);\n"
  "insert into \"docs_info\"(key, value) values ('CREATE_VERSION_MINOR', 1);\n"
  "insert into \"docs_info\"(key, value) values ('CREATE_VERSION_PATCH', 9);\n"
  "CREATE TABLE \"docs_rowids\"(rowid INTEGER PRIMARY KEY AUTOINCREMENT,id TEXT UNIQUE NOT NULL,chunk_id INTEGER,chunk_offset INTEGER);\n"
  "insert into \"docs_rowids\"(rowid, id, chunk_id, chunk_offset) values (1, 'alpha', 1, 0);\n"
  "insert into \"docs_rowids\"(rowid, id, chunk_id, chunk_offset) values (2, 'beta', 1, 1);\n"
  "CREATE TABLE \"docs_vector_chunks00\"(rowid PRIMARY KEY,vectors BLOB NOT NULL);\n"
  "insert into \"docs_vector_chunks00\"(rowid, vectors) values (1, X'0000803f000000400000404000008040000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000');\n"
  "CREATE TABLE \"items_auxiliary\"( rowid integer PRIMARY KEY , value00);\n"
  "insert into \"items_auxiliary\"(rowid, value00) values (1, 'first');\n"
  "insert into \"items_auxiliary\"(rowid, value00) values (2, NULL);\n"
  "insert into \"items_auxiliary\"(rowid, value00) values (4, 'fourth');\n"
  "CREATE TABLE \"items_chunks\"(chunk_id INTEGER PRIMARY KEY AUTOINCREMENT,size INTEGER NOT NULL,validity BLOB NOT NULL,rowids BLOB NOT NULL);\n"
  "insert into \"items_chunks\"(chunk_id, size, validity, rowids) values (1, 8, X'0b', X'01000000000000000200000000000000000000000000000004000000000000000000000000000000000000000000000000000000000000000000000000000000');\n"
  "CREATE TABLE \"items_info\" (key text primary key, value any);\n"
  "insert into \"items_info\"(key, value) values ('CREATE_VERSION', 'v0.1.9');\n"
  "insert into \"items_info\"(key, value) values ('CREATE_VERSION_MAJOR', 0);\n"
  "insert into \"items_info\"(key, value) values ('CREATE_VERSION_MINOR', 1);\n"
  "insert into \"items_info\"(key, value) values ('CREATE_VERSION_PATCH', 9);\n"
  "CREATE TABLE \"items_metadatachunks00\"(rowid PRIMARY KEY, data BLOB NOT NULL);\n"
  "insert into \"items_metadatachunks00\"(rowid, data) values (1, X'0300000072656400000000000000000004000000626c756500000000000000000000000000000000000000000000000028000000612063617465676f7279206e00000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000');\n"
  "CREATE TABLE \"items_metadatachunks01\"(rowid PRIMARY KEY, data BLOB NOT NULL);\n"
  "insert into \"items_metadatachunks01\"(rowid, data) values (1, X'0a00000000000000ecffffffffffffff000000000000000028000000000000000000000000000000000000000000000000000000000000000000000000000000');\n"
  "CREATE TABLE \"items_metadatachunks02\"(rowid PRIMARY KEY, data BLOB NOT NULL);\n"
  "insert into \"items_metadatachunks02\"(rowid, data) values (1, X'000000000000e03f000000000000f43f00000000000000000000000000000cc00000000000000000000000000000000000000000000000000000000000000000');\n"
  "CREATE TABLE \"items_metadatachunks03\"(rowid PRIMARY KEY, data BLOB NOT NULL);\n"
  "insert into \"items_metadatachunks03\"(rowid, data) values (1, X'01');\n"
  "CREATE TABLE \"items_metadatatext00\"(rowid PRIMARY KEY, data TEXT);\n"
  "insert into \"items_metadatatext00\"(rowid, data) values (4, 'a category name longer than twelve bytes');\n"
  "CREATE TABLE \"items_rowids\"(rowid INTEGER PRIMARY KEY AUTOINCREMENT,id,chunk_id INTEGER,chunk_offset INTEGER);\n"
  "insert into \"items_rowids\"(rowid, id, chunk_id, chunk_offset) values (1, NULL, 1, 0);\n"
  "insert into \"items_rowids\"(rowid, id, chunk_id, chunk_offset) values (2, NULL, 1, 1);\n"
  "insert into \"items_rowids\"(rowid, id, chunk_id, chunk_offset) values (4, NULL, 1, 3);\n"
  "CREATE TABLE \"items_vector_chunks00\"(rowid PRIMARY KEY,vectors BLOB NOT NULL);\n"
  "insert into \"items_vector_chunks00\"(rowid, vectors) values (1, X'0000803f00000000000000000000803f0000000000000000000080bf0000003f0000000000000000000000000000000000000000000000000000000000000000');\n"
  "CREATE TABLE \"parts_chunks\"(chunk_id INTEGER PRIMARY KEY AUTOINCREMENT,size INTEGER NOT NULL,sequence_id integer,partition00,validity BLOB NOT NULL, rowids BLOB NOT NULL);\n"
  "insert into \"parts_chunks\"(chunk_id, size, sequence_id, partition00, validity, rowids) values (1, 8, NULL, 5, X'03', X'01000000000000000300000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000');\n"
  "insert into \"parts_chunks\"(chunk_id, size, sequence_id, partition00, validity, rowids) values (2, 8, NULL, 6, X'01', X'02000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000');\n"
  "CREATE TABLE \"parts_info\" (key text primary key, value any);\n"
  "insert into \"parts_info\"(key, value) values ('CREATE_VERSION', 'v0.1.9');\n"
  "insert into \"parts_info\"(key, value) values ('CREATE_VERSION_MAJOR', 0);\n"
  "insert into \"parts_info\"(key, value) values ('CREATE_VERSION_MINOR', 1);\n"
  "insert into \"parts_info\"(key, value) values ('CREATE_VERSION_PATCH', 9);\n"
  "CREATE TABLE \"parts_rowids\"(rowid INTEGER PRIMARY KEY AUTOINCREMENT,id,chunk_id INTEGER,chunk_offset INTEGER);\n"
  "insert into \"parts_rowids\"(rowid, id, chunk_id, chunk_offset) values (1, NULL, 1, 0);\n"
  "insert into \"parts_rowids\"(rowid, id, chunk_id, chunk_offset) values (2, NULL, 2, 0);\n"
  "insert into \"parts_rowids\"(rowid, id, chunk_id, chunk_offset) values (3, NULL, 1, 1);\n"
  "CREATE TABLE \"parts_vector_chunks00\"(rowid PRIMARY KEY,vectors BLOB NOT NULL);\n"
  "insert into \"parts_vector_chunks00\"(rowid, vectors) values (1, X'0000803f000000000000803f0000803f000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000');\n"
  "insert into \"parts_vector_chunks00\"(rowid, vectors) values (2, X'000000000000803f0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000');\n"
  "CREATE TABLE \"bytes8_chunks\"(chunk_id INTEGER PRIMARY KEY AUTOINCREMENT,size INTEGER NOT NULL,validity BLOB NOT NULL,rowids BLOB NOT NULL);\n"
  "insert into \"bytes8_chunks\"(chunk_id, size, validity, rowids) values (1, 8, X'0b', X'01000000000000000200000000000000000000000000000004000000000000000000000000000000000000000000000000000000000000000000000000000000');\n"
  "CREATE TABLE \"bytes8_info\" (key text primary key, value any);\n"
  "insert into \"bytes8_info\"(key, value) values ('CREATE_VERSION', 'v0.1.9');\n"
  "CREATE TABLE \"bytes8_metadatachunks00\"(rowid PRIMARY KEY, data BLOB NOT NULL);\n"
  "insert into \"bytes8_metadatachunks00\"(rowid, data) values (1, X'0100000061000000000000000000000001000000620000000000000000000000000000000000000000000000000000000100000061000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000');\n"
  "CREATE TABLE \"bytes8_metadatatext00\"(rowid PRIMARY KEY, data TEXT);\n"
  "CREATE TABLE \"bytes8_rowids\"(rowid INTEGER PRIMARY KEY AUTOINCREMENT,id,chunk_id INTEGER,chunk_offset INTEGER);\n"
  "insert into \"bytes8_rowids\"(rowid, id, chunk_id, chunk_offset) values (1, NULL, 1, 0);\n"
  "insert into \"bytes8_rowids\"(rowid, id, chunk_id, chunk_offset) values (2, NULL, 1, 1);\n"
  "insert into \"bytes8_rowids\"(rowid, id, chunk_id, chunk_offset) values (4, NULL, 1, 3);\n"
  "CREATE TABLE \"bytes8_vector_chunks00\"(rowid PRIMARY KEY,vectors BLOB NOT NULL);\n"
  "insert into \"bytes8_vector_chunks00\"(rowid, vectors) values (1, X'01fe037f8000050500000000000100ff00000000000000000000000000000000');\n"
  "CREATE TABLE \"signs_chunks\"(chunk_id INTEGER PRIMARY KEY AUTOINCREMENT,size INTEGER NOT NULL,validity BLOB NOT NULL,rowids BLOB NOT NULL);\n"
  "insert into \"signs_chunks\"(chunk_id, size, validity, rowids) values (1, 8, X'07', X'01000000000000000200000000000000030000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000');\n"
  "CREATE TABLE \"signs_info\" (key text primary key, value any);\n"
  "insert into \"signs_info\"(key, value) values ('CREATE_VERSION', 'v0.1.9');\n"
  "CREATE TABLE \"signs_rowids\"(rowid INTEGER PRIMARY KEY AUTOINCREMENT,id TEXT UNIQUE NOT NULL,chunk_id INTEGER,chunk_offset INTEGER);\n"
  "insert into \"signs_rowids\"(rowid, id, chunk_id, chunk_offset) values (1, 'x', 1, 0);\n"
  "insert into \"signs_rowids\"(rowid, id, chunk_id, chunk_offset) values (2, 'y', 1, 1);\n"
  "insert into \"signs_rowids\"(rowid, id, chunk_id, chunk_offset) values (3, 'z', 1, 2);\n"
  "CREATE TABLE \"signs_vector_chunks00\"(rowid PRIMARY KEY,vectors BLOB NOT NULL);\n"
  "insert into \"signs_vector_chunks00\"(rowid, vectors) values (1, X'0f00ffff550f00000000000000000000');\n"
  "pragma writable_schema = on;\n"
  "insert into sqlite_schema values ('table', 'items', 'items', 0, 'CREATE VIRTUAL TABLE items using vec0(e float[2] distance_metric=cosine, cat text, n integer, f float, b boolean, +note text, chunk_size=8)');\n"
  "insert into sqlite_schema values ('table', 'docs', 'docs', 0, 'CREATE VIRTUAL TABLE docs using vec0(doc_id text primary key, e float[2], chunk_size=8)');\n"
  "insert into sqlite_schema values ('table', 'parts', 'parts', 0, 'CREATE VIRTUAL TABLE parts using vec0(user_id integer partition key, e float[2], chunk_size=8)');\n"
  "insert into sqlite_schema values ('table', 'bytes8', 'bytes8', 0, 'CREATE VIRTUAL TABLE bytes8 using vec0(e int8[4] distance_metric=l1, cat text, chunk_size=8)');\n"
  "insert into sqlite_schema values ('table', 'signs', 'signs', 0, 'CREATE VIRTUAL TABLE signs using vec0(id text primary key, e bit[16], chunk_size=8)');\n";

/* A table of sqlite-vec's layout, and the blob or integer columns it has. */
static const struct { const char *zTable; const char *zInt; const char *zBlob; } aTarget[] = {
  { "items_rowids", "chunk_offset", 0 },
  { "items_rowids", "chunk_id", 0 },
  { "items_vector_chunks00", "rowid", "vectors" },
  { "items_metadatachunks00", "rowid", "data" },
  { "items_metadatachunks01", "rowid", "data" },
  { "items_metadatachunks02", "rowid", "data" },
  { "items_metadatachunks03", "rowid", "data" },
  { "items_metadatatext00", "rowid", "data" },
  { "items_auxiliary", "rowid", "value00" },
  { "items_chunks", "size", "validity" },
  { "docs_rowids", "chunk_offset", "id" },
  { "docs_vector_chunks00", "rowid", "vectors" },
  { "parts_chunks", "chunk_id", "partition00" },
  { "parts_rowids", "chunk_id", 0 },
  { "parts_vector_chunks00", "rowid", "vectors" },
  { "bytes8_rowids", "chunk_offset", 0 },
  { "bytes8_vector_chunks00", "rowid", "vectors" },
  { "bytes8_metadatachunks00", "rowid", "data" },
  { "signs_rowids", "chunk_id", "id" },
  { "signs_vector_chunks00", "rowid", "vectors" },
};
#define N_TARGET ((int)(sizeof(aTarget)/sizeof(aTarget[0])))

static void damage(sqlite3 *db, FuzzIn *in){
  int t = (int)fuzzPick(in, N_TARGET);
  const char *zTab = aTarget[t].zTable;
  sqlite3_stmt *pStmt = 0;
  switch( fuzzPick(in, 6) ){
    case 0:                                   /* an integer column set to anything */
      pStmt = fuzzPrepare(db, "UPDATE \"%s\" SET \"%s\" = ?1 WHERE rowid IN "
                              "(SELECT rowid FROM \"%s\" LIMIT 1 OFFSET %u)",
                          zTab, aTarget[t].zInt, zTab, fuzzPick(in, 4));
      if( pStmt ) sqlite3_bind_int64(pStmt, 1, fuzzInterestingInt(in));
      break;
    case 1: {                                 /* a blob replaced by input bytes */
      size_t n = 0;
      const uint8_t *a = fuzzBytes(in, 96, &n);
      if( aTarget[t].zBlob==0 ) return;
      pStmt = fuzzPrepare(db, "UPDATE \"%s\" SET \"%s\" = ?1 WHERE rowid IN "
                              "(SELECT rowid FROM \"%s\" LIMIT 1 OFFSET %u)",
                          zTab, aTarget[t].zBlob, zTab, fuzzPick(in, 4));
      if( pStmt ) sqlite3_bind_blob(pStmt, 1, a, (int)n, SQLITE_TRANSIENT);
      break;
    }
    case 2:                                   /* a blob cut short */
      if( aTarget[t].zBlob==0 ) return;
      pStmt = fuzzPrepare(db, "UPDATE \"%s\" SET \"%s\" = substr(\"%s\", 1, %u)",
                          zTab, aTarget[t].zBlob, aTarget[t].zBlob, fuzzPick(in, 40));
      break;
    case 3:                                   /* a blob turned into text or NULL */
      if( aTarget[t].zBlob==0 ) return;
      pStmt = fuzzPrepare(db, "UPDATE \"%s\" SET \"%s\" = %s", zTab, aTarget[t].zBlob,
                          fuzzPick(in, 2) ? "'text'" : "NULL");
      break;
    case 4:                                   /* a row deleted */
      pStmt = fuzzPrepare(db, "DELETE FROM \"%s\" WHERE rowid IN "
                              "(SELECT rowid FROM \"%s\" LIMIT 1 OFFSET %u)",
                          zTab, zTab, fuzzPick(in, 4));
      break;
    default:                                  /* a whole table gone */
      pStmt = fuzzPrepare(db, "DROP TABLE IF EXISTS \"%s\"", zTab);
      break;
  }
  if( pStmt ) fuzzRun(pStmt);
}

/* A KNN query, a filtered one and a scan of every table. */
static void queries(sqlite3 *db){
  static const char *azTable[] = { "items", "docs", "parts" };
  int i;
  for(i=0; i<3; i++){
    fuzzExec(db, "SELECT rowid, distance FROM \"%s\" WHERE e MATCH '[1,0]' AND k = 3", azTable[i]);
    fuzzExec(db, "SELECT * FROM \"%s\"", azTable[i]);
  }
  fuzzExec(db, "SELECT rowid FROM items WHERE e MATCH '[0,1]' AND k = 2 AND cat = 'red'");
  fuzzExec(db, "SELECT rowid FROM parts WHERE e MATCH '[0,1]' AND k = 2 AND user_id = 5");
  fuzzExec(db, "SELECT rowid, distance FROM bytes8 WHERE e MATCH vec_int8('[1, 2, 3, 4]') AND k = 3");
  fuzzExec(db, "SELECT *, vec_to_json(e) FROM bytes8");
  fuzzExec(db, "SELECT rowid FROM bytes8 WHERE e MATCH vec_int8('[0,0,4,4]') AND k = 2 AND cat = 'a'");
  fuzzExec(db, "SELECT rowid, distance FROM signs WHERE e MATCH vec_bit(x'ff00') AND k = 3");
  fuzzExec(db, "SELECT *, vec_to_json(e) FROM signs");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size){
  static const char *azTable[] = { "items", "docs", "parts", "bytes8", "signs" };
  FuzzBudget budget;
  FuzzIn in;
  sqlite3 *db;
  int i, nDamage, bQueryOnly;
  if( size>16*1024 ) return 0;
  fuzzInInit(&in, data, size);
  db = fuzzOpen(&budget);
  if( db==0 ) return 0;
  if( fuzzExec(db, "%s", zLayout)!=SQLITE_OK ){
    fuzzClose(db);
    return 0;
  }
  /* The declarations were written straight into sqlite_schema: read them in. */
  fuzzExec(db, "PRAGMA writable_schema = RESET");
  bQueryOnly = (int)fuzzPick(&in, 2);
  nDamage = 1 + (int)fuzzPick(&in, MAX_DAMAGE);
  for(i=0; i<nDamage && !fuzzInDone(&in); i++) damage(db, &in);
  if( bQueryOnly ) fuzzExec(db, "PRAGMA query_only = 1");
  queries(db);
  fuzzExec(db, "INSERT INTO items(rowid, e, cat, n, f, b) VALUES (50, '[1,1]', 'x', 1, 1.0, 1)");
  for(i=0; i<5; i++) fuzzExec(db, "SELECT vecsync_migrate_sqlite_vec('%s')", azTable[i]);
  if( bQueryOnly ) fuzzExec(db, "PRAGMA query_only = 0");
  for(i=0; i<5; i++) fuzzExec(db, "SELECT vecsync_migrate_sqlite_vec('%s')", azTable[i]);
  queries(db);
  fuzzExec(db, "INSERT INTO items(rowid, e, cat, n, f, b) VALUES (51, '[1,1]', 'x', 1, 1.0, 1)");
  fuzzExec(db, "DELETE FROM docs WHERE doc_id = 'alpha'");
  fuzzExec(db, "INSERT INTO signs(id, e) VALUES ('w', vec_bit(x'0102'))");
  for(i=0; i<5; i++) fuzzExec(db, "SELECT vecsync_export_sqlite_vec('%s')", azTable[i]);
  queries(db);
  for(i=0; i<5; i++) fuzzExec(db, "SELECT vecsync_migrate_sqlite_vec('%s')", azTable[i]);
  queries(db);
  fuzzClose(db);
  return 0;
}
