/*
** vec0_batch.c: many KNN queries against a vec0 table in one pass; and the SQL functions
** that report on or tune vec0 tables: vecsync_cache_info(), vecsync_memory_budget().
**
** Usage:
**
**   -- :queries is the float32 bytes of N query vectors laid end to end (N·D·4 bytes)
**   select query_index, id, distance
**     from vecsync_knn_batch('vec_photos', :queries, 10);
**   select vecsync_cache_info('vec_photos');      -- JSON: generation, rows, chunks, ...
**   select vecsync_memory_budget(256*1024*1024);  -- bytes the process's copies may take
**
** Returns, for each query (query_index 0..N-1), its k nearest rows nearest first: id is
** the table's primary key (its rowid when it has none) and distance the table's metric.
** Exact, like a MATCH query.
**
** How it works: every block of stored vectors is multiplied by the whole batch of
** queries with one cblas_sgemm (in groups of 256 queries), which reads each block once
** for all of them, instead of once a query.
*/
#include "vecsync_int.h"
SQLITE_EXTENSION_INIT3

#include <string.h>

#define VKB_COL_QUERY    0
#define VKB_COL_ID       1
#define VKB_COL_DISTANCE 2
#define VKB_COL_TABLE    3
#define VKB_COL_QUERIES  4
#define VKB_COL_K        5

typedef struct VkbCursor VkbCursor;
struct VkbCursor {
  sqlite3_vtab_cursor base;   /* Base class: must be first */
  Vec0Table *pTab;            /* The vec0 table searched */
  int nQuery;                 /* Queries in the batch */
  VsTopK *aTop;               /* aTop[j]: hits of query j, nearest first */
  int iQuery, iHit;           /* Current position */
  sqlite3_int64 iRow;         /* Running row number, the rowid */
  sqlite3_stmt *pId;          /* Text primary key of a rowid */
};

/* Forget the last batch's hits. */
static void vkbReset(sqlite3_vtab_cursor *cur){
  VkbCursor *pCur = (VkbCursor*)cur;
  int j;
  for(j=0; j<pCur->nQuery; j++) vsTopKFree(&pCur->aTop[j]);
  sqlite3_free(pCur->aTop);
  sqlite3_finalize(pCur->pId);
  pCur->aTop = 0;
  pCur->pId = 0;
  pCur->nQuery = 0;
  pCur->iQuery = pCur->iHit = 0;
  pCur->iRow = 0;
  pCur->pTab = 0;
}

static int vkbConnect(sqlite3 *db, void *pAux, int argc, const char *const *argv,
                      sqlite3_vtab **ppVtab, char **pzErr){
  int rc = vsTableFunctionConnect(db, pAux,
      "CREATE TABLE x(query_index INTEGER, id, distance REAL, "
      "\"table\" HIDDEN, queries HIDDEN, k HIDDEN)", sizeof(VkbCursor), vkbReset, ppVtab);
  (void)argc; (void)argv; (void)pzErr;
  /* It only reads vec0 tables the caller names: harmless in triggers and views. */
  if( rc==SQLITE_OK ) sqlite3_vtab_config(db, SQLITE_VTAB_INNOCUOUS);
  return rc;
}

static int vkbBestIndex(sqlite3_vtab *pVtab, sqlite3_index_info *pInfo){
  int rc = vsTableFunctionArgs(pVtab, pInfo, VKB_COL_TABLE, VKB_COL_K-VKB_COL_TABLE+1,
                               "vecsync_knn_batch(table, queries, k) needs all three arguments");
  if( rc==SQLITE_OK ) pInfo->estimatedCost = 1000.0;
  return rc;
}

/* Skip queries that have no (more) hits. */
static void vkbSettle(VkbCursor *pCur){
  while( pCur->iQuery<pCur->nQuery && pCur->iHit>=pCur->aTop[pCur->iQuery].n ){
    pCur->iQuery++;
    pCur->iHit = 0;
  }
}

/* Report an error of the batch function: "vecsync_knn_batch: <zErr>", zErr freed. */
static int vkbError(sqlite3_vtab *pVtab, int rc, char *zErr){
  sqlite3_free(pVtab->zErrMsg);
  pVtab->zErrMsg = rc==SQLITE_NOMEM ? 0 : sqlite3_mprintf("vecsync_knn_batch: %s",
                                                          zErr ? zErr : "error");
  sqlite3_free(zErr);
  return rc;
}

static int vkbFilter(sqlite3_vtab_cursor *cur, int idxNum, const char *idxStr,
                     int argc, sqlite3_value **argv){
  VkbCursor *pCur = (VkbCursor*)cur;
  sqlite3_vtab *pVtab = cur->pVtab;
  Vec0Registry *pReg = (Vec0Registry*)((VsTableFunction*)pVtab)->pAux;
  Vec0Table *pTab = 0;
  const char *zTable;
  float *Q = 0;
  char *zErr = 0;
  int nBlob = 0, nQuery = 0, nVecBytes, j, rc = SQLITE_OK;
  sqlite3_int64 k = 0;
  (void)idxNum; (void)idxStr; (void)argc;

  vkbReset(cur);
  zTable = (const char*)sqlite3_value_text(argv[0]);
  if( zTable==0 ){
    zErr = sqlite3_mprintf("the table name is NULL");
    rc = SQLITE_ERROR;
    goto cleanup;
  }
  rc = vec0Find(pReg->db, pReg, 0, zTable, &pTab, &zErr);
  if( rc==SQLITE_OK ) rc = vec0StorageReady(pTab);
  if( rc==SQLITE_OK ) rc = vec0CacheEnsure(pTab, VEC0_NEED_COPY);
  if( rc!=SQLITE_OK ){
    if( zErr==0 && pTab ) zErr = vec0TakeError(pTab);
    goto cleanup;
  }
  if( pTab->cfg.eElem!=VS_F32 ){
    /* Its queries would be int8 or bit blobs; one MATCH query each does the same. */
    zErr = sqlite3_mprintf("table \"%s\" has an %s column: query it with MATCH, one "
                           "query at a time", zTable, pTab->cfg.eElem==VS_I8 ? "int8[N]"
                           : "bit[N]");
    rc = SQLITE_ERROR;
    goto cleanup;
  }
  if( sqlite3_value_type(argv[2])!=SQLITE_INTEGER || (k = sqlite3_value_int64(argv[2]))<=0 ){
    zErr = sqlite3_mprintf("k must be a positive integer");
    rc = SQLITE_ERROR;
    goto cleanup;
  }
  if( sqlite3_value_type(argv[1])!=SQLITE_BLOB ){
    zErr = sqlite3_mprintf("queries must be a blob of float32 vectors laid end to end");
    rc = SQLITE_ERROR;
    goto cleanup;
  }
  nBlob = sqlite3_value_bytes(argv[1]);
  nVecBytes = pTab->cfg.nDim*4;
  if( nBlob==0 || nBlob%nVecBytes!=0 ){
    zErr = sqlite3_mprintf("queries is %d bytes, not a whole number of %d-dimension "
                           "float32 vectors (%d bytes each)", nBlob, pTab->cfg.nDim, nVecBytes);
    rc = SQLITE_ERROR;
    goto cleanup;
  }
  nQuery = nBlob/nVecBytes;
  Q = sqlite3_malloc64((sqlite3_uint64)nBlob);
  if( Q==0 ){ rc = SQLITE_NOMEM; goto cleanup; }
  vsF32FromLE(sqlite3_value_blob(argv[1]), nQuery*pTab->cfg.nDim, Q);
  for(j=0; j<nQuery && rc==SQLITE_OK; j++){
    /* The checks a MATCH query gets, each query named by its index. */
    char *zWhat = sqlite3_mprintf("query %d", j);
    if( zWhat==0 ){ rc = SQLITE_NOMEM; break; }
    rc = vec0VectorCheck(pTab, Q + (size_t)j*pTab->cfg.nDim, zWhat, &zErr);
    sqlite3_free(zWhat);
  }
  if( rc!=SQLITE_OK ) goto cleanup;
  {
    /* Each query keeps up to k + 16 candidates (never more than the rows): bounded as a
    ** block is, so no statement's arguments ask for more than that. */
    sqlite3_int64 nLive = pTab->pView->nLive>0 ? pTab->pView->nLive : 1;
    sqlite3_int64 nPer = k < nLive - 16 ? k + 16 : nLive;
    sqlite3_int64 nByte = (sqlite3_int64)nQuery*nPer*(sqlite3_int64)sizeof(VsHit);
    if( nPer>VEC0_MAX_BLOCK_BYTES || nByte>VEC0_MAX_BLOCK_BYTES ){
      zErr = sqlite3_mprintf("%d queries with k = %lld keep %lld MiB of candidates, over the "
                             "limit of %lld MiB (VEC0_MAX_BLOCK_BYTES); ask for fewer queries "
                             "at a time or a smaller k", nQuery, k,
                             nPer>VEC0_MAX_BLOCK_BYTES ? nPer>>20 : nByte>>20,
                             VEC0_MAX_BLOCK_BYTES>>20);
      rc = SQLITE_ERROR;
      goto cleanup;
    }
  }
  pCur->aTop = sqlite3_malloc64(sizeof(VsTopK)*(sqlite3_uint64)nQuery);
  if( pCur->aTop==0 ){ rc = SQLITE_NOMEM; goto cleanup; }
  rc = vec0SearchBatch(pTab, Q, nQuery, k, pCur->aTop);
  if( rc!=SQLITE_OK ){
    sqlite3_free(pCur->aTop);
    pCur->aTop = 0;
    goto cleanup;
  }
  for(j=0; j<nQuery; j++) vsTopKNullsFirst(&pCur->aTop[j]);   /* as MATCH returns them */
  pCur->nQuery = nQuery;
  pCur->pTab = pTab;
  if( vec0HasTextPk(pTab) ){
    char *zSql = sqlite3_mprintf("SELECT id FROM \"%w\".\"%w_rows\" WHERE rowid=?1",
                                 pTab->zSchema, pTab->zName);
    if( zSql==0 ){ rc = SQLITE_NOMEM; goto cleanup; }
    rc = sqlite3_prepare_v2(pReg->db, zSql, -1, &pCur->pId, 0);
    sqlite3_free(zSql);
    if( rc!=SQLITE_OK ){
      zErr = sqlite3_mprintf("%s", sqlite3_errmsg(pReg->db));
      goto cleanup;
    }
  }
  vkbSettle(pCur);

cleanup:
  sqlite3_free(Q);
  if( rc!=SQLITE_OK ){
    vkbReset(cur);
    vkbError(pVtab, rc, zErr);
  }
  return rc;
}

static int vkbNext(sqlite3_vtab_cursor *cur){
  VkbCursor *pCur = (VkbCursor*)cur;
  pCur->iHit++;
  pCur->iRow++;
  vkbSettle(pCur);
  return SQLITE_OK;
}

static int vkbEof(sqlite3_vtab_cursor *cur){
  VkbCursor *pCur = (VkbCursor*)cur;
  return pCur->iQuery>=pCur->nQuery;
}

static int vkbColumn(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int i){
  VkbCursor *pCur = (VkbCursor*)cur;
  const VsHit *pHit = &pCur->aTop[pCur->iQuery].a[pCur->iHit];
  switch( i ){
    case VKB_COL_QUERY:
      sqlite3_result_int(ctx, pCur->iQuery);
      break;
    case VKB_COL_ID:
      if( pCur->pId ){
        int rc;
        sqlite3_reset(pCur->pId);
        sqlite3_bind_int64(pCur->pId, 1, pHit->iRowid);
        if( sqlite3_step(pCur->pId)==SQLITE_ROW ){
          sqlite3_result_value(ctx, sqlite3_column_value(pCur->pId, 0));
        }else if( (rc = sqlite3_reset(pCur->pId))!=SQLITE_OK ){
          sqlite3_result_error_code(ctx, rc);
          return rc;
        }else{
          sqlite3_result_error(ctx, "vecsync_knn_batch: storage is damaged: a hit's row "
                                    "is gone", -1);
          sqlite3_result_error_code(ctx, SQLITE_CORRUPT_VTAB);
          return SQLITE_CORRUPT_VTAB;
        }
        sqlite3_reset(pCur->pId);
      }else{
        sqlite3_result_int64(ctx, pHit->iRowid);
      }
      break;
    case VKB_COL_DISTANCE:
      sqlite3_result_double(ctx, pHit->rDist);
      break;
  }
  return SQLITE_OK;
}

static int vkbRowid(sqlite3_vtab_cursor *cur, sqlite3_int64 *pRowid){
  *pRowid = ((VkbCursor*)cur)->iRow;
  return SQLITE_OK;
}

static sqlite3_module vkbModule = VS_TABLE_FUNCTION_MODULE(
    vkbConnect, vkbBestIndex, vkbFilter, vkbNext, vkbEof, vkbColumn,
    vkbRowid);

/* vecsync_cache_info(table): how this connection's copy of the table stands, as JSON. */
static void vkbCacheInfoFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  Vec0Registry *pReg = (Vec0Registry*)sqlite3_user_data(ctx);
  const char *zTable = (const char*)sqlite3_value_text(argv[0]);
  Vec0Table *p = 0;
  char *zErr = 0, *zOut = 0;
  int rc;
  (void)argc;
  if( zTable==0 ){
    sqlite3_result_error(ctx, "vecsync_cache_info: the table name is NULL", -1);
    return;
  }
  rc = vec0Find(pReg->db, pReg, 0, zTable, &p, &zErr);
  if( rc==SQLITE_OK ) rc = vec0StorageReady(p);
  if( rc==SQLITE_OK ) rc = vec0CacheEnsure(p, VEC0_NEED_INFO);
  if( rc!=SQLITE_OK ){
    char *zMsg;
    if( zErr==0 && p ) zErr = vec0TakeError(p);
    zMsg = sqlite3_mprintf("vecsync_cache_info: %s", zErr ? zErr : sqlite3_errmsg(pReg->db));
    sqlite3_result_error(ctx, zMsg ? zMsg : "vecsync_cache_info failed", -1);
    sqlite3_result_error_code(ctx, rc);
    sqlite3_free(zMsg);
    sqlite3_free(zErr);
    return;
  }
  zOut = vec0CacheInfo(p);
  if( zOut==0 ){
    sqlite3_result_error_nomem(ctx);
    return;
  }
  sqlite3_result_text(ctx, zOut, -1, sqlite3_free);
}

int vsRegisterVec0Batch(sqlite3 *db, Vec0Registry *pReg, char **pzErr){
  int rc;
  pReg->nRef++;
  rc = sqlite3_create_module_v2(db, "vecsync_knn_batch", &vkbModule, pReg, pReg->xRelease);
  if( rc!=SQLITE_OK ){
    *pzErr = sqlite3_mprintf("vecsync: cannot register module vecsync_knn_batch: %s",
                             sqlite3_errmsg(db));
    return rc;
  }
  /* vecsync_cache_info reads one vec0 table's state: harmless anywhere, but its answer
  ** depends on the process, so it is not deterministic. The registry outlives it (the
  ** modules hold it). */
  rc = sqlite3_create_function(db, "vecsync_cache_info", 1, SQLITE_UTF8 | SQLITE_INNOCUOUS,
                               pReg, vkbCacheInfoFunc, 0, 0);
  /* vecsync_memory_budget(bytes) changes the whole process: DIRECTONLY keeps it out of
  ** triggers and views, where a schema could set it behind the application's back. */
  if( rc==SQLITE_OK ){
    rc = sqlite3_create_function(db, "vecsync_memory_budget", 0, SQLITE_UTF8 | SQLITE_DIRECTONLY,
                                 0, vec0MemoryBudgetFunc, 0, 0);
  }
  if( rc==SQLITE_OK ){
    rc = sqlite3_create_function(db, "vecsync_memory_budget", 1, SQLITE_UTF8 | SQLITE_DIRECTONLY,
                                 0, vec0MemoryBudgetFunc, 0, 0);
  }
  if( rc!=SQLITE_OK ){
    *pzErr = sqlite3_mprintf("vecsync: cannot register vecsync_cache_info and vecsync_memory_budget: %s",
                             sqlite3_errmsg(db));
  }
  return rc;
}
