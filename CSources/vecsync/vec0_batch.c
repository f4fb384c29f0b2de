/*
** vec0_batch.c: many KNN queries against a vec0 table in one pass.
**
** Usage:
**
**   -- :queries is the float32 bytes of N query vectors laid end to end (N·D·4 bytes)
**   select query_index, id, distance
**     from vecsync_knn_batch('vec_photos', :queries, 10);
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

static int vkbConnect(sqlite3 *db, void *pAux, int argc, const char *const *argv,
                      sqlite3_vtab **ppVtab, char **pzErr){
  sqlite3_vtab *pVtab;
  int rc;
  (void)argc; (void)argv; (void)pzErr;
  rc = sqlite3_declare_vtab(db,
      "CREATE TABLE x(query_index INTEGER, id, distance REAL, "
      "\"table\" HIDDEN, queries HIDDEN, k HIDDEN)");
  if( rc!=SQLITE_OK ) return rc;
  pVtab = sqlite3_malloc(sizeof(*pVtab) + sizeof(void*));
  if( pVtab==0 ) return SQLITE_NOMEM;
  memset(pVtab, 0, sizeof(*pVtab));
  *(void**)&pVtab[1] = pAux;            /* the connection's vec0 registry */
  /* It only reads vec0 tables the caller names: harmless in triggers and views. */
  sqlite3_vtab_config(db, SQLITE_VTAB_INNOCUOUS);
  *ppVtab = pVtab;
  return SQLITE_OK;
}

static int vkbDisconnect(sqlite3_vtab *pVtab){
  sqlite3_free(pVtab);
  return SQLITE_OK;
}

static int vkbBestIndex(sqlite3_vtab *pVtab, sqlite3_index_info *pInfo){
  int aIdx[3] = { -1, -1, -1 };
  int i;
  for(i=0; i<pInfo->nConstraint; i++){
    const struct sqlite3_index_constraint *pC = &pInfo->aConstraint[i];
    if( pC->op!=SQLITE_INDEX_CONSTRAINT_EQ ) continue;
    if( pC->iColumn>=VKB_COL_TABLE ){
      if( !pC->usable ) return SQLITE_CONSTRAINT;
      aIdx[pC->iColumn-VKB_COL_TABLE] = i;
    }
  }
  for(i=0; i<3; i++){
    if( aIdx[i]<0 ){
      sqlite3_free(pVtab->zErrMsg);
      pVtab->zErrMsg = sqlite3_mprintf(
          "vecsync_knn_batch(table, queries, k) needs all three arguments");
      return SQLITE_ERROR;
    }
    pInfo->aConstraintUsage[aIdx[i]].argvIndex = i+1;
    pInfo->aConstraintUsage[aIdx[i]].omit = 1;
  }
  pInfo->estimatedCost = 1000.0;
  return SQLITE_OK;
}

static int vkbOpen(sqlite3_vtab *pVtab, sqlite3_vtab_cursor **ppCur){
  VkbCursor *pCur = sqlite3_malloc(sizeof(*pCur));
  (void)pVtab;
  if( pCur==0 ) return SQLITE_NOMEM;
  memset(pCur, 0, sizeof(*pCur));
  *ppCur = &pCur->base;
  return SQLITE_OK;
}

static void vkbReset(VkbCursor *pCur){
  int j;
  for(j=0; j<pCur->nQuery; j++) vsTopKFree(&pCur->aTop[j]);
  sqlite3_free(pCur->aTop);
  sqlite3_finalize(pCur->pId);
  pCur->aTop = 0;
  pCur->pId = 0;
  pCur->nQuery = 0;
  pCur->iQuery = pCur->iHit = 0;
  pCur->iRow = 0;
}

static int vkbClose(sqlite3_vtab_cursor *cur){
  vkbReset((VkbCursor*)cur);
  sqlite3_free(cur);
  return SQLITE_OK;
}

/* Skip queries that have no (more) hits. */
static void vkbSettle(VkbCursor *pCur){
  while( pCur->iQuery<pCur->nQuery && pCur->iHit>=pCur->aTop[pCur->iQuery].n ){
    pCur->iQuery++;
    pCur->iHit = 0;
  }
}

static int vkbFilter(sqlite3_vtab_cursor *cur, int idxNum, const char *idxStr,
                     int argc, sqlite3_value **argv){
  VkbCursor *pCur = (VkbCursor*)cur;
  sqlite3_vtab *pVtab = cur->pVtab;
  Vec0Registry *pReg = *(Vec0Registry**)&pVtab[1];
  const char *zTable;
  const unsigned char *pBlob;
  float *Q = 0;
  char *zErr = 0;
  int nBlob, nQuery, rc;
  sqlite3_int64 k;
  (void)idxNum; (void)idxStr; (void)argc;

  vkbReset(pCur);
  zTable = (const char*)sqlite3_value_text(argv[0]);
  if( zTable==0 ){
    pVtab->zErrMsg = sqlite3_mprintf("vecsync_knn_batch: the table name is NULL");
    return SQLITE_ERROR;
  }
  rc = vec0Find(pReg->db, pReg, 0, zTable, &pCur->pTab, &zErr);
  if( rc!=SQLITE_OK ){
    pVtab->zErrMsg = sqlite3_mprintf("vecsync_knn_batch: %s", zErr);
    sqlite3_free(zErr);
    return rc;
  }
  if( sqlite3_value_type(argv[2])!=SQLITE_INTEGER || (k = sqlite3_value_int64(argv[2]))<=0 ){
    pVtab->zErrMsg = sqlite3_mprintf("vecsync_knn_batch: k must be a positive integer");
    return SQLITE_ERROR;
  }
  if( sqlite3_value_type(argv[1])!=SQLITE_BLOB ){
    pVtab->zErrMsg = sqlite3_mprintf(
        "vecsync_knn_batch: queries must be a blob of float32 vectors laid end to end");
    return SQLITE_ERROR;
  }
  pBlob = sqlite3_value_blob(argv[1]);
  nBlob = sqlite3_value_bytes(argv[1]);
  {
    int nVecBytes = pCur->pTab->cfg.nDim*4;
    int j;
    if( nBlob==0 || nBlob%nVecBytes!=0 ){
      pVtab->zErrMsg = sqlite3_mprintf(
          "vecsync_knn_batch: queries is %d bytes, not a whole number of %d-dimension "
          "float32 vectors (%d bytes each)", nBlob, pCur->pTab->cfg.nDim, nVecBytes);
      return SQLITE_ERROR;
    }
    nQuery = nBlob/nVecBytes;
    Q = sqlite3_malloc64((sqlite3_uint64)nBlob);
    if( Q==0 ) return SQLITE_NOMEM;
    vsF32FromLE(pBlob, nQuery*pCur->pTab->cfg.nDim, Q);
    for(j=0; j<nQuery*pCur->pTab->cfg.nDim; j++){
      if( Q[j]!=Q[j] || Q[j]-Q[j]!=0.0f ){
        pVtab->zErrMsg = sqlite3_mprintf(
            "vecsync_knn_batch: query %d has a NaN or infinite element",
            j/pCur->pTab->cfg.nDim);
        sqlite3_free(Q);
        return SQLITE_ERROR;
      }
    }
  }
  rc = vec0CacheEnsure(pCur->pTab);
  if( rc==SQLITE_OK ){
    pCur->aTop = sqlite3_malloc64(sizeof(VsTopK)*(sqlite3_uint64)nQuery);
    if( pCur->aTop==0 ) rc = SQLITE_NOMEM;
  }
  if( rc==SQLITE_OK ){
    rc = vec0SearchBatch(pCur->pTab, Q, nQuery, k, pCur->aTop);
    if( rc==SQLITE_OK ){
      pCur->nQuery = nQuery;
    }else{
      sqlite3_free(pCur->aTop);
      pCur->aTop = 0;
    }
  }
  sqlite3_free(Q);
  if( rc==SQLITE_OK && pCur->pTab->cfg.iPk>=0
   && pCur->pTab->cfg.aCol[pCur->pTab->cfg.iPk].eType==VEC0_TYPE_TEXT ){
    char *zSql = sqlite3_mprintf("SELECT id FROM \"%w\".\"%w_rows\" WHERE rowid=?1",
                                 pCur->pTab->zSchema, pCur->pTab->zName);
    if( zSql==0 ) return SQLITE_NOMEM;
    rc = sqlite3_prepare_v2(pReg->db, zSql, -1, &pCur->pId, 0);
    sqlite3_free(zSql);
  }
  vkbSettle(pCur);
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
        sqlite3_reset(pCur->pId);
        sqlite3_bind_int64(pCur->pId, 1, pHit->iRowid);
        if( sqlite3_step(pCur->pId)==SQLITE_ROW ){
          sqlite3_result_value(ctx, sqlite3_column_value(pCur->pId, 0));
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

static sqlite3_module vkbModule = {
  /* iVersion    */ 0,
  /* xCreate     */ 0,               /* eponymous only: no CREATE VIRTUAL TABLE */
  /* xConnect    */ vkbConnect,
  /* xBestIndex  */ vkbBestIndex,
  /* xDisconnect */ vkbDisconnect,
  /* xDestroy    */ 0,
  /* xOpen       */ vkbOpen,
  /* xClose      */ vkbClose,
  /* xFilter     */ vkbFilter,
  /* xNext       */ vkbNext,
  /* xEof        */ vkbEof,
  /* xColumn     */ vkbColumn,
  /* xRowid      */ vkbRowid,
  0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
#if SQLITE_VERSION_NUMBER>=3044000
  0,
#endif
};

/* The vec0 tables of a connection are listed in one registry, freed with the module. */
static void vec0RegistryFree(void *p){ sqlite3_free(p); }

int vsRegisterVec0(sqlite3 *db, Vec0Registry **ppReg, char **pzErr){
  Vec0Registry *pReg = sqlite3_malloc(sizeof(*pReg));
  int rc;
  if( pReg==0 ) return SQLITE_NOMEM;
  memset(pReg, 0, sizeof(*pReg));
  pReg->db = db;
  rc = vsRegisterVec0Module(db, pReg, pzErr);
  if( rc!=SQLITE_OK ){ sqlite3_free(pReg); return rc; }
  rc = sqlite3_create_module_v2(db, "vecsync_knn_batch", &vkbModule, pReg, vec0RegistryFree);
  if( rc!=SQLITE_OK ){
    *pzErr = sqlite3_mprintf("vecsync: cannot register module vecsync_knn_batch: %s",
                             sqlite3_errmsg(db));
  }
  *ppReg = pReg;
  return rc;
}
