/*
** libsql_index_topk.c: vector_top_k(index, query, k), libSQL's search of a libSQL index.
**
** Usage:
**
**   select id, distance from vector_top_k('messages_embedding_idx', vector32('[1,0,0,0]'), 5);
**   select m.* from vector_top_k('notes_idx', :q, 10) as v join notes m on m.title = v.id;
**   select id from vector_top_k('docs_ivf_idx', :q, 10, 32);     -- a type=ivf index, nprobe 32
**
** How it works: an eponymous virtual table whose first hidden columns are the arguments
** (the fourth, nprobe, optional). xFilter reads the index's declaration
** (libsql_index_parse.c), makes its search data current (libsqlIndexBuild), and searches
** that vec0 table: exactly with vec0Search, nearest first, ties by rowid; or, for an index
** declared 'type=ivf', with its ivf index (vec0IvfSearch), which scans the nprobe lists
** nearest the query (the fourth argument, else the declaration's 'nprobe=N', else vec0's
** default). A connection that cannot write (read-only, busy) scans the indexed
** table itself instead (libsqlScanTable), with the same answer. A WITHOUT ROWID table's
** hits are named by their key (libsqlIndexHitKeys, from the search data's T_keys).
*/
#include "vecsync_int.h"
SQLITE_EXTENSION_INIT3

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- the memo of the last index ------------------------------------------------------- */

/* A connection's last vector_top_k index (Vec0Registry.pTopK): its declaration as
** libsqlIndexLookup read it, once libsqlIndexBuild had made its search data current. Both
** depend only on the schema and the rows, so the next call with the same index name reuses
** them while its stamp is unchanged: the schema_version of main and of the index's schema
** (this connection's DDL, committed or not), the index schema's SQLITE_FCNTL_DATA_VERSION
** (a commit, this connection's or another's) and sqlite3_total_changes64 (this
** connection's writes). It saves the ten or so statements those two run each call. */
struct LibsqlTopKMemo {
  char *zName;                /* The index as the call named it */
  LibsqlIndex def;            /* Its declaration */
  sqlite3_int64 aStamp[4];    /* What they depend on, after the build (libsqlTopKStamp) */
};

void libsqlTopKMemoFree(LibsqlTopKMemo *pMemo){
  if( pMemo==0 ) return;
  sqlite3_free(pMemo->zName);
  libsqlIndexClear(&pMemo->def);
  sqlite3_free(pMemo);
}

/* The stamp a memo of an index in schema zSchema is valid for (LibsqlTopKMemo). */
static int libsqlTopKStamp(sqlite3 *db, const char *zSchema, sqlite3_int64 *aStamp){
  unsigned int iData = 0;
  int rc = vsPragma(db, "main", "schema_version", &aStamp[0], 0);
  if( rc==SQLITE_OK ) rc = vsPragma(db, zSchema, "schema_version", &aStamp[1], 0);
  if( rc==SQLITE_OK ) rc = sqlite3_file_control(db, zSchema, SQLITE_FCNTL_DATA_VERSION, &iData);
  aStamp[2] = iData;
  aStamp[3] = sqlite3_total_changes64(db);
  return rc;
}

/* pMemo (taken from the registry by this call) if it is index zIndex and still valid. */
static int libsqlTopKMemoValid(sqlite3 *db, const LibsqlTopKMemo *pMemo, const char *zIndex){
  sqlite3_int64 aStamp[4];
  return pMemo && strcmp(pMemo->zName, zIndex)==0
      && libsqlTopKStamp(db, pMemo->def.zSchema, aStamp)==SQLITE_OK
      && memcmp(aStamp, pMemo->aStamp, sizeof(aStamp))==0;
}

/* A memo of index zIndex holding *pDef (moved into it: *pDef is left empty), stamped now;
** NULL when out of memory or the stamp cannot be read (*pDef then unchanged). */
static LibsqlTopKMemo *libsqlTopKMemoNew(sqlite3 *db, const char *zIndex, LibsqlIndex *pDef){
  LibsqlTopKMemo *pMemo = sqlite3_malloc(sizeof(*pMemo));
  if( pMemo==0 ) return 0;
  memset(pMemo, 0, sizeof(*pMemo));
  pMemo->zName = sqlite3_mprintf("%s", zIndex);
  if( pMemo->zName==0 || libsqlTopKStamp(db, pDef->zSchema, pMemo->aStamp)!=SQLITE_OK ){
    libsqlTopKMemoFree(pMemo);
    return 0;
  }
  pMemo->def = *pDef;
  memset(pDef, 0, sizeof(*pDef));
  return pMemo;
}

/* ---- the search -------------------------------------------------------------------------- */

/* Order hits by their position (iRowid) in a scan, for libsqlScanKeys. */
static int libsqlHitByPosition(const void *a, const void *b){
  sqlite3_int64 x = (*(const VsHit* const*)a)->iRowid, y = (*(const VsHit* const*)b)->iRowid;
  return x<y ? -1 : x>y;
}

/* A WITHOUT ROWID table's scan named its hits by their position in pStmt's rows: read the
** rows again and keep each hit's primary key (the statement's first column) in apKey. */
static int libsqlScanKeys(sqlite3_stmt *pStmt, const VsTopK *pTop, sqlite3_value **apKey){
  const VsHit **aBy = sqlite3_malloc64(sizeof(VsHit*) * (pTop->n>0 ? pTop->n : 1));
  sqlite3_int64 iPos = 0;
  int i, iNext = 0, rc = SQLITE_OK;
  if( aBy==0 ) return SQLITE_NOMEM;
  for(i=0; i<pTop->n; i++) aBy[i] = &pTop->a[i];
  qsort(aBy, (size_t)pTop->n, sizeof(aBy[0]), libsqlHitByPosition);
  sqlite3_reset(pStmt);
  while( iNext<pTop->n && sqlite3_step(pStmt)==SQLITE_ROW ){
    while( iNext<pTop->n && aBy[iNext]->iRowid==iPos ){
      sqlite3_value *pKey = sqlite3_value_dup(sqlite3_column_value(pStmt, 0));
      if( pKey==0 ){ rc = SQLITE_NOMEM; break; }
      apKey[aBy[iNext] - pTop->a] = pKey;
      iNext++;
    }
    if( rc!=SQLITE_OK ) break;
    iPos++;
  }
  if( rc==SQLITE_OK ) rc = sqlite3_reset(pStmt);
  if( rc==SQLITE_OK && iNext<pTop->n ) rc = SQLITE_ERROR;   /* the table changed under us */
  sqlite3_free(aBy);
  return rc;
}

/* Exact k nearest rows of the indexed table to query v, read straight from the table:
** the path of connections that cannot build or bring up to date the index's search data.
** A WITHOUT ROWID table's rows are read in key order, each hit named by its position
** there, and *papKey receives the hits' keys (else it is left NULL). */
static int libsqlScanTable(sqlite3 *db, const LibsqlIndex *pDef, const VsVector *pQuery,
                            sqlite3_int64 k, VsTopK *pTop, sqlite3_value ***papKey,
                            char **pzErr){
  sqlite3_stmt *pStmt = 0;
  char *zSql = sqlite3_mprintf(
      "SELECT %s, \"%w\" FROM \"%w\".\"%w\" WHERE \"%w\" IS NOT NULL AND (%s)%s%s",
      pDef->zK, pDef->zColumn, pDef->zSchema, pDef->zTable, pDef->zColumn,
      pDef->zWhere ? pDef->zWhere : "1", pDef->zKey ? " ORDER BY " : "",
      pDef->zKey ? pDef->zK : "");
  sqlite3_int64 nRow = 0;
  int rc;
  if( zSql==0 ) return SQLITE_NOMEM;
  rc = sqlite3_prepare_v2(db, zSql, -1, &pStmt, 0);
  sqlite3_free(zSql);
  if( rc!=SQLITE_OK ) return rc;
  {
    /* Room for min(k, rows) hits. */
    sqlite3_stmt *pCount = 0;
    sqlite3_int64 nAll = 0;
    zSql = sqlite3_mprintf("SELECT count(*) FROM \"%w\".\"%w\"", pDef->zSchema, pDef->zTable);
    if( zSql==0 ){ sqlite3_finalize(pStmt); return SQLITE_NOMEM; }
    rc = sqlite3_prepare_v2(db, zSql, -1, &pCount, 0);
    sqlite3_free(zSql);
    if( rc==SQLITE_OK && sqlite3_step(pCount)==SQLITE_ROW ) nAll = sqlite3_column_int64(pCount, 0);
    sqlite3_finalize(pCount);
    if( rc==SQLITE_OK ) rc = vsTopKInit(pTop, k, nAll);
  }
  while( rc==SQLITE_OK && sqlite3_step(pStmt)==SQLITE_ROW ){
    VsVector v;
    char *zErr = 0;
    sqlite3_int64 iRowid = pDef->zKey ? nRow : sqlite3_column_int64(pStmt, 0);
    rc = vsVectorFromValue(sqlite3_column_value(pStmt, 1), VS_F32, &v, &zErr);
    if( rc==SQLITE_OK && v.nDim!=pDef->nDim ){
      zErr = sqlite3_mprintf("the vector has %d dimensions, index %s has %d",
                             v.nDim, pDef->zIndex, pDef->nDim);
      rc = SQLITE_ERROR;
    }
    if( rc==SQLITE_OK ){
      double rDist = vsDistanceF32(pDef->eMetric, (const float*)pQuery->aData,
                                  (const float*)v.aData, pDef->nDim);
      if( rDist==rDist ) vsTopKPush(pTop, rDist, iRowid, nRow);   /* NaN: zero vector */
      nRow++;
    }else if( rc!=SQLITE_NOMEM ){
      if( pDef->zKey ){
        *pzErr = sqlite3_mprintf("row %s=%s: %s", pDef->zKey,
                                 (const char*)sqlite3_column_text(pStmt, 0),
                                 zErr ? zErr : "bad vector");
      }else{
        *pzErr = sqlite3_mprintf("row %lld: %s", iRowid, zErr ? zErr : "bad vector");
      }
    }
    sqlite3_free(zErr);
    vsVectorFree(&v);
  }
  if( rc==SQLITE_OK ) rc = sqlite3_reset(pStmt);
  if( rc==SQLITE_OK ) vsTopKSort(pTop);
  if( rc==SQLITE_OK && pDef->zKey ){
    *papKey = sqlite3_malloc64(sizeof(sqlite3_value*) * (pTop->n>0 ? pTop->n : 1));
    if( *papKey==0 ){
      rc = SQLITE_NOMEM;
    }else{
      memset(*papKey, 0, sizeof(sqlite3_value*) * (pTop->n>0 ? pTop->n : 1));
      rc = libsqlScanKeys(pStmt, pTop, *papKey);
      if( rc==SQLITE_ERROR ){
        *pzErr = sqlite3_mprintf("table %s changed while it was read", pDef->zTable);
      }
    }
  }
  sqlite3_finalize(pStmt);
  return rc;
}

/* The primary keys of a WITHOUT ROWID index's hits, from the ids its search data gave. */
static int libsqlIndexHitKeys(sqlite3 *db, const LibsqlIndex *pDef, const VsTopK *pTop,
                          sqlite3_value ***papKey, char **pzErr){
  sqlite3_stmt *pStmt = 0;
  char *zSql = sqlite3_mprintf("SELECT pk FROM \"%w\".\"vecsync_idx_%w_keys\" WHERE id=?1",
                               pDef->zSchema, pDef->zIndex);
  int i, rc;
  if( zSql==0 ) return SQLITE_NOMEM;
  rc = sqlite3_prepare_v2(db, zSql, -1, &pStmt, 0);
  sqlite3_free(zSql);
  if( rc!=SQLITE_OK ) return rc;
  *papKey = sqlite3_malloc64(sizeof(sqlite3_value*) * (pTop->n>0 ? pTop->n : 1));
  if( *papKey==0 ){ sqlite3_finalize(pStmt); return SQLITE_NOMEM; }
  memset(*papKey, 0, sizeof(sqlite3_value*) * (pTop->n>0 ? pTop->n : 1));
  for(i=0; i<pTop->n && rc==SQLITE_OK; i++){
    sqlite3_bind_int64(pStmt, 1, pTop->a[i].iRowid);
    if( sqlite3_step(pStmt)==SQLITE_ROW ){
      (*papKey)[i] = sqlite3_value_dup(sqlite3_column_value(pStmt, 0));
      if( (*papKey)[i]==0 ) rc = SQLITE_NOMEM;
    }else{
      rc = sqlite3_reset(pStmt);
      if( rc==SQLITE_OK ){
        *pzErr = sqlite3_mprintf("the search data of index %s names id %lld, which "
                                 "vecsync_idx_%s_keys lacks: run vecsync_rebuild('%s')",
                                 pDef->zIndex, pTop->a[i].iRowid, pDef->zIndex, pDef->zIndex);
        rc = SQLITE_CORRUPT;
      }
    }
    if( rc==SQLITE_OK ) rc = sqlite3_reset(pStmt);
  }
  sqlite3_finalize(pStmt);
  return rc;
}

/* A FLOAT1BIT column holds +1 and -1 elements: a query is taken as its signs (as libSQL's
** vector1bit makes them, x > 0 is +1), and a hit's cosine distance 1 - (n - 2h)/n becomes
** h, the number of differing bits, which is what libSQL reports for 1-bit vectors. */
static void libsqlQueryAsBits(float *q, int nDim){
  int i;
  for(i=0; i<nDim; i++) q[i] = q[i]>0.0f ? 1.0f : -1.0f;
}
static void libsqlHitsAsHamming(VsTopK *pTop, int nDim){
  int i;
  for(i=0; i<pTop->n; i++) pTop->a[i].rDist = (double)llround(pTop->a[i].rDist * nDim / 2.0);
}

/* ---- vector_top_k ------------------------------------------------------------------------ */

/* The arguments are the first hidden columns, in order (nprobe, the fourth, optional);
** distance comes after them. */
#define VTK_COL_ID       0
#define VTK_COL_INDEX    1
#define VTK_COL_QUERY    2
#define VTK_COL_K        3
#define VTK_COL_NPROBE   4
#define VTK_COL_DISTANCE 5

typedef struct VtkCursor VtkCursor;
struct VtkCursor {
  VsCursor base;              /* Base class: must be first; its rows are the hits */
  VsTopK top;                 /* Hits, nearest first */
  sqlite3_value **apKey;      /* WITHOUT ROWID: each hit's primary key (its id); else NULL */
  int bKeyIsRowid;            /* A hit's rowid is its key: a rowid, or a rowid-like key */
};

/* Forget the hits of the last search. */
static void vtkCursorReset(sqlite3_vtab_cursor *cur){
  VtkCursor *pCur = (VtkCursor*)cur;
  int i;
  if( pCur->apKey ){
    for(i=0; i<pCur->top.n; i++) sqlite3_value_free(pCur->apKey[i]);
    sqlite3_free(pCur->apKey);
    pCur->apKey = 0;
  }
  vsTopKFree(&pCur->top);
  pCur->base.iRow = pCur->base.nRow = 0;
  pCur->bKeyIsRowid = 1;
}

static int vtkConnect(sqlite3 *db, void *pAux, int argc, const char *const *argv,
                      sqlite3_vtab **ppVtab, char **pzErr){
  (void)argc; (void)argv; (void)pzErr;
  return vsTableFunctionConnect(db, pAux,
      "CREATE TABLE x(id INTEGER, index_name HIDDEN, query HIDDEN, k HIDDEN, nprobe HIDDEN,"
      " distance REAL HIDDEN)",
      sizeof(VtkCursor), vtkCursorReset, ppVtab);
}

static int vtkBestIndex(sqlite3_vtab *pVtab, sqlite3_index_info *pInfo){
  int i, rc = vsTableFunctionArgs(pVtab, pInfo, VTK_COL_INDEX, VTK_COL_K-VTK_COL_INDEX+1,
                               "vector_top_k(index, query, k) needs all three arguments");
  if( rc!=SQLITE_OK ) return rc;
  /* nprobe, the optional fourth argument, is xFilter's argv[3] (idxNum 1) when given. */
  for(i=0; i<pInfo->nConstraint; i++){
    const struct sqlite3_index_constraint *pC = &pInfo->aConstraint[i];
    if( pC->iColumn!=VTK_COL_NPROBE || pC->op!=SQLITE_INDEX_CONSTRAINT_EQ ) continue;
    if( !pC->usable ) return SQLITE_CONSTRAINT;
    pInfo->aConstraintUsage[i].argvIndex = VTK_COL_NPROBE;
    pInfo->aConstraintUsage[i].omit = 1;
    pInfo->idxNum = 1;
    break;
  }
  pInfo->estimatedCost = 100.0;
  if( pInfo->nOrderBy==1 && pInfo->aOrderBy[0].iColumn==VTK_COL_DISTANCE
   && !pInfo->aOrderBy[0].desc ){
    pInfo->orderByConsumed = 1;
  }
  return SQLITE_OK;
}


static int vtkFilter(sqlite3_vtab_cursor *cur, int idxNum, const char *idxStr,
                     int argc, sqlite3_value **argv){
  VtkCursor *pCur = (VtkCursor*)cur;
  VsTableFunction *pTab = (VsTableFunction*)cur->pVtab;
  Vec0Registry *pReg = (Vec0Registry*)pTab->pAux;
  LibsqlTopKMemo *pMemo = 0;      /* The registry's memo, this call's until it returns */
  LibsqlIndex def;
  const LibsqlIndex *pDef = &def; /* The index's declaration: def, or the memo's */
  Vec0Table *pStore = 0;
  VsVector v;
  float *q = 0;
  char *zErr = 0, *zStore = 0;
  const char *zIndex = (const char*)sqlite3_value_text(argv[0]);
  sqlite3_int64 k;
  int rc, nProbe = 0, bMemo = 0;
  (void)idxStr;

  memset(&def, 0, sizeof(def));
  memset(&v, 0, sizeof(v));
  vtkCursorReset(cur);
  /* Taken out of the registry while in use: a call this one makes cannot free it. */
  if( pReg ){
    pMemo = pReg->pTopK;
    pReg->pTopK = 0;
  }
  if( zIndex==0 ){
    zErr = sqlite3_mprintf("the index name is NULL");
    rc = SQLITE_ERROR;
    goto cleanup;
  }
  /* k is an integer, 0 or more (0: no row), as libSQL takes it; an integral REAL (5.0)
  ** is taken as that integer; text, a blob and NULL are refused, as libSQL refuses them. */
  if( sqlite3_value_type(argv[2])==SQLITE_FLOAT ){
    double r = sqlite3_value_double(argv[2]);
    k = (r>=0.0 && r<9.2e18 && r==(double)(sqlite3_int64)r) ? (sqlite3_int64)r : -1;
  }else{
    k = sqlite3_value_type(argv[2])==SQLITE_INTEGER ? sqlite3_value_int64(argv[2]) : -1;
  }
  if( k<0 ){
    zErr = sqlite3_mprintf("k must be a non-negative integer, got %s",
        sqlite3_value_type(argv[2])==SQLITE_NULL ? "NULL" : (const char*)sqlite3_value_text(argv[2]));
    rc = SQLITE_ERROR;
    goto cleanup;
  }
  /* nprobe: lists an ivf index scans this once; an exact index has nothing to tune. */
  if( idxNum==1 && argc>3 ){
    nProbe = vec0IvfProbeValue(argv[3]);
    if( nProbe==0 ){
      zErr = sqlite3_mprintf("nprobe must be an integer from 1 to %d", VEC0_IVF_MAX_LISTS);
      rc = SQLITE_ERROR;
      goto cleanup;
    }
  }
  bMemo = libsqlTopKMemoValid(pTab->db, pMemo, zIndex);
  if( bMemo ){
    pDef = &pMemo->def;
    rc = SQLITE_OK;
  }else{
    rc = libsqlIndexLookup(pTab->db, zIndex, &def, &zErr);
    if( rc!=SQLITE_OK ) goto cleanup;
  }
  pCur->bKeyIsRowid = pDef->zKey==0 || pDef->bKeyRowidLike;
  rc = vsVectorFromValue(argv[1], VS_F32, &v, &zErr);
  if( rc!=SQLITE_OK ) goto cleanup;
  if( v.nDim!=pDef->nDim ){
    zErr = sqlite3_mprintf("the query vector has %d dimensions, index %s has %d",
                           v.nDim, zIndex, pDef->nDim);
    rc = SQLITE_ERROR;
    goto cleanup;
  }
  if( k==0 ) goto cleanup;    /* no row, the arguments checked */
  if( !bMemo ){
    rc = libsqlIndexBuild(pTab->db, pReg, &def, 0, 0, &zErr);
    if( (rc&0xff)==SQLITE_READONLY || (rc&0xff)==SQLITE_BUSY || (rc&0xff)==SQLITE_LOCKED ){
      /* A connection that cannot write cannot build the search data or apply what other
      ** connections logged: it scans the table's rows itself, exactly, until a writable
      ** connection has done so. So does a search of an index whose search data was made
      ** for another declaration (exact, now 'type=ivf', or the reverse), which a
      ** statement that reads cannot drop: until vecsync_rebuild() makes it again. */
      sqlite3_free(zErr);
      zErr = 0;
      if( def.eColType==VS_LIBSQL_1BIT ) libsqlQueryAsBits((float*)v.aData, v.nDim);
      rc = libsqlScanTable(pTab->db, &def, &v, k, &pCur->top, &pCur->apKey, &zErr);
      goto cleanup;
    }
    if( rc!=SQLITE_OK ) goto cleanup;
    /* The search data is current: the next call reuses this lookup while nothing changed. */
    libsqlTopKMemoFree(pMemo);
    pMemo = libsqlTopKMemoNew(pTab->db, zIndex, &def);
    if( pMemo ) pDef = &pMemo->def;
  }
  zStore = sqlite3_mprintf("vecsync_idx_%s", pDef->zIndex);
  if( zStore==0 ){ rc = SQLITE_NOMEM; goto cleanup; }
  rc = vec0Find(pTab->db, pReg, pDef->zSchema, zStore, &pStore, &zErr);
  if( rc!=SQLITE_OK ) goto cleanup;
  rc = vec0VectorArg(pStore, argv[1], "query", &q, &zErr);
  if( rc!=SQLITE_OK ) goto cleanup;
  rc = vec0StorageReady(pStore);
  if( rc!=SQLITE_OK ){
    zErr = vec0TakeError(pStore);
    goto cleanup;
  }
  if( pDef->eColType==VS_LIBSQL_1BIT ) libsqlQueryAsBits(q, pDef->nDim);
  /* Exact unless the store has an ivf index (trained): then the nprobe nearest lists. */
  rc = vec0IvfSearch(pStore, q, k, nProbe, 0, 0, &pCur->top);
  if( rc!=SQLITE_OK && zErr==0 ) zErr = vec0TakeError(pStore);
  if( rc==SQLITE_OK && pDef->zKey ){
    rc = libsqlIndexHitKeys(pTab->db, pDef, &pCur->top, &pCur->apKey, &zErr);
  }

cleanup:
  if( rc==SQLITE_OK && pDef->eColType==VS_LIBSQL_1BIT && pDef->eMetric==VS_METRIC_COSINE ){
    libsqlHitsAsHamming(&pCur->top, pDef->nDim);
  }
  pCur->base.nRow = pCur->top.n;
  if( rc!=SQLITE_OK ){
    sqlite3_free(pTab->base.zErrMsg);
    pTab->base.zErrMsg = rc==SQLITE_NOMEM ? 0 : sqlite3_mprintf("vector_top_k: %s",
        zErr ? zErr : sqlite3_errmsg(pTab->db));
  }
  if( pReg && rc==SQLITE_OK && pMemo ){
    /* Back into the registry (one a nested call put there is replaced). */
    libsqlTopKMemoFree(pReg->pTopK);
    pReg->pTopK = pMemo;
  }else{
    libsqlTopKMemoFree(pMemo);
  }
  sqlite3_free(zErr);
  sqlite3_free(zStore);
  sqlite3_free(q);
  vsVectorFree(&v);
  libsqlIndexClear(&def);
  return rc;
}

static int vtkColumn(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int i){
  VtkCursor *pCur = (VtkCursor*)cur;
  const VsHit *pHit = &pCur->top.a[pCur->base.iRow];
  if( i==VTK_COL_ID ){
    if( pCur->apKey ) sqlite3_result_value(ctx, pCur->apKey[pCur->base.iRow]);
    else sqlite3_result_int64(ctx, pHit->iRowid);
  }else if( i==VTK_COL_DISTANCE ){
    sqlite3_result_double(ctx, pHit->rDist);
  }
  return SQLITE_OK;
}

/* A hit's rowid is the indexed row's rowid (its id), as libSQL's vector_top_k gives it, so
** "select rowid from vector_top_k(...)" and joins on it name the rows. Of a WITHOUT ROWID
** table it is, as in libSQL, the key when that is rowid-like (INTEGER affinity, BINARY
** collation), else the hit's position from 0. */
static int vtkRowid(sqlite3_vtab_cursor *cur, sqlite3_int64 *pRowid){
  VtkCursor *pCur = (VtkCursor*)cur;
  if( pCur->apKey==0 ) *pRowid = pCur->top.a[pCur->base.iRow].iRowid;
  else if( pCur->bKeyIsRowid ) *pRowid = sqlite3_value_int64(pCur->apKey[pCur->base.iRow]);
  else *pRowid = pCur->base.iRow;
  return SQLITE_OK;
}

const sqlite3_module libsqlTopKModule = VS_TABLE_FUNCTION_MODULE(
    vtkConnect, vtkBestIndex, vtkFilter, vsCursorNext, vsCursorEof, vtkColumn, vtkRowid);
