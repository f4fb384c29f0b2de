/*
** libsql_index.c: libSQL's vector index (a "libSQL index") on stock SQLite:
** libsql_vector_idx(), vecsync_rebuild() and vector_top_k() registered here.
**
** Usage (libSQL's SQL, unchanged):
**
**   create table messages(id text primary key, kind int, content text, embedding F32_BLOB(4));
**   create index messages_embedding_idx on messages(libsql_vector_idx(embedding));
**   create index messages_notes_idx on messages(libsql_vector_idx(embedding)) where kind = 0;
**   create table notes(title text primary key, e F32_BLOB(4)) without rowid;
**   create index notes_idx on notes(libsql_vector_idx(e));
**   select id from vector_top_k('notes_idx', vector32('[1,0,0,0]'), 5);    -- id: the title
**   insert into messages values ('m1', 0, 'hello', vector32('[1,0,0,0]'));
**   select m.id, v.distance
**     from vector_top_k('messages_embedding_idx', vector32('[1,0,0,0]'), 5) as v
**     join messages m on m.rowid = v.id;
**   select id from vector_top_k('aux.docs_idx', vector32('[1,0,0,0]'), 5);  -- attached
**   select vecsync_rebuild('messages_embedding_idx');      -- drop nothing, rebuild all
**   drop index messages_notes_idx;       -- its search data goes at the next search
**   create index docs_ivf_idx on docs(libsql_vector_idx(e, 'type=ivf', 'nprobe=16'));
**   select id from vector_top_k('docs_ivf_idx', :q, 10);          -- approximate, nprobe 16
**   select id from vector_top_k('docs_ivf_idx', :q, 10, 64);      -- nprobe 64 this once
**
** libsql_vector_idx(col, 'metric=cosine' | 'metric=l2', ...) accepts libSQL's options,
** with libSQL's checks and messages; its ANN tuning options (type=diskann, max_neighbors,
** alpha, search_l, insert_l, compress_neighbors) are checked and otherwise ignored: the
** search is exact by default, libSQL's type=diskann (its default) included, so SQL written
** for libSQL keeps exact answers. 'type=ivf' (ours; libSQL refuses it) asks for an
** approximate search: the search data is then a vec0 table "indexed by ivf(...)"
** (vec0_ivf.c), with 'nlist=N' and 'nprobe=N' (refused without type=ivf) passed to it, and
** is trained on all the rows when it is built. Its cost: recall below 1 (the distances
** returned are still exact), an int8 code of each vector kept in memory beside the float32
** copy, a k-means at each build; vecsync_rebuild() trains it again.
**
** The column must be declared with one of libSQL's vector types, FLOAT32(n) / F32_BLOB(n),
** FLOAT64, FLOAT16, FLOATB16, FLOAT8 or FLOAT1BIT, n > 0 (the search data holds them as
** float32); a WHERE clause makes a partial index, which holds only the rows it matches.
**
** How it works. The CREATE INDEX is an ordinary expression index: it names the table,
** the column, the options and the WHERE clause, and SQLite keeps it (it stores no vectors:
** libsql_vector_idx() returns NULL, after checking the options, every libSQL index's
** declaration and that the vector has a size some libSQL-indexed column declares; SQLite
** calls it for the rows a partial index matches only). The search data of index I lives
** in tables of I's schema:
**
**   vecsync_idx_I           vec0: each indexed row's vector under the row's rowid
**   vecsync_idx_I_log       rowids whose entry must be recomputed from the table
**   vecsync_idx_I_pending   rows an INSERT/UPDATE OR REPLACE may delete (noted before it)
**   vecsync_idx_I_keys      a WITHOUT ROWID table's keys, each with the id its vector is
**                           stored under in vecsync_idx_I (the log and pending tables then
**                           hold keys, not rowids)
**
** Triggers on the table (vecsync_idx_I_bi, _bu, _ai, _au, _ad) log every written rowid
** and refuse a vector of the wrong size for I (RAISE, while I exists). They use core SQL
** only, so a client without the extension can still write the table once the index is
** dropped (while it exists SQLite itself needs libsql_vector_idx() to write it). A TEMP
** trigger, made by each connection with the extension when it searches, applies each log
** entry to the vec0 table at once; entries logged by other connections are applied by the
** next search that can write, and a connection that cannot write answers exactly from the
** table itself. The search data is built from the table the first time the index is
** searched (or by vecsync_rebuild), and can be rebuilt at any time with nothing lost; the
** search data of an index that was dropped is removed by the next search or rebuild.
**
** vector_top_k(index, query, k) returns the k nearest rows' rowids (column id, and the
** rowid of each result row), nearest first, ties by ascending rowid, and a hidden column
** distance. Of a WITHOUT ROWID table (one key column, as libSQL requires) id is the key,
** and the rowid the key when it is rowid-like (INTEGER affinity, BINARY collation), else
** the hit's position from 0, as libSQL gives them; ties come in the order the rows were
** indexed (a build indexes in key order). On a FLOAT1BIT column the query is taken as its
** signs and distance is the number of differing bits (libSQL's vector_distance_cos of
** 1-bit vectors). It reuses vec0's block scan, or for a type=ivf index vec0's ivf search
** of the nprobe lists nearest the query (the declaration's nprobe, or vector_top_k's
** optional fourth argument). The search data's own declaration is compared with the
** index's at each search: made for another (an index re-created exact from ivf, or the
** reverse), it is dropped and made again; a search, which cannot drop a table while its
** statement reads, answers exactly from the table until vecsync_rebuild() does.
**
** The files: libsql_index_parse.c reads an index's CREATE INDEX (options, column type,
** WHERE, a WITHOUT ROWID table's key); libsql_index_build.c keeps its search data (the
** vec0 table, the log, the triggers, built from named pieces of SQL); libsql_index_topk.c
** is vector_top_k(); this file, libsql_vector_idx() itself and the registration.
*/
#include "vecsync_int.h"
SQLITE_EXTENSION_INIT3

#include <string.h>

/* ---- libsql_vector_idx() ---------------------------------------------------------------- */

/* The libSQL indexes of a connection, read again whenever the schema changes (and while a
** CREATE INDEX runs, before it changes the schema cookie). libsql_vector_idx() is not told
** which index it computes, so a vector is refused when its size matches no libSQL-indexed
** column, and every call fails while some libSQL index's declaration is invalid. Each
** index's own size is enforced by its triggers. */
typedef struct LibsqlIndexDims LibsqlIndexDims;
struct LibsqlIndexDims {
  int iSchemaVersion;   /* Sum of the schemas' schema_version at the last read, -1: never */
  int nDims;            /* Entries in aDims */
  int aDims[32];        /* Distinct dimensions of libSQL-indexed columns */
  char *zError;         /* The first invalid libSQL index's error, or NULL */
};

static int libsqlIndexDimsRefresh(sqlite3 *db, LibsqlIndexDims *p, int bForce){
  sqlite3_stmt *pStmt = 0, *pList = 0;
  int rc, iVersion = 0;
  rc = sqlite3_prepare_v2(db, "SELECT name FROM pragma_database_list WHERE name<>'temp'",
                          -1, &pList, 0);
  while( rc==SQLITE_OK && sqlite3_step(pList)==SQLITE_ROW ){
    sqlite3_int64 iOne = 0;
    rc = vsPragma(db, (const char*)sqlite3_column_text(pList, 0), "schema_version", &iOne, 0);
    iVersion += (int)iOne;
  }
  sqlite3_finalize(pList);
  if( rc!=SQLITE_OK ) return rc;
  if( iVersion==p->iSchemaVersion && !bForce ) return SQLITE_OK;
  p->nDims = 0;
  sqlite3_free(p->zError);
  p->zError = 0;
  {
    /* Every schema's libSQL indexes, named schema.index. */
    sqlite3_stmt *pDb = 0;
    rc = sqlite3_prepare_v2(db, "SELECT name FROM pragma_database_list WHERE name<>'temp'",
                            -1, &pDb, 0);
    while( rc==SQLITE_OK && sqlite3_step(pDb)==SQLITE_ROW ){
      char *zSql = sqlite3_mprintf(
          "SELECT %Q || '.' || name FROM \"%w\".sqlite_schema WHERE type='index'"
          " AND sql LIKE '%%libsql_vector_idx%%'",
          (const char*)sqlite3_column_text(pDb, 0), (const char*)sqlite3_column_text(pDb, 0));
      if( zSql==0 ){ rc = SQLITE_NOMEM; break; }
      rc = sqlite3_prepare_v2(db, zSql, -1, &pStmt, 0);
      sqlite3_free(zSql);
      while( rc==SQLITE_OK && sqlite3_step(pStmt)==SQLITE_ROW ){
        LibsqlIndex def;
        char *zErr = 0;
        if( libsqlIndexLookup(db, (const char*)sqlite3_column_text(pStmt, 0), &def, &zErr)==SQLITE_OK ){
          int i;
          for(i=0; i<p->nDims && p->aDims[i]!=def.nDim; i++){}
          if( i==p->nDims && p->nDims<(int)(sizeof(p->aDims)/sizeof(p->aDims[0])) ){
            p->aDims[p->nDims++] = def.nDim;
          }
          libsqlIndexClear(&def);
        }else if( p->zError==0 ){
          p->zError = zErr;
          zErr = 0;
        }
        sqlite3_free(zErr);
      }
      sqlite3_finalize(pStmt);
      pStmt = 0;
    }
    sqlite3_finalize(pDb);
  }
  if( rc==SQLITE_OK ) p->iSchemaVersion = iVersion;
  return rc;
}

/* libsql_vector_idx(col, options...): checks the options, every libSQL index's
** declaration, and that the vector has the size of some libSQL-indexed column; indexes
** nothing itself (returns NULL), so SQLite's index stays small. */
static void libsqlVectorIdxFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  LibsqlIndexDims *pDims = (LibsqlIndexDims*)sqlite3_user_data(ctx);
  LibsqlIndex opts;           /* The options only */
  VsVector v;
  char *zErr = 0;
  int i, rc = SQLITE_OK;
  memset(&v, 0, sizeof(v));
  memset(&opts, 0, sizeof(opts));
  for(i=1; i<argc && rc==SQLITE_OK; i++){
    const char *zOpt = (const char*)sqlite3_value_text(argv[i]);
    if( sqlite3_value_type(argv[i])!=SQLITE_TEXT || zOpt==0 ){
      zErr = sqlite3_mprintf("vector index: all arguments after first must be strings");
      rc = SQLITE_ERROR;
    }else{
      rc = libsqlIndexOption(zOpt, &opts, &zErr);
    }
  }
  if( rc==SQLITE_OK ) rc = libsqlIndexOptionsCheck(&opts, &zErr);
  if( rc==SQLITE_OK && argc>0 && sqlite3_value_type(argv[0])!=SQLITE_NULL ){
    rc = vsVectorFromValue(argv[0], 0, &v, &zErr);
  }
  if( rc==SQLITE_OK ){
    /* Read the schema again only when it may matter: the first call, while a CREATE runs,
    ** while an index is known to be invalid, or for a size no known index has (reading
    ** the schema cookies costs more than the rest of the call). */
    sqlite3 *db = sqlite3_context_db_handle(ctx);
    int bCreate = libsqlCreateRunning(db), bKnown = v.aData==0;
    for(i=0; !bKnown && i<pDims->nDims; i++) bKnown = pDims->aDims[i]==v.nDim;
    if( bCreate || pDims->iSchemaVersion<0 || pDims->zError || !bKnown ){
      rc = libsqlIndexDimsRefresh(db, pDims, bCreate);
    }
  }
  if( rc==SQLITE_OK && pDims->zError ){
    zErr = sqlite3_mprintf("%s", pDims->zError);
    rc = SQLITE_ERROR;
  }
  if( rc==SQLITE_OK && v.aData ){
    for(i=0; i<pDims->nDims && pDims->aDims[i]!=v.nDim; i++){}
    if( pDims->nDims>0 && i==pDims->nDims ){
      zErr = sqlite3_mprintf(
          "the vector has %d dimensions, the indexed column has %d%s",
          v.nDim, pDims->aDims[0], pDims->nDims>1 ? " (or another vector index's size)" : "");
      rc = SQLITE_ERROR;
    }
  }
  if( rc==SQLITE_NOMEM ){
    sqlite3_result_error_nomem(ctx);
  }else if( rc!=SQLITE_OK ){
    char *zMsg = zErr && strncmp(zErr, "vector index", 12)==0 ? sqlite3_mprintf("%s", zErr)
        : sqlite3_mprintf("libsql_vector_idx: %s",
                          zErr ? zErr : sqlite3_errmsg(sqlite3_context_db_handle(ctx)));
    sqlite3_result_error(ctx, zMsg ? zMsg : "libsql_vector_idx: error", -1);
    if( zErr==0 ) sqlite3_result_error_code(ctx, rc);
    sqlite3_free(zMsg);
  }else{
    sqlite3_result_null(ctx);
  }
  sqlite3_free(zErr);
  vsVectorFree(&v);
}

static void libsqlIndexDimsFree(void *p){
  if( p ) sqlite3_free(((LibsqlIndexDims*)p)->zError);
  sqlite3_free(p);
}

/* vecsync_rebuild('index'): rebuild a libSQL index's search data from its table. */
static void libsqlRebuildFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  sqlite3 *db = sqlite3_context_db_handle(ctx);
  Vec0Registry *pReg = (Vec0Registry*)sqlite3_user_data(ctx);
  LibsqlIndex def;
  char *zErr = 0;
  sqlite3_int64 nRow = 0;
  const char *zIndex = (const char*)sqlite3_value_text(argv[0]);
  int rc;
  (void)argc;
  memset(&def, 0, sizeof(def));
  if( zIndex==0 ){
    sqlite3_result_error(ctx, "vecsync_rebuild: the index name is NULL", -1);
    return;
  }
  rc = libsqlIndexLookup(db, zIndex, &def, &zErr);
  if( rc==SQLITE_OK ) rc = libsqlIndexBuild(db, pReg, &def, 1, &nRow, &zErr);
  if( rc==SQLITE_OK ){
    sqlite3_result_int64(ctx, nRow);
  }else{
    char *zMsg = sqlite3_mprintf("vecsync_rebuild: %s", zErr ? zErr : sqlite3_errmsg(db));
    sqlite3_result_error(ctx, zMsg ? zMsg : "vecsync_rebuild failed", -1);
    sqlite3_result_error_code(ctx, rc);
    sqlite3_free(zMsg);
  }
  sqlite3_free(zErr);
  libsqlIndexClear(&def);
}

int vsRegisterLibsqlIndex(sqlite3 *db, Vec0Registry *pReg, char **pzErr){
  int rc;
  /* Deterministic, so SQLite accepts it in CREATE INDEX, and innocuous, so a schema
  ** using it works with trusted_schema=OFF. Both hold in the sense SQLite needs: its value
  ** is always NULL and it writes nothing. It does read the schema (the dimensions of the
  ** libSQL-indexed columns, to refuse a vector of the wrong size), so whether it raises an
  ** error depends on the schema as well as on its arguments. */
  LibsqlIndexDims *pDims = sqlite3_malloc(sizeof(*pDims));
  if( pDims==0 ) return SQLITE_NOMEM;
  memset(pDims, 0, sizeof(*pDims));
  pDims->iSchemaVersion = -1;
  rc = sqlite3_create_function_v2(db, "libsql_vector_idx", -1,
                                  SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS,
                                  pDims, libsqlVectorIdxFunc, 0, 0, libsqlIndexDimsFree);
  /* vecsync_rebuild writes tables: DIRECTONLY keeps it out of triggers and views. It
  ** finds the search data's vec0 table (to train an ivf index) in the registry, which
  ** lives as long as the connection's modules. */
  if( rc==SQLITE_OK ){
    rc = sqlite3_create_function(db, "vecsync_rebuild", 1, SQLITE_UTF8 | SQLITE_DIRECTONLY,
                                 pReg, libsqlRebuildFunc, 0, 0);
  }
  if( rc==SQLITE_OK ){
    pReg->nRef++;
    rc = sqlite3_create_module_v2(db, "vector_top_k", &libsqlTopKModule, pReg, pReg->xRelease);
  }
  if( rc!=SQLITE_OK ){
    *pzErr = sqlite3_mprintf("vecsync: cannot register the vector index functions: %s",
                             sqlite3_errmsg(db));
  }
  return rc;
}
