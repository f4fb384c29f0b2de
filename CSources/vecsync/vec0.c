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
** How it works: this file holds the module's methods. Each statement first makes the
** table's storage ready (vec0StorageReady, vec0_migrate.c: checked, or a migrated copy of
** a table sqlite-vec wrote). A query is planned in vec0_plan.c (KNN, point lookup or
** scan), its vectors searched in vec0_search.c over the in-memory copy kept by
** vec0_cache.c, and its rows read here from T_rows (vec0_store.c's statements). A write
** (xUpdate) is vec0_write.c's: it checks everything first (vector, key, conflicts), then
** writes the shadow tables and the copy. Hidden columns: distance (the metric's distance,
** ascending) and k, and nprobe on a table with an ivf index (vec0_ivf.c).
*/
#include "vecsync_int.h"
SQLITE_EXTENSION_INIT3

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* The most xFilter arguments a plan has: MATCH, k, LIMIT and a few filters a column. */
#define VEC0_MAX_PLAN_ARGS (3 + 8*(VEC0_MAX_COLUMNS+1))

typedef struct Vec0Cursor Vec0Cursor;
struct Vec0Cursor {
  sqlite3_vtab_cursor base;   /* Base class: must be first */
  int ePlan;                  /* VEC0_PLAN_* */
  int bEof;                   /* True past the last row */
  sqlite3_stmt *pScan;        /* Full scan and point lookup: rows of T_rows */
  int eScanStmt;              /* VEC0_STMT_* pScan was borrowed as */
  VsTopK top;                 /* KNN: hits, nearest first */
  int iHit;                   /* KNN: current hit */
  sqlite3_stmt *pRow;         /* KNN: the current hit's row of T_rows */
  int bRowLoaded;             /* KNN: pRow holds the current hit */
};

/* ---- create, connect, destroy --------------------------------------------------------- */

static void vec0Free(Vec0Table *p){
  if( p==0 ) return;
  vec0RegistryRemove(p);
  vec0StmtsFinalize(p);
  vec0CacheClear(p);
  vec0IvfDrop(p);
  vec0CopyClose(p);
  vec0ConfigClear(&p->cfg);
  sqlite3_free(p->base.zErrMsg);
  sqlite3_free(p->zSchema);
  sqlite3_free(p->zName);
  sqlite3_free(p);
}

/* "CREATE TABLE x(...)": the columns SQLite sees. */
static char *vec0Declaration(Vec0Table *p){
  sqlite3_str *pDecl = sqlite3_str_new(p->db);
  int i;
  sqlite3_str_appendall(pDecl, "CREATE TABLE x(");
  if( vec0ColumnOffset(p) ) sqlite3_str_appendall(pDecl, "rowid, ");
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
    if( i==p->cfg.iPk ){
      /* Declared as sqlite-vec declares it, so tools that read the schema (sqlite-utils'
      ** Table.pks, PRAGMA table_info's pk column) address rows by it. An integer key is
      ** declared INT, not INTEGER: "INTEGER PRIMARY KEY" would make it SQLite's alias of
      ** the rowid, which changes how SQLite hands it to xUpdate. */
      if( pCol->eType==VEC0_TYPE_INTEGER ) zType = " INT";
      sqlite3_str_appendf(pDecl, "\"%w\"%s PRIMARY KEY NOT NULL, ", pCol->zName, zType);
    }else{
      sqlite3_str_appendf(pDecl, "\"%w\"%s, ", pCol->zName, zType);
    }
  }
  sqlite3_str_appendall(pDecl, "distance HIDDEN REAL, k HIDDEN INTEGER");
  /* The ivf index's per-query knob, "and nprobe = 16": a table without the index keeps
  ** the columns it always had. */
  if( p->cfg.bIvf ) sqlite3_str_appendall(pDecl, ", nprobe HIDDEN INTEGER");
  sqlite3_str_appendall(pDecl, ")");
  return sqlite3_str_finish(pDecl);
}

static int vec0Init(sqlite3 *db, void *pAux, int argc, const char *const *argv,
                    sqlite3_vtab **ppVtab, char **pzErr, int bCreate){
  Vec0Table *p = 0;
  char *zDecl = 0;
  int rc;

  p = sqlite3_malloc(sizeof(*p));
  if( p==0 ) return SQLITE_NOMEM;
  memset(p, 0, sizeof(*p));
  p->db = db;
  p->zSchema = sqlite3_mprintf("%s", argv[1]);
  p->zName = sqlite3_mprintf("%s", argv[2]);
  if( p->zSchema==0 || p->zName==0 ){ rc = SQLITE_NOMEM; goto cleanup; }
  p->dbStore = db;
  p->zStoreSchema = p->zSchema;
  rc = vec0ParseConfig(argc, argv, &p->cfg, pzErr);
  if( rc==SQLITE_OK && bCreate ) rc = vec0BlockCheck(&p->cfg, p->zName, pzErr);
  if( rc!=SQLITE_OK ) goto cleanup;

  zDecl = vec0Declaration(p);
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
    if( rc==SQLITE_OK ) rc = vec0CacheAttach(p);
    if( rc!=SQLITE_OK ){
      *pzErr = sqlite3_mprintf("vec0: cannot create the storage of \"%s\": %s",
                               p->zName, sqlite3_errmsg(db));
      goto cleanup;
    }
  }
  /* Connecting reads nothing but the names of the shadow tables: a damaged storage is
  ** reported by the first statement that uses the table (vec0StorageReady), and DROP TABLE
  ** still works. A table sqlite-vec wrote is left as it is, read from a copy. */
  vec0RegistryAdd((Vec0Registry*)pAux, p);
  *ppVtab = &p->base;
  p = 0;

cleanup:
  sqlite3_free(zDecl);
  vec0Free(p);
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
  vec0Free((Vec0Table*)pVtab);
  return SQLITE_OK;
}

static int vec0Destroy(sqlite3_vtab *pVtab){
  Vec0Table *p = (Vec0Table*)pVtab;
  int rc;
  vec0StmtsFinalize(p);
  vec0CopyClose(p);
  rc = vec0ShadowDrop(p);
  if( rc!=SQLITE_OK ) return rc;
  vec0Free(p);
  return SQLITE_OK;
}

/* ---- cursors ---------------------------------------------------------------------------- */

static int vec0Open(sqlite3_vtab *pVtab, sqlite3_vtab_cursor **ppCur){
  int rc = vsCursorOpen(sizeof(Vec0Cursor), ppCur);
  if( rc==SQLITE_OK ){
    (*ppCur)->pVtab = pVtab;
    ((Vec0Cursor*)*ppCur)->bEof = 1;
  }
  return rc;
}

static void vec0CursorReset(Vec0Cursor *pCur){
  Vec0Table *p = (Vec0Table*)pCur->base.pVtab;
  vec0StmtGiveBack(p, pCur->eScanStmt, pCur->pScan);
  pCur->pScan = 0;
  vec0StmtGiveBack(p, VEC0_STMT_READ_BY_ROWID, pCur->pRow);
  pCur->pRow = 0;
  vsTopKFree(&pCur->top);
  pCur->iHit = 0;
  pCur->bEof = 1;
  pCur->bRowLoaded = 0;
}

static int vec0Close(sqlite3_vtab_cursor *cur){
  vec0CursorReset((Vec0Cursor*)cur);
  sqlite3_free(cur);
  return SQLITE_OK;
}

/* Read k from "k = ?" or LIMIT as sqlite-vec reads it: the value as an integer (2.5 is 2;
** NULL, and text or a blob that is no number, are 0), so k = 0 and what reads as 0 return
** no row; a negative k is refused. */
static int vec0ReadK(Vec0Table *p, sqlite3_value *pVal, const char *zWhat,
                     sqlite3_int64 *piK){
  sqlite3_int64 k = sqlite3_value_int64(pVal);
  if( k<0 ){
    vec0SetError(p, "vec0 \"%s\": %s must be a non-negative integer, got %lld", p->zName, zWhat, k);
    return SQLITE_ERROR;
  }
  *piK = k;
  return SQLITE_OK;
}

/* Run a KNN plan: the hits go to pCur->top; their rows are read as the cursor moves. */
static int vec0FilterKnn(Vec0Cursor *pCur, const Vec0PlanArg *aArg, int nArg,
                         sqlite3_value **argv, int bDistance){
  Vec0Table *p = (Vec0Table*)pCur->base.pVtab;
  sqlite3_int64 k = -1, kLimit = -1, nProbe = 0;
  unsigned char *aMask = 0;
  float *q = 0;
  char *zErr = 0;
  int rc = SQLITE_OK, i, bFilter = 0, bRange = 0;
  int iMatch = p->cfg.iVec;           /* the vector column MATCH is on */
  Vec0Range range;

  memset(&range, 0, sizeof(range));
  for(i=0; i<nArg && rc==SQLITE_OK; i++){
    switch( aArg[i].eArg ){
      case VEC0_ARG_MATCH:
        iMatch = vec0IsExtraVector(&p->cfg, aArg[i].iCol) ? aArg[i].iCol : p->cfg.iVec;
        rc = vec0ColumnVectorArg(p, iMatch, argv[i], "query", &q, &zErr);
        if( rc!=SQLITE_OK && zErr ){ vec0SetError(p, "%s", zErr); }
        break;
      case VEC0_ARG_K:      rc = vec0ReadK(p, argv[i], "k", &k); break;
      case VEC0_ARG_LIMIT:  rc = vec0ReadK(p, argv[i], "LIMIT", &kLimit); break;
      case VEC0_ARG_NPROBE:
        nProbe = vec0IvfProbeValue(argv[i]);
        if( nProbe==0 ){
          vec0SetError(p, "vec0 \"%s\": nprobe must be an integer from 1 to %d",
                       p->zName, VEC0_IVF_MAX_LISTS);
          rc = SQLITE_ERROR;
        }
        break;
      case VEC0_ARG_FILTER: bFilter = 1; break;
      case VEC0_ARG_DISTANCE: {
        int eType = sqlite3_value_numeric_type(argv[i]);
        double r = sqlite3_value_double(argv[i]);
        if( eType!=SQLITE_INTEGER && eType!=SQLITE_FLOAT ){
          /* NULL or text: the comparison is never true, as in SQL. */
          k = 0;
          break;
        }
        bRange = 1;
        /* Several bounds on one side: the tightest, and of two equal ones the open one
        ** ("distance >= 2 AND distance > 2" excludes 2). */
        if( aArg[i].eOp==VEC0_OP_GT || aArg[i].eOp==VEC0_OP_GE ){
          int bOpen = aArg[i].eOp==VEC0_OP_GT;
          if( !range.bLo || r>range.rLo ){
            range.bLo = 1; range.rLo = r; range.bLoOpen = bOpen;
          }else if( r==range.rLo && bOpen ){
            range.bLoOpen = 1;
          }
        }else{
          int bOpen = aArg[i].eOp==VEC0_OP_LT;
          if( !range.bHi || r<range.rHi ){
            range.bHi = 1; range.rHi = r; range.bHiOpen = bOpen;
          }else if( r==range.rHi && bOpen ){
            range.bHiOpen = 1;
          }
        }
        break;
      }
    }
  }
  if( rc==SQLITE_OK && q==0 ){
    vec0SetError(p, "vec0 \"%s\": the query plan has no MATCH vector", p->zName);
    rc = SQLITE_ERROR;
  }
  if( rc!=SQLITE_OK ) goto cleanup;
  if( k!=0 && (k<0 || (kLimit>=0 && kLimit<k)) ) k = kLimit;
  if( k==0 ){
    pCur->bEof = 1;                   /* k = 0 or LIMIT 0: no row, nothing scanned */
    goto cleanup;
  }
  if( k<0 || bFilter || iMatch!=p->cfg.iVec ){
    /* The copy, for what this needs of it; else vec0IvfSearch asks for it when it does. */
    rc = vec0CacheEnsure(p, vec0IvfCacheNeed(p));
    if( rc!=SQLITE_OK ) goto cleanup;
  }
  if( k<0 ) k = p->pView->nLive>0 ? p->pView->nLive : 1;
  if( bFilter ){
    rc = vec0FilterMask(p, aArg, nArg, argv, &aMask);
    if( rc!=SQLITE_OK ) goto cleanup;
  }
  if( iMatch!=p->cfg.iVec ){
    /* An extra vector column: an exact scan of its values in T_rows. */
    rc = vec0SearchColumn(p, iMatch, q, k, aMask, bRange ? &range : 0, &pCur->top);
  }else{
    rc = vec0IvfSearch(p, q, k, (int)nProbe, aMask, bRange ? &range : 0, &pCur->top);
    if( rc==SQLITE_OK && bDistance ) rc = vec0ReportDistances(p, q, &pCur->top);
  }
  if( rc!=SQLITE_OK ) goto cleanup;
  /* k took the nearest rows, those without a distance last; they are returned in the
  ** order of ORDER BY distance (which this plan consumes), NULL first. */
  vsTopKNullsFirst(&pCur->top);
  rc = vec0StmtBorrow(p, VEC0_STMT_READ_BY_ROWID, &pCur->pRow);
  if( rc!=SQLITE_OK ) goto cleanup;
  pCur->iHit = 0;
  pCur->bEof = pCur->top.n==0;

cleanup:
  sqlite3_free(zErr);
  sqlite3_free(q);
  sqlite3_free(aMask);
  return rc;
}

static int vec0Filter(sqlite3_vtab_cursor *cur, int idxNum, const char *idxStr,
                      int argc, sqlite3_value **argv){
  Vec0Cursor *pCur = (Vec0Cursor*)cur;
  Vec0Table *p = (Vec0Table*)cur->pVtab;
  Vec0PlanArg aArg[VEC0_MAX_PLAN_ARGS];
  int nArg = 0;
  int rc;
  int bDistance = (idxNum & VEC0_PLAN_NO_DISTANCE)==0;

  vec0CursorReset(pCur);
  idxNum &= ~VEC0_PLAN_NO_DISTANCE;
  pCur->ePlan = idxNum;
  rc = vec0StorageReady(p);
  if( rc!=SQLITE_OK ) goto cleanup;
  if( vec0PlanDecode(idxStr, aArg, VEC0_MAX_PLAN_ARGS, &nArg)!=SQLITE_OK || nArg!=argc ){
    vec0SetError(p, "vec0 \"%s\": unknown query plan \"%s\"", p->zName, idxStr ? idxStr : "");
    rc = SQLITE_ERROR;
    goto cleanup;
  }

  if( idxNum==VEC0_PLAN_KNN ){
    rc = vec0FilterKnn(pCur, aArg, nArg, argv, bDistance);
  }else{
    pCur->eScanStmt = VEC0_STMT_READ_ALL;
    if( idxNum==VEC0_PLAN_POINT ){
      int bById = nArg==1 && aArg[0].iCol==p->cfg.iPk && vec0HasTextPk(p);
      if( nArg!=1 ){
        vec0SetError(p, "vec0 \"%s\": unknown query plan \"%s\"", p->zName, idxStr);
        rc = SQLITE_ERROR;
        goto cleanup;
      }
      pCur->eScanStmt = bById ? VEC0_STMT_READ_BY_ID : VEC0_STMT_READ_BY_ROWID;
    }
    rc = vec0StmtBorrow(p, pCur->eScanStmt, &pCur->pScan);
    if( rc!=SQLITE_OK ) goto cleanup;
    if( idxNum==VEC0_PLAN_POINT ) sqlite3_bind_value(pCur->pScan, 1, argv[0]);
    pCur->bEof = sqlite3_step(pCur->pScan)!=SQLITE_ROW;
    if( pCur->bEof ) rc = sqlite3_reset(pCur->pScan);
  }

cleanup:
  if( rc!=SQLITE_OK ){
    if( p->base.zErrMsg==0 ){
      vec0SetError(p, "vec0 \"%s\": %s", p->zName, sqlite3_errmsg(p->dbStore));
    }
    vec0CursorReset(pCur);
  }
  return rc;
}

static int vec0Next(sqlite3_vtab_cursor *cur){
  Vec0Cursor *pCur = (Vec0Cursor*)cur;
  int rc = SQLITE_OK;
  if( pCur->ePlan==VEC0_PLAN_KNN ){
    pCur->iHit++;
    pCur->bRowLoaded = 0;
    pCur->bEof = pCur->iHit>=pCur->top.n;
  }else if( sqlite3_step(pCur->pScan)!=SQLITE_ROW ){
    pCur->bEof = 1;
    rc = sqlite3_reset(pCur->pScan);
  }
  return rc;
}

static int vec0Eof(sqlite3_vtab_cursor *cur){
  return ((Vec0Cursor*)cur)->bEof;
}

/* The T_rows row of the cursor's current row. */
static int vec0CursorRow(Vec0Cursor *pCur, sqlite3_stmt **ppRow){
  Vec0Table *p = (Vec0Table*)pCur->base.pVtab;
  int rc = SQLITE_OK;
  if( pCur->ePlan!=VEC0_PLAN_KNN ){
    *ppRow = pCur->pScan;
    return SQLITE_OK;
  }
  if( !pCur->bRowLoaded ){
    sqlite3_int64 iRowid = pCur->top.a[pCur->iHit].iRowid;
    sqlite3_int64 iSlot = pCur->top.a[pCur->iHit].iSlot;
    sqlite3_reset(pCur->pRow);
    sqlite3_bind_int64(pCur->pRow, 1, iRowid);
    if( sqlite3_step(pCur->pRow)!=SQLITE_ROW ){
      rc = sqlite3_reset(pCur->pRow);
      if( rc==SQLITE_OK ){
        vec0SetError(p, "vec0 \"%s\": storage is damaged: row %lld is gone from %s_rows",
                     p->zName, iRowid, p->zName);
        rc = SQLITE_CORRUPT_VTAB;
      }
      return rc;
    }
    if( sqlite3_column_int64(pCur->pRow, VEC0_ROW_SLOT)!=iSlot ){
      /* The hit's rowid came from elsewhere than T_rows (an ivf list's T_ivf_assign). */
      sqlite3_reset(pCur->pRow);
      vec0SetError(p, "vec0 \"%s\": storage is damaged: row %lld is not in slot %lld",
                   p->zName, iRowid, iSlot);
      return SQLITE_CORRUPT_VTAB;
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
    *pRowid = sqlite3_column_int64(pCur->pScan, VEC0_ROW_ROWID);
  }
  return SQLITE_OK;
}

static int vec0Column(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int i){
  Vec0Cursor *pCur = (Vec0Cursor*)cur;
  Vec0Table *p = (Vec0Table*)cur->pVtab;
  sqlite3_stmt *pRow = 0;
  float *a = 0;
  int rc = SQLITE_OK;

  i = vec0UserColumn(p, i);
  if( i==p->cfg.nCol ){                       /* distance */
    if( pCur->ePlan==VEC0_PLAN_KNN ) sqlite3_result_double(ctx, pCur->top.a[pCur->iHit].rDist);
    goto cleanup;
  }
  if( i==p->cfg.nCol+1 || i==p->cfg.nCol+2 ) goto cleanup;    /* k, nprobe */
  if( i==VEC0_COL_ROWID || (i==p->cfg.iPk && !vec0HasTextPk(p)) ){
    sqlite3_int64 iRowid;
    vec0Rowid(cur, &iRowid);
    sqlite3_result_int64(ctx, iRowid);
    goto cleanup;
  }
  if( (i==p->cfg.iVec || vec0IsExtraVector(&p->cfg, i)) && sqlite3_vtab_nochange(ctx) ){
    goto cleanup;                             /* an UPDATE that keeps it */
  }
  rc = vec0CursorRow(pCur, &pRow);
  if( rc!=SQLITE_OK ) goto cleanup;
  if( i==p->cfg.iPk ){
    sqlite3_result_value(ctx, sqlite3_column_value(pRow, VEC0_ROW_ID));
  }else if( i==p->cfg.iVec ){
    a = sqlite3_malloc64(sizeof(float)*(size_t)p->cfg.nWord);
    if( a==0 ){ rc = SQLITE_NOMEM; goto cleanup; }
    rc = vec0ReadVector(p, sqlite3_column_int64(pRow, VEC0_ROW_SLOT), a);
    if( rc==SQLITE_OK && p->cfg.eElem==VS_F32 ){
      vsResultF32(ctx, a, p->cfg.nDim);
    }else if( rc==SQLITE_OK ){
      /* The stored bytes, with the subtype vec_int8() or vec_bit() gives them (as
      ** sqlite-vec returns them), so vec_* functions read them as int8 or bit. */
      sqlite3_result_blob(ctx, a, p->cfg.nVecByte, SQLITE_TRANSIENT);
      sqlite3_result_subtype(ctx, p->cfg.eElem==VS_I8 ? VS_SUBTYPE_I8 : VS_SUBTYPE_BIT);
    }
  }else if( vec0IsExtraVector(&p->cfg, i) ){
    sqlite3_value *pVal = sqlite3_column_value(pRow, VEC0_ROW_USER+i);
    const Vec0Column *pCol = &p->cfg.aCol[i];
    rc = vec0ExtraCheck(p, i, sqlite3_column_int64(pRow, VEC0_ROW_ROWID), pVal);
    if( rc==SQLITE_OK ){
      sqlite3_result_blob(ctx, sqlite3_value_blob(pVal), pCol->nVecByte, SQLITE_TRANSIENT);
      if( pCol->eElem!=VS_F32 ){
        sqlite3_result_subtype(ctx, pCol->eElem==VS_I8 ? VS_SUBTYPE_I8 : VS_SUBTYPE_BIT);
      }
    }
  }else if( i>=0 && i<p->cfg.nCol ){
    sqlite3_result_value(ctx, sqlite3_column_value(pRow, VEC0_ROW_USER+i));
  }

cleanup:
  sqlite3_free(a);
  if( rc!=SQLITE_OK && rc!=SQLITE_NOMEM ){
    if( p->base.zErrMsg==0 ){
      vec0SetError(p, "vec0 \"%s\": %s", p->zName, sqlite3_errmsg(p->dbStore));
    }
    sqlite3_result_error(ctx, p->base.zErrMsg, -1);
    sqlite3_result_error_code(ctx, rc);
  }
  return rc;
}

static int vec0Update(sqlite3_vtab *pVtab, int argc, sqlite3_value **argv,
                      sqlite3_int64 *pRowid){
  Vec0Table *p = (Vec0Table*)pVtab;
  int rc;

  sqlite3_free(pVtab->zErrMsg);
  pVtab->zErrMsg = 0;
  rc = vec0StorageReady(p);
  if( rc==SQLITE_OK && p->dbCopy ){
    /* sqlite-vec's table, read from a copy: the file is written once it is migrated. */
    vec0SetError(p, "vec0 \"%s\" is in sqlite-vec's format, which this extension reads but "
                    "does not write; migrate it once with select "
                    "vecsync_migrate_sqlite_vec('%s') (select vecsync_export_sqlite_vec('%s') "
                    "writes it back for sqlite-vec)", p->zName, p->zName, p->zName);
    rc = SQLITE_READONLY;
  }
  /* The generation is bumped (and the copy made this transaction's own) before any
  ** write, so every write lands in the private copy and the change log. */
  if( rc==SQLITE_OK ) rc = vec0WriteBegin(p);
  if( rc==SQLITE_OK ){
    rc = argc==1 ? vec0UpdateDelete(p, argv[0]) : vec0UpdateWrite(p, argc, argv, pRowid);
  }
  rc = vec0StorageExplain(p, rc);
  if( rc!=SQLITE_OK ){
    /* The statement is rolled back, perhaps with the generation bump: the copy may hold
    ** part of it, and the next write bumps again. */
    vec0CacheDrop(p);
    vec0IvfDrop(p);
    vec0WriteRetry(p);
    if( pVtab->zErrMsg==0 && rc!=SQLITE_CONSTRAINT ){
      vec0SetError(p, "vec0 \"%s\": %s", p->zName, sqlite3_errmsg(p->dbStore));
    }
  }
  return rc;
}

/* ---- transactions ---------------------------------------------------------------------- */

/* A transaction starts or rolls back: a private copy holds writes that are not (or no
** longer) in the shadow tables, so it goes; and the transaction has written nothing yet,
** so its first write bumps 'generation' (once a write transaction). */
static int vec0TransactionFresh(sqlite3_vtab *pVtab){
  Vec0Table *p = (Vec0Table*)pVtab;
  if( p->bViewPrivate ) vec0CacheDrop(p);
  if( p->bWriteTx ) vec0IvfDrop(p);   /* its lists may hold writes now undone */
  vec0WriteEnd(p);
  return SQLITE_OK;
}
static int vec0Sync(sqlite3_vtab *pVtab){ (void)pVtab; return SQLITE_OK; }

/* Committed: the transaction's copy becomes the shared snapshot of its generation. */
static int vec0Commit(sqlite3_vtab *pVtab){
  Vec0Table *p = (Vec0Table*)pVtab;
  vec0CacheCommit(p);
  vec0WriteEnd(p);
  return SQLITE_OK;
}

static int vec0Savepoint(sqlite3_vtab *pVtab, int i){ (void)pVtab; (void)i; return SQLITE_OK; }
static int vec0Release(sqlite3_vtab *pVtab, int i){ (void)pVtab; (void)i; return SQLITE_OK; }
static int vec0RollbackTo(sqlite3_vtab *pVtab, int i){
  Vec0Table *p = (Vec0Table*)pVtab;
  (void)i;
  if( p->bViewPrivate ) vec0CacheDrop(p);
  vec0IvfDrop(p);
  vec0WriteRetry(p);                  /* the bump may have been undone: bump again */
  return SQLITE_OK;
}

static int vec0Rename(sqlite3_vtab *pVtab, const char *zNew){
  Vec0Table *p = (Vec0Table*)pVtab;
  static const char *azSuffix[] = { "info", "vectors", "free", "rows", "changes", "codes",
                                     "ivf_centroids", "ivf_assign", "ivf_packs" };
  char *zName = sqlite3_mprintf("%s", zNew);
  int rc = zName ? SQLITE_OK : SQLITE_NOMEM;
  int bPacks = 0;
  size_t i;
  if( vec0StorageReady(p)!=SQLITE_OK ){
    /* Rename what is there: the check's only use here is learning about T_changes. */
    sqlite3_free(vec0TakeError(p));
  }
  if( rc==SQLITE_OK && p->dbCopy ){
    /* sqlite-vec's tables keep their names: migrate first. */
    vec0SetError(p, "vec0 \"%s\" was written by sqlite-vec and is not migrated yet; "
                    "migrate it with select vecsync_migrate_sqlite_vec('%s') to rename it",
                 p->zName, p->zName);
    rc = SQLITE_ERROR;
  }
  if( rc==SQLITE_OK && p->cfg.bIvf ){
    /* A table made before T_ivf_packs has it from its next retrain. */
    rc = vec0ShadowExists(p, "ivf_packs", &bPacks);
  }
  vec0CacheClear(p);
  vec0StmtsFinalize(p);
  for(i=0; i<sizeof(azSuffix)/sizeof(azSuffix[0]) && rc==SQLITE_OK; i++){
    char *zSql;
    int bExists = 1;
    if( i==4 ) bExists = p->bChangeLog;   /* tables made before T_changes have none */
    if( i==5 ) bExists = p->bCodes;       /* only quantized tables have codes */
    if( i>=6 ) bExists = p->cfg.bIvf;     /* only an ivf index has these */
    if( i==8 ) bExists = bPacks;
    if( !bExists ) continue;
    zSql = sqlite3_mprintf("ALTER TABLE \"%w\".\"%w_%s\" RENAME TO \"%w_%s\"",
                                 p->zSchema, p->zName, azSuffix[i], zNew, azSuffix[i]);
    if( zSql==0 ){ rc = SQLITE_NOMEM; break; }
    rc = sqlite3_exec(p->db, zSql, 0, 0, 0);
    sqlite3_free(zSql);
  }
  if( rc==SQLITE_OK ){
    sqlite3_free(p->zName);
    p->zName = zName;
    zName = 0;
  }
  sqlite3_free(zName);
  return rc;
}

/* Shadow tables are the module's own: defensive mode keeps ordinary SQL off them. */
static int vec0ShadowName(const char *zSuffix){
  return sqlite3_stricmp(zSuffix, "info")==0 || sqlite3_stricmp(zSuffix, "vectors")==0
      || sqlite3_stricmp(zSuffix, "free")==0 || sqlite3_stricmp(zSuffix, "rows")==0
      || sqlite3_stricmp(zSuffix, "changes")==0 || sqlite3_stricmp(zSuffix, "codes")==0
      || sqlite3_stricmp(zSuffix, "ivf_centroids")==0
      || sqlite3_stricmp(zSuffix, "ivf_assign")==0
      || sqlite3_stricmp(zSuffix, "ivf_packs")==0;
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
  /* xBegin      */ vec0TransactionFresh,
  /* xSync       */ vec0Sync,
  /* xCommit     */ vec0Commit,
  /* xRollback   */ vec0TransactionFresh,
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
  int rc;
  pReg->nRef++;
  rc = sqlite3_create_module_v2(db, "vec0", &vec0Module, pReg, pReg->xRelease);
  if( rc!=SQLITE_OK ){
    *pzErr = sqlite3_mprintf("vecsync: cannot register module vec0: %s", sqlite3_errmsg(db));
  }
  return rc;
}
