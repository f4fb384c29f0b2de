/*
** fuzz_shadow.c: a vec0 table whose shadow tables were damaged behind its back.
**
** Each input gets a fresh :memory: connection and:
**
**   create virtual table v using vec0(id text primary key,
**     embedding float[1..4] distance_metric=<l2|cosine|dot> [indexed by rescore(int8|bit)]
**               | int8[4..16] distance_metric=<l2|cosine|l1> | bit[32..128],
**       -- (an int8 or bit vector takes the bytes of a float[1..4] one, so the blobs
**       -- damaged have the same sizes; its values go in through vec_int8() / vec_bit())
**     album text, n integer,
**     +note text, [w float[2] distance_metric=cosine,]  -- a further vector column: flags
**     chunk_size=<8|16|32>);                            -- bit 64 without bit 32
**   -- 1..24 rows, some deleted (so v_free has slots); optionally a KNN first, so the
**   -- in-memory copy is current when the damage lands (a stale copy is another path)
**
** then 1..8 input-chosen damages with plain SQL: v_rows.slot / rowid / id set to X,
** v_info values (next_slot, generation, dimensions, chunk_size, format, vectors_per_blob,
** metric) set to X or deleted, v_vectors chunk_id moved, blobs replaced by random or
** wrongly sized ones, rows deleted from v_vectors / v_free / v_rows, bogus v_free slots
** and v_rows rows inserted, a shadow table dropped or a column renamed, the further vector
** column's values in v_rows (c5) replaced by a blob of another length, NULL or text. X is from
** -5, 0, 34359738368, 2^63-1, -2^63, small and random values.
**
** Then every operation runs once, whatever fails: KNN (plain, filtered, LIMIT, IN),
** point lookups by id and rowid, full scans, vector reads, INSERT, UPDATE, DELETE,
** INSERT OR REPLACE, vecsync_knn_batch, a KNN after the writes, and DROP TABLE.
*/
/* A damaged next_slot makes vec0 size its in-memory copy from it: 13 bytes a slot through
** SQLite's allocator (bounded by this limit) plus the vector blocks beside it. 64 MB keeps
** the blocks under 100 MB, so runs stay fast and far from libFuzzer's RSS limit. */
#define FUZZ_HEAP_LIMIT (64*1024*1024)
#include "fuzz_common.h"

#define MAX_ROWS    24
#define MAX_DAMAGE  8

static int64_t pickX(FuzzIn *in){
  static const int64_t aX[] = {
    -5, -1, 0, 1, 2, 7, 8, 9, 15, 16, 17, 23, 24, 31, 32, 33, 63, 64, 1024, 65535, 65536,
    34359738368LL, 9223372036854775807LL, -9223372036854775807LL-1, 4294967296LL,
    2147483647, 2147483648LL, -2147483647-1, 1099511627776LL, 4611686018427387904LL,
  };
  unsigned c = fuzzU8(in);
  if( c<160 ) return aX[c % (sizeof(aX)/sizeof(aX[0]))];
  if( c<224 ) return (int64_t)(fuzzU16(in) % 4096) - 64;       /* near the real range */
  return (int64_t)fuzzU64(in);
}

/* Bind X, or now and then a value of another type. */
static void bindX(FuzzIn *in, sqlite3_stmt *pStmt, int i){
  unsigned c = fuzzU8(in);
  if( pStmt==0 ) return;
  if( c<216 ) sqlite3_bind_int64(pStmt, i, pickX(in));
  else if( c<224 ) sqlite3_bind_null(pStmt, i);
  else if( c<232 ) sqlite3_bind_double(pStmt, i, fuzzDouble(in));
  else if( c<240 ) sqlite3_bind_text(pStmt, i, c & 1 ? "cosine" : "12abc", -1, SQLITE_STATIC);
  else fuzzBindScalar(in, pStmt, i);
}

static void run1(sqlite3 *db, FuzzIn *in, const char *zSql, int nX){
  sqlite3_stmt *pStmt = fuzzPrepare(db, "%s", zSql);
  int i;
  if( pStmt==0 ) return;
  for(i=1; i<=nX; i++) bindX(in, pStmt, i);
  fuzzRun(pStmt);
}

static void damage(sqlite3 *db, FuzzIn *in, int nDim, int nPerBlob){
  static const char *azKey[] = {
    "next_slot", "generation", "dimensions", "chunk_size", "format", "vectors_per_blob",
    "metric", "bogus",
  };
  static const char *azTable[] = { "v_info", "v_vectors", "v_free", "v_rows" };
  unsigned c = fuzzPick(in, 21);
  char zSql[200];
  switch( c ){
    case 0: case 1:
      run1(db, in, fuzzU8(in)&1 ? "UPDATE v_rows SET slot = ?1 WHERE rowid = ?2"
                                : "UPDATE v_rows SET slot = ?1 WHERE rowid = (SELECT min(rowid) FROM v_rows)", 2);
      break;
    case 2:
      run1(db, in, "UPDATE v_rows SET slot = ?1", 1);
      break;
    case 3: case 4:
      snprintf(zSql, sizeof(zSql), "UPDATE v_info SET value = ?1 WHERE key = '%s'",
               azKey[fuzzPick(in, 8)]);
      run1(db, in, zSql, 1);
      break;
    case 5:
      snprintf(zSql, sizeof(zSql), "DELETE FROM v_info WHERE key = '%s'", azKey[fuzzPick(in, 8)]);
      run1(db, in, zSql, 0);
      break;
    case 6:
      run1(db, in, "UPDATE v_vectors SET chunk_id = ?1 WHERE chunk_id = ?2", 2);
      break;
    case 7: case 8: {
      /* A blob of the right size with garbage floats (NaN, inf...), or a wrong size. */
      size_t nRight = (size_t)nPerBlob*(size_t)nDim*4, n, nb;
      unsigned char *a;
      const uint8_t *z;
      sqlite3_stmt *pStmt;
      unsigned sz = fuzzU8(in);
      n = sz<128 ? nRight : sz<160 ? nRight-4 : sz<192 ? nRight+4 : sz<200 ? 0 : (size_t)(sz*3);
      if( n>65536 ) n = nRight;
      a = calloc(n ? n : 1, 1);
      if( a==0 ) return;
      z = fuzzBytes(in, n, &nb);
      memcpy(a, z, nb);
      pStmt = fuzzPrepare(db, fuzzU8(in)&1 ? "UPDATE v_vectors SET vectors = ?1"
                                            : "UPDATE v_vectors SET vectors = ?1 WHERE chunk_id = ?2");
      if( pStmt ){
        sqlite3_bind_blob(pStmt, 1, a, (int)n, SQLITE_TRANSIENT);
        sqlite3_bind_int64(pStmt, 2, fuzzPick(in, 4));
        fuzzRun(pStmt);
      }
      free(a);
      break;
    }
    case 9:
      run1(db, in, fuzzU8(in)&1 ? "DELETE FROM v_vectors" : "DELETE FROM v_vectors WHERE chunk_id = ?1", 1);
      break;
    case 10:
      run1(db, in, fuzzU8(in)&1 ? "DELETE FROM v_free" : "DELETE FROM v_rows WHERE rowid = ?1", 1);
      break;
    case 11:
      run1(db, in, "INSERT OR IGNORE INTO v_free(slot) VALUES(?1)", 1);
      break;
    case 12:
      snprintf(zSql, sizeof(zSql), "DROP TABLE %s", azTable[fuzzPick(in, 4)]);
      run1(db, in, zSql, 0);
      break;
    case 13:
      run1(db, in, "INSERT OR REPLACE INTO v_rows(rowid, id, slot, c2, c3) VALUES(?1, 'k' || ?1, ?2, 'a1', 3)", 2);
      break;
    case 14:
      run1(db, in, fuzzU8(in)&1 ? "UPDATE v_rows SET rowid = ?1 WHERE rowid = (SELECT max(rowid) FROM v_rows)"
                                : "UPDATE v_rows SET id = ?1 WHERE rowid = 2", 1);
      break;
    case 15:
      run1(db, in, "INSERT OR REPLACE INTO v_vectors(chunk_id, vectors) VALUES(?1, zeroblob(?2))", 2);
      break;
    case 16:
      run1(db, in, fuzzU8(in)&1 ? "ALTER TABLE v_rows RENAME COLUMN slot TO s"
                                : "ALTER TABLE v_rows DROP COLUMN c3", 0);
      break;
    case 17: {
      static const char *azRows[] = {
        "UPDATE v_rows SET c2 = ?1, c3 = ?1",
        /* The further vector column (no such column otherwise: the damage is an error). */
        "UPDATE v_rows SET c5 = ?1 WHERE rowid = 2",
        "UPDATE v_rows SET c5 = zeroblob(?1 % 64)",
        "UPDATE v_rows SET c5 = randomblob(8) WHERE rowid % 3 = ?1 % 3",
      };
      run1(db, in, azRows[fuzzPick(in, 4)], 1);
      break;
    }
    case 18:
      run1(db, in, "UPDATE v_info SET value = value + ?1 WHERE key = 'generation'", 1);
      break;
    case 20: {
      /* A quantized table's T_codes (no such table otherwise: the damage is an error). */
      static const char *azCodes[] = {
        "UPDATE v_codes SET codes = ?1 WHERE chunk_id = 0",
        "UPDATE v_codes SET codes = substr(codes, 1, ?1)",
        "UPDATE v_codes SET chunk_id = ?1 WHERE chunk_id = 0",
        "DELETE FROM v_codes WHERE chunk_id = ?1",
        "INSERT OR REPLACE INTO v_codes(chunk_id, codes) VALUES(?1, randomblob(40))",
        "UPDATE v_info SET value = ?1 WHERE key = 'codes'",
        "DROP TABLE v_codes",
      };
      unsigned e = fuzzPick(in, 7);
      if( e==0 ){
        size_t nb = 0;
        const uint8_t *z = fuzzBytes(in, 4096, &nb);
        sqlite3_stmt *pStmt = fuzzPrepare(db, "%s", azCodes[0]);
        if( pStmt ){
          sqlite3_bind_blob(pStmt, 1, z, (int)nb, SQLITE_TRANSIENT);
          fuzzRun(pStmt);
        }
      }else{
        run1(db, in, azCodes[e], e==6 ? 0 : 1);
      }
      break;
    }
    default:
      run1(db, in, "INSERT OR REPLACE INTO v_info(key, value) VALUES('next_slot', ?1)", 1);
      break;
  }
}

/* A float32 vector of nDim elements from the input. */
static void bindVec(FuzzIn *in, sqlite3_stmt *pStmt, int i, int nDim){
  float a[4];
  int j;
  for(j=0; j<nDim; j++) a[j] = (float)((int)fuzzPick(in, 9) - 4) + 0.5f;
  if( pStmt ) sqlite3_bind_blob(pStmt, i, a, nDim*4, SQLITE_TRANSIENT);
}

/* zSql with each "?1" written as zVec (the vector parameter, wrapped for a typed column). */
static sqlite3_stmt *prepareVec(sqlite3 *db, const char *zSql, const char *zVec){
  sqlite3_str *s = sqlite3_str_new(0);
  sqlite3_stmt *pStmt;
  char *z;
  const char *zAt;
  while( (zAt = strstr(zSql, "?1"))!=0 ){
    sqlite3_str_append(s, zSql, (int)(zAt - zSql));
    sqlite3_str_appendall(s, zVec);
    zSql = zAt + 2;
  }
  sqlite3_str_appendall(s, zSql);
  z = sqlite3_str_finish(s);
  if( z==0 ) return 0;
  pStmt = fuzzPrepare(db, "%s", z);
  sqlite3_free(z);
  return pStmt;
}

static void runAll(sqlite3 *db, FuzzIn *in, int nDim, const char *zVec, int bExtra){
  static const char *azExtra[] = {
    /* the further vector column: KNN (filtered, ranged), reads, writes */
    "SELECT id, distance FROM v WHERE w MATCH '[1, 0.5]' AND k = 3",
    "SELECT id, distance FROM v WHERE w MATCH '[0.5, -1]' AND k = 5 AND album = 'a1' AND distance > 0.1",
    "SELECT id, w FROM v ORDER BY rowid",
    "UPDATE v SET w = '[0.25, 1]' WHERE id = 'k2'",
    "UPDATE v SET album = 'a4' WHERE id = 'k3'",
    "INSERT INTO v(id, embedding, w) VALUES('new3', (SELECT embedding FROM v LIMIT 1), '[1, 1]')",
    "SELECT id, distance FROM v WHERE w MATCH (SELECT w FROM v LIMIT 1) AND k = 2",
  };
  static const char *azSql[] = {
    /* reads */
    "SELECT id, distance FROM v WHERE embedding MATCH ?1 AND k = 3 ORDER BY distance",
    "SELECT id, distance, album FROM v WHERE embedding MATCH ?1 AND k = 5 AND album = 'a1' AND n > 2",
    "SELECT id, distance FROM v WHERE embedding MATCH ?1 AND k = 2 AND n IN (1, 3, 5) AND id <> 'k2'",
    "SELECT id, distance FROM v WHERE embedding MATCH ?1 AND k = 100 AND album IS NULL AND rowid >= 1",
    "SELECT id, distance FROM v WHERE embedding MATCH ?1 ORDER BY distance LIMIT 4",
    "SELECT *, distance FROM v WHERE embedding MATCH ?1 AND k = 9223372036854775807",
    "SELECT * FROM v WHERE id = 'k1'",
    "SELECT embedding FROM v WHERE rowid = 2",
    "SELECT * FROM v",
    "SELECT id, vec_to_json(embedding) FROM v ORDER BY rowid",
    "SELECT count(*) FROM v",
    "SELECT query_index, id, distance FROM vecsync_knn_batch('v', ?1, 2)",
    /* writes */
    "INSERT INTO v(id, embedding, album, n, note) VALUES('new1', ?1, 'a1', 3, 'x')",
    "INSERT INTO v(id, embedding, album, n) VALUES('new2', ?1, 'a2', 4)",
    "UPDATE v SET embedding = ?1 WHERE id = 'k1'",
    "UPDATE v SET album = 'a3', n = 9 WHERE id = 'k2'",
    "UPDATE v SET id = 'k2b' WHERE id = 'k3'",
    "DELETE FROM v WHERE id = 'k4'",
    "INSERT OR REPLACE INTO v(id, embedding, album) VALUES('k5', ?1, 'a0')",
    "DELETE FROM v WHERE rowid = 1",
    /* reads after the writes */
    "SELECT id, distance FROM v WHERE embedding MATCH ?1 AND k = 4 AND album = 'a1'",
    "SELECT * FROM v WHERE rowid = 3",
    "SELECT query_index, id, distance FROM vecsync_knn_batch('v', ?1, 3)",
    "DROP TABLE v",
  };
  size_t i;
  for(i=0; bExtra && i<sizeof(azExtra)/sizeof(azExtra[0]); i++) fuzzExec(db, "%s", azExtra[i]);
  for(i=0; i<sizeof(azSql)/sizeof(azSql[0]); i++){
    sqlite3_stmt *pStmt = prepareVec(db, azSql[i], zVec);
    if( pStmt==0 ) continue;
    if( sqlite3_bind_parameter_count(pStmt)>=1 ) bindVec(in, pStmt, 1, nDim);
    fuzzRun(pStmt);
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size){
  static const char *azMetric[] = { "l2", "cosine", "dot" };
  static const int aChunk[] = { 8, 16, 32 };
  FuzzBudget budget;
  FuzzIn in;
  sqlite3 *db;
  sqlite3_stmt *pIns, *pPer;    /* the rows' insert; the read of vectors_per_blob */
  unsigned flags;
  int nDim, nChunk, nRow, nPerBlob, i, nDamage, bExtra;

  /* The copy holds floats, int8 codes or bits: the last two re-read T_vectors to re-score. */
  static const char *azIndex[] = {
    "", " indexed by rescore(quantizer=int8, oversample=4)",
    " indexed by rescore(quantizer=bit, oversample=4)", "int8", "bit",
  };
  const char *zIndex, *zVec = "?1";
  char zColumn[96];
  if( size>64*1024 ) return 0;
  fuzzInInit(&in, data, size);
  flags = fuzzU8(&in);
  nDim = 1 + fuzzPick(&in, 4);
  nChunk = aChunk[fuzzPick(&in, 3)];
  nRow = 1 + fuzzPick(&in, MAX_ROWS);
  db = fuzzOpen(&budget);
  if( db==0 ) return 0;
  zIndex = azIndex[(flags>>3) % 5];
  if( strcmp(zIndex, "int8")==0 ){
    snprintf(zColumn, sizeof(zColumn), "int8[%d] distance_metric=%s", 4*nDim,
             flags % 3==2 ? "l1" : azMetric[flags % 3]);
    zVec = "vec_int8(?1)";
  }else if( strcmp(zIndex, "bit")==0 ){
    snprintf(zColumn, sizeof(zColumn), "bit[%d]", 32*nDim);
    zVec = "vec_bit(?1)";
  }else{
    snprintf(zColumn, sizeof(zColumn), "float[%d] distance_metric=%s%s", nDim,
             azMetric[flags % 3], zIndex);
  }
  bExtra = (flags & 96)==64;
  if( fuzzExec(db, "CREATE VIRTUAL TABLE v USING vec0(id text primary key, "
                   "embedding %s, album text, n integer, +note text,%s chunk_size=%d)",
               zColumn, bExtra ? " w float[2] distance_metric=cosine," : "", nChunk)!=SQLITE_OK ){
    fuzzClose(db);
    return 0;
  }
  /* vectors_per_blob as vec0 chose it (by the page size, for a quantized table): what a
  ** well-sized blob holds. */
  nPerBlob = 1;
  pPer = fuzzPrepare(db, "SELECT value FROM v_info WHERE key = 'vectors_per_blob'");
  if( pPer && sqlite3_step(pPer)==SQLITE_ROW ) nPerBlob = sqlite3_column_int(pPer, 0);
  sqlite3_finalize(pPer);
  if( nPerBlob<1 || nPerBlob>nChunk ) nPerBlob = 1;
  pIns = fuzzPrepare(db, "INSERT INTO v(id, embedding, album, n, note%s) "
                         "VALUES('k' || ?1, %s(?2), ?3, ?4, 'note'%s)",
                     bExtra ? ", w" : "", zVec[0]=='?' ? "" : zVec[4]=='i' ? "vec_int8" : "vec_bit",
                     bExtra ? ", json_array(?1 % 3 + 1, ?1 % 5 - 2)" : "");
  for(i=0; i<nRow && pIns; i++){
    char zAlbum[4];
    float a[4];
    int j;
    for(j=0; j<nDim; j++) a[j] = (float)((i*7 + j*3) % 11) - 5.0f + 0.25f*(float)j;
    snprintf(zAlbum, sizeof(zAlbum), "a%d", i % 3);
    sqlite3_bind_int(pIns, 1, i);
    sqlite3_bind_blob(pIns, 2, a, nDim*4, SQLITE_TRANSIENT);
    sqlite3_bind_text(pIns, 3, zAlbum, -1, SQLITE_TRANSIENT);
    if( i % 4 ) sqlite3_bind_int(pIns, 4, i % 6); else sqlite3_bind_null(pIns, 4);
    sqlite3_step(pIns);
    sqlite3_reset(pIns);
  }
  sqlite3_finalize(pIns);
  if( flags & 8 ) fuzzExec(db, "DELETE FROM v WHERE rowid %% 5 = 3");        /* v_free rows */
  if( flags & 16 ){
    /* Load the in-memory copy before the damage: later reads may trust it. */
    fuzzExec(db, "SELECT id FROM v WHERE embedding MATCH (SELECT embedding FROM v LIMIT 1) AND k = 2");
  }
  if( flags & 32 ) fuzzExec(db, "BEGIN");

  nDamage = 1 + fuzzPick(&in, MAX_DAMAGE);
  for(i=0; i<nDamage && !fuzzInDone(&in); i++) damage(db, &in, nDim, nPerBlob);
  runAll(db, &in, nDim, zVec, bExtra);
  if( flags & 32 ) fuzzExec(db, (flags & 64) ? "COMMIT" : "ROLLBACK");
  fuzzClose(db);
  return 0;
}
