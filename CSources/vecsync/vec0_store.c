/*
** vec0_store.c: where a vec0 table keeps its rows, and the block scan that searches them.
**
** Usage (internal; vec0.c calls these):
**
**   vec0ShadowCreate(p);                 // CREATE VIRTUAL TABLE
**   vec0SlotAlloc(p, &iSlot); vec0VectorWrite(p, iSlot, a);
**   vec0CacheEnsure(p); vec0Search(p, q, k, aMask, &top);
**
** Storage. A vec0 table T keeps four shadow tables in its schema:
**
**   T_info(key PRIMARY KEY, value)     format, generation, next_slot
**   T_rows(rowid INTEGER PRIMARY KEY,  one row per vec0 row: its storage slot, its text
**          [id TEXT UNIQUE,] slot,       primary key if it has one, and its metadata and
**          c0, c1, ...)                  auxiliary values (column cN is user column N)
**   T_vectors(chunk_id INTEGER PRIMARY KEY, vectors BLOB)
**                                      runs of P vectors, row-major float32 (P a power of
**                                      two, P·D ≤ 65,536 floats); slot s lives in row s/P
**                                      at position s%P
**   T_free(slot INTEGER PRIMARY KEY)   slots freed by DELETE, reused first by INSERT
**
** Vectors are written into their block in place with sqlite3_blob_write(), so an insert
** touches one vector's pages, not the block's. Everything is ordinary SQLite data: it
** obeys transactions, survives reopening and is seen by other connections.
**
** Search. Each connection holds a copy of the blocks in memory (Vec0Cache) with every
** vector's norm, so a query is one cblas_sgemv per block plus a bounded heap, at the
** speed memory streams. The copy follows this connection's writes as they happen. It is
** checked before each search against SQLITE_FCNTL_DATA_VERSION and the table's
** 'generation' counter (bumped by every write), so a commit made by another connection
** reloads it; a ROLLBACK drops it. Scores come from float32 BLAS; the best k+16 are then
** re-ranked with distances computed in double precision, which are the ones reported.
*/
#define _GNU_SOURCE 1
#include "vecsync_int.h"
SQLITE_EXTENSION_INIT3

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* Extra candidates kept for the exact re-ranking of the best k. */
#define VEC0_RERANK_EXTRA 16

enum {
  VEC0_STMT_INFO_GET = 0,
  VEC0_STMT_INFO_SET,
  VEC0_STMT_FREE_FIRST,
  VEC0_STMT_FREE_DEL,
  VEC0_STMT_FREE_ADD,
  VEC0_STMT_CHUNK_NEW,
  VEC0_STMT_COUNT
};

/* Vectors a row of T_vectors holds: blobs of at most 64 KiB·4 (256 KiB), because writing
** one vector walks the blob's overflow pages up to its offset; a power of two that
** divides the scan block (nChunk), so each blob lands inside one block of the copy. */
static int vec0PerBlob(Vec0Table *p){
  int n = 1;
  while( n*2<=p->cfg.nChunk && (sqlite3_int64)n*2*p->cfg.nDim<=65536 && p->cfg.nChunk%(n*2)==0 ){
    n *= 2;
  }
  return n;
}

/* Prepare (once) and return one of the table's shadow statements. */
static int vec0Stmt(Vec0Table *p, int eStmt, sqlite3_stmt **ppStmt){
  int rc = SQLITE_OK;
  if( p->aStmt[eStmt]==0 ){
    char *zSql = 0;
    switch( eStmt ){
      case VEC0_STMT_INFO_GET:
        zSql = sqlite3_mprintf("SELECT value FROM \"%w\".\"%w_info\" WHERE key=?1",
                               p->zSchema, p->zName);
        break;
      case VEC0_STMT_INFO_SET:
        zSql = sqlite3_mprintf("REPLACE INTO \"%w\".\"%w_info\"(key, value) VALUES(?1, ?2)",
                               p->zSchema, p->zName);
        break;
      case VEC0_STMT_FREE_FIRST:
        zSql = sqlite3_mprintf("SELECT slot FROM \"%w\".\"%w_free\" ORDER BY slot LIMIT 1",
                               p->zSchema, p->zName);
        break;
      case VEC0_STMT_FREE_DEL:
        zSql = sqlite3_mprintf("DELETE FROM \"%w\".\"%w_free\" WHERE slot=?1",
                               p->zSchema, p->zName);
        break;
      case VEC0_STMT_FREE_ADD:
        zSql = sqlite3_mprintf("INSERT INTO \"%w\".\"%w_free\"(slot) VALUES(?1)",
                               p->zSchema, p->zName);
        break;
      case VEC0_STMT_CHUNK_NEW:
        zSql = sqlite3_mprintf(
            "INSERT INTO \"%w\".\"%w_vectors\"(chunk_id, vectors) VALUES(?1, zeroblob(?2))",
            p->zSchema, p->zName);
        break;
    }
    if( zSql==0 ) return SQLITE_NOMEM;
    rc = sqlite3_prepare_v3(p->db, zSql, -1, SQLITE_PREPARE_PERSISTENT,
                            &p->aStmt[eStmt], 0);
    sqlite3_free(zSql);
  }
  *ppStmt = p->aStmt[eStmt];
  return rc;
}

int vec0CachedStmt(Vec0Table *p, int i, sqlite3_stmt **ppStmt, const char *zFmt, ...){
  int rc = SQLITE_OK;
  if( p->aStmt[i]==0 ){
    va_list ap;
    char *zSql;
    va_start(ap, zFmt);
    zSql = sqlite3_vmprintf(zFmt, ap);
    va_end(ap);
    if( zSql==0 ) return SQLITE_NOMEM;
    rc = sqlite3_prepare_v3(p->db, zSql, -1, SQLITE_PREPARE_PERSISTENT, &p->aStmt[i], 0);
    sqlite3_free(zSql);
  }
  *ppStmt = p->aStmt[i];
  return rc;
}

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

int vec0ShadowCreate(Vec0Table *p){
  int rc, i;
  char *zSql;
  sqlite3_str *pStr = sqlite3_str_new(p->db);
  sqlite3_str_appendf(pStr,
      "CREATE TABLE \"%w\".\"%w_info\"(key TEXT PRIMARY KEY, value);"
      "INSERT INTO \"%w\".\"%w_info\"(key, value) VALUES "
      "('format', 1), ('generation', 0), ('next_slot', 0), ('chunk_size', %d), "
      "('dimensions', %d), ('metric', '%s'), ('vectors_per_blob', %d);"
      "CREATE TABLE \"%w\".\"%w_vectors\"(chunk_id INTEGER PRIMARY KEY, vectors BLOB NOT NULL);"
      "CREATE TABLE \"%w\".\"%w_free\"(slot INTEGER PRIMARY KEY);"
      "CREATE TABLE \"%w\".\"%w_rows\"(rowid INTEGER PRIMARY KEY",
      p->zSchema, p->zName, p->zSchema, p->zName, p->cfg.nChunk, p->cfg.nDim,
      vec0MetricName(p->cfg.eMetric), vec0PerBlob(p),
      p->zSchema, p->zName, p->zSchema, p->zName, p->zSchema, p->zName);
  if( p->cfg.iPk>=0 && p->cfg.aCol[p->cfg.iPk].eType==VEC0_TYPE_TEXT ){
    sqlite3_str_appendf(pStr, ", id TEXT NOT NULL UNIQUE");
  }
  sqlite3_str_appendf(pStr, ", slot INTEGER NOT NULL");
  for(i=0; i<p->cfg.nCol; i++){
    int eKind = p->cfg.aCol[i].eKind;
    if( eKind==VEC0_META || eKind==VEC0_AUX ){
      sqlite3_str_appendf(pStr, ", c%d %s", i, vec0ShadowType(p->cfg.aCol[i].eType));
    }
  }
  sqlite3_str_appendf(pStr, ");");
  zSql = sqlite3_str_finish(pStr);
  if( zSql==0 ) return SQLITE_NOMEM;
  rc = sqlite3_exec(p->db, zSql, 0, 0, 0);
  sqlite3_free(zSql);
  return rc;
}

int vec0ShadowDrop(Vec0Table *p){
  char *zSql = sqlite3_mprintf(
      "DROP TABLE IF EXISTS \"%w\".\"%w_info\";"
      "DROP TABLE IF EXISTS \"%w\".\"%w_vectors\";"
      "DROP TABLE IF EXISTS \"%w\".\"%w_free\";"
      "DROP TABLE IF EXISTS \"%w\".\"%w_rows\";",
      p->zSchema, p->zName, p->zSchema, p->zName, p->zSchema, p->zName,
      p->zSchema, p->zName);
  int rc;
  if( zSql==0 ) return SQLITE_NOMEM;
  rc = sqlite3_exec(p->db, zSql, 0, 0, 0);
  sqlite3_free(zSql);
  return rc;
}

void vec0StmtsFinalize(Vec0Table *p){
  int i;
  for(i=0; i<(int)(sizeof(p->aStmt)/sizeof(p->aStmt[0])); i++){
    sqlite3_finalize(p->aStmt[i]);
    p->aStmt[i] = 0;
  }
  /* A cursor statement in use is left to its cursor, which finalizes it on release as it
  ** no longer matches the slot. */
  for(i=0; i<(int)(sizeof(p->aCurStmt)/sizeof(p->aCurStmt[0])); i++){
    if( !p->aCurBusy[i] ) sqlite3_finalize(p->aCurStmt[i]);
    p->aCurStmt[i] = 0;
    p->aCurBusy[i] = 0;
  }
}

/* ---- the in-memory copy --------------------------------------------------------------- */

void vec0CacheClear(Vec0Table *p){
  Vec0Cache *c = &p->cache;
  int b;
  for(b=0; b<c->nBlock; b++) free(c->apBlock[b]);
  sqlite3_free(c->apBlock);
  sqlite3_free(c->aNorm);
  sqlite3_free(c->aRowid);
  sqlite3_free(c->aLive);
  memset(c, 0, sizeof(*c));
}

/* Make room for nBlock blocks in the copy. */
static int vec0CacheGrow(Vec0Table *p, int nBlock){
  Vec0Cache *c = &p->cache;
  sqlite3_int64 nSlotNew = (sqlite3_int64)nBlock*p->cfg.nChunk;
  sqlite3_int64 nSlotOld = (sqlite3_int64)c->nBlock*p->cfg.nChunk;
  float **apBlock;
  float *aNorm;
  sqlite3_int64 *aRowid;
  unsigned char *aLive;
  int b;
  if( nBlock<=c->nBlock ) return SQLITE_OK;
  apBlock = sqlite3_realloc64(c->apBlock, sizeof(float*)*(sqlite3_uint64)nBlock);
  if( apBlock==0 ) return SQLITE_NOMEM;
  c->apBlock = apBlock;
  aNorm = sqlite3_realloc64(c->aNorm, sizeof(float)*(sqlite3_uint64)nSlotNew);
  if( aNorm==0 ) return SQLITE_NOMEM;
  c->aNorm = aNorm;
  aRowid = sqlite3_realloc64(c->aRowid, sizeof(sqlite3_int64)*(sqlite3_uint64)nSlotNew);
  if( aRowid==0 ) return SQLITE_NOMEM;
  c->aRowid = aRowid;
  aLive = sqlite3_realloc64(c->aLive, (sqlite3_uint64)nSlotNew);
  if( aLive==0 ) return SQLITE_NOMEM;
  c->aLive = aLive;
  memset(&aNorm[nSlotOld], 0, sizeof(float)*(size_t)(nSlotNew-nSlotOld));
  memset(&aRowid[nSlotOld], 0, sizeof(sqlite3_int64)*(size_t)(nSlotNew-nSlotOld));
  memset(&aLive[nSlotOld], 0, (size_t)(nSlotNew-nSlotOld));
  for(b=c->nBlock; b<nBlock; b++){
    void *pBlock = 0;
    size_t nByte = sizeof(float)*(size_t)p->cfg.nChunk*(size_t)p->cfg.nDim;
    if( posix_memalign(&pBlock, 64, nByte) ){
      c->nBlock = b;
      return SQLITE_NOMEM;
    }
    memset(pBlock, 0, nByte);
    c->apBlock[b] = pBlock;
    c->nBlock = b+1;
  }
  return SQLITE_OK;
}

static float *vec0CacheVector(Vec0Table *p, sqlite3_int64 iSlot){
  return p->cache.apBlock[iSlot/p->cfg.nChunk]
       + (size_t)(iSlot%p->cfg.nChunk)*(size_t)p->cfg.nDim;
}

/* Load the whole copy from the shadow tables. */
static int vec0CacheLoad(Vec0Table *p){
  Vec0Cache *c = &p->cache;
  sqlite3_stmt *pStmt = 0;
  sqlite3_int64 nSlot = 0, iGen = 0;
  char *zSql = 0;
  int rc;
  int nPer = vec0PerBlob(p);
  size_t nBlobBytes = sizeof(float)*(size_t)nPer*(size_t)p->cfg.nDim;

  vec0CacheClear(p);
  rc = vec0InfoGet(p, "next_slot", &nSlot);
  if( rc==SQLITE_OK ) rc = vec0InfoGet(p, "generation", &iGen);
  if( rc==SQLITE_OK ){
    rc = vec0CacheGrow(p, (int)((nSlot + p->cfg.nChunk - 1)/p->cfg.nChunk));
  }
  if( rc!=SQLITE_OK ) goto cleanup;
  c->nSlot = nSlot;

  zSql = sqlite3_mprintf("SELECT chunk_id, vectors FROM \"%w\".\"%w_vectors\"",
                         p->zSchema, p->zName);
  if( zSql==0 ){ rc = SQLITE_NOMEM; goto cleanup; }
  rc = sqlite3_prepare_v2(p->db, zSql, -1, &pStmt, 0);
  while( rc==SQLITE_OK && sqlite3_step(pStmt)==SQLITE_ROW ){
    sqlite3_int64 iChunk = sqlite3_column_int64(pStmt, 0);
    const void *pBlob = sqlite3_column_blob(pStmt, 1);
    int nBlob = sqlite3_column_bytes(pStmt, 1);
    sqlite3_int64 iFirst = iChunk*nPer;     /* first slot the blob holds */
    if( iChunk<0 || iFirst>=(sqlite3_int64)c->nBlock*p->cfg.nChunk
     || (size_t)nBlob!=nBlobBytes ){
      rc = SQLITE_CORRUPT_VTAB;
      p->base.zErrMsg = sqlite3_mprintf(
          "vec0 \"%s\": storage block %lld is damaged", p->zName, iChunk);
      break;
    }
    vsF32FromLE(pBlob, nPer*p->cfg.nDim, vec0CacheVector(p, iFirst));
  }
  if( rc==SQLITE_OK ) rc = sqlite3_finalize(pStmt); else sqlite3_finalize(pStmt);
  pStmt = 0;
  sqlite3_free(zSql);
  if( rc!=SQLITE_OK ) goto cleanup;

  zSql = sqlite3_mprintf("SELECT rowid, slot FROM \"%w\".\"%w_rows\"", p->zSchema, p->zName);
  if( zSql==0 ){ rc = SQLITE_NOMEM; goto cleanup; }
  rc = sqlite3_prepare_v2(p->db, zSql, -1, &pStmt, 0);
  while( rc==SQLITE_OK && sqlite3_step(pStmt)==SQLITE_ROW ){
    sqlite3_int64 iRowid = sqlite3_column_int64(pStmt, 0);
    sqlite3_int64 iSlot = sqlite3_column_int64(pStmt, 1);
    if( iSlot<0 || iSlot>=nSlot || c->aLive[iSlot] ){
      rc = SQLITE_CORRUPT_VTAB;
      p->base.zErrMsg = sqlite3_mprintf(
          "vec0 \"%s\": row %lld has a bad storage slot", p->zName, iRowid);
      break;
    }
    c->aLive[iSlot] = 1;
    c->aRowid[iSlot] = iRowid;
    c->aNorm[iSlot] = vsNormF32(vec0CacheVector(p, iSlot), p->cfg.nDim);
    c->nLive++;
  }
  if( rc==SQLITE_OK ) rc = sqlite3_finalize(pStmt); else sqlite3_finalize(pStmt);
  pStmt = 0;
  if( rc==SQLITE_OK ){
    c->iGeneration = iGen;
    c->bValid = 1;
  }

cleanup:
  sqlite3_free(zSql);
  if( rc!=SQLITE_OK ) vec0CacheClear(p);
  return rc;
}

/* The database's data version: it moves whenever the file changes. */
static unsigned int vec0DataVersion(Vec0Table *p){
  unsigned int v = 0;
  sqlite3_file_control(p->db, p->zSchema, SQLITE_FCNTL_DATA_VERSION, &v);
  return v;
}

int vec0CacheEnsure(Vec0Table *p){
  Vec0Cache *c = &p->cache;
  unsigned int v = vec0DataVersion(p);
  if( c->bValid ){
    sqlite3_int64 iGen = -1;
    int rc;
    if( v==c->iDataVersion ) return SQLITE_OK;
    rc = vec0InfoGet(p, "generation", &iGen);
    if( rc!=SQLITE_OK ) return rc;
    if( iGen==c->iGeneration ){
      c->iDataVersion = v;
      return SQLITE_OK;
    }
  }
  {
    int rc = vec0CacheLoad(p);
    if( rc==SQLITE_OK ) c->iDataVersion = vec0DataVersion(p);
    return rc;
  }
}

/* Record a write: bump the generation, and keep the copy's generation in step with it
** when the copy is current. */
int vec0NoteWrite(Vec0Table *p){
  sqlite3_int64 iGen = 0;
  int rc;
  /* Once a transaction is enough: other connections only see it committed. */
  if( p->bGenerationBumped ) return SQLITE_OK;
  rc = vec0InfoGet(p, "generation", &iGen);
  if( rc==SQLITE_OK ) rc = vec0InfoSet(p, "generation", iGen+1);
  if( rc==SQLITE_OK ) p->bGenerationBumped = 1;
  if( rc==SQLITE_OK && p->cache.bValid ){
    if( p->cache.iGeneration==iGen ){
      p->cache.iGeneration = iGen+1;
    }else{
      p->cache.bValid = 0;
    }
  }
  return rc;
}

/* ---- slots and vectors ------------------------------------------------------------------ */

/* Take a free slot, or a new one at the end (adding a storage block when needed). */
int vec0SlotAlloc(Vec0Table *p, sqlite3_int64 *piSlot){
  sqlite3_stmt *pStmt;
  sqlite3_int64 iSlot = -1;
  int rc = vec0Stmt(p, VEC0_STMT_FREE_FIRST, &pStmt);
  if( rc!=SQLITE_OK ) return rc;
  if( sqlite3_step(pStmt)==SQLITE_ROW ) iSlot = sqlite3_column_int64(pStmt, 0);
  rc = sqlite3_reset(pStmt);
  if( rc!=SQLITE_OK ) return rc;
  if( iSlot>=0 ){
    rc = vec0Stmt(p, VEC0_STMT_FREE_DEL, &pStmt);
    if( rc!=SQLITE_OK ) return rc;
    sqlite3_bind_int64(pStmt, 1, iSlot);
    sqlite3_step(pStmt);
    rc = sqlite3_reset(pStmt);
  }else{
    sqlite3_int64 nSlot = 0;
    rc = vec0InfoGet(p, "next_slot", &nSlot);
    if( rc!=SQLITE_OK ) return rc;
    iSlot = nSlot;
    if( iSlot%vec0PerBlob(p)==0 ){
      rc = vec0Stmt(p, VEC0_STMT_CHUNK_NEW, &pStmt);
      if( rc!=SQLITE_OK ) return rc;
      sqlite3_bind_int64(pStmt, 1, iSlot/vec0PerBlob(p));
      sqlite3_bind_int64(pStmt, 2, (sqlite3_int64)vec0PerBlob(p)*p->cfg.nDim*4);
      sqlite3_step(pStmt);
      rc = sqlite3_reset(pStmt);
      if( rc!=SQLITE_OK ) return rc;
    }
    rc = vec0InfoSet(p, "next_slot", nSlot+1);
    if( rc==SQLITE_OK && p->cache.bValid ){
      rc = vec0CacheGrow(p, (int)(iSlot/p->cfg.nChunk)+1);
      if( rc==SQLITE_OK ) p->cache.nSlot = nSlot+1;
    }
  }
  *piSlot = iSlot;
  return rc;
}

/* Return a slot to the free list. */
int vec0SlotFree(Vec0Table *p, sqlite3_int64 iSlot){
  sqlite3_stmt *pStmt;
  int rc = vec0Stmt(p, VEC0_STMT_FREE_ADD, &pStmt);
  if( rc!=SQLITE_OK ) return rc;
  sqlite3_bind_int64(pStmt, 1, iSlot);
  sqlite3_step(pStmt);
  rc = sqlite3_reset(pStmt);
  if( rc==SQLITE_OK && p->cache.bValid && iSlot<p->cache.nSlot && p->cache.aLive[iSlot] ){
    p->cache.aLive[iSlot] = 0;
    p->cache.aRowid[iSlot] = 0;
    p->cache.nLive--;
  }
  return rc;
}

/* Open the block that holds slot iSlot for incremental I/O. */
static int vec0BlockOpen(Vec0Table *p, sqlite3_int64 iSlot, int bWrite, sqlite3_blob **ppBlob){
  char *zTab = sqlite3_mprintf("%s_vectors", p->zName);
  int rc;
  if( zTab==0 ) return SQLITE_NOMEM;
  rc = sqlite3_blob_open(p->db, p->zSchema, zTab, "vectors", iSlot/vec0PerBlob(p),
                         bWrite, ppBlob);
  sqlite3_free(zTab);
  return rc;
}

/* Store vector a in slot iSlot for row iRowid, in its block and in the copy. */
int vec0VectorWrite(Vec0Table *p, sqlite3_int64 iSlot, sqlite3_int64 iRowid, const float *a){
  sqlite3_blob *pBlob = 0;
  int nByte = p->cfg.nDim*4;
  unsigned char *pBuf = sqlite3_malloc(nByte);
  int rc;
  if( pBuf==0 ) return SQLITE_NOMEM;
  vsF32ToLE(a, p->cfg.nDim, pBuf);
  rc = vec0BlockOpen(p, iSlot, 1, &pBlob);
  if( rc==SQLITE_OK ){
    rc = sqlite3_blob_write(pBlob, pBuf, nByte, (int)(iSlot%vec0PerBlob(p))*nByte);
  }
  sqlite3_blob_close(pBlob);
  sqlite3_free(pBuf);
  if( rc==SQLITE_OK && p->cache.bValid ){
    Vec0Cache *c = &p->cache;
    if( iSlot>=c->nSlot ){
      c->bValid = 0;
    }else{
      memcpy(vec0CacheVector(p, iSlot), a, (size_t)nByte);
      c->aNorm[iSlot] = vsNormF32(a, p->cfg.nDim);
      if( !c->aLive[iSlot] ) c->nLive++;
      c->aLive[iSlot] = 1;
      c->aRowid[iSlot] = iRowid;
    }
  }
  return rc;
}

/* Change the rowid the copy records for a slot (an UPDATE of the primary key). */
void vec0CacheSetRowid(Vec0Table *p, sqlite3_int64 iSlot, sqlite3_int64 iRowid){
  if( p->cache.bValid && iSlot<p->cache.nSlot ) p->cache.aRowid[iSlot] = iRowid;
}

/* Read the vector in slot iSlot into a (nDim floats), from the copy when it is current. */
int vec0VectorRead(Vec0Table *p, sqlite3_int64 iSlot, float *a){
  sqlite3_blob *pBlob = 0;
  int nByte = p->cfg.nDim*4;
  unsigned char *pBuf;
  int rc;
  if( p->cache.bValid && iSlot<p->cache.nSlot
   && p->cache.iDataVersion==vec0DataVersion(p) ){
    memcpy(a, vec0CacheVector(p, iSlot), (size_t)nByte);
    return SQLITE_OK;
  }
  pBuf = sqlite3_malloc(nByte);
  if( pBuf==0 ) return SQLITE_NOMEM;
  rc = vec0BlockOpen(p, iSlot, 0, &pBlob);
  if( rc==SQLITE_OK ){
    rc = sqlite3_blob_read(pBlob, pBuf, nByte, (int)(iSlot%vec0PerBlob(p))*nByte);
  }
  sqlite3_blob_close(pBlob);
  if( rc==SQLITE_OK ) vsF32FromLE(pBuf, p->cfg.nDim, a);
  sqlite3_free(pBuf);
  return rc;
}

/* ---- search -------------------------------------------------------------------------- */

int vec0VectorArg(Vec0Table *p, sqlite3_value *pVal, const char *zWhat,
                  float **paOut, char **pzErr){
  VsVector v;
  char *zErr = 0;
  int rc;
  *paOut = 0;
  if( sqlite3_value_type(pVal)==SQLITE_NULL ){
    *pzErr = sqlite3_mprintf("vec0 \"%s\": the %s vector is NULL", p->zName, zWhat);
    return SQLITE_ERROR;
  }
  rc = vsVectorFromValue(pVal, VS_F32, &v, &zErr);
  if( rc==SQLITE_OK && v.nDim!=p->cfg.nDim ){
    zErr = sqlite3_mprintf("the %s vector has %d dimensions, column \"%s\" has %d",
                           zWhat, v.nDim, p->cfg.aCol[p->cfg.iVec].zName, p->cfg.nDim);
    rc = SQLITE_ERROR;
  }
  if( rc==SQLITE_OK ) rc = vsVectorToF32(&v, paOut, &zErr);
  if( rc==SQLITE_OK && p->cfg.eMetric==VS_METRIC_COSINE
   && vsNormF32(*paOut, p->cfg.nDim)==0.0f ){
    zErr = sqlite3_mprintf(
        "the %s vector is all zeros: cosine distance is undefined for it", zWhat);
    rc = SQLITE_ERROR;
  }
  vsVectorFree(&v);
  if( rc!=SQLITE_OK ){
    sqlite3_free(*paOut);
    *paOut = 0;
    if( rc!=SQLITE_NOMEM ){
      *pzErr = sqlite3_mprintf("vec0 \"%s\": %s", p->zName, zErr ? zErr : "bad vector");
    }
  }
  sqlite3_free(zErr);
  return rc;
}

/* The distance a BLAS score s = q·v stands for, for ranking. */
static double vec0ApproxDistance(int eMetric, float s, float qNorm, float vNorm){
  switch( eMetric ){
    case VS_METRIC_COSINE: return 1.0 - (double)s/((double)qNorm*(double)vNorm);
    case VS_METRIC_DOT:    return -(double)s;
  }
  {
    double d2 = (double)qNorm*qNorm + (double)vNorm*vNorm - 2.0*(double)s;
    return d2>0.0 ? d2 : 0.0;   /* squared: same order, no sqrt per candidate */
  }
}

/* The distance between q and v computed in double precision, as reported. */
double vec0Distance(int eMetric, const float *q, const float *v, int n){
  double dot = 0, qq = 0, vv = 0, d2 = 0;
  int i;
  switch( eMetric ){
    case VS_METRIC_COSINE:
      for(i=0; i<n; i++){ dot += (double)q[i]*v[i]; qq += (double)q[i]*q[i]; vv += (double)v[i]*v[i]; }
      {
        double r = 1.0 - dot/sqrt(qq*vv);
        return r<0.0 ? 0.0 : (r>2.0 ? 2.0 : r);
      }
    case VS_METRIC_DOT:
      for(i=0; i<n; i++) dot += (double)q[i]*v[i];
      return -dot;
  }
  for(i=0; i<n; i++){ double d = (double)q[i]-v[i]; d2 += d*d; }
  return sqrt(d2);
}

/* Replace approximate distances by exact ones, sort, keep the best k. */
static void vec0Rerank(Vec0Table *p, const float *q, sqlite3_int64 k, VsTopK *pTop){
  int i;
  for(i=0; i<pTop->n; i++){
    pTop->a[i].rDist = vec0Distance(p->cfg.eMetric, q,
        vec0CacheVector(p, pTop->a[i].iSlot), p->cfg.nDim);
  }
  vsTopKSort(pTop);
  if( pTop->n>k ) pTop->n = (int)k;
}

static sqlite3_int64 vec0CandidateCap(sqlite3_int64 k){
  sqlite3_int64 nKeep = k + VEC0_RERANK_EXTRA;
  if( nKeep<k ) nKeep = k;    /* overflow */
  return nKeep;
}

/* Offer the rows of one block, scored by aScore (aScore[i] = q·row i), to the heap:
** live rows that pass aMask (when given), skipping those the heap would refuse. */
static void vec0PushScores(Vec0Table *p, const float *aScore, sqlite3_int64 iBase, int nRow,
                           float qNorm, const unsigned char *aMask, VsTopK *pTop){
  Vec0Cache *c = &p->cache;
  double rBound = vsTopKBound(pTop);
  int i;
  for(i=0; i<nRow; i++){
    sqlite3_int64 s = iBase+i;
    double d;
    if( !c->aLive[s] || (aMask && !aMask[s]) ) continue;
    d = vec0ApproxDistance(p->cfg.eMetric, aScore[i], qNorm, c->aNorm[s]);
    if( d<=rBound ){
      vsTopKPush(pTop, d, c->aRowid[s], s);
      rBound = vsTopKBound(pTop);
    }
  }
}

int vec0Search(Vec0Table *p, const float *q, sqlite3_int64 k,
               const unsigned char *aMask, VsTopK *pTop){
  Vec0Cache *c = &p->cache;
  int nChunk = p->cfg.nChunk, nDim = p->cfg.nDim, eMetric = p->cfg.eMetric;
  float qNorm = vsNormF32(q, nDim);
  float *aScore = 0;
  int rc, b;

  rc = vsTopKInit(pTop, vec0CandidateCap(k), c->nLive);
  if( rc!=SQLITE_OK ) return rc;
  aScore = sqlite3_malloc64(sizeof(float)*(size_t)nChunk);
  if( aScore==0 ){ vsTopKFree(pTop); return SQLITE_NOMEM; }

  for(b=0; b<c->nBlock; b++){
    sqlite3_int64 iBase = (sqlite3_int64)b*nChunk;
    int nRow = (int)(c->nSlot - iBase < nChunk ? c->nSlot - iBase : nChunk);
    const float *A = c->apBlock[b];
    int i;
    if( nRow<=0 ) break;
    if( aMask ){
      /* A selective filter scores its few rows one by one; a broad one, the block. */
      int nPass = 0;
      for(i=0; i<nRow; i++) nPass += aMask[iBase+i] && c->aLive[iBase+i];
      if( nPass==0 ) continue;
      if( nPass*8 < nRow ){
        for(i=0; i<nRow; i++){
          sqlite3_int64 s = iBase+i;
          if( aMask[s] && c->aLive[s] ){
            float dot = vsDotF32(q, A + (size_t)i*nDim, nDim);
            vsTopKPush(pTop, vec0ApproxDistance(eMetric, dot, qNorm, c->aNorm[s]),
                       c->aRowid[s], s);
          }
        }
        continue;
      }
    }
    vsScoreBlock(A, nRow, nDim, q, aScore);
    vec0PushScores(p, aScore, iBase, nRow, qNorm, aMask, pTop);
  }
  sqlite3_free(aScore);
  vec0Rerank(p, q, k, pTop);
  return SQLITE_OK;
}

/* Queries scored against a block together, bounding the score matrix's size. */
#define VEC0_BATCH_GROUP 256

int vec0SearchBatch(Vec0Table *p, const float *Q, int nQuery, sqlite3_int64 k,
                    VsTopK *aTop){
  Vec0Cache *c = &p->cache;
  int nChunk = p->cfg.nChunk, nDim = p->cfg.nDim;
  float *aScore = 0, *aQNorm = 0;
  int rc = SQLITE_OK, j, b;

  memset(aTop, 0, sizeof(VsTopK)*(size_t)nQuery);
  aScore = sqlite3_malloc64(sizeof(float)*(size_t)nChunk*VEC0_BATCH_GROUP);
  aQNorm = sqlite3_malloc64(sizeof(float)*(size_t)(nQuery ? nQuery : 1));
  if( aScore==0 || aQNorm==0 ){ rc = SQLITE_NOMEM; goto cleanup; }
  for(j=0; j<nQuery && rc==SQLITE_OK; j++){
    aQNorm[j] = vsNormF32(Q + (size_t)j*nDim, nDim);
    rc = vsTopKInit(&aTop[j], vec0CandidateCap(k), c->nLive);
  }
  if( rc!=SQLITE_OK ) goto cleanup;

  for(b=0; b<c->nBlock; b++){
    sqlite3_int64 iBase = (sqlite3_int64)b*nChunk;
    int nRow = (int)(c->nSlot - iBase < nChunk ? c->nSlot - iBase : nChunk);
    int j0;
    if( nRow<=0 ) break;
    for(j0=0; j0<nQuery; j0+=VEC0_BATCH_GROUP){
      int nGroup = nQuery-j0 < VEC0_BATCH_GROUP ? nQuery-j0 : VEC0_BATCH_GROUP;
      vsScoreBlockBatch(c->apBlock[b], nRow, nDim, Q + (size_t)j0*nDim, nGroup, aScore);
      for(j=0; j<nGroup; j++){
        vec0PushScores(p, aScore + (size_t)j*nRow, iBase, nRow, aQNorm[j0+j], 0, &aTop[j0+j]);
      }
    }
  }
  for(j=0; j<nQuery; j++) vec0Rerank(p, Q + (size_t)j*nDim, k, &aTop[j]);

cleanup:
  sqlite3_free(aScore);
  sqlite3_free(aQNorm);
  if( rc!=SQLITE_OK ){
    for(j=0; j<nQuery; j++) vsTopKFree(&aTop[j]);
  }
  return rc;
}
