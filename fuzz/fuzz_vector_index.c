/*
** fuzz_vector_index.c: libSQL's vector index (libsql_vector_idx, vector_top_k,
** vecsync_rebuild) and vecsync_knn_batch, driven by a program decoded from the input.
**
** Setup from the first bytes:
**
**   create table t(<id integer primary key | id text primary key | id integer |
**                   id text unique | ... WITHOUT ROWID with a text, integer, NOCASE or
**                   composite key>, e <F32_BLOB(D) | FLOAT32(D) | F64_BLOB(D) |
**                   FLOAT64(D) | blob | text | FLOAT16(D) | FLOAT1BIT(D) | F32_BLOB(0) |
**                   F32_BLOB(70000)>, x text [unique]);
**   create index t_idx on t(libsql_vector_idx(e, <0..3 options from the input>))
**     [where <one of several conditions>]; -- a partial index, before or after the rows
**   create virtual table w using vec0(embedding float[D] ...);  -- for the batch function
**
** then operations: INSERT [OR REPLACE|IGNORE], UPDATE (vector, key), DELETE on t, with
** vectors from the bytes; vector_top_k with input index name, query, k and nprobe (the
** options include type=ivf, nlist and nprobe); vecsync_rebuild;
** vecsync_knn_batch on w and on the index's store with an input blob of queries and k;
** transactions; DROP/CREATE/REINDEX of the index, renames, query_only (the read-only
** scan path), direct writes to the store and its log, a second (partial) index, an
** attached database with its own index searched as 'aux.<name>', the TEMP trigger dropped.
**
** Bounds: at most 64 operations, dimensions at most 8 (bar the deliberate 70000), the
** connection's step budget and heap limit (fuzz_common.h).
*/
#include "fuzz_common.h"

#define MAX_OPS 64

typedef struct Setup Setup;
struct Setup {
  int nDim;             /* Dimensions of the vectors the harness makes */
  int eKey;             /* Table shape, index into azTable */
  const char *zIdx;     /* Index name */
};

static const char *azTable[] = {
  "CREATE TABLE t(id INTEGER PRIMARY KEY, e %s, x TEXT)",
  "CREATE TABLE t(id TEXT PRIMARY KEY, e %s, x TEXT)",
  "CREATE TABLE t(id INTEGER, e %s, x TEXT)",
  "CREATE TABLE t(id TEXT UNIQUE, e %s, x TEXT UNIQUE)",
  "CREATE TABLE t(id INTEGER PRIMARY KEY, e %s, x TEXT, UNIQUE(x, id))",
  "CREATE TABLE t(id TEXT PRIMARY KEY, e %s, x TEXT) WITHOUT ROWID",
  "CREATE TABLE t(id INTEGER PRIMARY KEY, e %s, x TEXT) WITHOUT ROWID",
  "CREATE TABLE t(id TEXT COLLATE NOCASE PRIMARY KEY, e %s, x TEXT UNIQUE) WITHOUT ROWID",
  "CREATE TABLE t(id INTEGER, e %s, x TEXT, PRIMARY KEY(id, x)) WITHOUT ROWID",
};
#define N_TABLE ((int)(sizeof(azTable)/sizeof(azTable[0])))

static const char *azOption[] = {
  "'metric=cosine'", "'metric=l2'", "'metric=cos'", "'metric=dot'", "'type=diskann'",
  "'max_neighbors=8'", "'alpha=1.2'", "'search_l=200'", "'insert_l=70'",
  "'compress_neighbors=float8'", "'bogus=1'", "'metric'", "''", "'metric='", "NULL", "3",
  "'METRIC=L2'", "'=cosine'", "x", "'max_neighbors=abc'", "'search_l=-3'",
  "'compress_neighbors=float1bit'", "'alpha=x'", "'type=hnsw'",
  "'type=ivf'", "'type=i'", "'nlist=2'", "'nprobe=1'", "'nprobe=3'", "'nlist=0'",
  "'nprobe=99999999999'", "'nlist=1x'",
};
#define N_OPTION ((int)(sizeof(azOption)/sizeof(azOption[0])))

static const char *azWhere[] = {
  "id > 2", "x = 'x1'", "e IS NOT NULL AND id % 2 = 0", "x LIKE 'x%'", "0", "1",
};

/* A key for t's id: small and colliding, of the table's key type or not. */
static void bindId(FuzzIn *in, sqlite3_stmt *pStmt, int i, const Setup *s){
  unsigned c = fuzzU8(in);
  char z[16];
  if( pStmt==0 ) return;
  if( c<200 ){
    if( s->eKey==1 || s->eKey==3 || s->eKey==5 || s->eKey==7 ){
      snprintf(z, sizeof(z), (c & 1) ? "R%u" : "r%u", c % 24);   /* equal under NOCASE */
      sqlite3_bind_text(pStmt, i, z, -1, SQLITE_TRANSIENT);
    }else{
      sqlite3_bind_int64(pStmt, i, c % 24);
    }
  }else if( c<216 ){
    sqlite3_bind_null(pStmt, i);
  }else{
    sqlite3_bind_int64(pStmt, i, fuzzInterestingInt(in));
  }
}

/* SQL expressions of a vector's nDim elements in terms of "value". */
static const char *vecColumns(int nDim){
  static const char *az[] = {
    "value", "value, 1", "value, 1, -value", "value, 1, -value, 2", "value, 1, -value, 2, 0",
    "value, 1, -value, 2, 0, 3", "value, 1, -value, 2, 0, 3, 1",
    "value, 1, -value, 2, 0, 3, 1, 1",
  };
  return az[(nDim>=1 && nDim<=8) ? nDim-1 : 0];
}

static void setup(sqlite3 *db, FuzzIn *in, Setup *s, int *pbIndexLater){
  static const char *azIdx[] = { "t_idx", "T_Idx", "t idx", "t\"idx" };
  unsigned flags = fuzzU8(in);
  unsigned eType = fuzzPick(in, 14);
  char zType[32];
  sqlite3_str *pStr;
  char *zSql;
  int nOpt, j;

  s->nDim = 1 + fuzzPick(in, 8);
  s->eKey = fuzzPick(in, N_TABLE);
  s->zIdx = azIdx[(flags>>4) & 3];
  switch( eType ){
    case 0: case 1: case 2: case 3: snprintf(zType, sizeof(zType), "F32_BLOB(%d)", s->nDim); break;
    case 4: snprintf(zType, sizeof(zType), "FLOAT32(%d)", s->nDim); break;
    case 5: snprintf(zType, sizeof(zType), "F64_BLOB(%d)", s->nDim); break;
    case 6: snprintf(zType, sizeof(zType), "blob"); break;
    case 7: snprintf(zType, sizeof(zType), "F32_BLOB(0)"); break;
    case 8: snprintf(zType, sizeof(zType), "F32_BLOB(70000)"); break;
    case 10: snprintf(zType, sizeof(zType), "FLOAT64(%d)", s->nDim); break;
    case 11: snprintf(zType, sizeof(zType), "text"); break;
    case 12: snprintf(zType, sizeof(zType), "FLOAT16(%d)", s->nDim); break;
    case 13: snprintf(zType, sizeof(zType), "FLOAT1BIT(%d)", s->nDim); break;
    default: snprintf(zType, sizeof(zType), "f32_blob( %d )", s->nDim); break;
  }
  fuzzExec(db, azTable[s->eKey], zType);

  pStr = sqlite3_str_new(0);
  sqlite3_str_appendf(pStr, "CREATE INDEX \"%w\" ON t(libsql_vector_idx(e", s->zIdx);
  nOpt = fuzzPick(in, 4);
  for(j=0; j<nOpt; j++) sqlite3_str_appendf(pStr, ", %s", azOption[fuzzPick(in, N_OPTION)]);
  sqlite3_str_appendall(pStr, "))");
  if( flags & 1 ) sqlite3_str_appendf(pStr, " WHERE %s", azWhere[fuzzPick(in, 6)]);
  zSql = sqlite3_str_finish(pStr);
  *pbIndexLater = (flags & 2)!=0;
  if( zSql ){
    if( *pbIndexLater ){
      /* Rows first, then the index: the first search backfills them. */
      fuzzExec(db, "WITH RECURSIVE s(value) AS (SELECT 1 UNION ALL SELECT value+1 FROM s "
                   "WHERE value<4) INSERT INTO t(id, e, x) SELECT value, "
                   "vector32(json_array(%s)), 'x' || value FROM s", vecColumns(s->nDim));
    }
    fuzzExec(db, "%s", zSql);
    sqlite3_free(zSql);
  }
  fuzzExec(db, "CREATE VIRTUAL TABLE w USING vec0(embedding float[%d]%s)", s->nDim,
           (flags & 4) ? " distance_metric=cosine" : (flags & 8) ? " distance_metric=dot" : "");
  /* Five rows: value, 1, -value, 2, 0, ... cut to nDim elements. */
  fuzzExec(db, "WITH RECURSIVE s(value) AS (SELECT 1 UNION ALL SELECT value+1 FROM s "
               "WHERE value<5) INSERT INTO w(rowid, embedding) SELECT value, "
               "vec_f32(json_array(%s)) FROM s", vecColumns(s->nDim));
}

static const char *azConflict[] = { "", " OR REPLACE", " OR IGNORE", " OR ROLLBACK", " OR FAIL" };

static void opWrite(sqlite3 *db, FuzzIn *in, const Setup *s){
  static const char *azSql[] = {
    "INSERT%s INTO t(id, e, x) VALUES(?1, ?2, ?3)",
    "INSERT%s INTO t(id, e, x) VALUES(?1, ?2, ?3)",
    "INSERT%s INTO t(e, x) VALUES(?2, ?3)",
    "UPDATE%s t SET e = ?2 WHERE id = ?1",
    "UPDATE%s t SET id = ?1 WHERE x = ?3",
    "UPDATE%s t SET x = ?3, e = ?2 WHERE rowid = ?1",
    "DELETE FROM t WHERE id = ?1",
    "DELETE FROM t WHERE x = ?3 OR id = ?1",
    "INSERT%s INTO t(id, e, x) SELECT id + 100, e, x || 'z' FROM t LIMIT 8",
    "REPLACE INTO t(id, e, x) VALUES(?1, ?2, ?3)",
  };
  unsigned c = fuzzPick(in, 10);
  const char *zConflict = c<=5 || c==8 ? azConflict[fuzzPick(in, 5)] : "";
  sqlite3_stmt *pStmt = fuzzPrepare(db, azSql[c], zConflict);
  char z[8];
  if( pStmt==0 ) return;
  bindId(in, pStmt, 1, s);
  fuzzBindVector(in, pStmt, 2, s->nDim);
  snprintf(z, sizeof(z), "x%u", fuzzU8(in) % 6);
  sqlite3_bind_text(pStmt, 3, z, -1, SQLITE_TRANSIENT);
  fuzzRun(pStmt);
}

static void opTopK(sqlite3 *db, FuzzIn *in, const Setup *s, FuzzBudget *b){
  static const char *azSql[] = {
    "SELECT id, distance FROM vector_top_k(?1, ?2, ?3)",
    "SELECT t.*, v.distance FROM vector_top_k(?1, ?2, ?3) AS v JOIN t ON t.rowid = v.id",
    "SELECT count(*) FROM vector_top_k(?1, ?2, ?3)",
    "SELECT id FROM vector_top_k(?1, (SELECT e FROM t LIMIT 1), ?3)",
    "SELECT a.id, (SELECT count(*) FROM vector_top_k(?1, t.e, ?3)) FROM vector_top_k(?1, ?2, ?3) a JOIN t ON t.rowid = a.id",
    "SELECT id, distance FROM vector_top_k(?1, ?2, ?3, ?4)",     /* nprobe of a type=ivf index */
    "SELECT id FROM vector_top_k(?1, ?2, ?3) WHERE nprobe = ?4",
  };
  sqlite3_stmt *pStmt = fuzzPrepare(db, "%s", azSql[fuzzPick(in, 7)]);
  unsigned c;
  if( pStmt==0 ) return;
  c = fuzzU8(in);
  if( c<200 ) sqlite3_bind_text(pStmt, 1, s->zIdx, -1, SQLITE_STATIC);
  else if( c<210 ) sqlite3_bind_text(pStmt, 1, "t", -1, SQLITE_STATIC);
  else if( c<220 ) sqlite3_bind_text(pStmt, 1, "vecsync_idx_t_idx", -1, SQLITE_STATIC);
  else if( c<225 ) sqlite3_bind_text(pStmt, 1, "sqlite_autoindex_t_1", -1, SQLITE_STATIC);
  else if( c<228 ) sqlite3_bind_text(pStmt, 1, "aux.a_idx", -1, SQLITE_STATIC);
  else if( c<230 ) sqlite3_bind_text(pStmt, 1, "main.t_idx", -1, SQLITE_STATIC);
  else fuzzBindScalar(in, pStmt, 1);
  fuzzBindVector(in, pStmt, 2, s->nDim);
  c = fuzzU8(in);
  if( c<160 ) sqlite3_bind_int64(pStmt, 3, 1 + c % 10);
  else if( c<240 ) sqlite3_bind_int64(pStmt, 3, fuzzInterestingInt(in));
  else fuzzBindScalar(in, pStmt, 3);
  if( sqlite3_bind_parameter_count(pStmt)>=4 ){
    c = fuzzU8(in);
    if( c<160 ) sqlite3_bind_int64(pStmt, 4, 1 + c % 4);
    else fuzzBindScalar(in, pStmt, 4);
  }
  if( fuzzU8(in) & 1 ) fuzzInterruptAfter(b, 1 + (long)(fuzzU16(in) % 1024));
  fuzzRun(pStmt);
  fuzzInterruptAfter(b, 0);
}

static void opBatch(sqlite3 *db, FuzzIn *in, const Setup *s){
  float a[16*8];
  int nQuery = fuzzPick(in, 17), nFloat = nQuery*s->nDim, j, nAdjust;
  unsigned c = fuzzU8(in);
  char zStore[64];
  sqlite3_stmt *pStmt = fuzzPrepare(db, "SELECT query_index, id, distance FROM vecsync_knn_batch(?1, ?2, ?3)");
  if( pStmt==0 ) return;
  for(j=0; j<nFloat; j++){
    unsigned v = fuzzU8(in);
    a[j] = v<240 ? (float)(int8_t)v / 8.0f : (float)fuzzDouble(in);
  }
  snprintf(zStore, sizeof(zStore), "vecsync_idx_%s", s->zIdx);
  if( c<140 ) sqlite3_bind_text(pStmt, 1, "w", -1, SQLITE_STATIC);
  else if( c<220 ) sqlite3_bind_text(pStmt, 1, zStore, -1, SQLITE_TRANSIENT);
  else if( c<235 ) sqlite3_bind_text(pStmt, 1, "t", -1, SQLITE_STATIC);
  else fuzzBindScalar(in, pStmt, 1);
  nAdjust = fuzzU8(in)<232 ? 0 : (int)fuzzPick(in, 9) - 4;
  if( nFloat*4+nAdjust>=0 ) sqlite3_bind_blob(pStmt, 2, a, nFloat*4+nAdjust, SQLITE_TRANSIENT);
  c = fuzzU8(in);
  if( c<160 ) sqlite3_bind_int64(pStmt, 3, 1 + c % 10);
  else if( c<240 ) sqlite3_bind_int64(pStmt, 3, fuzzInterestingInt(in));
  else fuzzBindScalar(in, pStmt, 3);
  fuzzRun(pStmt);
}

static void opSchema(sqlite3 *db, FuzzIn *in, const Setup *s){
  switch( fuzzPick(in, 20) ){
    case 0: fuzzExec(db, "SELECT vecsync_rebuild(%Q)", s->zIdx); break;
    case 1: fuzzExec(db, "SELECT vecsync_rebuild('t')"); break;
    case 2: fuzzExec(db, "DROP INDEX \"%w\"", s->zIdx); break;
    case 3:
      fuzzExec(db, "CREATE INDEX IF NOT EXISTS \"%w\" ON t(libsql_vector_idx(e, %s))",
               s->zIdx, azOption[fuzzPick(in, N_OPTION)]);
      break;
    case 4: fuzzExec(db, "REINDEX \"%w\"", s->zIdx); break;
    case 5:
      fuzzExec(db, "ALTER TABLE t RENAME TO t2");
      fuzzExec(db, "SELECT id FROM vector_top_k(%Q, (SELECT e FROM t2 LIMIT 1), 2)", s->zIdx);
      fuzzExec(db, "ALTER TABLE t2 RENAME TO t");
      break;
    case 6: fuzzExec(db, "ALTER TABLE t ADD COLUMN y"); break;
    case 7: fuzzExec(db, "DROP TABLE \"vecsync_idx_%w\"", s->zIdx); break;
    case 8: fuzzExec(db, "DELETE FROM \"vecsync_idx_%w\" WHERE rowid %% 2 = 0", s->zIdx); break;
    case 9: fuzzExec(db, "PRAGMA query_only = %d", fuzzU8(in) & 1); break;
    case 10: {
      sqlite3_stmt *pStmt = fuzzPrepare(db,
          "INSERT OR REPLACE INTO \"vecsync_idx_%w\"(rowid, embedding) VALUES(?1, ?2)", s->zIdx);
      if( pStmt ){
        sqlite3_bind_int64(pStmt, 1, fuzzU8(in) % 30);
        fuzzBindVector(in, pStmt, 2, s->nDim);
        fuzzRun(pStmt);
      }
      break;
    }
    case 11: fuzzExec(db, "DROP TRIGGER IF EXISTS \"vecsync_idx_%w_ai\"", s->zIdx); break;
    case 12: fuzzExec(db, "DELETE FROM \"vecsync_idx_%w_info\" WHERE key = 'backfilled'", s->zIdx); break;
    case 13: fuzzExec(db, "SELECT libsql_vector_idx(e, %s) FROM t", azOption[fuzzPick(in, N_OPTION)]); break;
    case 14:
      fuzzExec(db, "CREATE INDEX IF NOT EXISTS t_part ON t(libsql_vector_idx(e)) WHERE %s",
               azWhere[fuzzPick(in, 6)]);
      fuzzExec(db, "SELECT id FROM vector_top_k('t_part', (SELECT e FROM t LIMIT 1), 3)");
      break;
    case 15:
      fuzzExec(db, "ATTACH ':memory:' AS aux");
      fuzzExec(db, "CREATE TABLE IF NOT EXISTS aux.a(id INTEGER PRIMARY KEY, e F32_BLOB(%d))", s->nDim);
      fuzzExec(db, "CREATE INDEX IF NOT EXISTS aux.a_idx ON a(libsql_vector_idx(e))");
      fuzzExec(db, "INSERT INTO aux.a(e) SELECT e FROM t LIMIT 4");
      break;
    case 16: fuzzExec(db, "DELETE FROM \"vecsync_idx_%w_log\"", s->zIdx); break;
    case 17: fuzzExec(db, "INSERT OR REPLACE INTO \"vecsync_idx_%w_log\"(rowid) VALUES (%d)", s->zIdx,
                      (int)(fuzzU8(in) % 30)); break;
    case 18: fuzzExec(db, "DROP TRIGGER IF EXISTS temp.\"vecsync_apply_main_%w\"", s->zIdx); break;
    default: fuzzExec(db, "CREATE INDEX IF NOT EXISTS t_x ON t(libsql_vector_idx(x))"); break;
  }
}

static void opTxn(sqlite3 *db, FuzzIn *in){
  static const char *azTxn[] = {
    "BEGIN", "COMMIT", "ROLLBACK", "SAVEPOINT s1", "RELEASE s1", "ROLLBACK TO s1",
  };
  fuzzExec(db, "%s", azTxn[fuzzPick(in, 6)]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size){
  FuzzBudget budget;
  FuzzIn in;
  Setup s;
  sqlite3 *db;
  int nOp = 0, bLater = 0;

  if( size>64*1024 ) return 0;
  fuzzInInit(&in, data, size);
  db = fuzzOpen(&budget);
  if( db==0 ) return 0;
  setup(db, &in, &s, &bLater);
  while( !fuzzInDone(&in) && nOp++<MAX_OPS ){
    switch( fuzzPick(&in, 12) ){
      case 0: case 1: case 2: case 3: opWrite(db, &in, &s); break;
      case 4: case 5: case 6: opTopK(db, &in, &s, &budget); break;
      case 7: opBatch(db, &in, &s); break;
      case 8: opTxn(db, &in); break;
      default: opSchema(db, &in, &s); break;
    }
  }
  fuzzExec(db, "PRAGMA query_only = 0");
  fuzzExec(db, "SELECT id, distance FROM vector_top_k(%Q, (SELECT e FROM t LIMIT 1), 4)", s.zIdx);
  fuzzExec(db, "SELECT vecsync_rebuild(%Q)", s.zIdx);
  fuzzExec(db, (size & 1) ? "COMMIT" : "ROLLBACK");
  fuzzClose(db);
  return 0;
}
