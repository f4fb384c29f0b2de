/*
** vector_index.c: libSQL's vector index on stock SQLite: libsql_vector_idx() and
** vector_top_k().
**
** Usage (libSQL's SQL, unchanged):
**
**   create table messages(id text primary key, content text, embedding F32_BLOB(4));
**   create index messages_embedding_idx on messages(libsql_vector_idx(embedding));
**   insert into messages values ('m1', 'hello', vector32('[1,0,0,0]'));
**   select m.id, v.distance
**     from vector_top_k('messages_embedding_idx', vector32('[1,0,0,0]'), 5) as v
**     join messages m on m.rowid = v.id;
**   select vecsync_rebuild('messages_embedding_idx');      -- drop nothing, rebuild all
**
** libsql_vector_idx(col, 'metric=cosine' | 'metric=l2', ...) accepts libSQL's options;
** its ANN tuning options (type, max_neighbors, alpha, search_l, insert_l,
** compress_neighbors) are accepted and ignored, because the search here is exact.
**
** How it works. The CREATE INDEX is an ordinary expression index: it names the table,
** the column and the options, and SQLite keeps it (it stores no vectors: the function
** returns NULL). The search data is a vec0 table "vecsync_idx_<index>" holding each
** row's embedding under the row's rowid, kept current by triggers on the table (AFTER
** INSERT, UPDATE and DELETE; BEFORE INSERT and UPDATE note in "vecsync_idx_<index>_pending"
** the rows an OR REPLACE may remove, and the AFTER triggers drop those that are gone). It
** is derived data, built from the table's rows the first
** time the index is searched (or by vecsync_rebuild), and can be rebuilt at any time
** with nothing lost. The triggers write into a vec0 table, so a client without the
** extension cannot change the table behind the index's back: its writes fail with
** "no such module: vec0" (or "no such function: libsql_vector_idx" before the first
** search), never silently.
**
** vector_top_k(index, query, k) returns the k nearest rows' rowids (column id, and the
** rowid of each result row), nearest first, ties by ascending rowid, and a hidden column
** distance. It reuses vec0's block
** scan.
*/
#include "vecsync_int.h"
SQLITE_EXTENSION_INIT3

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* The version of the triggers that keep an index's search data current; an index built
** with another version is rebuilt at its next search. 2: REPLACE handled with T_pending. */
#define VS_INDEX_TRIGGERS 2

/* What the CREATE INDEX statement of a vector index says. */
typedef struct VsIndexDef VsIndexDef;
struct VsIndexDef {
  char *zIndex;         /* Index name */
  char *zTable;         /* Indexed table */
  char *zColumn;        /* Indexed column */
  int nDim;             /* From the column's F32_BLOB(n) type */
  int eMetric;          /* VS_METRIC_COSINE (libSQL's default) or VS_METRIC_L2 */
};

static void vsIndexDefClear(VsIndexDef *p){
  if( p==0 ) return;
  sqlite3_free(p->zIndex);
  sqlite3_free(p->zTable);
  sqlite3_free(p->zColumn);
  memset(p, 0, sizeof(*p));
}

/* Check one 'key=value' option of libsql_vector_idx(); set *peMetric for metric=. */
static int vsIndexOption(const char *zOpt, int *peMetric, char **pzErr){
  static const char *azIgnored[] = {
    "type", "max_neighbors", "alpha", "search_l", "insert_l", "compress_neighbors",
  };
  const char *zEq = strchr(zOpt, '=');
  size_t nKey, i;
  const char *zVal;
  if( zEq==0 ){
    *pzErr = sqlite3_mprintf("libsql_vector_idx: option '%s' is not key=value", zOpt);
    return SQLITE_ERROR;
  }
  nKey = (size_t)(zEq - zOpt);
  zVal = zEq+1;
  if( nKey==6 && sqlite3_strnicmp(zOpt, "metric", 6)==0 ){
    if( sqlite3_stricmp(zVal, "cosine")==0 || sqlite3_stricmp(zVal, "cos")==0 ){
      *peMetric = VS_METRIC_COSINE;
    }else if( sqlite3_stricmp(zVal, "l2")==0 ){
      *peMetric = VS_METRIC_L2;
    }else{
      *pzErr = sqlite3_mprintf("libsql_vector_idx: unknown metric '%s'; use cosine or l2", zVal);
      return SQLITE_ERROR;
    }
    return SQLITE_OK;
  }
  for(i=0; i<sizeof(azIgnored)/sizeof(azIgnored[0]); i++){
    if( strlen(azIgnored[i])==nKey && sqlite3_strnicmp(zOpt, azIgnored[i], (int)nKey)==0 ){
      return SQLITE_OK;
    }
  }
  *pzErr = sqlite3_mprintf("libsql_vector_idx: unknown option '%.*s'", (int)nKey, zOpt);
  return SQLITE_ERROR;
}

static int vsIndexLookup(sqlite3 *db, const char *zIndex, VsIndexDef *pDef, char **pzErr);
static void vsIndexDefClear(VsIndexDef *p);

/* The dimensions of the vector-indexed columns of a connection, read again whenever the
** schema changes. libsql_vector_idx() is not told which column it indexes, so a vector
** is refused when its dimension matches none of them. */
typedef struct VsIndexDims VsIndexDims;
struct VsIndexDims {
  int iSchemaVersion;   /* PRAGMA schema_version the list was read at, -1: never */
  int nDims;            /* Entries in aDims */
  int aDims[32];        /* Distinct dimensions of vector-indexed columns */
};

static int vsIndexDimsRefresh(sqlite3 *db, VsIndexDims *p){
  sqlite3_stmt *pStmt = 0;
  int rc, iVersion = -1;
  rc = sqlite3_prepare_v2(db, "PRAGMA main.schema_version", -1, &pStmt, 0);
  if( rc!=SQLITE_OK ) return rc;
  if( sqlite3_step(pStmt)==SQLITE_ROW ) iVersion = sqlite3_column_int(pStmt, 0);
  rc = sqlite3_finalize(pStmt);
  if( rc!=SQLITE_OK || iVersion==p->iSchemaVersion ) return rc;
  p->nDims = 0;
  rc = sqlite3_prepare_v2(db,
      "SELECT name FROM main.sqlite_schema WHERE type='index' "
      "AND sql LIKE '%libsql_vector_idx%'", -1, &pStmt, 0);
  while( rc==SQLITE_OK && sqlite3_step(pStmt)==SQLITE_ROW ){
    VsIndexDef def;
    char *zErr = 0;
    if( vsIndexLookup(db, (const char*)sqlite3_column_text(pStmt, 0), &def, &zErr)==SQLITE_OK ){
      int i;
      for(i=0; i<p->nDims && p->aDims[i]!=def.nDim; i++){}
      if( i==p->nDims && p->nDims<(int)(sizeof(p->aDims)/sizeof(p->aDims[0])) ){
        p->aDims[p->nDims++] = def.nDim;
      }
      vsIndexDefClear(&def);
    }
    sqlite3_free(zErr);
  }
  if( rc==SQLITE_OK ) rc = sqlite3_finalize(pStmt); else sqlite3_finalize(pStmt);
  if( rc==SQLITE_OK ) p->iSchemaVersion = iVersion;
  return rc;
}

/* libsql_vector_idx(col, options...): checks the options, and that the vector is one of
** the dimension a vector-indexed column declares; indexes nothing itself (returns
** NULL), so SQLite's index stays small. */
static void vsVectorIdxFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  int i, eMetric = VS_METRIC_COSINE;
  char *zErr = 0;
  for(i=1; i<argc; i++){
    const char *zOpt = (const char*)sqlite3_value_text(argv[i]);
    if( zOpt==0 || vsIndexOption(zOpt, &eMetric, &zErr)!=SQLITE_OK ){
      sqlite3_result_error(ctx, zErr ? zErr : "libsql_vector_idx: options must be text", -1);
      sqlite3_free(zErr);
      return;
    }
  }
  if( argc>0 && sqlite3_value_type(argv[0])!=SQLITE_NULL ){
    VsVector v;
    VsIndexDims *pDims = (VsIndexDims*)sqlite3_user_data(ctx);
    int i, rc;
    if( vsVectorFromValue(argv[0], 0, &v, &zErr)!=SQLITE_OK ){
      char *zMsg = sqlite3_mprintf("libsql_vector_idx: %s", zErr);
      sqlite3_result_error(ctx, zMsg ? zMsg : "libsql_vector_idx: bad vector", -1);
      sqlite3_free(zMsg);
      sqlite3_free(zErr);
      return;
    }
    rc = vsIndexDimsRefresh(sqlite3_context_db_handle(ctx), pDims);
    if( rc!=SQLITE_OK ){
      vsVectorFree(&v);
      sqlite3_result_error_code(ctx, rc);
      return;
    }
    for(i=0; i<pDims->nDims && pDims->aDims[i]!=v.nDim; i++){}
    if( pDims->nDims>0 && i==pDims->nDims ){
      char *zMsg = sqlite3_mprintf(
          "libsql_vector_idx: the vector has %d dimensions, the indexed column has %d%s",
          v.nDim, pDims->aDims[0], pDims->nDims>1 ? " (or another vector index's size)" : "");
      sqlite3_result_error(ctx, zMsg ? zMsg : "libsql_vector_idx: wrong dimension", -1);
      sqlite3_free(zMsg);
      vsVectorFree(&v);
      return;
    }
    vsVectorFree(&v);
  }
  sqlite3_result_null(ctx);
}

/* Read an SQL string literal or identifier at z[*pi]; returns a copy, unquoted. */
static char *vsReadToken(const char *z, int *pi){
  int i = *pi;
  while( z[i] && isspace((unsigned char)z[i]) ) i++;
  if( z[i]=='\'' || z[i]=='"' || z[i]=='`' || z[i]=='[' ){
    char cClose = z[i]=='[' ? ']' : z[i];
    sqlite3_str *pStr = sqlite3_str_new(0);
    i++;
    while( z[i] ){
      if( z[i]==cClose ){
        if( cClose!=']' && z[i+1]==cClose ){ sqlite3_str_appendchar(pStr, 1, cClose); i += 2; continue; }
        i++;
        break;
      }
      sqlite3_str_appendchar(pStr, 1, z[i++]);
    }
    *pi = i;
    {
      char *zOut = sqlite3_str_finish(pStr);
      return zOut ? zOut : sqlite3_mprintf("");
    }
  }else{
    int j = i;
    while( z[j] && (isalnum((unsigned char)z[j]) || z[j]=='_' || (unsigned char)z[j]>=0x80) ) j++;
    if( j==i ) return 0;
    *pi = j;
    return sqlite3_mprintf("%.*s", j-i, &z[i]);
  }
}

/* Dimensions from a declared type such as F32_BLOB(1536) or FLOAT32(1536); 0 if none. */
static int vsTypeDims(const char *zType, int *pbF64){
  const char *zParen;
  *pbF64 = 0;
  if( zType==0 ) return 0;
  zParen = strchr(zType, '(');
  if( zParen==0 ) return 0;
  if( sqlite3_strnicmp(zType, "F64_BLOB", 8)==0 || sqlite3_strnicmp(zType, "FLOAT64", 7)==0 ){
    *pbF64 = 1;
    return 0;
  }
  if( sqlite3_strnicmp(zType, "F32_BLOB", 8)!=0 && sqlite3_strnicmp(zType, "FLOAT32", 7)!=0 ){
    return 0;
  }
  return atoi(zParen+1);
}

/* Look up index zIndex and read its definition. */
static int vsIndexLookup(sqlite3 *db, const char *zIndex, VsIndexDef *pDef, char **pzErr){
  sqlite3_stmt *pStmt = 0;
  char *zSql = 0, *zCol = 0;
  int rc, i;
  const char *z;

  memset(pDef, 0, sizeof(*pDef));
  rc = sqlite3_prepare_v2(db,
      "SELECT tbl_name, sql FROM main.sqlite_schema WHERE type='index' AND name=?1",
      -1, &pStmt, 0);
  if( rc!=SQLITE_OK ) goto cleanup;
  sqlite3_bind_text(pStmt, 1, zIndex, -1, SQLITE_TRANSIENT);
  if( sqlite3_step(pStmt)!=SQLITE_ROW ){
    *pzErr = sqlite3_mprintf("no such index: %s", zIndex);
    rc = SQLITE_ERROR;
    goto cleanup;
  }
  pDef->zIndex = sqlite3_mprintf("%s", zIndex);
  pDef->zTable = sqlite3_mprintf("%s", (const char*)sqlite3_column_text(pStmt, 0));
  z = (const char*)sqlite3_column_text(pStmt, 1);
  {
    /* Find libsql_vector_idx( in the CREATE INDEX text (case-insensitive). */
    const char *zKey = "libsql_vector_idx";
    const char *zAt = 0;
    size_t n = strlen(zKey);
    for(i=0; z && z[i]; i++){
      if( sqlite3_strnicmp(&z[i], zKey, (int)n)==0 ){ zAt = &z[i]; break; }
    }
    if( zAt==0 ){
      *pzErr = sqlite3_mprintf("%s is not a vector index: create it as "
                               "CREATE INDEX ... ON t(libsql_vector_idx(column))", zIndex);
      rc = SQLITE_ERROR;
      goto cleanup;
    }
    z = zAt + n;
  }
  i = 0;
  while( z[i] && isspace((unsigned char)z[i]) ) i++;
  if( z[i]=='(' ) i++;
  pDef->zColumn = vsReadToken(z, &i);
  pDef->eMetric = VS_METRIC_COSINE;
  for(;;){
    char *zOpt;
    while( z[i] && isspace((unsigned char)z[i]) ) i++;
    if( z[i]!=',' ) break;
    i++;
    zOpt = vsReadToken(z, &i);
    if( zOpt==0 ) break;
    rc = vsIndexOption(zOpt, &pDef->eMetric, pzErr);
    sqlite3_free(zOpt);
    if( rc!=SQLITE_OK ) goto cleanup;
  }
  if( pDef->zColumn==0 || pDef->zTable==0 ){
    *pzErr = sqlite3_mprintf("cannot read the definition of index %s", zIndex);
    rc = SQLITE_ERROR;
    goto cleanup;
  }
  sqlite3_finalize(pStmt);
  pStmt = 0;

  /* Dimensions from the column's declared type. */
  zSql = sqlite3_mprintf("SELECT type FROM pragma_table_info(%Q) WHERE name=%Q",
                         pDef->zTable, pDef->zColumn);
  if( zSql==0 ){ rc = SQLITE_NOMEM; goto cleanup; }
  rc = sqlite3_prepare_v2(db, zSql, -1, &pStmt, 0);
  if( rc!=SQLITE_OK ) goto cleanup;
  if( sqlite3_step(pStmt)==SQLITE_ROW ){
    int bF64 = 0;
    const char *zType = (const char*)sqlite3_column_text(pStmt, 0);
    pDef->nDim = vsTypeDims(zType, &bF64);
    if( pDef->nDim<=0 || pDef->nDim>VS_MAX_DIMS ){
      *pzErr = sqlite3_mprintf(
          "vector index %s: column %s.%s is declared %s; declare it F32_BLOB(n)%s",
          zIndex, pDef->zTable, pDef->zColumn, zType ? zType : "without a type",
          bF64 ? " (F64 vectors cannot be indexed)" : "");
      rc = SQLITE_ERROR;
    }
  }else{
    *pzErr = sqlite3_mprintf("vector index %s: no column %s in table %s",
                             zIndex, pDef->zColumn, pDef->zTable);
    rc = SQLITE_ERROR;
  }

cleanup:
  sqlite3_finalize(pStmt);
  sqlite3_free(zSql);
  sqlite3_free(zCol);
  if( rc!=SQLITE_OK ) vsIndexDefClear(pDef);
  return rc;
}

/* The WHERE clause matching rows that conflict with NEW on a UNIQUE index: rows an
** INSERT OR REPLACE would delete without firing DELETE triggers. "0" when none. */
static int vsUniqueConflicts(sqlite3 *db, const VsIndexDef *pDef, char **pzWhere){
  sqlite3_str *pStr = sqlite3_str_new(db);
  sqlite3_stmt *pList = 0;
  char *zSql = sqlite3_mprintf(
      "SELECT name FROM pragma_index_list(%Q) WHERE \"unique\" AND partial=0",
      pDef->zTable);
  int rc;
  if( zSql==0 ) return SQLITE_NOMEM;
  rc = sqlite3_prepare_v2(db, zSql, -1, &pList, 0);
  sqlite3_free(zSql);
  sqlite3_str_appendall(pStr, "rowid=new.rowid");
  while( rc==SQLITE_OK && sqlite3_step(pList)==SQLITE_ROW ){
    const char *zIdx = (const char*)sqlite3_column_text(pList, 0);
    sqlite3_stmt *pCols = 0;
    int nCol = 0, bExpr = 0;
    sqlite3_str *pTerm = sqlite3_str_new(db);
    zSql = sqlite3_mprintf("SELECT name FROM pragma_index_info(%Q)", zIdx);
    if( zSql==0 ){ rc = SQLITE_NOMEM; break; }
    rc = sqlite3_prepare_v2(db, zSql, -1, &pCols, 0);
    sqlite3_free(zSql);
    while( rc==SQLITE_OK && sqlite3_step(pCols)==SQLITE_ROW ){
      const char *zCol = (const char*)sqlite3_column_text(pCols, 0);
      if( zCol==0 ){ bExpr = 1; continue; }
      sqlite3_str_appendf(pTerm, "%s\"%w\"=new.\"%w\"", nCol ? " AND " : "", zCol, zCol);
      nCol++;
    }
    sqlite3_finalize(pCols);
    {
      char *zTerm = sqlite3_str_finish(pTerm);
      if( !bExpr && nCol>0 && zTerm ){
        sqlite3_str_appendf(pStr, " OR (%s)", zTerm);
      }
      sqlite3_free(zTerm);
    }
  }
  sqlite3_finalize(pList);
  *pzWhere = sqlite3_str_finish(pStr);
  if( *pzWhere==0 ) return SQLITE_NOMEM;
  return rc;
}

/* Create the vec0 store and its triggers if missing, and fill it from the table. With
** bRebuild, empty and refill an existing store. *pnRow: rows indexed. */
static int vsIndexBuild(sqlite3 *db, const VsIndexDef *pDef, int bRebuild,
                        sqlite3_int64 *pnRow, char **pzErr){
  sqlite3_stmt *pStmt = 0;
  char *zSql = 0, *zConflict = 0;
  int rc, bStore = 0, nTrigger = 0;

  zSql = sqlite3_mprintf(
      "SELECT (SELECT count(*) FROM main.sqlite_schema WHERE type='table' AND name='vecsync_idx_%q'),"
      " (SELECT count(*) FROM main.sqlite_schema WHERE type='trigger' AND tbl_name=%Q"
      "   AND name GLOB 'vecsync_idx_%q_*')",
      pDef->zIndex, pDef->zTable, pDef->zIndex);
  if( zSql==0 ) return SQLITE_NOMEM;
  rc = sqlite3_prepare_v2(db, zSql, -1, &pStmt, 0);
  sqlite3_free(zSql);
  zSql = 0;
  if( rc!=SQLITE_OK ) return rc;
  if( sqlite3_step(pStmt)==SQLITE_ROW ){
    bStore = sqlite3_column_int(pStmt, 0);
    nTrigger = sqlite3_column_int(pStmt, 1);
  }
  sqlite3_finalize(pStmt);
  if( bStore && nTrigger==5 && !bRebuild ){
    /* Complete only once its backfill finished with this version's triggers: a build
    ** that failed half way (a row of the wrong dimension, say), or one made with the
    ** earlier triggers, is redone from scratch at the next search. */
    sqlite3_int64 iDone = 0;
    zSql = sqlite3_mprintf(
        "SELECT value FROM main.\"vecsync_idx_%w_info\" WHERE key='backfilled'", pDef->zIndex);
    if( zSql==0 ) return SQLITE_NOMEM;
    rc = sqlite3_prepare_v2(db, zSql, -1, &pStmt, 0);
    sqlite3_free(zSql);
    zSql = 0;
    if( rc!=SQLITE_OK ) return rc;
    if( sqlite3_step(pStmt)==SQLITE_ROW ) iDone = sqlite3_column_int64(pStmt, 0);
    rc = sqlite3_finalize(pStmt);
    if( rc!=SQLITE_OK || iDone==VS_INDEX_TRIGGERS ) return rc;
  }

  rc = vsUniqueConflicts(db, pDef, &zConflict);
  if( rc!=SQLITE_OK ) goto cleanup;
  if( bStore ){
    zSql = sqlite3_mprintf(
        "DELETE FROM main.\"vecsync_idx_%w_info\" WHERE key='backfilled';"
        "DELETE FROM main.\"vecsync_idx_%w\"", pDef->zIndex, pDef->zIndex);
  }else{
    zSql = sqlite3_mprintf(
        "CREATE VIRTUAL TABLE main.\"vecsync_idx_%w\" USING vec0("
        "embedding float[%d] distance_metric=%s)",
        pDef->zIndex, pDef->nDim, vec0MetricName(pDef->eMetric));
  }
  if( zSql==0 ){ rc = SQLITE_NOMEM; goto cleanup; }
  rc = sqlite3_exec(db, zSql, 0, 0, pzErr);
  sqlite3_free(zSql);
  if( rc!=SQLITE_OK ) goto cleanup;

  /* INSERT OR REPLACE and UPDATE OR REPLACE delete the rows they conflict with without
  ** firing DELETE triggers (unless recursive_triggers is on). The BEFORE triggers note
  ** those rows in T_pending; the AFTER triggers drop the index rows of the noted rows that
  ** are really gone. A statement that does not replace (OR IGNORE, an upsert's DO UPDATE)
  ** leaves its noted rows in place, and the next cleanup finds them still there. */
  zSql = sqlite3_mprintf(
      "CREATE TABLE IF NOT EXISTS main.\"vecsync_idx_%w_pending\"(rowid INTEGER PRIMARY KEY);"
      "DELETE FROM main.\"vecsync_idx_%w_pending\";"
      "DROP TRIGGER IF EXISTS main.\"vecsync_idx_%w_bi\";"
      "DROP TRIGGER IF EXISTS main.\"vecsync_idx_%w_bu\";"
      "DROP TRIGGER IF EXISTS main.\"vecsync_idx_%w_ai\";"
      "DROP TRIGGER IF EXISTS main.\"vecsync_idx_%w_au\";"
      "DROP TRIGGER IF EXISTS main.\"vecsync_idx_%w_ad\";"
      "CREATE TRIGGER main.\"vecsync_idx_%w_bi\" BEFORE INSERT ON \"%w\" BEGIN"
      "  INSERT OR IGNORE INTO \"vecsync_idx_%w_pending\"(rowid)"
      "    SELECT rowid FROM \"%w\" WHERE %s;"
      " END;"
      "CREATE TRIGGER main.\"vecsync_idx_%w_bu\" BEFORE UPDATE ON \"%w\" BEGIN"
      "  INSERT OR IGNORE INTO \"vecsync_idx_%w_pending\"(rowid)"
      "    SELECT rowid FROM \"%w\" WHERE (%s) AND rowid<>old.rowid;"
      " END;"
      "CREATE TRIGGER main.\"vecsync_idx_%w_ai\" AFTER INSERT ON \"%w\" BEGIN"
      "  DELETE FROM \"vecsync_idx_%w\" WHERE rowid IN (SELECT p.rowid FROM \"vecsync_idx_%w_pending\" p"
      "    WHERE NOT EXISTS (SELECT 1 FROM \"%w\" t WHERE t.rowid=p.rowid));"
      "  DELETE FROM \"vecsync_idx_%w_pending\";"
      "  DELETE FROM \"vecsync_idx_%w\" WHERE rowid=new.rowid;"
      "  INSERT INTO \"vecsync_idx_%w\"(rowid, embedding)"
      "    SELECT new.rowid, new.\"%w\" WHERE new.\"%w\" IS NOT NULL;"
      " END;"
      "CREATE TRIGGER main.\"vecsync_idx_%w_au\" AFTER UPDATE ON \"%w\" BEGIN"
      "  DELETE FROM \"vecsync_idx_%w\" WHERE rowid IN (SELECT p.rowid FROM \"vecsync_idx_%w_pending\" p"
      "    WHERE NOT EXISTS (SELECT 1 FROM \"%w\" t WHERE t.rowid=p.rowid));"
      "  DELETE FROM \"vecsync_idx_%w_pending\";"
      "  DELETE FROM \"vecsync_idx_%w\" WHERE rowid=old.rowid"
      "    AND (old.rowid IS NOT new.rowid OR old.\"%w\" IS NOT new.\"%w\");"
      "  INSERT OR REPLACE INTO \"vecsync_idx_%w\"(rowid, embedding)"
      "    SELECT new.rowid, new.\"%w\" WHERE new.\"%w\" IS NOT NULL"
      "    AND (old.rowid IS NOT new.rowid OR old.\"%w\" IS NOT new.\"%w\");"
      " END;"
      "CREATE TRIGGER main.\"vecsync_idx_%w_ad\" AFTER DELETE ON \"%w\" BEGIN"
      "  DELETE FROM \"vecsync_idx_%w\" WHERE rowid=old.rowid;"
      " END;",
      /* pending, drops */
      pDef->zIndex, pDef->zIndex,
      pDef->zIndex, pDef->zIndex, pDef->zIndex, pDef->zIndex, pDef->zIndex,
      /* _bi */ pDef->zIndex, pDef->zTable, pDef->zIndex, pDef->zTable, zConflict,
      /* _bu */ pDef->zIndex, pDef->zTable, pDef->zIndex, pDef->zTable, zConflict,
      /* _ai */ pDef->zIndex, pDef->zTable, pDef->zIndex, pDef->zIndex, pDef->zTable,
                pDef->zIndex, pDef->zIndex, pDef->zIndex, pDef->zColumn, pDef->zColumn,
      /* _au */ pDef->zIndex, pDef->zTable, pDef->zIndex, pDef->zIndex, pDef->zTable,
                pDef->zIndex, pDef->zIndex, pDef->zColumn, pDef->zColumn,
                pDef->zIndex, pDef->zColumn, pDef->zColumn, pDef->zColumn, pDef->zColumn,
      /* _ad */ pDef->zIndex, pDef->zTable, pDef->zIndex);
  if( zSql==0 ){ rc = SQLITE_NOMEM; goto cleanup; }
  rc = sqlite3_exec(db, zSql, 0, 0, pzErr);
  sqlite3_free(zSql);
  if( rc!=SQLITE_OK ) goto cleanup;

  zSql = sqlite3_mprintf(
      "INSERT INTO main.\"vecsync_idx_%w\"(rowid, embedding)"
      " SELECT rowid, \"%w\" FROM main.\"%w\" WHERE \"%w\" IS NOT NULL",
      pDef->zIndex, pDef->zColumn, pDef->zTable, pDef->zColumn);
  if( zSql==0 ){ rc = SQLITE_NOMEM; goto cleanup; }
  rc = sqlite3_exec(db, zSql, 0, 0, pzErr);
  sqlite3_free(zSql);
  if( rc==SQLITE_OK && pnRow ) *pnRow = sqlite3_changes64(db);
  if( rc==SQLITE_OK ){
    zSql = sqlite3_mprintf(
        "INSERT INTO main.\"vecsync_idx_%w_info\"(key, value) VALUES ('backfilled', %d)",
        pDef->zIndex, VS_INDEX_TRIGGERS);
    if( zSql==0 ){ rc = SQLITE_NOMEM; goto cleanup; }
    rc = sqlite3_exec(db, zSql, 0, 0, pzErr);
    sqlite3_free(zSql);
  }

cleanup:
  sqlite3_free(zConflict);
  return rc;
}

/* vecsync_rebuild('index'): rebuild a vector index's search data from its table. */
static void vsRebuildFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  sqlite3 *db = sqlite3_context_db_handle(ctx);
  VsIndexDef def;
  char *zErr = 0;
  sqlite3_int64 nRow = 0;
  const char *zIndex = (const char*)sqlite3_value_text(argv[0]);
  int rc;
  (void)argc;
  if( zIndex==0 ){
    sqlite3_result_error(ctx, "vecsync_rebuild: the index name is NULL", -1);
    return;
  }
  rc = vsIndexLookup(db, zIndex, &def, &zErr);
  if( rc==SQLITE_OK ) rc = vsIndexBuild(db, &def, 1, &nRow, &zErr);
  if( rc==SQLITE_OK ){
    sqlite3_result_int64(ctx, nRow);
  }else{
    char *zMsg = sqlite3_mprintf("vecsync_rebuild: %s", zErr ? zErr : sqlite3_errmsg(db));
    sqlite3_result_error(ctx, zMsg ? zMsg : "vecsync_rebuild failed", -1);
    sqlite3_result_error_code(ctx, rc);
    sqlite3_free(zMsg);
  }
  sqlite3_free(zErr);
  vsIndexDefClear(&def);
}

/* Exact k nearest rows of the indexed table to query v, read straight from the table:
** the path of connections that cannot build the index's search data. */
static int vsIndexScanTable(sqlite3 *db, const VsIndexDef *pDef, const VsVector *pQuery,
                            sqlite3_int64 k, VsTopK *pTop, char **pzErr){
  sqlite3_stmt *pStmt = 0;
  char *zSql = sqlite3_mprintf(
      "SELECT rowid, \"%w\" FROM main.\"%w\" WHERE \"%w\" IS NOT NULL",
      pDef->zColumn, pDef->zTable, pDef->zColumn);
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
    zSql = sqlite3_mprintf("SELECT count(*) FROM main.\"%w\"", pDef->zTable);
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
    sqlite3_int64 iRowid = sqlite3_column_int64(pStmt, 0);
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
      *pzErr = sqlite3_mprintf("row %lld: %s", iRowid, zErr ? zErr : "bad vector");
    }
    sqlite3_free(zErr);
    vsVectorFree(&v);
  }
  if( rc==SQLITE_OK ) rc = sqlite3_finalize(pStmt); else sqlite3_finalize(pStmt);
  if( rc==SQLITE_OK ) vsTopKSort(pTop);
  return rc;
}

/* ---- vector_top_k ------------------------------------------------------------------------ */

/* The arguments are the first hidden columns, in order; distance comes after them. */
#define VTK_COL_ID       0
#define VTK_COL_INDEX    1
#define VTK_COL_QUERY    2
#define VTK_COL_K        3
#define VTK_COL_DISTANCE 4

typedef struct VtkCursor VtkCursor;
struct VtkCursor {
  sqlite3_vtab_cursor base;   /* Base class: must be first */
  VsTopK top;                 /* Hits, nearest first */
  int iHit;                   /* Current hit */
};

typedef struct VtkTable VtkTable;
struct VtkTable {
  sqlite3_vtab base;          /* Base class: must be first */
  sqlite3 *db;                /* Connection */
  Vec0Registry *pReg;         /* Its vec0 tables */
};

static int vtkConnect(sqlite3 *db, void *pAux, int argc, const char *const *argv,
                      sqlite3_vtab **ppVtab, char **pzErr){
  VtkTable *p;
  int rc;
  (void)argc; (void)argv; (void)pzErr;
  rc = sqlite3_declare_vtab(db,
      "CREATE TABLE x(id INTEGER, index_name HIDDEN, query HIDDEN, k HIDDEN, distance REAL HIDDEN)");
  if( rc!=SQLITE_OK ) return rc;
  p = sqlite3_malloc(sizeof(*p));
  if( p==0 ) return SQLITE_NOMEM;
  memset(p, 0, sizeof(*p));
  p->db = db;
  p->pReg = (Vec0Registry*)pAux;
  *ppVtab = &p->base;
  return SQLITE_OK;
}

static int vtkDisconnect(sqlite3_vtab *pVtab){
  sqlite3_free(pVtab);
  return SQLITE_OK;
}

static int vtkBestIndex(sqlite3_vtab *pVtab, sqlite3_index_info *pInfo){
  int aIdx[3] = { -1, -1, -1 };
  int i;
  for(i=0; i<pInfo->nConstraint; i++){
    const struct sqlite3_index_constraint *pC = &pInfo->aConstraint[i];
    if( pC->op!=SQLITE_INDEX_CONSTRAINT_EQ || pC->iColumn<VTK_COL_INDEX
     || pC->iColumn>VTK_COL_K ) continue;
    if( !pC->usable ) return SQLITE_CONSTRAINT;
    aIdx[pC->iColumn-VTK_COL_INDEX] = i;
  }
  for(i=0; i<3; i++){
    if( aIdx[i]<0 ){
      sqlite3_free(pVtab->zErrMsg);
      pVtab->zErrMsg = sqlite3_mprintf("vector_top_k(index, query, k) needs all three arguments");
      return SQLITE_ERROR;
    }
    pInfo->aConstraintUsage[aIdx[i]].argvIndex = i+1;
    pInfo->aConstraintUsage[aIdx[i]].omit = 1;
  }
  pInfo->estimatedCost = 100.0;
  if( pInfo->nOrderBy==1 && pInfo->aOrderBy[0].iColumn==VTK_COL_DISTANCE
   && !pInfo->aOrderBy[0].desc ){
    pInfo->orderByConsumed = 1;
  }
  return SQLITE_OK;
}

static int vtkOpen(sqlite3_vtab *pVtab, sqlite3_vtab_cursor **ppCur){
  VtkCursor *pCur = sqlite3_malloc(sizeof(*pCur));
  (void)pVtab;
  if( pCur==0 ) return SQLITE_NOMEM;
  memset(pCur, 0, sizeof(*pCur));
  *ppCur = &pCur->base;
  return SQLITE_OK;
}

static int vtkClose(sqlite3_vtab_cursor *cur){
  vsTopKFree(&((VtkCursor*)cur)->top);
  sqlite3_free(cur);
  return SQLITE_OK;
}

static int vtkFilter(sqlite3_vtab_cursor *cur, int idxNum, const char *idxStr,
                     int argc, sqlite3_value **argv){
  VtkCursor *pCur = (VtkCursor*)cur;
  VtkTable *pTab = (VtkTable*)cur->pVtab;
  VsIndexDef def;
  Vec0Table *pStore = 0;
  VsVector v;
  float *q = 0;
  char *zErr = 0, *zStore = 0;
  const char *zIndex = (const char*)sqlite3_value_text(argv[0]);
  sqlite3_int64 k;
  int rc;
  (void)idxNum; (void)idxStr; (void)argc;

  memset(&def, 0, sizeof(def));
  memset(&v, 0, sizeof(v));
  vsTopKFree(&pCur->top);
  pCur->iHit = 0;
  if( zIndex==0 ){
    zErr = sqlite3_mprintf("the index name is NULL");
    rc = SQLITE_ERROR;
    goto cleanup;
  }
  /* An integral REAL (5.0) is an integer k, as libSQL takes it. */
  if( sqlite3_value_numeric_type(argv[2])==SQLITE_FLOAT ){
    double r = sqlite3_value_double(argv[2]);
    k = (r>=1.0 && r<9.2e18 && r==(double)(sqlite3_int64)r) ? (sqlite3_int64)r : 0;
  }else{
    k = sqlite3_value_numeric_type(argv[2])==SQLITE_INTEGER ? sqlite3_value_int64(argv[2]) : 0;
  }
  if( k<=0 ){
    zErr = sqlite3_mprintf("k must be a positive integer, got %s",
        sqlite3_value_type(argv[2])==SQLITE_NULL ? "NULL" : (const char*)sqlite3_value_text(argv[2]));
    rc = SQLITE_ERROR;
    goto cleanup;
  }
  rc = vsIndexLookup(pTab->db, zIndex, &def, &zErr);
  if( rc!=SQLITE_OK ) goto cleanup;
  rc = vsVectorFromValue(argv[1], VS_F32, &v, &zErr);
  if( rc!=SQLITE_OK ) goto cleanup;
  if( v.nDim!=def.nDim ){
    zErr = sqlite3_mprintf("the query vector has %d dimensions, index %s has %d",
                           v.nDim, zIndex, def.nDim);
    rc = SQLITE_ERROR;
    goto cleanup;
  }
  rc = vsIndexBuild(pTab->db, &def, 0, 0, &zErr);
  if( (rc&0xff)==SQLITE_READONLY ){
    /* A connection that cannot write cannot build the search data: it scans the
    ** table's rows itself, exactly, until a writable connection has built it. */
    sqlite3_free(zErr);
    zErr = 0;
    rc = vsIndexScanTable(pTab->db, &def, &v, k, &pCur->top, &zErr);
    goto cleanup;
  }
  if( rc!=SQLITE_OK ) goto cleanup;
  zStore = sqlite3_mprintf("vecsync_idx_%s", zIndex);
  if( zStore==0 ){ rc = SQLITE_NOMEM; goto cleanup; }
  rc = vec0Find(pTab->db, pTab->pReg, "main", zStore, &pStore, &zErr);
  if( rc!=SQLITE_OK ) goto cleanup;
  rc = vec0VectorArg(pStore, argv[1], "query", &q, &zErr);
  if( rc!=SQLITE_OK ) goto cleanup;
  rc = vec0CacheEnsure(pStore);
  if( rc!=SQLITE_OK ){
    zErr = vec0TakeError(pStore);
    goto cleanup;
  }
  rc = vec0Search(pStore, q, k, 0, 0, &pCur->top);

cleanup:
  if( rc!=SQLITE_OK ){
    sqlite3_free(pTab->base.zErrMsg);
    pTab->base.zErrMsg = rc==SQLITE_NOMEM ? 0 : sqlite3_mprintf("vector_top_k: %s",
        zErr ? zErr : sqlite3_errmsg(pTab->db));
  }
  sqlite3_free(zErr);
  sqlite3_free(zStore);
  sqlite3_free(q);
  vsVectorFree(&v);
  vsIndexDefClear(&def);
  return rc;
}

static int vtkNext(sqlite3_vtab_cursor *cur){
  ((VtkCursor*)cur)->iHit++;
  return SQLITE_OK;
}

static int vtkEof(sqlite3_vtab_cursor *cur){
  VtkCursor *pCur = (VtkCursor*)cur;
  return pCur->iHit>=pCur->top.n;
}

static int vtkColumn(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int i){
  VtkCursor *pCur = (VtkCursor*)cur;
  const VsHit *pHit = &pCur->top.a[pCur->iHit];
  if( i==VTK_COL_ID ) sqlite3_result_int64(ctx, pHit->iRowid);
  else if( i==VTK_COL_DISTANCE ) sqlite3_result_double(ctx, pHit->rDist);
  return SQLITE_OK;
}

/* A hit's rowid is the indexed row's rowid (its id), as libSQL's vector_top_k gives it, so
** "select rowid from vector_top_k(...)" and joins on it name the rows. */
static int vtkRowid(sqlite3_vtab_cursor *cur, sqlite3_int64 *pRowid){
  VtkCursor *pCur = (VtkCursor*)cur;
  *pRowid = pCur->top.a[pCur->iHit].iRowid;
  return SQLITE_OK;
}

static sqlite3_module vtkModule = {
  /* iVersion    */ 0,
  /* xCreate     */ 0,               /* eponymous only */
  /* xConnect    */ vtkConnect,
  /* xBestIndex  */ vtkBestIndex,
  /* xDisconnect */ vtkDisconnect,
  /* xDestroy    */ 0,
  /* xOpen       */ vtkOpen,
  /* xClose      */ vtkClose,
  /* xFilter     */ vtkFilter,
  /* xNext       */ vtkNext,
  /* xEof        */ vtkEof,
  /* xColumn     */ vtkColumn,
  /* xRowid      */ vtkRowid,
  0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
#if SQLITE_VERSION_NUMBER>=3044000
  0,
#endif
};

int vsRegisterVectorIndex(sqlite3 *db, Vec0Registry *pReg, char **pzErr){
  int rc;
  /* Deterministic, so SQLite accepts it in CREATE INDEX, and innocuous, so a schema
  ** using it works with trusted_schema=OFF. Both hold in the sense SQLite needs: its value
  ** is always NULL and it writes nothing. It does read the schema (the dimensions of the
  ** vector-indexed columns, to refuse a vector of the wrong size), so whether it raises an
  ** error depends on the schema as well as on its arguments. */
  VsIndexDims *pDims = sqlite3_malloc(sizeof(*pDims));
  if( pDims==0 ) return SQLITE_NOMEM;
  memset(pDims, 0, sizeof(*pDims));
  pDims->iSchemaVersion = -1;
  rc = sqlite3_create_function_v2(db, "libsql_vector_idx", -1,
                                  SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS,
                                  pDims, vsVectorIdxFunc, 0, 0, sqlite3_free);
  /* vecsync_rebuild writes tables: DIRECTONLY keeps it out of triggers and views. */
  if( rc==SQLITE_OK ){
    rc = sqlite3_create_function(db, "vecsync_rebuild", 1, SQLITE_UTF8 | SQLITE_DIRECTONLY,
                                 0, vsRebuildFunc, 0, 0);
  }
  if( rc==SQLITE_OK ){
    pReg->nRef++;
    rc = sqlite3_create_module_v2(db, "vector_top_k", &vtkModule, pReg, vsRegistryRelease);
  }
  if( rc!=SQLITE_OK ){
    *pzErr = sqlite3_mprintf("vecsync: cannot register the vector index functions: %s",
                             sqlite3_errmsg(db));
  }
  return rc;
}
