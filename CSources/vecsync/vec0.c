/*
** vec0.c: the vec0 virtual table, with sqlite-vec's SQL and an exact BLAS search.
**
** Usage:
**
**   create virtual table vec_photos using vec0(
**     photo_id text primary key,
**     embedding float[768] distance_metric=cosine,
**     album text, taken_at integer, +caption text);
**   insert into vec_photos(photo_id, embedding, album, taken_at, caption)
**     values ('PH-1', :vector, 'Japan', 1700000001, 'Kyoto');
**   select photo_id, distance from vec_photos
**    where embedding match :query and k = 10 and album = 'Japan' and taken_at > 1700000000
**    order by distance;
**   select photo_id, distance from vec_photos where embedding match :q
**    order by distance limit 10;
**   select * from vec_photos where photo_id = 'PH-1';
**   update vec_photos set embedding = :v where photo_id = 'PH-1';
**   delete from vec_photos where photo_id = 'PH-1';
**
** How it works: rows live in shadow tables (vec0_store.c). A KNN query (MATCH on the
** vector column with k = ? or LIMIT) scores every block of vectors with one sgemv and
** keeps the k nearest in a bounded heap. Constraints on metadata columns (=, <>, <, <=,
** >, >=, IS [NOT] NULL, IN) and on the primary key are turned into one query over the
** rows table that marks the slots that pass, before the scan, so a filtered query still
** returns k rows whenever k rows match. Hidden columns: distance (the metric's distance,
** ascending) and k. Other plans: a point lookup by rowid or primary key, a full scan.
*/
#include "vecsync_int.h"
SQLITE_EXTENSION_INIT3

#include <stdlib.h>
#include <string.h>

/* Query plans (idxNum). */
#define VEC0_PLAN_SCAN  1
#define VEC0_PLAN_POINT 2
#define VEC0_PLAN_KNN   3

typedef struct Vec0Cursor Vec0Cursor;
struct Vec0Cursor {
  sqlite3_vtab_cursor base;   /* Base class: must be first */
  int ePlan;                  /* VEC0_PLAN_* */
  int bEof;                   /* True past the last row */
  sqlite3_stmt *pScan;        /* Full scan and point lookup: rows of T_rows */
  VsTopK top;                 /* KNN: hits, nearest first */
  int iHit;                   /* KNN: current hit */
  sqlite3_stmt *pRow;         /* KNN: the current hit's row of T_rows */
  int bRowLoaded;             /* KNN: pRow holds the current hit */
  int iScanSlot;              /* VEC0_CURSTMT_* pScan was borrowed from, or -1 */
  int iRowSlot;               /* VEC0_CURSTMT_* pRow was borrowed from, or -1 */
};

/* Slots of Vec0Table.aCurStmt: the cursor statements every point lookup, KNN query and
** scan would otherwise prepare again (a merge refreshing 10,000 keys spent an eighth of its
** time preparing "SELECT … WHERE id=?1"). */
#define VEC0_CURSTMT_ROWID 0    /* ... FROM T_rows WHERE rowid=?1 (point lookups, KNN rows) */
#define VEC0_CURSTMT_ID    1    /* ... FROM T_rows WHERE id=?1 (text primary key) */
#define VEC0_CURSTMT_SCAN  2    /* ... FROM T_rows ORDER BY rowid */

/* "SELECT zCols FROM T_rows WHERE zKey=?1", or every row in rowid order when zKey is 0.
** One builder, so that every user of a VEC0_CURSTMT_* slot prepares the same text. */
static char *vec0RowSelect(Vec0Table *p, const char *zCols, const char *zKey){
  if( zKey==0 ){
    return sqlite3_mprintf("SELECT %s FROM \"%w\".\"%w_rows\" ORDER BY rowid",
                           zCols, p->zSchema, p->zName);
  }
  return sqlite3_mprintf("SELECT %s FROM \"%w\".\"%w_rows\" WHERE %s=?1",
                         zCols, p->zSchema, p->zName, zKey);
}

/* A statement for zSql: the one kept in slot iSlot when it is free (prepared on first
** use), else a private one (iSlot<0, or the slot busy with another cursor). *piOwner is the
** slot the statement belongs to, or -1 when the caller owns it. */
static int vec0CursorPrepare(Vec0Table *p, int iSlot, const char *zSql,
                             sqlite3_stmt **ppStmt, int *piOwner){
  int rc;
  *piOwner = -1;
  if( iSlot>=0 && !p->aCurBusy[iSlot] ){
    if( p->aCurStmt[iSlot]==0 ){
      rc = sqlite3_prepare_v3(p->db, zSql, -1, SQLITE_PREPARE_PERSISTENT, &p->aCurStmt[iSlot], 0);
      if( rc!=SQLITE_OK ) return rc;
    }
    p->aCurBusy[iSlot] = 1;
    *piOwner = iSlot;
    *ppStmt = p->aCurStmt[iSlot];
    return SQLITE_OK;
  }
  return sqlite3_prepare_v2(p->db, zSql, -1, ppStmt, 0);
}

/* Gives back a statement from vec0CursorPrepare(). */
static void vec0CursorRelease(Vec0Table *p, sqlite3_stmt *pStmt, int iOwner){
  if( pStmt==0 ) return;
  if( iOwner>=0 && p->aCurStmt[iOwner]==pStmt ){
    sqlite3_reset(pStmt);
    sqlite3_clear_bindings(pStmt);
    p->aCurBusy[iOwner] = 0;
  }else{
    sqlite3_finalize(pStmt);
  }
}

/* ---- the row shape: columns of T_rows a cursor reads ----------------------------------- */

/* "rowid, id|NULL, slot, c0, ..." : result column 3+i is user column i's stored value. */
static char *vec0RowColumns(Vec0Table *p){
  sqlite3_str *pStr = sqlite3_str_new(0);
  int i;
  int bTextPk = p->cfg.iPk>=0 && p->cfg.aCol[p->cfg.iPk].eType==VEC0_TYPE_TEXT;
  sqlite3_str_appendf(pStr, "rowid, %s, slot", bTextPk ? "id" : "NULL");
  for(i=0; i<p->cfg.nCol; i++){
    int eKind = p->cfg.aCol[i].eKind;
    if( eKind==VEC0_META || eKind==VEC0_AUX ){
      sqlite3_str_appendf(pStr, ", c%d", i);
    }else{
      sqlite3_str_appendf(pStr, ", NULL");
    }
  }
  return sqlite3_str_finish(pStr);
}

static int vec0HasTextPk(Vec0Table *p){
  return p->cfg.iPk>=0 && p->cfg.aCol[p->cfg.iPk].eType==VEC0_TYPE_TEXT;
}

/* ---- registry --------------------------------------------------------------------------- */

static void vec0RegistryAdd(Vec0Registry *pReg, Vec0Table *p){
  p->pReg = pReg;
  p->pNext = pReg->pFirst;
  pReg->pFirst = p;
}

static void vec0RegistryRemove(Vec0Table *p){
  Vec0Table **pp;
  if( p->pReg==0 ) return;
  for(pp=&p->pReg->pFirst; *pp; pp=&(*pp)->pNext){
    if( *pp==p ){ *pp = p->pNext; break; }
  }
  p->pReg = 0;
}

int vec0Find(sqlite3 *db, Vec0Registry *pReg, const char *zSchema, const char *zName,
             Vec0Table **ppTab, char **pzErr){
  Vec0Table *p;
  int bTried = 0;
  for(;;){
    for(p=pReg->pFirst; p; p=p->pNext){
      if( sqlite3_stricmp(p->zName, zName)==0
       && (zSchema==0 || sqlite3_stricmp(p->zSchema, zSchema)==0) ){
        *ppTab = p;
        return SQLITE_OK;
      }
    }
    if( bTried ) break;
    bTried = 1;
    {
      /* Not connected yet on this connection: preparing a statement that names the
      ** table connects it. */
      sqlite3_stmt *pStmt = 0;
      char *zSql = zSchema
        ? sqlite3_mprintf("SELECT 1 FROM \"%w\".\"%w\" WHERE 0", zSchema, zName)
        : sqlite3_mprintf("SELECT 1 FROM \"%w\" WHERE 0", zName);
      int rc;
      if( zSql==0 ) return SQLITE_NOMEM;
      rc = sqlite3_prepare_v2(db, zSql, -1, &pStmt, 0);
      sqlite3_free(zSql);
      sqlite3_finalize(pStmt);
      if( rc!=SQLITE_OK ){
        *pzErr = sqlite3_mprintf("no such vec0 table: %s", zName);
        return SQLITE_ERROR;
      }
    }
  }
  *pzErr = sqlite3_mprintf("%s is not a vec0 table", zName);
  return SQLITE_ERROR;
}

/* ---- create, connect, destroy --------------------------------------------------------- */

static int vec0Init(sqlite3 *db, void *pAux, int argc, const char *const *argv,
                    sqlite3_vtab **ppVtab, char **pzErr, int bCreate){
  Vec0Table *p = 0;
  sqlite3_str *pDecl = 0;
  char *zDecl = 0;
  int rc, i;

  p = sqlite3_malloc(sizeof(*p));
  if( p==0 ) return SQLITE_NOMEM;
  memset(p, 0, sizeof(*p));
  p->db = db;
  p->zSchema = sqlite3_mprintf("%s", argv[1]);
  p->zName = sqlite3_mprintf("%s", argv[2]);
  if( p->zSchema==0 || p->zName==0 ){ rc = SQLITE_NOMEM; goto cleanup; }
  rc = vec0ParseConfig(argc, argv, &p->cfg, pzErr);
  if( rc!=SQLITE_OK ) goto cleanup;

  pDecl = sqlite3_str_new(db);
  sqlite3_str_appendf(pDecl, "CREATE TABLE x(");
  for(i=0; i<p->cfg.nCol; i++){
    const Vec0Column *pCol = &p->cfg.aCol[i];
    const char *zType = "";
    switch( pCol->eType ){
      case VEC0_TYPE_TEXT:    zType = " TEXT"; break;
      case VEC0_TYPE_INTEGER: zType = " INTEGER"; break;
      case VEC0_TYPE_BOOLEAN: zType = " INTEGER"; break;
      case VEC0_TYPE_FLOAT:   zType = " REAL"; break;
      case VEC0_TYPE_BLOB:    zType = " BLOB"; break;
    }
    sqlite3_str_appendf(pDecl, "\"%w\"%s, ", pCol->zName, zType);
  }
  sqlite3_str_appendf(pDecl, "distance HIDDEN REAL, k HIDDEN INTEGER)");
  zDecl = sqlite3_str_finish(pDecl);
  if( zDecl==0 ){ rc = SQLITE_NOMEM; goto cleanup; }
  rc = sqlite3_declare_vtab(db, zDecl);
  if( rc!=SQLITE_OK ){
    *pzErr = sqlite3_mprintf("vec0: cannot declare the table: %s", sqlite3_errmsg(db));
    goto cleanup;
  }
  /* UNIQUE conflicts on the primary key follow the statement's ON CONFLICT clause. */
  sqlite3_vtab_config(db, SQLITE_VTAB_CONSTRAINT_SUPPORT, 1);
  /* Reads and writes touch only the table's own data: safe in triggers and views. */
  sqlite3_vtab_config(db, SQLITE_VTAB_INNOCUOUS);

  if( bCreate ){
    rc = vec0ShadowCreate(p);
    if( rc!=SQLITE_OK ){
      *pzErr = sqlite3_mprintf("vec0: cannot create the storage of \"%s\": %s",
                               p->zName, sqlite3_errmsg(db));
      goto cleanup;
    }
  }
  vec0RegistryAdd((Vec0Registry*)pAux, p);
  *ppVtab = &p->base;
  p = 0;

cleanup:
  sqlite3_free(zDecl);
  if( p ){
    vec0ConfigClear(&p->cfg);
    sqlite3_free(p->zSchema);
    sqlite3_free(p->zName);
    sqlite3_free(p);
  }
  return rc;
}

static int vec0Create(sqlite3 *db, void *pAux, int argc, const char *const *argv,
                      sqlite3_vtab **ppVtab, char **pzErr){
  return vec0Init(db, pAux, argc, argv, ppVtab, pzErr, 1);
}

static int vec0Connect(sqlite3 *db, void *pAux, int argc, const char *const *argv,
                       sqlite3_vtab **ppVtab, char **pzErr){
  return vec0Init(db, pAux, argc, argv, ppVtab, pzErr, 0);
}

static int vec0Disconnect(sqlite3_vtab *pVtab){
  Vec0Table *p = (Vec0Table*)pVtab;
  vec0RegistryRemove(p);
  vec0StmtsFinalize(p);
  vec0CacheClear(p);
  vec0ConfigClear(&p->cfg);
  sqlite3_free(p->zSchema);
  sqlite3_free(p->zName);
  sqlite3_free(p);
  return SQLITE_OK;
}

static int vec0Destroy(sqlite3_vtab *pVtab){
  Vec0Table *p = (Vec0Table*)pVtab;
  int rc;
  vec0StmtsFinalize(p);
  rc = vec0ShadowDrop(p);
  if( rc!=SQLITE_OK ) return rc;
  return vec0Disconnect(pVtab);
}

/* ---- planning --------------------------------------------------------------------------- */

/* Operators a KNN filter evaluates, by SQLITE_INDEX_CONSTRAINT_* code. */
static char vec0FilterOp(int op){
  switch( op ){
    case SQLITE_INDEX_CONSTRAINT_EQ:        return 'e';
    case SQLITE_INDEX_CONSTRAINT_GT:        return 'g';
    case SQLITE_INDEX_CONSTRAINT_GE:        return 'G';
    case SQLITE_INDEX_CONSTRAINT_LT:        return 'l';
    case SQLITE_INDEX_CONSTRAINT_LE:        return 'L';
    case SQLITE_INDEX_CONSTRAINT_NE:        return 'n';
    case SQLITE_INDEX_CONSTRAINT_IS:        return 'i';
    case SQLITE_INDEX_CONSTRAINT_ISNOT:     return 'I';
    case SQLITE_INDEX_CONSTRAINT_ISNULL:    return 'u';
    case SQLITE_INDEX_CONSTRAINT_ISNOTNULL: return 'U';
  }
  return 0;
}

static int vec0HasVtabIn(void){ return sqlite3_libversion_number()>=3038000; }

/*
** idxStr lists what each xFilter argument is, three characters an argument:
**   'M' ' ' ' '   the query vector (MATCH)
**   'K' ' ' ' '   k = ?
**   'L' ' ' ' '   LIMIT ?
**   'F' col op    a filter on column col ('A'+index, '@' for the rowid), op as above,
**                 'x' for an IN list handled whole
**   'P' col 'e'   point lookup by rowid or primary key
*/
static int vec0BestIndex(sqlite3_vtab *pVtab, sqlite3_index_info *pInfo){
  Vec0Table *p = (Vec0Table*)pVtab;
  int iMatch = -1, iK = -1, iLimit = -1, iPoint = -1;
  int bMatchUnusable = 0, bKUnusable = 0;
  int iColDistance = p->cfg.nCol, iColK = p->cfg.nCol+1;
  int i, nArg = 0;
  char *zIdx = 0;

  for(i=0; i<pInfo->nConstraint; i++){
    const struct sqlite3_index_constraint *pC = &pInfo->aConstraint[i];
    if( pC->op==SQLITE_INDEX_CONSTRAINT_MATCH && pC->iColumn==p->cfg.iVec ){
      if( pC->usable ) iMatch = i; else bMatchUnusable = 1;
    }else if( pC->iColumn==iColK && pC->op==SQLITE_INDEX_CONSTRAINT_EQ ){
      if( pC->usable ) iK = i; else bKUnusable = 1;
    }else if( pC->op==SQLITE_INDEX_CONSTRAINT_LIMIT && pC->usable ){
      iLimit = i;
    }else if( pC->usable && pC->op==SQLITE_INDEX_CONSTRAINT_EQ
           && (pC->iColumn==-1 || pC->iColumn==p->cfg.iPk) ){
      iPoint = i;
    }
  }

  if( iMatch<0 && bMatchUnusable ) return SQLITE_CONSTRAINT;
  if( iMatch>=0 ){
    sqlite3_str *pStr;
    if( iK<0 && iLimit<0 && sqlite3_libversion_number()>=3041000 ){
      /* SQLite before 3.41 does not hand LIMIT to a virtual table that sorts its own
      ** output: there the scan returns every row nearest first and SQLite stops at the
      ** LIMIT. From 3.41 on, a KNN query without k or LIMIT is a mistake. */
      if( bKUnusable ) return SQLITE_CONSTRAINT;
      sqlite3_free(pVtab->zErrMsg);
      pVtab->zErrMsg = sqlite3_mprintf(
          "vec0 \"%s\": a KNN query needs \"k = ?\" or LIMIT beside MATCH", p->zName);
      return SQLITE_ERROR;
    }
    pStr = sqlite3_str_new(0);
    pInfo->aConstraintUsage[iMatch].argvIndex = ++nArg;
    pInfo->aConstraintUsage[iMatch].omit = 1;
    sqlite3_str_appendall(pStr, "M  ");
    if( iK>=0 ){
      pInfo->aConstraintUsage[iK].argvIndex = ++nArg;
      pInfo->aConstraintUsage[iK].omit = 1;
      sqlite3_str_appendall(pStr, "K  ");
    }
    if( iLimit>=0 ){
      pInfo->aConstraintUsage[iLimit].argvIndex = ++nArg;
      pInfo->aConstraintUsage[iLimit].omit = 1;
      sqlite3_str_appendall(pStr, "L  ");
    }
    for(i=0; i<pInfo->nConstraint; i++){
      const struct sqlite3_index_constraint *pC = &pInfo->aConstraint[i];
      int iCol = pC->iColumn;
      char cOp;
      if( !pC->usable || i==iMatch || i==iK || i==iLimit ) continue;
      if( !(iCol==-1 || iCol==p->cfg.iPk
            || (iCol>=0 && iCol<p->cfg.nCol && p->cfg.aCol[iCol].eKind==VEC0_META)) ){
        continue;
      }
      cOp = vec0FilterOp(pC->op);
      if( cOp==0 ) continue;
      if( cOp=='e' && vec0HasVtabIn() && sqlite3_vtab_in(pInfo, i, -1) ){
        sqlite3_vtab_in(pInfo, i, 1);
        cOp = 'x';
      }
      pInfo->aConstraintUsage[i].argvIndex = ++nArg;
      pInfo->aConstraintUsage[i].omit = 1;
      sqlite3_str_appendf(pStr, "F%c%c", iCol<0 ? '@' : 'A'+iCol, cOp);
    }
    zIdx = sqlite3_str_finish(pStr);
    if( zIdx==0 ) return SQLITE_NOMEM;
    pInfo->idxNum = VEC0_PLAN_KNN;
    pInfo->idxStr = zIdx;
    pInfo->needToFreeIdxStr = 1;
    pInfo->estimatedCost = 10.0;
    pInfo->estimatedRows = 10;
    if( pInfo->nOrderBy==1 && pInfo->aOrderBy[0].iColumn==iColDistance
     && !pInfo->aOrderBy[0].desc ){
      pInfo->orderByConsumed = 1;
    }
    return SQLITE_OK;
  }

  if( iPoint>=0 ){
    int iCol = pInfo->aConstraint[iPoint].iColumn;
    pInfo->aConstraintUsage[iPoint].argvIndex = 1;
    pInfo->aConstraintUsage[iPoint].omit = 1;
    zIdx = sqlite3_mprintf("P%ce", iCol<0 ? '@' : 'A'+iCol);
    if( zIdx==0 ) return SQLITE_NOMEM;
    pInfo->idxNum = VEC0_PLAN_POINT;
    pInfo->idxStr = zIdx;
    pInfo->needToFreeIdxStr = 1;
    pInfo->estimatedCost = 1.0;
    pInfo->estimatedRows = 1;
    pInfo->idxFlags = SQLITE_INDEX_SCAN_UNIQUE;
    return SQLITE_OK;
  }

  pInfo->idxNum = VEC0_PLAN_SCAN;
  pInfo->estimatedCost = 1e6;
  pInfo->estimatedRows = 100000;
  if( pInfo->nOrderBy==1 && pInfo->aOrderBy[0].iColumn==-1 && !pInfo->aOrderBy[0].desc ){
    pInfo->orderByConsumed = 1;
  }
  return SQLITE_OK;
}

/* ---- cursors ---------------------------------------------------------------------------- */

static int vec0Open(sqlite3_vtab *pVtab, sqlite3_vtab_cursor **ppCur){
  Vec0Cursor *pCur = sqlite3_malloc(sizeof(*pCur));
  if( pCur==0 ) return SQLITE_NOMEM;
  memset(pCur, 0, sizeof(*pCur));
  pCur->base.pVtab = pVtab;
  pCur->iScanSlot = -1;
  pCur->iRowSlot = -1;
  *ppCur = &pCur->base;
  return SQLITE_OK;
}

static void vec0CursorReset(Vec0Cursor *pCur){
  Vec0Table *p = (Vec0Table*)pCur->base.pVtab;
  vec0CursorRelease(p, pCur->pScan, pCur->iScanSlot);
  pCur->pScan = 0;
  pCur->iScanSlot = -1;
  vec0CursorRelease(p, pCur->pRow, pCur->iRowSlot);
  pCur->pRow = 0;
  pCur->iRowSlot = -1;
  vsTopKFree(&pCur->top);
  pCur->iHit = 0;
  pCur->bEof = 1;
  pCur->bRowLoaded = 0;
}

static int vec0Close(sqlite3_vtab_cursor *cur){
  Vec0Cursor *pCur = (Vec0Cursor*)cur;
  vec0CursorReset(pCur);
  sqlite3_free(pCur);
  return SQLITE_OK;
}

/* SQL comparison text of a filter operator. */
static const char *vec0OpSql(char cOp){
  switch( cOp ){
    case 'e': return "=";
    case 'g': return ">";
    case 'G': return ">=";
    case 'l': return "<";
    case 'L': return "<=";
    case 'n': return "<>";
    case 'i': return "IS";
    case 'I': return "IS NOT";
  }
  return "=";
}

/* The stored column a filter on user column iCol ('@': rowid) reads. */
static char *vec0FilterColumn(Vec0Table *p, char cCol){
  int iCol = cCol=='@' ? -1 : cCol-'A';
  if( iCol<0 || (iCol==p->cfg.iPk && !vec0HasTextPk(p)) ) return sqlite3_mprintf("rowid");
  if( iCol==p->cfg.iPk ) return sqlite3_mprintf("id");
  return sqlite3_mprintf("c%d", iCol);
}

/* Mark the slots of the rows that pass the KNN filters: aMask[slot] = 1. */
static int vec0FilterMask(Vec0Table *p, const char *zIdx, int argc, sqlite3_value **argv,
                          unsigned char **paMask){
  sqlite3_str *pStr = sqlite3_str_new(p->db);
  sqlite3_stmt *pStmt = 0;
  unsigned char *aMask = 0;
  char *zSql = 0;
  int rc = SQLITE_OK, i, nBind = 0, bFirst = 1;
  int nEntry = (int)strlen(zIdx)/3;

  sqlite3_str_appendf(pStr, "SELECT slot FROM \"%w\".\"%w_rows\" WHERE ", p->zSchema, p->zName);
  for(i=0; i<nEntry && i<argc; i++){
    const char *e = &zIdx[3*i];
    char *zCol;
    if( e[0]!='F' ) continue;
    zCol = vec0FilterColumn(p, e[1]);
    if( zCol==0 ){ rc = SQLITE_NOMEM; break; }
    if( !bFirst ) sqlite3_str_appendall(pStr, " AND ");
    bFirst = 0;
    if( e[2]=='u' ){
      sqlite3_str_appendf(pStr, "%s IS NULL", zCol);
    }else if( e[2]=='U' ){
      sqlite3_str_appendf(pStr, "%s IS NOT NULL", zCol);
    }else if( e[2]=='x' ){
      sqlite3_value *pVal = 0;
      int rc2, bOne = 0;
      sqlite3_str_appendf(pStr, "%s IN (", zCol);
      for(rc2 = sqlite3_vtab_in_first(argv[i], &pVal); rc2==SQLITE_OK && pVal;
          rc2 = sqlite3_vtab_in_next(argv[i], &pVal)){
        sqlite3_str_appendf(pStr, "%s?%d", bOne ? "," : "", ++nBind);
        bOne = 1;
      }
      sqlite3_str_appendall(pStr, ")");
    }else{
      sqlite3_str_appendf(pStr, "%s %s ?%d", zCol, vec0OpSql(e[2]), ++nBind);
    }
    sqlite3_free(zCol);
  }
  zSql = sqlite3_str_finish(pStr);
  if( rc!=SQLITE_OK || zSql==0 ){ rc = SQLITE_NOMEM; goto cleanup; }
  rc = sqlite3_prepare_v2(p->db, zSql, -1, &pStmt, 0);
  if( rc!=SQLITE_OK ) goto cleanup;
  nBind = 0;
  for(i=0; i<nEntry && i<argc; i++){
    const char *e = &zIdx[3*i];
    if( e[0]!='F' || e[2]=='u' || e[2]=='U' ) continue;
    if( e[2]=='x' ){
      sqlite3_value *pVal = 0;
      int rc2;
      for(rc2 = sqlite3_vtab_in_first(argv[i], &pVal); rc2==SQLITE_OK && pVal;
          rc2 = sqlite3_vtab_in_next(argv[i], &pVal)){
        sqlite3_bind_value(pStmt, ++nBind, pVal);
      }
    }else{
      sqlite3_bind_value(pStmt, ++nBind, argv[i]);
    }
  }
  aMask = sqlite3_malloc64((sqlite3_uint64)(p->cache.nSlot ? p->cache.nSlot : 1));
  if( aMask==0 ){ rc = SQLITE_NOMEM; goto cleanup; }
  memset(aMask, 0, (size_t)(p->cache.nSlot ? p->cache.nSlot : 1));
  while( sqlite3_step(pStmt)==SQLITE_ROW ){
    sqlite3_int64 iSlot = sqlite3_column_int64(pStmt, 0);
    if( iSlot>=0 && iSlot<p->cache.nSlot ) aMask[iSlot] = 1;
  }
  rc = sqlite3_finalize(pStmt);
  pStmt = 0;

cleanup:
  sqlite3_finalize(pStmt);
  sqlite3_free(zSql);
  if( rc!=SQLITE_OK ){
    sqlite3_free(aMask);
    aMask = 0;
  }
  *paMask = aMask;
  return rc;
}

/* Read k from "k = ?" or LIMIT: a positive integer. */
static int vec0ReadK(Vec0Table *p, sqlite3_value *pVal, const char *zWhat,
                     sqlite3_int64 *piK){
  sqlite3_int64 k;
  if( sqlite3_value_numeric_type(pVal)!=SQLITE_INTEGER ){
    p->base.zErrMsg = sqlite3_mprintf(
        "vec0 \"%s\": %s must be a positive integer, got %s", p->zName, zWhat,
        sqlite3_value_type(pVal)==SQLITE_NULL ? "NULL" : (const char*)sqlite3_value_text(pVal));
    return SQLITE_ERROR;
  }
  k = sqlite3_value_int64(pVal);
  if( k<=0 ){
    p->base.zErrMsg = sqlite3_mprintf(
        "vec0 \"%s\": %s must be a positive integer, got %lld", p->zName, zWhat, k);
    return SQLITE_ERROR;
  }
  *piK = k;
  return SQLITE_OK;
}

static int vec0Filter(sqlite3_vtab_cursor *cur, int idxNum, const char *idxStr,
                      int argc, sqlite3_value **argv){
  Vec0Cursor *pCur = (Vec0Cursor*)cur;
  Vec0Table *p = (Vec0Table*)cur->pVtab;
  char *zCols = 0, *zSql = 0;
  float *q = 0;
  unsigned char *aMask = 0;
  int rc = SQLITE_OK;

  vec0CursorReset(pCur);
  pCur->ePlan = idxNum;
  zCols = vec0RowColumns(p);
  if( zCols==0 ){ rc = SQLITE_NOMEM; goto cleanup; }

  if( idxNum==VEC0_PLAN_KNN ){
    sqlite3_int64 k = -1, kLimit = -1;
    int i, nEntry = (int)strlen(idxStr)/3;
    char *zErr = 0;
    for(i=0; i<nEntry && i<argc && rc==SQLITE_OK; i++){
      switch( idxStr[3*i] ){
        case 'M':
          rc = vec0VectorArg(p, argv[i], "query", &q, &zErr);
          if( rc!=SQLITE_OK ){ p->base.zErrMsg = zErr; zErr = 0; }
          break;
        case 'K': rc = vec0ReadK(p, argv[i], "k", &k); break;
        case 'L': rc = vec0ReadK(p, argv[i], "LIMIT", &kLimit); break;
      }
    }
    if( rc!=SQLITE_OK ) goto cleanup;
    if( k<0 || (kLimit>0 && kLimit<k) ) k = kLimit;
    rc = vec0CacheEnsure(p);
    if( rc!=SQLITE_OK ) goto cleanup;
    if( k<0 ) k = p->cache.nLive>0 ? p->cache.nLive : 1;
    if( strchr(idxStr, 'F') ){
      rc = vec0FilterMask(p, idxStr, argc, argv, &aMask);
      if( rc!=SQLITE_OK ) goto cleanup;
    }
    rc = vec0Search(p, q, k, aMask, &pCur->top);
    if( rc!=SQLITE_OK ) goto cleanup;
    zSql = vec0RowSelect(p, zCols, "rowid");
    if( zSql==0 ){ rc = SQLITE_NOMEM; goto cleanup; }
    rc = vec0CursorPrepare(p, VEC0_CURSTMT_ROWID, zSql, &pCur->pRow, &pCur->iRowSlot);
    pCur->iHit = 0;
    pCur->bEof = pCur->top.n==0;
  }else{
    int iSlot = VEC0_CURSTMT_SCAN;
    if( idxNum==VEC0_PLAN_POINT ){
      char *zCol = vec0FilterColumn(p, idxStr[1]);
      if( zCol==0 ){ rc = SQLITE_NOMEM; goto cleanup; }
      iSlot = strcmp(zCol, "rowid")==0 ? VEC0_CURSTMT_ROWID : strcmp(zCol, "id")==0 ? VEC0_CURSTMT_ID : -1;
      zSql = vec0RowSelect(p, zCols, zCol);
      sqlite3_free(zCol);
    }else{
      zSql = vec0RowSelect(p, zCols, 0);
    }
    if( zSql==0 ){ rc = SQLITE_NOMEM; goto cleanup; }
    rc = vec0CursorPrepare(p, iSlot, zSql, &pCur->pScan, &pCur->iScanSlot);
    if( rc!=SQLITE_OK ) goto cleanup;
    if( idxNum==VEC0_PLAN_POINT ) sqlite3_bind_value(pCur->pScan, 1, argv[0]);
    pCur->bEof = sqlite3_step(pCur->pScan)!=SQLITE_ROW;
    if( pCur->bEof ) rc = sqlite3_reset(pCur->pScan);
  }

cleanup:
  if( rc!=SQLITE_OK && p->base.zErrMsg==0 ){
    p->base.zErrMsg = sqlite3_mprintf("vec0 \"%s\": %s", p->zName, sqlite3_errmsg(p->db));
  }
  sqlite3_free(zCols);
  sqlite3_free(zSql);
  sqlite3_free(q);
  sqlite3_free(aMask);
  return rc;
}

static int vec0Next(sqlite3_vtab_cursor *cur){
  Vec0Cursor *pCur = (Vec0Cursor*)cur;
  if( pCur->ePlan==VEC0_PLAN_KNN ){
    pCur->iHit++;
    pCur->bRowLoaded = 0;
    pCur->bEof = pCur->iHit>=pCur->top.n;
    return SQLITE_OK;
  }
  if( sqlite3_step(pCur->pScan)!=SQLITE_ROW ){
    pCur->bEof = 1;
    return sqlite3_reset(pCur->pScan);
  }
  return SQLITE_OK;
}

static int vec0Eof(sqlite3_vtab_cursor *cur){
  return ((Vec0Cursor*)cur)->bEof;
}

/* The T_rows row of the cursor's current row. */
static int vec0CursorRow(Vec0Cursor *pCur, sqlite3_stmt **ppRow){
  if( pCur->ePlan!=VEC0_PLAN_KNN ){
    *ppRow = pCur->pScan;
    return SQLITE_OK;
  }
  if( !pCur->bRowLoaded ){
    sqlite3_reset(pCur->pRow);
    sqlite3_bind_int64(pCur->pRow, 1, pCur->top.a[pCur->iHit].iRowid);
    if( sqlite3_step(pCur->pRow)!=SQLITE_ROW ){
      int rc = sqlite3_reset(pCur->pRow);
      return rc==SQLITE_OK ? SQLITE_CORRUPT_VTAB : rc;
    }
    pCur->bRowLoaded = 1;
  }
  *ppRow = pCur->pRow;
  return SQLITE_OK;
}

static int vec0Rowid(sqlite3_vtab_cursor *cur, sqlite3_int64 *pRowid){
  Vec0Cursor *pCur = (Vec0Cursor*)cur;
  if( pCur->ePlan==VEC0_PLAN_KNN ){
    *pRowid = pCur->top.a[pCur->iHit].iRowid;
  }else{
    *pRowid = sqlite3_column_int64(pCur->pScan, 0);
  }
  return SQLITE_OK;
}

static int vec0Column(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int i){
  Vec0Cursor *pCur = (Vec0Cursor*)cur;
  Vec0Table *p = (Vec0Table*)cur->pVtab;
  sqlite3_stmt *pRow = 0;
  int rc;

  if( i==p->cfg.nCol ){                       /* distance */
    if( pCur->ePlan==VEC0_PLAN_KNN ) sqlite3_result_double(ctx, pCur->top.a[pCur->iHit].rDist);
    return SQLITE_OK;
  }
  if( i==p->cfg.nCol+1 ) return SQLITE_OK;    /* k */
  if( i==p->cfg.iPk && !vec0HasTextPk(p) ){
    sqlite3_int64 iRowid;
    vec0Rowid(cur, &iRowid);
    sqlite3_result_int64(ctx, iRowid);
    return SQLITE_OK;
  }
  if( i==p->cfg.iVec && sqlite3_vtab_nochange(ctx) ) return SQLITE_OK;
  rc = vec0CursorRow(pCur, &pRow);
  if( rc!=SQLITE_OK ) return rc;
  if( i==p->cfg.iPk ){
    sqlite3_result_value(ctx, sqlite3_column_value(pRow, 1));
  }else if( i==p->cfg.iVec ){
    float *a = sqlite3_malloc64(sizeof(float)*(size_t)p->cfg.nDim);
    if( a==0 ) return SQLITE_NOMEM;
    rc = vec0VectorRead(p, sqlite3_column_int64(pRow, 2), a);
    if( rc==SQLITE_OK ) vsResultF32(ctx, a, p->cfg.nDim);
    sqlite3_free(a);
  }else{
    sqlite3_result_value(ctx, sqlite3_column_value(pRow, 3+i));
  }
  return rc;
}

/* ---- writes ------------------------------------------------------------------------------ */

/* Find the row holding primary key / rowid pKey: *piRowid and *piSlot, or *piRowid=-1. */
static int vec0Lookup(Vec0Table *p, sqlite3_value *pKey, int bByRowid,
                      sqlite3_int64 *piRowid, sqlite3_int64 *piSlot){
  sqlite3_stmt *pStmt = 0;
  int rc = vec0CachedStmt(p, VEC0_STMT_USER + (bByRowid ? 0 : 1), &pStmt,
      "SELECT rowid, slot FROM \"%w\".\"%w_rows\" WHERE %s=?1",
      p->zSchema, p->zName, bByRowid ? "rowid" : "id");
  *piRowid = -1;
  *piSlot = -1;
  if( rc!=SQLITE_OK ) return rc;
  sqlite3_bind_value(pStmt, 1, pKey);
  if( sqlite3_step(pStmt)==SQLITE_ROW ){
    *piRowid = sqlite3_column_int64(pStmt, 0);
    *piSlot = sqlite3_column_int64(pStmt, 1);
  }
  return sqlite3_reset(pStmt);
}

static int vec0DeleteRow(Vec0Table *p, sqlite3_int64 iRowid, sqlite3_int64 iSlot){
  sqlite3_stmt *pStmt = 0;
  int rc = vec0CachedStmt(p, VEC0_STMT_USER + 2, &pStmt,
      "DELETE FROM \"%w\".\"%w_rows\" WHERE rowid=?1", p->zSchema, p->zName);
  if( rc!=SQLITE_OK ) return rc;
  sqlite3_bind_int64(pStmt, 1, iRowid);
  sqlite3_step(pStmt);
  rc = sqlite3_reset(pStmt);
  if( rc==SQLITE_OK ) rc = vec0SlotFree(p, iSlot);
  return rc;
}

/* Write row values (id, metadata, auxiliary) for rowid iRowid in slot iSlot. bInsert:
** INSERT a new T_rows row, else UPDATE the one at iOldRowid. */
static int vec0WriteRow(Vec0Table *p, int bInsert, sqlite3_int64 iOldRowid,
                        sqlite3_int64 iRowid, sqlite3_int64 iSlot, sqlite3_value *pId,
                        sqlite3_value **aVal){
  int iStmt = VEC0_STMT_USER + (bInsert ? 3 : 4);
  sqlite3_stmt *pStmt = p->aStmt[iStmt];
  int rc = SQLITE_OK, i, nBind = 0;
  if( pStmt==0 ){
    sqlite3_str *pStr = sqlite3_str_new(p->db);
    char *zSql;
    if( bInsert ){
      sqlite3_str_appendf(pStr, "INSERT INTO \"%w\".\"%w_rows\"(rowid, slot%s",
                          p->zSchema, p->zName, vec0HasTextPk(p) ? ", id" : "");
      for(i=0; i<p->cfg.nCol; i++){
        int e = p->cfg.aCol[i].eKind;
        if( e==VEC0_META || e==VEC0_AUX ) sqlite3_str_appendf(pStr, ", c%d", i);
      }
      sqlite3_str_appendf(pStr, ") VALUES(?, ?%s", vec0HasTextPk(p) ? ", ?" : "");
      for(i=0; i<p->cfg.nCol; i++){
        int e = p->cfg.aCol[i].eKind;
        if( e==VEC0_META || e==VEC0_AUX ) sqlite3_str_appendf(pStr, ", ?");
      }
      sqlite3_str_appendf(pStr, ")");
    }else{
      sqlite3_str_appendf(pStr, "UPDATE \"%w\".\"%w_rows\" SET rowid=?, slot=?%s",
                          p->zSchema, p->zName, vec0HasTextPk(p) ? ", id=?" : "");
      for(i=0; i<p->cfg.nCol; i++){
        int e = p->cfg.aCol[i].eKind;
        if( e==VEC0_META || e==VEC0_AUX ) sqlite3_str_appendf(pStr, ", c%d=?", i);
      }
      sqlite3_str_appendf(pStr, " WHERE rowid=?");
    }
    zSql = sqlite3_str_finish(pStr);
    if( zSql==0 ) return SQLITE_NOMEM;
    rc = sqlite3_prepare_v3(p->db, zSql, -1, SQLITE_PREPARE_PERSISTENT, &p->aStmt[iStmt], 0);
    sqlite3_free(zSql);
    if( rc!=SQLITE_OK ) return rc;
    pStmt = p->aStmt[iStmt];
  }
  sqlite3_bind_int64(pStmt, ++nBind, iRowid);
  sqlite3_bind_int64(pStmt, ++nBind, iSlot);
  if( vec0HasTextPk(p) ) sqlite3_bind_value(pStmt, ++nBind, pId);
  for(i=0; i<p->cfg.nCol; i++){
    int e = p->cfg.aCol[i].eKind;
    if( e==VEC0_META || e==VEC0_AUX ) sqlite3_bind_value(pStmt, ++nBind, aVal[i]);
  }
  if( !bInsert ) sqlite3_bind_int64(pStmt, ++nBind, iOldRowid);
  sqlite3_step(pStmt);
  rc = sqlite3_reset(pStmt);
  sqlite3_clear_bindings(pStmt);
  return rc;
}

static int vec0Conflict(Vec0Table *p){
  const char *zCol = p->cfg.iPk>=0 ? p->cfg.aCol[p->cfg.iPk].zName : "rowid";
  sqlite3_free(p->base.zErrMsg);
  p->base.zErrMsg = sqlite3_mprintf("UNIQUE constraint failed: %s.%s", p->zName, zCol);
  return SQLITE_CONSTRAINT;
}

/* Resolve the key of a row being written: the text primary key in *ppId, the rowid in
** *piRowid (-1: assign one). Checks types; no write happens here. */
static int vec0NewKey(Vec0Table *p, sqlite3_value *pRowidArg, sqlite3_value **aVal,
                      sqlite3_value **ppId, sqlite3_int64 *piRowid){
  *ppId = 0;
  *piRowid = -1;
  if( vec0HasTextPk(p) ){
    sqlite3_value *pId = aVal[p->cfg.iPk];
    if( sqlite3_value_type(pId)==SQLITE_NULL ){
      p->base.zErrMsg = sqlite3_mprintf("vec0 \"%s\": primary key \"%s\" must not be NULL",
                                        p->zName, p->cfg.aCol[p->cfg.iPk].zName);
      return SQLITE_CONSTRAINT;
    }
    *ppId = pId;
    if( pRowidArg && sqlite3_value_type(pRowidArg)==SQLITE_INTEGER ){
      *piRowid = sqlite3_value_int64(pRowidArg);
    }
    return SQLITE_OK;
  }
  {
    sqlite3_value *pKey = p->cfg.iPk>=0 ? aVal[p->cfg.iPk] : pRowidArg;
    if( p->cfg.iPk>=0 && sqlite3_value_type(pKey)==SQLITE_NULL ) pKey = pRowidArg;
    if( pKey && sqlite3_value_type(pKey)!=SQLITE_NULL ){
      if( sqlite3_value_numeric_type(pKey)!=SQLITE_INTEGER ){
        p->base.zErrMsg = sqlite3_mprintf(
            "vec0 \"%s\": %s must be an integer", p->zName,
            p->cfg.iPk>=0 ? p->cfg.aCol[p->cfg.iPk].zName : "rowid");
        return SQLITE_MISMATCH;
      }
      *piRowid = sqlite3_value_int64(pKey);
    }
  }
  return SQLITE_OK;
}

/* A rowid for a new row of a table whose primary key is text or absent. */
static int vec0NextRowid(Vec0Table *p, sqlite3_int64 *piRowid){
  sqlite3_stmt *pStmt = 0;
  int rc = vec0CachedStmt(p, VEC0_STMT_USER + 5, &pStmt,
      "SELECT coalesce(max(rowid), 0) + 1 FROM \"%w\".\"%w_rows\"", p->zSchema, p->zName);
  if( rc!=SQLITE_OK ) return rc;
  if( sqlite3_step(pStmt)==SQLITE_ROW ) *piRowid = sqlite3_column_int64(pStmt, 0);
  return sqlite3_reset(pStmt);
}

static int vec0Update(sqlite3_vtab *pVtab, int argc, sqlite3_value **argv,
                      sqlite3_int64 *pRowid){
  Vec0Table *p = (Vec0Table*)pVtab;
  float *aVec = 0;
  char *zErr = 0;
  int rc = SQLITE_OK;
  sqlite3_int64 iOldRowid = -1, iOldSlot = -1;

  sqlite3_free(pVtab->zErrMsg);
  pVtab->zErrMsg = 0;

  if( argc==1 ){
    /* DELETE */
    iOldRowid = sqlite3_value_int64(argv[0]);
    rc = vec0Lookup(p, argv[0], 1, &iOldRowid, &iOldSlot);
    if( rc==SQLITE_OK && iOldRowid>=0 ) rc = vec0DeleteRow(p, iOldRowid, iOldSlot);
    if( rc==SQLITE_OK && iOldRowid>=0 ) rc = vec0NoteWrite(p);
    goto cleanup;
  }else{
    sqlite3_value **aVal = &argv[2];
    sqlite3_value *pId = 0;
    sqlite3_value *pVec = aVal[p->cfg.iVec];
    int bInsert = sqlite3_value_type(argv[0])==SQLITE_NULL;
    int bKeepVector = !bInsert && sqlite3_value_nochange(pVec);
    sqlite3_int64 iRowid = -1, iSlot = -1, iOther = -1, iOtherSlot = -1;

    /* 1. Check everything before writing anything. */
    if( !bKeepVector ){
      rc = vec0VectorArg(p, pVec, "inserted", &aVec, &zErr);
      if( rc!=SQLITE_OK ){ pVtab->zErrMsg = zErr; zErr = 0; goto cleanup; }
    }
    rc = vec0NewKey(p, bInsert ? argv[1] : 0, aVal, &pId, &iRowid);
    if( rc!=SQLITE_OK ) goto cleanup;
    if( !bInsert ){
      rc = vec0Lookup(p, argv[0], 1, &iOldRowid, &iOldSlot);
      if( rc!=SQLITE_OK ) goto cleanup;
      if( iOldRowid<0 ){ rc = SQLITE_CORRUPT_VTAB; goto cleanup; }
      if( iRowid<0 ) iRowid = iOldRowid;
      if( !vec0HasTextPk(p) && p->cfg.iPk<0 ){
        iRowid = sqlite3_value_int64(argv[1]);
      }
    }
    /* 2. Primary key conflicts, resolved as the statement's ON CONFLICT says. */
    if( pId ){
      rc = vec0Lookup(p, pId, 0, &iOther, &iOtherSlot);
    }else if( iRowid>=0 ){
      sqlite3_value *pKey = sqlite3_value_dup(p->cfg.iPk>=0 && sqlite3_value_type(aVal[p->cfg.iPk])!=SQLITE_NULL
                                              ? aVal[p->cfg.iPk] : argv[1]);
      if( pKey==0 ){ rc = SQLITE_NOMEM; goto cleanup; }
      rc = vec0Lookup(p, pKey, 1, &iOther, &iOtherSlot);
      sqlite3_value_free(pKey);
    }
    if( rc!=SQLITE_OK ) goto cleanup;
    if( iOther>=0 && iOther==iOldRowid ) iOther = -1;    /* the row itself */
    if( iOther>=0 ){
      int eConflict = sqlite3_vtab_on_conflict(p->db);
      if( eConflict==SQLITE_REPLACE ){
        rc = vec0DeleteRow(p, iOther, iOtherSlot);
        if( rc!=SQLITE_OK ) goto cleanup;
      }else if( eConflict==SQLITE_IGNORE ){
        goto cleanup;
      }else{
        rc = vec0Conflict(p);
        goto cleanup;
      }
    }
    /* 3. Write. */
    if( bInsert ){
      if( iRowid<0 ) rc = vec0NextRowid(p, &iRowid);
      if( rc==SQLITE_OK ) rc = vec0SlotAlloc(p, &iSlot);
      if( rc==SQLITE_OK ) rc = vec0VectorWrite(p, iSlot, iRowid, aVec);
      if( rc==SQLITE_OK ) rc = vec0WriteRow(p, 1, 0, iRowid, iSlot, pId, aVal);
    }else{
      iSlot = iOldSlot;
      if( aVec ) rc = vec0VectorWrite(p, iSlot, iRowid, aVec);
      if( rc==SQLITE_OK ) rc = vec0WriteRow(p, 0, iOldRowid, iRowid, iSlot, pId, aVal);
      if( rc==SQLITE_OK ) vec0CacheSetRowid(p, iSlot, iRowid);
    }
    if( rc==SQLITE_OK ) rc = vec0NoteWrite(p);
    if( rc==SQLITE_OK ) *pRowid = iRowid;
  }

cleanup:
  if( rc!=SQLITE_OK ){
    p->cache.bValid = 0;
    if( pVtab->zErrMsg==0 && rc!=SQLITE_CONSTRAINT ){
      pVtab->zErrMsg = sqlite3_mprintf("vec0 \"%s\": %s", p->zName, sqlite3_errmsg(p->db));
    }
  }
  sqlite3_free(aVec);
  sqlite3_free(zErr);
  return rc;
}

/* ---- transactions ---------------------------------------------------------------------- */

/* 'generation' is bumped once a write transaction; a new one starts unbumped. */
static int vec0Begin(sqlite3_vtab *pVtab){
  ((Vec0Table*)pVtab)->bGenerationBumped = 0;
  return SQLITE_OK;
}
static int vec0Sync(sqlite3_vtab *pVtab){ (void)pVtab; return SQLITE_OK; }
static int vec0Commit(sqlite3_vtab *pVtab){
  ((Vec0Table*)pVtab)->bGenerationBumped = 0;
  return SQLITE_OK;
}

/* A rollback undoes shadow-table writes the in-memory copy already holds: drop it. */
static int vec0Rollback(sqlite3_vtab *pVtab){
  ((Vec0Table*)pVtab)->cache.bValid = 0;
  ((Vec0Table*)pVtab)->bGenerationBumped = 0;
  return SQLITE_OK;
}
static int vec0Savepoint(sqlite3_vtab *pVtab, int i){ (void)pVtab; (void)i; return SQLITE_OK; }
static int vec0Release(sqlite3_vtab *pVtab, int i){ (void)pVtab; (void)i; return SQLITE_OK; }
static int vec0RollbackTo(sqlite3_vtab *pVtab, int i){
  (void)i;
  ((Vec0Table*)pVtab)->cache.bValid = 0;
  ((Vec0Table*)pVtab)->bGenerationBumped = 0;   /* the bump may have been undone */
  return SQLITE_OK;
}

static int vec0Rename(sqlite3_vtab *pVtab, const char *zNew){
  Vec0Table *p = (Vec0Table*)pVtab;
  static const char *azSuffix[] = { "info", "vectors", "free", "rows" };
  int rc = SQLITE_OK;
  size_t i;
  vec0StmtsFinalize(p);
  for(i=0; i<sizeof(azSuffix)/sizeof(azSuffix[0]) && rc==SQLITE_OK; i++){
    char *zSql = sqlite3_mprintf("ALTER TABLE \"%w\".\"%w_%s\" RENAME TO \"%w_%s\"",
                                 p->zSchema, p->zName, azSuffix[i], zNew, azSuffix[i]);
    if( zSql==0 ) return SQLITE_NOMEM;
    rc = sqlite3_exec(p->db, zSql, 0, 0, 0);
    sqlite3_free(zSql);
  }
  if( rc==SQLITE_OK ){
    char *zName = sqlite3_mprintf("%s", zNew);
    if( zName==0 ) return SQLITE_NOMEM;
    sqlite3_free(p->zName);
    p->zName = zName;
  }
  return rc;
}

/* Shadow tables are the module's own: defensive mode keeps ordinary SQL off them. */
static int vec0ShadowName(const char *zSuffix){
  return sqlite3_stricmp(zSuffix, "info")==0 || sqlite3_stricmp(zSuffix, "vectors")==0
      || sqlite3_stricmp(zSuffix, "free")==0 || sqlite3_stricmp(zSuffix, "rows")==0;
}

static sqlite3_module vec0Module = {
  /* iVersion    */ 3,
  /* xCreate     */ vec0Create,
  /* xConnect    */ vec0Connect,
  /* xBestIndex  */ vec0BestIndex,
  /* xDisconnect */ vec0Disconnect,
  /* xDestroy    */ vec0Destroy,
  /* xOpen       */ vec0Open,
  /* xClose      */ vec0Close,
  /* xFilter     */ vec0Filter,
  /* xNext       */ vec0Next,
  /* xEof        */ vec0Eof,
  /* xColumn     */ vec0Column,
  /* xRowid      */ vec0Rowid,
  /* xUpdate     */ vec0Update,
  /* xBegin      */ vec0Begin,
  /* xSync       */ vec0Sync,
  /* xCommit     */ vec0Commit,
  /* xRollback   */ vec0Rollback,
  /* xFindMethod */ 0,
  /* xRename     */ vec0Rename,
  /* xSavepoint  */ vec0Savepoint,
  /* xRelease    */ vec0Release,
  /* xRollbackTo */ vec0RollbackTo,
  /* xShadowName */ vec0ShadowName,
#if SQLITE_VERSION_NUMBER>=3044000
  /* xIntegrity  */ 0,
#endif
};

int vsRegisterVec0Module(sqlite3 *db, Vec0Registry *pReg, char **pzErr){
  int rc = sqlite3_create_module_v2(db, "vec0", &vec0Module, pReg, 0);
  if( rc!=SQLITE_OK ){
    *pzErr = sqlite3_mprintf("vecsync: cannot register module vec0: %s", sqlite3_errmsg(db));
  }
  return rc;
}
