/*
** vec0_store.c: where a vec0 table keeps its rows: its shadow tables, their statements,
** slots, and the change log.
**
** Usage (internal; vec0_cache.c, vec0_write.c, vec0_search.c and vec0_migrate.c call these):
**
**   vec0ShadowCreate(p);                       // CREATE VIRTUAL TABLE
**   vec0StorageCheck(p, &bForeign);            // T_info against the declaration
**   vec0SlotAlloc(p, &iSlot, &nGrown); vec0VectorWrite(p, iSlot, a); vec0LogSlot(...);
**   vec0Stmt(p, VEC0_STMT_READ_BY_ROWID, &pStmt);
**
** Storage. A vec0 table T keeps five shadow tables in its schema:
**
**   T_info(key PRIMARY KEY, value)     format, generation, next_slot, chunk_size,
**                                      dimensions, metric, vectors_per_blob, uid, log_from,
**                                      element_bits (int8[N]: 8, bit[N]: 1; absent: 32),
**                                      vector_columns (absent: 1; format 2 when > 1)
**   T_rows(rowid INTEGER PRIMARY KEY,  one row per vec0 row: its slot, its text primary
**          [id TEXT UNIQUE,] slot,       key if it has one, and its metadata and
**          c0, c1, ...)                  auxiliary values (column cN is user column N),
**                                      and its extra vector columns' values: the
**                                      column's bytes (float32 little-endian, int8, bit)
**   T_vectors(chunk_id INTEGER PRIMARY KEY, vectors BLOB)
**                                      blobs of P vectors, row-major float32 (P a power
**                                      of two dividing chunk_size, P·D ≤ 65,536 floats);
**                                      slot s lives in blob s/P at position s%P. An
**                                      int8[N] or bit[N] vector takes its bytes (N or N/8)
**                                      zero-padded to a multiple of 4: cfg.nWord words
**   T_free(slot INTEGER PRIMARY KEY)   slots freed by DELETE, reused first by INSERT
**   T_changes(generation, slot, rowid) the change log: which slots each write transaction
**                                      (generation) changed, and the row now there (NULL:
**                                      freed); slot -1 means "too many, reload", slot
**                                      -2 "next_slot came down" (vec0StorageTrim). Kept for
**                                      the last VEC0_LOG_KEEP generations ('log_from' says
**                                      from where), so another connection's copy catches
**                                      up in time proportional to the change (vec0_cache.c)
**
** Vectors are written into their blob in place with sqlite3_blob_write(), so an insert
** touches one vector's pages, not the blob's. Everything is ordinary SQLite data: it
** obeys transactions, survives reopening and is seen by other connections.
**
** Trust. The shadow tables are ordinary tables: anyone can write them, and a file can be
** damaged. Every number read from them is checked before it is used as a size or an
** index (next_slot against the blobs present, each slot against next_slot, each blob's id
** and length), and a value that fails is SQLITE_CORRUPT_VTAB with the table named.
**
** This file calls no other vec0 file but the declaration's and the table's: the in-memory
** copy of the vectors that searches scan is vec0_cache.c's, which owns a write (it writes
** here, then keeps the transaction's private copy in step, and logs the slot with
** vec0LogSlot for the other connections); a table sqlite-vec wrote is vec0_migrate.c's.
*/
#define _GNU_SOURCE 1
#include "vecsync_int.h"
SQLITE_EXTENSION_INIT3

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* The layout version this file reads and writes (T_info 'format'). A table with extra
** vector columns is VEC0_FORMAT_MULTI, and T_info 'vector_columns' counts its vector
** columns: code that knows only format 1 refuses it rather than misread T_rows. */
#define VEC0_FORMAT 1
#define VEC0_FORMAT_MULTI 2

/* The format a table of this declaration is written in. */
static int vec0FormatFor(const Vec0Config *pCfg){
  return pCfg->nExtraVec>0 ? VEC0_FORMAT_MULTI : VEC0_FORMAT;
}

/* ---- statements -------------------------------------------------------------------------- */

/* The columns a cursor reads from T_rows: see VEC0_ROW_*. */
static void vec0AppendRowColumns(Vec0Table *p, sqlite3_str *pStr){
  int i;
  sqlite3_str_appendf(pStr, "rowid, %s, slot", vec0HasTextPk(p) ? "id" : "NULL");
  for(i=0; i<p->cfg.nCol; i++){
    if( vec0IsStored(&p->cfg, i) ){
      sqlite3_str_appendf(pStr, ", c%d", i);
    }else{
      sqlite3_str_appendall(pStr, ", NULL");
    }
  }
}

/* ", c0, c3, ..." (bAssign: ", c0=?, c3=?") over the stored user columns. */
static void vec0AppendStoredColumns(Vec0Table *p, sqlite3_str *pStr, const char *zEach){
  int i;
  for(i=0; i<p->cfg.nCol; i++){
    if( vec0IsStored(&p->cfg, i) ) sqlite3_str_appendf(pStr, zEach, i);
  }
}

/* The fixed statements' SQL, by VEC0_STMT_*, as FTS5's fts5_storage.c keeps azStmt[]:
** each takes the schema and the table's name (%w, %w). NULL: made by vec0StmtSql, since
** its columns depend on the declaration. */
static const char *const azVec0Stmt[VEC0_STMT_COUNT] = {
  [VEC0_STMT_INFO_GET]   = "SELECT value FROM \"%w\".\"%w_info\" WHERE key=?1",
  [VEC0_STMT_INFO_SET]   = "REPLACE INTO \"%w\".\"%w_info\"(key, value) VALUES(?1, ?2)",
  [VEC0_STMT_FREE_FIRST] = "SELECT slot FROM \"%w\".\"%w_free\" ORDER BY slot LIMIT 1",
  [VEC0_STMT_FREE_DEL]   = "DELETE FROM \"%w\".\"%w_free\" WHERE slot=?1",
  [VEC0_STMT_FREE_ADD]   = "INSERT INTO \"%w\".\"%w_free\"(slot) VALUES(?1)",
  [VEC0_STMT_FREE_COUNT] = "SELECT count(*) FROM \"%w\".\"%w_free\" WHERE slot>=?1 AND slot<?2",
  [VEC0_STMT_FREE_TRIM]  = "DELETE FROM \"%w\".\"%w_free\" WHERE slot>=?1",
  [VEC0_STMT_BLOB_DEL]   = "DELETE FROM \"%w\".\"%w_vectors\" WHERE chunk_id=?1",
  [VEC0_STMT_CODES_NEW]  = "INSERT INTO \"%w\".\"%w_codes\"(chunk_id, codes) VALUES(?1, zeroblob(?2))",
  [VEC0_STMT_CODES_DEL]  = "DELETE FROM \"%w\".\"%w_codes\" WHERE chunk_id=?1",
  [VEC0_STMT_CODES_IDS]  = "SELECT chunk_id FROM \"%w\".\"%w_codes\" ORDER BY chunk_id",
  [VEC0_STMT_BLOB_NEW]   = "INSERT INTO \"%w\".\"%w_vectors\"(chunk_id, vectors) VALUES(?1, zeroblob(?2))",
  [VEC0_STMT_BLOB_IDS]   = "SELECT chunk_id FROM \"%w\".\"%w_vectors\" ORDER BY chunk_id",
  [VEC0_STMT_SLOT_BY_ROWID] = "SELECT rowid, slot FROM \"%w\".\"%w_rows\" WHERE rowid=?1",
  [VEC0_STMT_SLOT_BY_ID] = "SELECT rowid, slot FROM \"%w\".\"%w_rows\" WHERE id=?1",
  [VEC0_STMT_SLOT_ALL]   = "SELECT rowid, slot FROM \"%w\".\"%w_rows\"",
  [VEC0_STMT_SLOT_ALL_BY_ID] = "SELECT rowid, slot FROM \"%w\".\"%w_rows\" ORDER BY id",
  [VEC0_STMT_ROW_DELETE] = "DELETE FROM \"%w\".\"%w_rows\" WHERE rowid=?1",
  [VEC0_STMT_NEXT_ROWID] = "SELECT coalesce(max(rowid), 0) + 1 FROM \"%w\".\"%w_rows\"",
  [VEC0_STMT_LOG_ADD]    = "INSERT OR REPLACE INTO \"%w\".\"%w_changes\"(generation, slot, rowid)"
                           " VALUES(?1, ?2, ?3)",
  [VEC0_STMT_LOG_RANGE]  = "SELECT slot, rowid FROM \"%w\".\"%w_changes\""
                           " WHERE generation>?1 AND generation<=?2 ORDER BY generation",
  [VEC0_STMT_LOG_COUNT]  = "SELECT count(*), coalesce(sum(slot<0 AND slot<>"
                           VS_STR(VEC0_LOG_TRIMMED) "), 0)"
                           " FROM \"%w\".\"%w_changes\" WHERE generation>?1 AND generation<=?2",
  [VEC0_STMT_LOG_PRUNE]  = "DELETE FROM \"%w\".\"%w_changes\" WHERE generation<=?1",
  [VEC0_STMT_LOG_MARK]   = "DELETE FROM \"%w\".\"%w_changes\" WHERE generation=?1",
  [VEC0_STMT_IVF_ASSIGN_CODE] = "INSERT OR REPLACE INTO \"%w\".\"%w_ivf_assign\""
                                "(slot, list, rowid, code) VALUES(?1, ?2, ?3, ?4)",
  /* A list's rows, one range of the table's key (list, slot). */
  [VEC0_STMT_IVF_LIST_CODES] = "SELECT slot, rowid, code FROM \"%w\".\"%w_ivf_assign\""
                               " WHERE list=?1",
  [VEC0_STMT_IVF_ASSIGN_PUT] = "INSERT OR REPLACE INTO \"%w\".\"%w_ivf_assign\"(slot, list, rowid)"
                               " VALUES(?1, ?2, ?3)",
  [VEC0_STMT_IVF_ASSIGN_SET] = "INSERT OR REPLACE INTO \"%w\".\"%w_ivf_assign\"(slot, list)"
                               " VALUES(?1, ?2)",
  [VEC0_STMT_IVF_ASSIGN_AT]  = "SELECT list, rowid FROM \"%w\".\"%w_ivf_assign\" WHERE slot=?1",
  [VEC0_STMT_IVF_ASSIGN_GET] = "SELECT list, NULL FROM \"%w\".\"%w_ivf_assign\" WHERE slot=?1",
  [VEC0_STMT_IVF_ASSIGN_ROWID] = "UPDATE \"%w\".\"%w_ivf_assign\" SET rowid=?2 WHERE slot=?1",
  [VEC0_STMT_IVF_ASSIGN_DEL] = "DELETE FROM \"%w\".\"%w_ivf_assign\" WHERE slot=?1",
  /* The next three read a range of T_ivf_assign's key (ivf_list_index 3), or of its index
  ** on (list, rowid) (2) or on list (1). */
  [VEC0_STMT_IVF_LIST_ROWS]  = "SELECT slot, rowid FROM \"%w\".\"%w_ivf_assign\" WHERE list=?1",
  [VEC0_STMT_IVF_LIST_SLOTS] = "SELECT slot, NULL FROM \"%w\".\"%w_ivf_assign\" WHERE list=?1",
  [VEC0_STMT_IVF_LIST_SIZES] = "SELECT list, count(*), min(slot), max(slot),"
                               " sum(typeof(rowid)<>'integer')"
                               " FROM \"%w\".\"%w_ivf_assign\" GROUP BY list",
  [VEC0_STMT_IVF_LIST_SIZES_CODED] = "SELECT list, count(*), min(slot), max(slot),"
                               " sum(typeof(rowid)<>'integer'), sum(code IS NULL),"
                               " sum(typeof(code)='integer')"
                               " FROM \"%w\".\"%w_ivf_assign\" GROUP BY list",
  [VEC0_STMT_IVF_PACK]       = "SELECT codes FROM \"%w\".\"%w_ivf_packs\""
                               " WHERE list=?1 AND part=?2",
  [VEC0_STMT_IVF_PACK_PUT]   = "INSERT INTO \"%w\".\"%w_ivf_packs\"(list, part, codes)"
                               " VALUES(?1, ?2, ?3)",
  [VEC0_STMT_IVF_PACK_BYTES] = "SELECT coalesce(sum(length(codes)), 0)"
                               " FROM \"%w\".\"%w_ivf_packs\"",
};

/* The SQL text of statement eStmt (sqlite3_malloc'ed), or NULL when out of memory. */
static char *vec0StmtSql(Vec0Table *p, int eStmt){
  const char *zS = p->zStoreSchema, *zT = p->zName;
  sqlite3_str *pStr = sqlite3_str_new(p->db);
  switch( eStmt ){
    case VEC0_STMT_ROW_INSERT:
      sqlite3_str_appendf(pStr, "INSERT INTO \"%w\".\"%w_rows\"(rowid, slot%s",
                          zS, zT, vec0HasTextPk(p) ? ", id" : "");
      vec0AppendStoredColumns(p, pStr, ", c%d");
      sqlite3_str_appendf(pStr, ") VALUES(?, ?%s", vec0HasTextPk(p) ? ", ?" : "");
      vec0AppendStoredColumns(p, pStr, ", ?");
      sqlite3_str_appendall(pStr, ")");
      break;
    case VEC0_STMT_ROW_UPDATE:
      sqlite3_str_appendf(pStr, "UPDATE \"%w\".\"%w_rows\" SET rowid=?, slot=?%s",
                          zS, zT, vec0HasTextPk(p) ? ", id=?" : "");
      vec0AppendStoredColumns(p, pStr, ", c%d=?");
      sqlite3_str_appendall(pStr, " WHERE rowid=?");
      break;
    case VEC0_STMT_READ_BY_ROWID:
    case VEC0_STMT_READ_BY_ID:
    case VEC0_STMT_READ_ALL:
      sqlite3_str_appendall(pStr, "SELECT ");
      vec0AppendRowColumns(p, pStr);
      sqlite3_str_appendf(pStr, " FROM \"%w\".\"%w_rows\"", zS, zT);
      if( eStmt==VEC0_STMT_READ_BY_ROWID ) sqlite3_str_appendall(pStr, " WHERE rowid=?1");
      if( eStmt==VEC0_STMT_READ_BY_ID ) sqlite3_str_appendall(pStr, " WHERE id=?1");
      if( eStmt==VEC0_STMT_READ_ALL ) sqlite3_str_appendall(pStr, " ORDER BY rowid");
      break;
    case VEC0_STMT_BLOB_RANGE:
      /* The ends of the b-tree: SQLite finds min() or max() alone there, but the pair in
      ** one SELECT (like count(*)) by reading every blob's page, 15,000 pages at 1,000,000
      ** rows, on every load and every catch-up. */
      sqlite3_str_appendf(pStr, "SELECT (SELECT min(chunk_id) FROM \"%w\".\"%w_vectors\"),"
                                " (SELECT max(chunk_id) FROM \"%w\".\"%w_vectors\")",
                          zS, zT, zS, zT);
      break;
    default:
      sqlite3_str_appendf(pStr, azVec0Stmt[eStmt], zS, zT);
      break;
  }
  return sqlite3_str_finish(pStr);
}

static int vec0StmtPrepare(Vec0Table *p, int eStmt, unsigned int flags, sqlite3_stmt **ppStmt){
  char *zSql = vec0StmtSql(p, eStmt);
  int rc;
  *ppStmt = 0;
  if( zSql==0 ) return SQLITE_NOMEM;
  rc = sqlite3_prepare_v3(p->dbStore, zSql, -1, flags, ppStmt, 0);
  sqlite3_free(zSql);
  return rc;
}

int vec0Stmt(Vec0Table *p, int eStmt, sqlite3_stmt **ppStmt){
  int rc = SQLITE_OK;
  if( p->aStmt[eStmt]==0 ){
    rc = vec0StmtPrepare(p, eStmt, SQLITE_PREPARE_PERSISTENT, &p->aStmt[eStmt]);
  }
  *ppStmt = p->aStmt[eStmt];
  return rc;
}

int vec0StmtRun(Vec0Table *p, int eStmt, sqlite3_int64 iArg){
  sqlite3_stmt *pStmt = 0;
  int rc = vec0Stmt(p, eStmt, &pStmt);
  if( rc!=SQLITE_OK ) return rc;
  sqlite3_bind_int64(pStmt, 1, iArg);
  sqlite3_step(pStmt);
  return sqlite3_reset(pStmt);
}

int vec0StmtBorrow(Vec0Table *p, int eStmt, sqlite3_stmt **ppStmt){
  int rc;
  if( p->aStmtBusy[eStmt] ) return vec0StmtPrepare(p, eStmt, 0, ppStmt);
  rc = vec0Stmt(p, eStmt, ppStmt);
  if( rc==SQLITE_OK ) p->aStmtBusy[eStmt] = 1;
  return rc;
}

void vec0StmtGiveBack(Vec0Table *p, int eStmt, sqlite3_stmt *pStmt){
  if( pStmt==0 ) return;
  if( p->aStmt[eStmt]==pStmt ){
    sqlite3_reset(pStmt);
    sqlite3_clear_bindings(pStmt);
    p->aStmtBusy[eStmt] = 0;
  }else{
    sqlite3_finalize(pStmt);
  }
}

void vec0StmtsFinalize(Vec0Table *p){
  int i;
  for(i=0; i<VEC0_STMT_COUNT; i++){
    /* A statement lent to an open cursor is the cursor's to finalize: it no longer
    ** matches aStmt[i] when given back. */
    if( !p->aStmtBusy[i] ) sqlite3_finalize(p->aStmt[i]);
    p->aStmt[i] = 0;
    p->aStmtBusy[i] = 0;
  }
}

/* ---- T_info -------------------------------------------------------------------------- */

/* Read an integer from T_info; *piVal keeps its value when the key is absent. */
int vec0InfoGet(Vec0Table *p, const char *zKey, sqlite3_int64 *piVal){
  sqlite3_stmt *pStmt;
  int rc = vec0Stmt(p, VEC0_STMT_INFO_GET, &pStmt);
  if( rc!=SQLITE_OK ) return rc;
  sqlite3_bind_text(pStmt, 1, zKey, -1, SQLITE_STATIC);
  if( sqlite3_step(pStmt)==SQLITE_ROW ) *piVal = sqlite3_column_int64(pStmt, 0);
  return sqlite3_reset(pStmt);
}

int vec0InfoSet(Vec0Table *p, const char *zKey, sqlite3_int64 iVal){
  sqlite3_stmt *pStmt;
  int rc = vec0Stmt(p, VEC0_STMT_INFO_SET, &pStmt);
  if( rc!=SQLITE_OK ) return rc;
  sqlite3_bind_text(pStmt, 1, zKey, -1, SQLITE_STATIC);
  sqlite3_bind_int64(pStmt, 2, iVal);
  sqlite3_step(pStmt);
  return sqlite3_reset(pStmt);
}

/* next_slot, checked to be a slot count (the blobs behind it are checked on load). */
int vec0NextSlot(Vec0Table *p, sqlite3_int64 *pnSlot){
  sqlite3_int64 nSlot = -1;
  int rc = vec0InfoGet(p, "next_slot", &nSlot);
  if( rc==SQLITE_OK && (nSlot<0 || nSlot>((sqlite3_int64)1<<40)) ){
    vec0SetError(p, "vec0 \"%s\": storage is damaged: next_slot is %lld", p->zName, nSlot);
    rc = SQLITE_CORRUPT_VTAB;
  }
  *pnSlot = nSlot;
  return rc;
}

/* ---- creating and checking the shadow tables ------------------------------------------ */

/* Bytes of database pages one blob of nByte bytes takes in T_vectors, a table b-tree of
** pages of nPage usable bytes: the overflow pages its record needs and its share of a leaf
** page (SQLite's file format: a record longer than the page's local maximum keeps between
** nMinLocal and nMaxLocal bytes in its cell, the rest in a chain of overflow pages). Into
** *pnOverflow the length of that chain. */
static double vec0BlobPageBytes(sqlite3_int64 nByte, int nPage, int *pnOverflow){
  int nMaxLocal = nPage - 35, nMinLocal = (nPage - 12)*32/255 - 23;
  sqlite3_int64 nType = 2*nByte + 12;                   /* the blob's serial type */
  sqlite3_int64 nRec = 2 + nByte + (nType<128 ? 1 : nType<16384 ? 2 : 3);
  sqlite3_int64 nLocal = nRec, nOverflow = 0, nCell;
  if( nRec>nMaxLocal ){
    nLocal = nMinLocal + (nRec - nMinLocal) % (nPage - 4);
    if( nLocal>nMaxLocal ) nLocal = nMinLocal;
    nOverflow = (nRec - nLocal + nPage - 5)/(nPage - 4);
  }
  /* Cell: payload size and rowid varints, the overflow pointer, its 2-byte offset. */
  nCell = nLocal + 3 + 4 + (nOverflow ? 4 : 0) + 2;
  *pnOverflow = (int)nOverflow;
  return (double)nOverflow*nPage + (double)nPage/(double)((nPage - 8)/nCell);
}

/* Slots a blob of T_vectors holds. A table searched from its in-memory copy has blobs of
** up to 256 KiB, so a load reads few of them: a power of two that divides chunk_size. A
** quantized table loads its codes instead and reads its vectors one candidate at a time,
** and so does a table with a coded ivf index over the memory budget (at 1,000,000 x 384,
** 256 KiB blobs made such a query 3.9 ms): reading a vector in the middle of a blob walks
** its chain of overflow pages from the start, so their blobs are 12 KiB at most, and sized
** by the database's pages (nPage bytes): the fewest pages a vector among the sizes whose
** chain is no longer than the power of two's. At 768 dimensions blobs of 3 vectors take
** 2 overflow pages and 1.037 bytes of page a byte, against 3 and 1.042 for 4; at 384, 3
** vectors take 1 page and 1.016 bytes against 3 and 1.042 for 8. Such a count need not
** divide chunk_size: a chunk's last blob is then shorter (vec0BlobOf). */
static int vec0PerBlobFor(const Vec0Config *pCfg, int nPage){
  int bOneAtATime = pCfg->eQuant!=VEC0_QUANT_NONE
                 || (pCfg->bIvf && pCfg->eIvfQuant!=VEC0_QUANT_NONE);
  sqlite3_int64 nMax = bOneAtATime ? 3072 : 65536;   /* words */
  sqlite3_int64 nVecBytes = (sqlite3_int64)pCfg->nWord*4;
  int n = 1, nBest, i, nChain = 0, nChainI = 0;
  double rBest, rPow;
  while( n*2<=pCfg->nChunk && (sqlite3_int64)n*2*pCfg->nWord<=nMax && pCfg->nChunk%(n*2)==0 ){
    n *= 2;
  }
  if( !bOneAtATime || nPage<512 || nPage>65536 ) return n;
  rPow = vec0BlobPageBytes(n*nVecBytes, nPage, &nChain)/n;
  nBest = n;
  rBest = rPow;
  for(i=1; i<=pCfg->nChunk && i*(sqlite3_int64)pCfg->nWord<=nMax; i++){
    double r = vec0BlobPageBytes(i*nVecBytes, nPage, &nChainI)/i;
    if( nChainI<=nChain && r<rBest ){
      nBest = i;
      rBest = r;
    }
  }
  /* Another size must save over 0.2% of the pages to be chosen over the power of two. */
  return rBest*1.002<rPow ? nBest : n;
}

/* Bits an element of the vector column takes: 32, 8 (int8) or 1 (bit). */
static int vec0ElementBits(const Vec0Config *pCfg){
  return pCfg->eElem==VS_I8 ? 8 : pCfg->eElem==VS_BIT ? 1 : 32;
}

/* Shadow column declaration for user column i. */
static const char *vec0ShadowType(int eType){
  switch( eType ){
    case VEC0_TYPE_TEXT:    return "TEXT";
    case VEC0_TYPE_INTEGER: return "INTEGER";
    case VEC0_TYPE_BOOLEAN: return "INTEGER";
    case VEC0_TYPE_FLOAT:   return "REAL";
    case VEC0_TYPE_BLOB:    return "BLOB";
  }
  return "";
}

/* The page size of the database the shadow tables go in (4096 when it cannot be read).
** Bytes a page reserves at its end (SQLITE_FCNTL_RESERVE_BYTES, rare) are not taken off:
** they would only make the blobs fit the pages a little less well. */
static int vec0PageBytes(Vec0Table *p){
  sqlite3_stmt *pStmt = 0;
  int nPage = 4096;
  char *zSql = sqlite3_mprintf("PRAGMA \"%w\".page_size", p->zStoreSchema);
  if( zSql && sqlite3_prepare_v2(p->dbStore, zSql, -1, &pStmt, 0)==SQLITE_OK
   && sqlite3_step(pStmt)==SQLITE_ROW ){
    nPage = sqlite3_column_int(pStmt, 0);
  }
  sqlite3_finalize(pStmt);
  sqlite3_free(zSql);
  return nPage;
}

int vec0ShadowCreate(Vec0Table *p){
  int rc, i;
  char *zSql;
  sqlite3_str *pStr = sqlite3_str_new(p->db);
  sqlite3_int64 iUid = 0;
  while( iUid<=0 ){
    sqlite3_randomness(sizeof(iUid), &iUid);
    iUid &= 0x7fffffffffffffffLL;
  }
  p->nPerBlob = vec0PerBlobFor(&p->cfg, vec0PageBytes(p));
  sqlite3_str_appendf(pStr,
      "CREATE TABLE \"%w\".\"%w_info\"(key TEXT PRIMARY KEY, value);"
      "INSERT INTO \"%w\".\"%w_info\"(key, value) VALUES "
      "('format', %d), ('generation', 0), ('next_slot', 0), ('chunk_size', %d), "
      "('dimensions', %d), ('metric', '%s'), ('vectors_per_blob', %d), ('uid', %lld), "
      "('log_from', 0);"
      "CREATE TABLE \"%w\".\"%w_changes\"(generation INTEGER NOT NULL, slot INTEGER NOT NULL,"
      " rowid INTEGER, PRIMARY KEY(generation, slot)) WITHOUT ROWID;"
      "CREATE TABLE \"%w\".\"%w_vectors\"(chunk_id INTEGER PRIMARY KEY, vectors BLOB NOT NULL);"
      "CREATE TABLE \"%w\".\"%w_free\"(slot INTEGER PRIMARY KEY);"
      "CREATE TABLE \"%w\".\"%w_rows\"(rowid INTEGER PRIMARY KEY",
      p->zStoreSchema, p->zName, p->zStoreSchema, p->zName, vec0FormatFor(&p->cfg), p->cfg.nChunk, p->cfg.nDim,
      vec0MetricName(p->cfg.eMetric), p->nPerBlob, iUid,
      p->zStoreSchema, p->zName, p->zStoreSchema, p->zName, p->zStoreSchema, p->zName, p->zStoreSchema, p->zName);
  if( vec0HasTextPk(p) ) sqlite3_str_appendall(pStr, ", id TEXT NOT NULL UNIQUE");
  sqlite3_str_appendall(pStr, ", slot INTEGER NOT NULL");
  for(i=0; i<p->cfg.nCol; i++){
    if( vec0IsStored(&p->cfg, i) ){
      sqlite3_str_appendf(pStr, ", c%d %s", i, vec0ShadowType(p->cfg.aCol[i].eType));
    }
  }
  sqlite3_str_appendall(pStr, ");");
  if( p->cfg.eQuant!=VEC0_QUANT_NONE ){
    /* The codes of a quantized table, so a load need not read every vector. */
    sqlite3_str_appendf(pStr,
        "CREATE TABLE \"%w\".\"%w_codes\"(chunk_id INTEGER PRIMARY KEY, codes BLOB NOT NULL);"
        "INSERT INTO \"%w\".\"%w_info\"(key, value) VALUES ('codes', %d);",
        p->zStoreSchema, p->zName, p->zStoreSchema, p->zName, p->cfg.eQuant);
  }
  if( p->cfg.bIvf ){
    /* The ivf index (vec0_ivf.c): each list's centroid (and, made by vec0ShadowIvfIndex
    ** below, T_ivf_assign: each slot's list and rowid). */
    sqlite3_str_appendf(pStr,
        "CREATE TABLE \"%w\".\"%w_ivf_centroids\"(list INTEGER PRIMARY KEY,"
        " centroid BLOB NOT NULL);"
        "INSERT INTO \"%w\".\"%w_info\"(key, value) VALUES ('ivf_lists', 0),"
        " ('ivf_trained_rows', 0), ('ivf_version', 0);",
        p->zStoreSchema, p->zName, p->zStoreSchema, p->zName);
  }
  if( p->cfg.nExtraVec>0 ){
    sqlite3_str_appendf(pStr, "INSERT INTO \"%w\".\"%w_info\"(key, value) VALUES "
                              "('vector_columns', %d);", p->zStoreSchema, p->zName,
                        1 + p->cfg.nExtraVec);
  }
  if( p->cfg.eElem!=VS_F32 ){
    /* An int8 or bit column's bits an element (a table without the key is float32). */
    sqlite3_str_appendf(pStr, "INSERT INTO \"%w\".\"%w_info\"(key, value) VALUES "
                              "('element_bits', %d);", p->zStoreSchema, p->zName,
                        vec0ElementBits(&p->cfg));
  }
  for(i=0; i<p->cfg.nCol; i++){
    /* A partition key's index. Its name carries the table's uid: an index keeps its name
    ** through ALTER TABLE ... RENAME (which cannot drop one), and a new table of the old
    ** name must not find it taken. */
    if( !p->cfg.aCol[i].bPartition ) continue;
    sqlite3_str_appendf(pStr, "CREATE INDEX \"%w\".\"%w_rows_p%d_%llx\" ON \"%w_rows\"(c%d);",
                        p->zStoreSchema, p->zName, i, iUid, p->zName, i);
  }
  zSql = sqlite3_str_finish(pStr);
  if( zSql==0 ) return SQLITE_NOMEM;
  rc = sqlite3_exec(p->dbStore, zSql, 0, 0, 0);
  sqlite3_free(zSql);
  if( rc==SQLITE_OK ){
    p->iUid = iUid;
    p->bChangeLog = 1;
    p->bCodes = p->cfg.eQuant!=VEC0_QUANT_NONE;
    p->bStorageChecked = 1;
  }
  if( rc==SQLITE_OK && p->cfg.bIvf ) rc = vec0ShadowIvfIndex(p);
  return rc;
}

int vec0ShadowIvfIndex(Vec0Table *p){
  sqlite3_int64 iLayout = 0;
  char *zSql;
  int rc = vec0InfoGet(p, "ivf_list_index", &iLayout);
  if( rc!=SQLITE_OK || iLayout>=VEC0_IVF_LAYOUT ) return rc;
  /* The rowid is NOT NULL: an older version of this extension, which writes slot and
  ** list only, fails on the constraint rather than leave a row it cannot name. One that
  ** writes slot, list and rowid leaves the code NULL, as a float32 list does: the list's
  ** read codes that row's vector then. The unique index on slot makes INSERT OR REPLACE
  ** move a row from one list to another. Dropping the table drops an older index with
  ** it. The index is named with the table's uid, as a partition key's is: an index keeps
  ** its name through ALTER TABLE ... RENAME. A training writes each list's codes as blobs
  ** of T_ivf_packs (one a list unless it passes VEC0_IVF_PACK_BYTES) and in T_ivf_assign a
  ** row's place in them, an integer (vec0_ivf.c): nine 392-byte codes at 384 dimensions
  ** filled a 4096-byte page of T_ivf_assign to 83%, a blob of them fills its pages but the
  ** last. T_ivf_packs has rowids: SQLite compares a search key with a WITHOUT ROWID row by
  ** reading the whole row, overflow pages and all, so a list read there read each pack it
  ** passed (1,000,000 x 384: 615 lists read in 1.1 s against 0.78 s from codes in their
  ** rows); its key (list, part) is then a small index. A version of layout 3 reads that
  ** integer as a damaged code and says so; its retrain writes every code in its row, and
  ** the packs it leaves are read by no row until the next retrain here deletes them. */
  zSql = sqlite3_mprintf(
      "DROP TABLE IF EXISTS \"%w\".\"%w_ivf_assign\";"
      "DROP TABLE IF EXISTS \"%w\".\"%w_ivf_packs\";"
      "CREATE TABLE \"%w\".\"%w_ivf_assign\"(list INTEGER NOT NULL, slot INTEGER NOT NULL,"
      " rowid INTEGER NOT NULL, code BLOB, PRIMARY KEY(list, slot)) WITHOUT ROWID;"
      "CREATE UNIQUE INDEX \"%w\".\"%w_ivf_assign_slots_%llx\" ON \"%w_ivf_assign\"(slot);"
      "CREATE TABLE \"%w\".\"%w_ivf_packs\"(list INTEGER NOT NULL, part INTEGER NOT NULL,"
      " codes BLOB NOT NULL, PRIMARY KEY(list, part));",
      p->zStoreSchema, p->zName, p->zStoreSchema, p->zName, p->zStoreSchema, p->zName,
      p->zStoreSchema, p->zName, p->iUid, p->zName, p->zStoreSchema, p->zName);
  if( zSql==0 ) return SQLITE_NOMEM;
  rc = sqlite3_exec(p->dbStore, zSql, 0, 0, 0);
  sqlite3_free(zSql);
  if( rc==SQLITE_OK ) rc = vec0InfoSet(p, "ivf_list_index", VEC0_IVF_LAYOUT);
  return rc;
}

/* The WHERE clause matching, in sqlite_schema, the shadow tables of table ?1 that this
** extension makes (info, vectors, free, rows, changes) and those sqlite-vec makes. */
#define VEC0_SHADOW_OURS \
  "substr(name, length(?1)+2) IN ('info','vectors','free','rows','changes','codes'," \
  "'ivf_centroids','ivf_assign','ivf_packs')"
#define VEC0_SHADOW_THEIRS \
  "(substr(name, length(?1)+2) IN ('chunks','rowids','auxiliary')" \
  " OR substr(name, length(?1)+2) GLOB 'vector_chunks[0-9][0-9]'" \
  " OR substr(name, length(?1)+2) GLOB 'metadatachunks[0-9][0-9]'" \
  " OR substr(name, length(?1)+2) GLOB 'metadatatext[0-9][0-9]')"

/* Drop the shadow tables matching zWhich (VEC0_SHADOW_*). */
static int vec0ShadowDropWhere(Vec0Table *p, const char *zWhich){
  sqlite3_stmt *pStmt = 0;
  sqlite3_str *pDrop = sqlite3_str_new(p->db);
  char *zSql = sqlite3_mprintf(
      "SELECT name FROM \"%w\".sqlite_schema WHERE type='table'"
      " AND substr(name, 1, length(?1)+1)=?1||'_' AND (%s)", p->zSchema, zWhich);
  int rc = zSql ? SQLITE_OK : SQLITE_NOMEM;
  if( rc==SQLITE_OK ) rc = sqlite3_prepare_v2(p->db, zSql, -1, &pStmt, 0);
  sqlite3_free(zSql);
  zSql = 0;
  if( rc==SQLITE_OK ){
    sqlite3_bind_text(pStmt, 1, p->zName, -1, SQLITE_STATIC);
    while( sqlite3_step(pStmt)==SQLITE_ROW ){
      sqlite3_str_appendf(pDrop, "DROP TABLE IF EXISTS \"%w\".\"%w\";",
                          p->zSchema, (const char*)sqlite3_column_text(pStmt, 0));
    }
    rc = sqlite3_finalize(pStmt);
  }
  zSql = sqlite3_str_finish(pDrop);
  if( rc==SQLITE_OK && zSql==0 ) rc = SQLITE_NOMEM;
  if( rc==SQLITE_OK && zSql[0] ) rc = sqlite3_exec(p->db, zSql, 0, 0, 0);
  sqlite3_free(zSql);
  return rc;
}

/* Drop the shadow tables: ours, and those sqlite-vec makes when the table is one of its
** files (DROP TABLE removes the whole table whichever extension wrote it). */
int vec0ShadowDrop(Vec0Table *p){
  return vec0ShadowDropWhere(p, VEC0_SHADOW_OURS " OR " VEC0_SHADOW_THEIRS);
}

int vec0ShadowDropForeign(Vec0Table *p){
  return vec0ShadowDropWhere(p, VEC0_SHADOW_THEIRS);
}

int vec0ShadowDropOwn(Vec0Table *p){
  return vec0ShadowDropWhere(p, VEC0_SHADOW_OURS);
}

int vec0ShadowPresent(Vec0Table *p, int *pbOurs, int *pbTheirs){
  int rc = vec0ShadowExists(p, "rows", pbOurs);
  if( rc==SQLITE_OK ) rc = vec0ShadowExists(p, "rowids", pbTheirs);
  return rc;
}

void vec0StorageForget(Vec0Table *p){
  vec0StmtsFinalize(p);
  p->bStorageChecked = 0;
  p->iUid = 0;
  p->bChangeLog = 0;
}

int vec0ShadowExists(Vec0Table *p, const char *zSuffix, int *pbExists){
  sqlite3_stmt *pStmt = 0;
  char *zSql = sqlite3_mprintf(
      "SELECT 1 FROM \"%w\".sqlite_schema WHERE type='table' AND name='%q_%q'",
      p->zStoreSchema, p->zName, zSuffix);
  int rc;
  *pbExists = 0;
  if( zSql==0 ) return SQLITE_NOMEM;
  rc = sqlite3_prepare_v2(p->dbStore, zSql, -1, &pStmt, 0);
  sqlite3_free(zSql);
  if( rc==SQLITE_OK ){
    *pbExists = sqlite3_step(pStmt)==SQLITE_ROW;
    rc = sqlite3_finalize(pStmt);
  }
  return rc;
}

/* Whether T is sqlite-vec's layout: its T_rowids and not our T_rows. */
static int vec0Legacy(Vec0Table *p, int *pbLegacy){
  int bOurs = 0, rc = vec0ShadowPresent(p, &bOurs, pbLegacy);
  if( rc==SQLITE_OK && !bOurs && !*pbLegacy ){
    /* A table whose T_rowids is gone is still sqlite-vec's (a damaged one). */
    int bChunks = 0;
    char *zSql = sqlite3_mprintf("SELECT 1 FROM \"%w\".sqlite_schema WHERE type='table' "
                                 "AND name='%q_vector_chunks00'", p->zStoreSchema, p->zName);
    sqlite3_stmt *pStmt = 0;
    if( zSql==0 ) return SQLITE_NOMEM;
    rc = sqlite3_prepare_v2(p->dbStore, zSql, -1, &pStmt, 0);
    sqlite3_free(zSql);
    if( rc==SQLITE_OK ){
      bChunks = sqlite3_step(pStmt)==SQLITE_ROW;
      rc = sqlite3_finalize(pStmt);
    }
    *pbLegacy = bChunks;
  }
  if( bOurs ) *pbLegacy = 0;
  return rc;
}

int vec0StorageCheck(Vec0Table *p, int *pbForeign){
  sqlite3_int64 iFormat = -1, nDim = -1, nChunk = -1, nPer = -1, nBits = 32, nVecCol = 1;
  int rc = SQLITE_OK, bRows = 0;
  const char *zWhat = 0;
  char *zBlock = 0;           /* why a block of the declaration is too large */

  *pbForeign = 0;
  if( vec0BlockCheck(&p->cfg, p->zName, &zBlock)!=SQLITE_OK ){
    /* Declared before the block limit: every statement is refused, DROP TABLE works. */
    vec0SetError(p, "%s", zBlock ? zBlock : "out of memory");
    sqlite3_free(zBlock);
    return SQLITE_ERROR;
  }
  rc = vec0ShadowExists(p, "rows", &bRows);
  if( rc==SQLITE_OK && bRows ){
    static const char *azOther[] = { "info", "vectors", "free" };
    int i, bExists = 1;
    for(i=0; i<3 && rc==SQLITE_OK && bExists; i++){
      rc = vec0ShadowExists(p, azOther[i], &bExists);
      if( rc==SQLITE_OK && !bExists ){
        vec0SetError(p, "vec0 \"%s\": storage is damaged: table %s_%s is missing",
                     p->zName, p->zName, azOther[i]);
        rc = SQLITE_CORRUPT_VTAB;
      }
    }
    if( rc!=SQLITE_OK ) goto cleanup;
  }
  if( rc==SQLITE_OK && !bRows ){
    /* sqlite-vec keeps T_rowids, T_chunks and T_vector_chunksNN instead: the caller
    ** (vec0StorageReady) reads a table this connection did not migrate on connect from a
    ** private copy, migrated. */
    rc = vec0Legacy(p, pbForeign);
    if( rc==SQLITE_OK && *pbForeign ) return SQLITE_OK;
    if( rc==SQLITE_OK ){
      vec0SetError(p, "vec0 \"%s\": storage is damaged: table %s_rows is missing",
                   p->zName, p->zName);
      rc = SQLITE_CORRUPT_VTAB;
    }
    goto cleanup;
  }
  if( rc==SQLITE_OK ) rc = vec0InfoGet(p, "format", &iFormat);
  if( rc==SQLITE_OK ) rc = vec0InfoGet(p, "dimensions", &nDim);
  if( rc==SQLITE_OK ) rc = vec0InfoGet(p, "chunk_size", &nChunk);
  if( rc==SQLITE_OK ){
    /* Layouts before vectors_per_blob kept one blob a chunk. */
    nPer = nChunk;
    rc = vec0InfoGet(p, "vectors_per_blob", &nPer);
  }
  if( rc==SQLITE_OK ) rc = vec0InfoGet(p, "element_bits", &nBits);
  if( rc==SQLITE_OK ) rc = vec0InfoGet(p, "vector_columns", &nVecCol);
  if( rc!=SQLITE_OK ) goto cleanup;
  if( iFormat!=vec0FormatFor(&p->cfg) ){
    zWhat = "format";
  }else if( nVecCol!=1 + p->cfg.nExtraVec ){
    zWhat = "vector_columns";
  }else if( nDim!=p->cfg.nDim ){
    zWhat = "dimensions";
  }else if( nChunk!=p->cfg.nChunk ){
    zWhat = "chunk_size";
  }else if( nBits!=vec0ElementBits(&p->cfg) ){
    zWhat = "element_bits";
  }else if( nPer<1 || nPer>p->cfg.nChunk || nPer*p->cfg.nWord>VS_MAX_DIMS*16 ){
    zWhat = "vectors_per_blob";
  }
  if( zWhat ){
    vec0SetError(p, "vec0 \"%s\": storage is damaged: %s_info '%s' does not match the "
                    "table's declaration", p->zName, p->zName, zWhat);
    rc = SQLITE_CORRUPT_VTAB;
    goto cleanup;
  }
  p->nPerBlob = (int)nPer;
  p->iUid = 0;
  rc = vec0InfoGet(p, "uid", &p->iUid);
  if( rc==SQLITE_OK ) rc = vec0ShadowExists(p, "changes", &p->bChangeLog);
  if( rc==SQLITE_OK && p->cfg.eQuant!=VEC0_QUANT_NONE ){
    /* Quantized tables made before T_codes load their codes from the vectors. */
    sqlite3_int64 eCodes = -1;
    rc = vec0ShadowExists(p, "codes", &p->bCodes);
    if( rc==SQLITE_OK && p->bCodes ) rc = vec0InfoGet(p, "codes", &eCodes);
    if( rc==SQLITE_OK && p->bCodes && eCodes!=p->cfg.eQuant ){
      vec0SetError(p, "vec0 \"%s\": storage is damaged: %s_info 'codes' is %lld, the "
                      "declaration's quantizer %d", p->zName, p->zName, eCodes, p->cfg.eQuant);
      rc = SQLITE_CORRUPT_VTAB;
    }
  }
  if( rc!=SQLITE_OK ) goto cleanup;
  p->bStorageChecked = 1;

cleanup:
  if( rc!=SQLITE_OK && rc!=SQLITE_CORRUPT_VTAB ){
    vec0SetError(p, "vec0 \"%s\": %s", p->zName, sqlite3_errmsg(p->dbStore));
  }
  return rc;
}

int vec0StorageExplain(Vec0Table *p, int rc){
  if( rc==SQLITE_ERROR ){
    char *zErr = vec0TakeError(p);
    int bForeign = 0;
    p->bStorageChecked = 0;
    if( vec0StorageCheck(p, &bForeign)==SQLITE_CORRUPT_VTAB ){
      sqlite3_free(zErr);
      return SQLITE_CORRUPT_VTAB;
    }
    sqlite3_free(p->base.zErrMsg);
    p->base.zErrMsg = zErr;
  }
  return rc;
}

/* ---- generations and the change log ---------------------------------------------------- */

/* Generations kept in T_changes: a connection further behind than this loads its copy
** whole. Pruned every VEC0_LOG_PRUNE_EVERY generations. */
#define VEC0_LOG_KEEP        256
#define VEC0_LOG_PRUNE_EVERY 32
/* Rows one generation logs before it is marked "reload" instead (a bulk import). */
#define VEC0_LOG_MAX_ROWS    4096

/* Check next_slot against the blobs of T_vectors: exactly the blobs 0..ceil(nSlot/P)-1
** must be there, so nothing is allocated for slots the file does not hold. */
int vec0BlobsCheck(Vec0Table *p, sqlite3_int64 nSlot){
  sqlite3_stmt *pStmt = 0;
  sqlite3_int64 iMin = 0, iMax = -1, nWant;
  int rc = vec0Stmt(p, VEC0_STMT_BLOB_RANGE, &pStmt);
  if( rc!=SQLITE_OK ) return rc;
  if( sqlite3_step(pStmt)==SQLITE_ROW && sqlite3_column_type(pStmt, 0)!=SQLITE_NULL ){
    iMin = sqlite3_column_int64(pStmt, 0);
    iMax = sqlite3_column_int64(pStmt, 1);
  }
  rc = sqlite3_reset(pStmt);
  if( rc!=SQLITE_OK ) return rc;
  nWant = nSlot>0 ? vec0BlobOf(p, nSlot-1, 0) + 1 : 0;
  if( iMax!=nWant-1 || (nWant>0 && iMin!=0) ){     /* not iMax+1: it may be INT64_MAX */
    if( iMax<0 ){
      vec0SetError(p, "vec0 \"%s\": storage is damaged: next_slot %lld needs vector blobs 0 "
                      "to %lld, %s_vectors has none", p->zName, nSlot, nWant-1, p->zName);
    }else{
      vec0SetError(p, "vec0 \"%s\": storage is damaged: next_slot %lld needs vector blobs 0 "
                      "to %lld, %s_vectors has %lld to %lld", p->zName, nSlot, nWant-1,
                   p->zName, iMin, iMax);
    }
    rc = SQLITE_CORRUPT_VTAB;
  }
  return rc;
}

/* The database's data version: it moves whenever another connection commits. */
unsigned int vec0DataVersion(Vec0Table *p){
  unsigned int v = 0;
  sqlite3_file_control(p->dbStore, p->zStoreSchema, SQLITE_FCNTL_DATA_VERSION, &v);
  return v;
}

int vec0Generation(Vec0Table *p, sqlite3_int64 *piGen){
  sqlite3_int64 iGen = -1;
  int rc = vec0InfoGet(p, "generation", &iGen);
  if( rc==SQLITE_OK && (iGen<0 || iGen==0x7fffffffffffffffLL) ){
    vec0SetError(p, "vec0 \"%s\": storage is damaged: generation is %lld", p->zName, iGen);
    rc = SQLITE_CORRUPT_VTAB;
  }
  *piGen = iGen;
  return rc;
}

int vec0LogFrom(Vec0Table *p, sqlite3_int64 *piFrom){
  sqlite3_int64 iFrom = 0x7fffffffffffffffLL;
  int rc = SQLITE_OK;
  if( p->bChangeLog ) rc = vec0InfoGet(p, "log_from", &iFrom);
  *piFrom = iFrom;
  return rc;
}

static int vec0LogAdd(Vec0Table *p, sqlite3_int64 iSlot, int bLive, sqlite3_int64 iRowid);

/* Mark this transaction's generation "reload" in T_changes (its rows replaced by one with
** slot VEC0_LOG_RELOAD): readers that reach it load their copy whole instead of replaying. */
static int vec0LogReload(Vec0Table *p){
  int rc;
  if( !p->bChangeLog || !p->bGenerationBumped || p->nLogged<0 ) return SQLITE_OK;
  rc = vec0StmtRun(p, VEC0_STMT_LOG_MARK, p->iWriteGen);
  if( rc==SQLITE_OK ) rc = vec0LogAdd(p, VEC0_LOG_RELOAD, 0, 0);
  p->nLogged = -1;
  return rc;
}

/* Record in T_changes that slot iSlot now holds row iRowid (bLive) or nothing. */
int vec0LogSlot(Vec0Table *p, sqlite3_int64 iSlot, int bLive, sqlite3_int64 iRowid){
  if( !p->bChangeLog || !p->bGenerationBumped || p->nLogged<0 ) return SQLITE_OK;
  if( p->nLogged>=VEC0_LOG_MAX_ROWS ){
    /* Too many to replay: readers of this generation load their copy whole. */
    return vec0LogReload(p);
  }
  return vec0LogAdd(p, iSlot, bLive, iRowid);
}

static int vec0LogAdd(Vec0Table *p, sqlite3_int64 iSlot, int bLive, sqlite3_int64 iRowid){
  sqlite3_stmt *pStmt = 0;
  int rc = vec0Stmt(p, VEC0_STMT_LOG_ADD, &pStmt);
  if( rc!=SQLITE_OK ) return rc;
  sqlite3_bind_int64(pStmt, 1, p->iWriteGen);
  sqlite3_bind_int64(pStmt, 2, iSlot);
  if( bLive ) sqlite3_bind_int64(pStmt, 3, iRowid); else sqlite3_bind_null(pStmt, 3);
  sqlite3_step(pStmt);
  rc = sqlite3_reset(pStmt);
  if( rc==SQLITE_OK && p->nLogged>=0 ) p->nLogged++;
  return rc;
}

/* Drop generations older than VEC0_LOG_KEEP from T_changes, now and then. */
static int vec0LogPrune(Vec0Table *p, sqlite3_int64 iGen){
  sqlite3_int64 iCut = iGen - VEC0_LOG_KEEP, iFrom = 0;
  int rc;
  if( !p->bChangeLog || iCut<=0 || iGen%VEC0_LOG_PRUNE_EVERY!=0 ) return SQLITE_OK;
  rc = vec0LogFrom(p, &iFrom);
  if( rc!=SQLITE_OK || iCut<=iFrom ) return rc;
  rc = vec0StmtRun(p, VEC0_STMT_LOG_PRUNE, iCut);
  if( rc==SQLITE_OK ) rc = vec0InfoSet(p, "log_from", iCut);
  return rc;
}

/* The first write of a transaction: bump the generation from *piOld, and prune the
** change log now and then. */
int vec0GenerationBump(Vec0Table *p, sqlite3_int64 *piOld){
  int rc = vec0Generation(p, piOld);
  if( rc==SQLITE_OK ) rc = vec0InfoSet(p, "generation", *piOld+1);
  if( rc==SQLITE_OK ) rc = vec0LogPrune(p, *piOld+1);
  return rc;
}

void vec0WriteStart(Vec0Table *p, sqlite3_int64 iGen){
  p->bGenerationBumped = 1;
  p->bWriteTx = 1;
  p->iWriteGen = iGen;
  p->nLogged = 0;
}

void vec0WriteEnd(Vec0Table *p){
  vec0WriteRetry(p);
  p->bWriteTx = 0;
}

void vec0WriteRetry(Vec0Table *p){
  p->bGenerationBumped = 0;
  p->nLogged = 0;
}

/* ---- slots and vectors ------------------------------------------------------------------ */

int vec0ViewCurrent(Vec0Table *p){
  return p->pView && (p->bViewPrivate || p->iDataVersion==vec0DataVersion(p));
}

int vec0SlotCheck(Vec0Table *p, sqlite3_int64 iSlot, const char *zWhere){
  sqlite3_int64 nSlot = 0;
  int rc = SQLITE_OK;
  if( vec0ViewCurrent(p) ){
    nSlot = p->pView->nSlot;
  }else{
    rc = vec0NextSlot(p, &nSlot);
  }
  if( rc==SQLITE_OK && (iSlot<0 || iSlot>=nSlot) ){
    vec0SetError(p, "vec0 \"%s\": storage is damaged: %s names slot %lld, next_slot is %lld",
                 p->zName, zWhere, iSlot, nSlot);
    rc = SQLITE_CORRUPT_VTAB;
  }
  return rc;
}

static int vec0BlobBytes(const Vec0Table*, sqlite3_int64);

/* Take a free slot, or a new one at the end (adding a blob when needed). */
int vec0SlotAlloc(Vec0Table *p, sqlite3_int64 *piSlot, sqlite3_int64 *pnGrown){
  sqlite3_stmt *pStmt;
  sqlite3_int64 iSlot = -1, nSlot = 0, iBlob;
  int bFree = 0, iAt = 0;
  int rc = vec0Stmt(p, VEC0_STMT_FREE_FIRST, &pStmt);
  *pnGrown = 0;
  if( rc!=SQLITE_OK ) goto cleanup;
  if( sqlite3_step(pStmt)==SQLITE_ROW ){
    iSlot = sqlite3_column_int64(pStmt, 0);
    bFree = 1;
  }
  rc = sqlite3_reset(pStmt);
  if( rc!=SQLITE_OK ) goto cleanup;
  if( bFree ){
    rc = vec0SlotCheck(p, iSlot, "a freed slot");
    if( rc==SQLITE_OK ) rc = vec0StmtRun(p, VEC0_STMT_FREE_DEL, iSlot);
    goto cleanup;
  }
  rc = vec0NextSlot(p, &nSlot);
  if( rc!=SQLITE_OK ) goto cleanup;
  iSlot = nSlot;
  iBlob = vec0BlobOf(p, iSlot, &iAt);
  if( iAt==0 ){
    rc = vec0Stmt(p, VEC0_STMT_BLOB_NEW, &pStmt);
    if( rc!=SQLITE_OK ) goto cleanup;
    sqlite3_bind_int64(pStmt, 1, iBlob);
    sqlite3_bind_int64(pStmt, 2, vec0BlobBytes(p, iBlob));
    sqlite3_step(pStmt);
    rc = sqlite3_reset(pStmt);
    if( rc==SQLITE_OK && p->bCodes && iSlot%p->cfg.nChunk==0 ){
      /* T_codes holds a chunk's records a blob. */
      rc = vec0Stmt(p, VEC0_STMT_CODES_NEW, &pStmt);
      if( rc!=SQLITE_OK ) goto cleanup;
      sqlite3_bind_int64(pStmt, 1, iSlot/p->cfg.nChunk);
      sqlite3_bind_int64(pStmt, 2, (sqlite3_int64)p->cfg.nChunk*vec0QuantRecordBytes(&p->cfg));
      sqlite3_step(pStmt);
      rc = sqlite3_reset(pStmt);
    }
    if( rc!=SQLITE_OK ) goto cleanup;
  }
  rc = vec0InfoSet(p, "next_slot", nSlot+1);
  if( rc==SQLITE_OK ) *pnGrown = nSlot+1;

cleanup:
  *piSlot = iSlot;
  return rc;
}

static int vec0BlobOpen(Vec0Table*, sqlite3_int64, int, int*, sqlite3_blob**);
static int vec0CodesWrite(Vec0Table*, sqlite3_int64, const float*);

/* How many slots of [iFrom, iTo) are free. */
static int vec0FreeCount(Vec0Table *p, sqlite3_int64 iFrom, sqlite3_int64 iTo,
                         sqlite3_int64 *pnFree){
  sqlite3_stmt *pStmt = 0;
  int rc = vec0Stmt(p, VEC0_STMT_FREE_COUNT, &pStmt);
  *pnFree = 0;
  if( rc!=SQLITE_OK ) return rc;
  sqlite3_bind_int64(pStmt, 1, iFrom);
  sqlite3_bind_int64(pStmt, 2, iTo);
  if( sqlite3_step(pStmt)==SQLITE_ROW ) *pnFree = sqlite3_column_int64(pStmt, 0);
  return sqlite3_reset(pStmt);
}

/* Give back the storage of trailing blobs whose every slot is free (deleting the newest
** rows, or all of them, then lets VACUUM shrink the file): their T_vectors rows and free
** slots are deleted and next_slot comes down. The writer's copy is rebuilt; the change log
** marks the generation VEC0_LOG_TRIMMED beside the freed slots' rows, and the other
** connections replay it as any other (vec0_cache.c's vec0ApplyLog takes their copy's
** slots down to next_slot): a row inserted then deleted at the end of a table costs them
** the change, not a whole load. */
int vec0StorageTrim(Vec0Table *p, int *pbTrimmed){
  sqlite3_int64 nSlot = 0, nNew, nFree = 0;
  int rc = vec0NextSlot(p, &nSlot);
  *pbTrimmed = 0;
  if( rc!=SQLITE_OK || nSlot==0 ) return rc;
  rc = vec0FreeCount(p, nSlot-1, nSlot, &nFree);
  if( rc!=SQLITE_OK || nFree==0 ) return rc;        /* the last slot is in use */
  nNew = nSlot;
  while( rc==SQLITE_OK && nNew>0 ){
    sqlite3_int64 iBlob = vec0BlobOf(p, nNew-1, 0);
    sqlite3_int64 iStart = vec0BlobFirst(p, iBlob, 0);
    rc = vec0FreeCount(p, iStart, nNew, &nFree);
    if( rc!=SQLITE_OK || nFree!=nNew-iStart ) break;
    rc = vec0StmtRun(p, VEC0_STMT_BLOB_DEL, iBlob);
    if( rc==SQLITE_OK && p->bCodes && iStart%p->cfg.nChunk==0 ){
      /* The chunk's records go with its first blob of vectors. */
      rc = vec0StmtRun(p, VEC0_STMT_CODES_DEL, iStart/p->cfg.nChunk);
    }
    nNew = iStart;
  }
  if( rc!=SQLITE_OK || nNew==nSlot ) return rc;
  rc = vec0StmtRun(p, VEC0_STMT_FREE_TRIM, nNew);
  if( rc==SQLITE_OK ) rc = vec0InfoSet(p, "next_slot", nNew);
  if( rc==SQLITE_OK ) rc = vec0LogSlot(p, VEC0_LOG_TRIMMED, 0, 0);
  *pbTrimmed = 1;
  return rc;
}

/* nVec vectors of nWord words each, to and from their bytes in T_vectors: float32 elements
** little-endian; the bytes of int8 and bit vectors as they are (a word of them is no
** number). On little-endian hosts both are a copy. */
static void vec0WordsToLE(Vec0Table *p, const float *a, int nVec, unsigned char *pOut){
  size_t n = (size_t)nVec*(size_t)p->cfg.nWord;
  if( p->cfg.eElem==VS_F32 ) vsF32ToLE(a, (int)n, pOut); else memmove(pOut, a, n*4);
}
static void vec0WordsFromLE(Vec0Table *p, const unsigned char *pIn, int nVec, float *a){
  size_t n = (size_t)nVec*(size_t)p->cfg.nWord;
  if( p->cfg.eElem==VS_F32 ) vsF32FromLE(pIn, (int)n, a); else memmove(a, pIn, n*4);
}

/* Return a slot to the free list, its stored vector overwritten with zeros: a deleted
** embedding does not stay readable in the file. */
int vec0SlotFree(Vec0Table *p, sqlite3_int64 iSlot){
  sqlite3_blob *pBlob = 0;
  int nByte = p->cfg.nWord*4, iAt = 0;
  void *pZero = 0;
  int rc = vec0StmtRun(p, VEC0_STMT_FREE_ADD, iSlot);
  if( rc==SQLITE_OK ){
    pZero = sqlite3_malloc(nByte);
    if( pZero==0 ) rc = SQLITE_NOMEM;
  }
  if( rc==SQLITE_OK ){
    memset(pZero, 0, (size_t)nByte);
    rc = vec0BlobOpen(p, iSlot, 1, &iAt, &pBlob);
  }
  if( rc==SQLITE_OK ) rc = sqlite3_blob_write(pBlob, pZero, nByte, iAt*nByte);
  sqlite3_blob_close(pBlob);
  sqlite3_free(pZero);
  if( rc==SQLITE_OK ) rc = vec0CodesWrite(p, iSlot, 0);
  return rc;
}

/* Open blob iBlob of T_<zSuffix> (column zSuffix too), which must be nByte bytes; zWhat
** names its kind in errors. */
static int vec0ShadowBlobOpen(Vec0Table *p, const char *zSuffix, const char *zWhat,
                              sqlite3_int64 iBlob, int nByte, int bWrite,
                              sqlite3_blob **ppBlob){
  char *zTab = sqlite3_mprintf("%s_%s", p->zName, zSuffix);
  int rc;
  if( zTab==0 ) return SQLITE_NOMEM;
  rc = sqlite3_blob_open(p->dbStore, p->zStoreSchema, zTab, zSuffix, iBlob, bWrite, ppBlob);
  sqlite3_free(zTab);
  if( rc==SQLITE_OK && sqlite3_blob_bytes(*ppBlob)!=nByte ){
    sqlite3_blob_close(*ppBlob);
    *ppBlob = 0;
    vec0SetError(p, "vec0 \"%s\": storage is damaged: %s blob %lld of %s_%s",
                 p->zName, zWhat, iBlob, p->zName, zSuffix);
    rc = SQLITE_CORRUPT_VTAB;
  }else if( rc==SQLITE_ERROR ){
    /* No such blob: the slot names storage that is not there. */
    vec0SetError(p, "vec0 \"%s\": storage is damaged: %s blob %lld of %s_%s: %s",
                 p->zName, zWhat, iBlob, p->zName, zSuffix, sqlite3_errmsg(p->dbStore));
    rc = SQLITE_CORRUPT_VTAB;
  }
  return rc;
}

/* Where slot iSlot's vector is stored. A chunk's slots are ceil(nChunk/nPerBlob) blobs,
** numbered on from the last chunk's: each holds nPerBlob slots but the chunk's last, which
** holds the rest, so no blob crosses a chunk (a load reads a blob straight into its
** chunk). When nPerBlob divides nChunk this is blob iSlot/nPerBlob, place iSlot%nPerBlob. */
sqlite3_int64 vec0BlobOf(const Vec0Table *p, sqlite3_int64 iSlot, int *piAt){
  int nChunk = p->cfg.nChunk, nPer = p->nPerBlob, iIn = (int)(iSlot%nChunk);
  sqlite3_int64 nPerChunk = (nChunk + nPer - 1)/nPer;
  if( piAt ) *piAt = iSlot<0 ? 0 : iIn%nPer;
  if( iSlot<0 ) return -1;                  /* no blob: opening it says so */
  return (iSlot/nChunk)*nPerChunk + iIn/nPer;
}

sqlite3_int64 vec0BlobFirst(const Vec0Table *p, sqlite3_int64 iBlob, int *pnSlot){
  int nChunk = p->cfg.nChunk, nPer = p->nPerBlob;
  sqlite3_int64 nPerChunk = (nChunk + nPer - 1)/nPer;
  int iIn = iBlob<0 ? 0 : (int)(iBlob%nPerChunk)*nPer;
  if( pnSlot ) *pnSlot = nChunk - iIn < nPer ? nChunk - iIn : nPer;
  if( iBlob<0 ) return -1;
  return (iBlob/nPerChunk)*nChunk + iIn;
}

/* Bytes of blob iBlob of T_vectors. */
static int vec0BlobBytes(const Vec0Table *p, sqlite3_int64 iBlob){
  int nSlot = 0;
  vec0BlobFirst(p, iBlob, &nSlot);
  return nSlot*p->cfg.nWord*4;
}

/* Open blob iBlob of T_vectors, checking its size. */
static int vec0BlobOpenAt(Vec0Table *p, sqlite3_int64 iBlob, int bWrite, sqlite3_blob **ppBlob){
  return vec0ShadowBlobOpen(p, "vectors", "vector", iBlob, vec0BlobBytes(p, iBlob), bWrite,
                            ppBlob);
}

/* Open the blob that holds slot iSlot; *piAt: the slot's place in it. */
static int vec0BlobOpen(Vec0Table *p, sqlite3_int64 iSlot, int bWrite, int *piAt,
                        sqlite3_blob **ppBlob){
  return vec0BlobOpenAt(p, vec0BlobOf(p, iSlot, piAt), bWrite, ppBlob);
}

int vec0CodesOpen(Vec0Table *p, sqlite3_int64 iBlob, int bWrite, sqlite3_blob **ppBlob){
  return vec0ShadowBlobOpen(p, "codes", "code", iBlob,
                            p->cfg.nChunk*vec0QuantRecordBytes(&p->cfg), bWrite, ppBlob);
}

/* Keep slot iSlot's record in T_codes: vector a's code, or zeros (a == NULL). */
static int vec0CodesWrite(Vec0Table *p, sqlite3_int64 iSlot, const float *a){
  sqlite3_blob *pBlob = 0;
  int nRec = vec0QuantRecordBytes(&p->cfg);
  unsigned char *pRec;
  int rc;
  if( !p->bCodes ) return SQLITE_OK;
  pRec = sqlite3_malloc(nRec);
  if( pRec==0 ) return SQLITE_NOMEM;
  if( a ) vec0QuantRecord(&p->cfg, a, pRec); else memset(pRec, 0, (size_t)nRec);
  rc = vec0CodesOpen(p, iSlot/p->cfg.nChunk, 1, &pBlob);
  if( rc==SQLITE_OK ) rc = sqlite3_blob_write(pBlob, pRec, nRec, (int)(iSlot%p->cfg.nChunk)*nRec);
  sqlite3_blob_close(pBlob);
  sqlite3_free(pRec);
  return rc;
}

/* Store vector a in slot iSlot (checked): its blob, and its code. */
int vec0VectorWrite(Vec0Table *p, sqlite3_int64 iSlot, const float *a){
  sqlite3_blob *pBlob = 0;
  int nByte = p->cfg.nWord*4, iAt = 0;
  unsigned char *pBuf = 0;
  int rc = SQLITE_OK;
  if( iSlot<0 ){
    rc = vec0SlotCheck(p, iSlot, "a write");
    goto cleanup;
  }
  pBuf = sqlite3_malloc(nByte);
  if( pBuf==0 ){ rc = SQLITE_NOMEM; goto cleanup; }
  vec0WordsToLE(p, a, 1, pBuf);
  rc = vec0BlobOpen(p, iSlot, 1, &iAt, &pBlob);
  if( rc==SQLITE_OK ) rc = sqlite3_blob_write(pBlob, pBuf, nByte, iAt*nByte);
  if( rc==SQLITE_OK ) rc = vec0CodesWrite(p, iSlot, a);

cleanup:
  sqlite3_blob_close(pBlob);
  sqlite3_free(pBuf);
  return rc;
}

/* Point r's blob handle at blob iBlob of T_vectors, checking its size. */
static int vec0ReaderSeek(Vec0Table *p, Vec0Reader *r, sqlite3_int64 iBlob){
  int rc = SQLITE_OK;
  if( r->pBlob && r->iBlob==iBlob ) return SQLITE_OK;
  if( r->pBlob ){
    /* Moving an open handle costs far less than opening one. */
    rc = sqlite3_blob_reopen(r->pBlob, iBlob);
    if( rc!=SQLITE_OK ){
      sqlite3_blob_close(r->pBlob);
      r->pBlob = 0;
    }else if( sqlite3_blob_bytes(r->pBlob)!=vec0BlobBytes(p, iBlob) ){
      vec0SetError(p, "vec0 \"%s\": storage is damaged: vector blob %lld of %s_vectors",
                   p->zName, iBlob, p->zName);
      return SQLITE_CORRUPT_VTAB;
    }
  }
  if( r->pBlob==0 ){
    rc = vec0BlobOpenAt(p, iBlob, 0, &r->pBlob);
  }
  if( rc==SQLITE_OK ) r->iBlob = iBlob;
  return rc;
}

int vec0ReaderRead(Vec0Table *p, Vec0Reader *r, sqlite3_int64 iSlot, float *a){
  int nByte = p->cfg.nWord*4, iAt = 0;
  int rc;
  if( r->pBuf==0 ){
    r->pBuf = sqlite3_malloc(nByte);
    if( r->pBuf==0 ) return SQLITE_NOMEM;
  }
  rc = vec0ReaderSeek(p, r, vec0BlobOf(p, iSlot, &iAt));
  if( rc==SQLITE_OK ) rc = sqlite3_blob_read(r->pBlob, r->pBuf, nByte, iAt*nByte);
  if( rc==SQLITE_OK ) vec0WordsFromLE(p, r->pBuf, 1, a);
  return rc;
}

int vec0ReaderBlob(Vec0Table *p, Vec0Reader *r, sqlite3_int64 iBlob, float *a){
  int nSlot = 0, rc = vec0ReaderSeek(p, r, iBlob);
  vec0BlobFirst(p, iBlob, &nSlot);
  if( rc==SQLITE_OK ) rc = sqlite3_blob_read(r->pBlob, a, nSlot*p->cfg.nWord*4, 0);
  if( rc==SQLITE_OK ) vec0WordsFromLE(p, (const unsigned char*)a, nSlot, a);
  return rc;
}

void vec0ReaderClose(Vec0Reader *r){
  sqlite3_blob_close(r->pBlob);
  sqlite3_free(r->pBuf);
  memset(r, 0, sizeof(*r));
}

int vec0StoredVector(Vec0Table *p, sqlite3_int64 iSlot, float *a){
  Vec0Reader r;
  int rc;
  memset(&r, 0, sizeof(r));
  rc = vec0ReaderRead(p, &r, iSlot, a);
  vec0ReaderClose(&r);
  return rc;
}

