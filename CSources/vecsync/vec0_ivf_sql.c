/*
** vec0_ivf_sql.c: the SQL functions of a vec0 table's ivf index (vec0_ivf.c).
**
** Usage:
**
**   select vecsync_ivf_retrain('docs');          -- lists trained again now; answers nlist
**   select vecsync_ivf_retrain('docs', 512);     -- with 512 lists
**   select vecsync_index_info('docs');           -- {"index":"ivf","trained":true,...}
**   select vecsync_ivf_recall('docs', 100, 10, 8);   -- recall@10 at nprobe 8, 100 queries
**
** How it works: each finds the table (vec0Find), makes its storage ready and its copy
** current, reads the index (vec0IvfReady), then asks vec0_ivf.c. A retrain runs in one
** savepoint: it succeeds whole or leaves the file as it was.
*/
#include "vecsync_int.h"
SQLITE_EXTENSION_INIT3

#include <string.h>

/* The vec0 table zFunc's argument pName names, with an ivf index, its storage ready, its
** copy current and its index read (eNeed; when negative, neither: a retrain makes the
** index anew, and so repairs a damaged one); NULL after setting ctx's error otherwise. */
static Vec0Table *vec0IvfTableArg(sqlite3_context *ctx, const char *zFunc,
                                  sqlite3_value *pName, int eNeed){
  Vec0Registry *pReg = sqlite3_user_data(ctx);
  const char *zName = (const char*)sqlite3_value_text(pName);
  Vec0Table *p = 0;
  char *zErr = 0, *zMsg;
  int rc = SQLITE_OK;
  if( zName==0 ){
    zErr = sqlite3_mprintf("the table name must be text");
    rc = SQLITE_ERROR;
  }
  if( rc==SQLITE_OK ) rc = vec0Find(sqlite3_context_db_handle(ctx), pReg, 0, zName, &p, &zErr);
  if( rc==SQLITE_OK && !p->cfg.bIvf ){
    zErr = sqlite3_mprintf("vec0 \"%s\" has no ivf index (declare its vector column "
                           "\"... indexed by ivf(...)\")", zName);
    rc = SQLITE_ERROR;
  }
  if( rc==SQLITE_OK ) rc = vec0StorageReady(p);
  if( rc==SQLITE_OK && p->dbCopy ){
    zErr = sqlite3_mprintf("vec0 \"%s\" is in sqlite-vec's format: migrate it first with "
                           "vecsync_migrate_sqlite_vec('%s')", zName, zName);
    rc = SQLITE_ERROR;
  }
  if( rc==SQLITE_OK && eNeed>=0 ) rc = vec0CacheEnsure(p, eNeed);
  if( rc==SQLITE_OK && eNeed>=0 ) rc = vec0IvfReady(p);
  if( rc==SQLITE_OK ) return p;
  if( zErr==0 && p ) zErr = vec0TakeError(p);
  zMsg = sqlite3_mprintf("%s: %s", zFunc, zErr ? zErr : sqlite3_errstr(rc));
  sqlite3_result_error(ctx, zMsg ? zMsg : zFunc, -1);
  sqlite3_result_error_code(ctx, rc);
  sqlite3_free(zMsg);
  sqlite3_free(zErr);
  return 0;
}

/* An error of zFunc on table p: its text taken from the table or the connection. */
static void vec0IvfResultError(sqlite3_context *ctx, const char *zFunc, Vec0Table *p,
                               int rc){
  char *zErr = vec0TakeError(p);
  char *zMsg = sqlite3_mprintf("%s: %s", zFunc,
                               zErr ? zErr : rc==SQLITE_NOMEM ? sqlite3_errstr(rc)
                                                              : sqlite3_errmsg(p->db));
  sqlite3_result_error(ctx, zMsg ? zMsg : zFunc, -1);
  sqlite3_result_error_code(ctx, rc);
  sqlite3_free(zMsg);
  sqlite3_free(zErr);
}

/* vecsync_ivf_retrain(table [, nlist]): centroids and lists made again from the rows, in
** one savepoint; answers the number of lists (0 for an empty table). */
static void vec0IvfRetrainFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  const char *zFunc = "vecsync_ivf_retrain";
  Vec0Table *p;
  sqlite3 *db;
  int nList = 0, rc, rc2;
  if( argc>1 ){
    sqlite3_int64 n = sqlite3_value_int64(argv[1]);
    if( sqlite3_value_type(argv[1])!=SQLITE_INTEGER || n<1 || n>VEC0_IVF_MAX_LISTS ){
      sqlite3_result_error(ctx, "vecsync_ivf_retrain: nlist must be an integer from 1 to "
                                "65536", -1);
      return;
    }
    nList = (int)n;
  }
  p = vec0IvfTableArg(ctx, zFunc, argv[0], -1);
  if( p==0 ) return;
  if( sqlite3_db_readonly(p->db, p->zSchema)==1 ){
    sqlite3_result_error(ctx, "vecsync_ivf_retrain: the database is read-only", -1);
    sqlite3_result_error_code(ctx, SQLITE_READONLY);
    return;
  }
  db = p->db;
  rc = sqlite3_exec(db, "SAVEPOINT vecsync_ivf_retrain", 0, 0, 0);
  if( rc!=SQLITE_OK ){
    vec0IvfResultError(ctx, zFunc, p, rc);
    return;
  }
  rc = vec0ShadowIvfIndex(p);
  if( rc==SQLITE_OK ) rc = vec0IvfTrain(p, nList);
  if( rc!=SQLITE_OK ){
    /* p is not used after the rollback: undoing vec0ShadowIvfIndex's new shadow tables (a
    ** table of an earlier layout) resets the schema, which disconnects p and frees it. Its
    ** lists go first, to be read again from what the file holds. */
    vec0IvfResultError(ctx, zFunc, p, rc);
    vec0IvfDrop(p);
    p = 0;
    sqlite3_exec(db, "ROLLBACK TO vecsync_ivf_retrain", 0, 0, 0);
  }
  rc2 = sqlite3_exec(db, "RELEASE vecsync_ivf_retrain", 0, 0, 0);
  if( rc==SQLITE_OK && rc2!=SQLITE_OK ){
    rc = rc2;
    vec0IvfResultError(ctx, zFunc, p, rc);
    vec0IvfDrop(p);
  }
  if( rc==SQLITE_OK ) sqlite3_result_int(ctx, vec0IvfLists(p));
}

/* vecsync_index_info(table): the index as JSON (vec0IvfInfo says what each field is). */
static void vec0IvfInfoFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  /* The index alone: a report makes no copy of the table (its rows are counted). */
  Vec0Table *p = vec0IvfTableArg(ctx, "vecsync_index_info", argv[0], -1);
  char *z = 0;
  int rc;
  (void)argc;
  if( p==0 ) return;
  rc = vec0IvfReady(p);
  if( rc==SQLITE_OK ) rc = vec0IvfInfo(p, &z);
  if( rc!=SQLITE_OK ){
    vec0IvfResultError(ctx, "vecsync_index_info", p, rc);
    return;
  }
  sqlite3_result_text(ctx, z, -1, sqlite3_free);
}

/* vecsync_ivf_recall(table, queries, k, nprobe): the share of the exact k nearest rows
** the index finds at nprobe, over `queries` stored rows taken as queries; NULL for an
** empty table. */
static void vec0IvfRecallFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  const char *zFunc = "vecsync_ivf_recall";
  sqlite3_int64 nQuery = sqlite3_value_int64(argv[1]), k = sqlite3_value_int64(argv[2]);
  sqlite3_int64 nProbe = sqlite3_value_int64(argv[3]);
  Vec0Table *p;
  double r = -1;
  int rc;
  (void)argc;
  if( nQuery<1 || nQuery>100000 || k<1 || k>4096 || nProbe<1 || nProbe>VEC0_IVF_MAX_LISTS ){
    sqlite3_result_error(ctx, "vecsync_ivf_recall: queries must be 1 to 100000, k 1 to 4096 "
                              "and nprobe 1 to 65536", -1);
    return;
  }
  p = vec0IvfTableArg(ctx, zFunc, argv[0], VEC0_NEED_COPY);
  if( p==0 ) return;
  rc = vec0IvfRecall(p, nQuery, k, (int)nProbe, &r);
  if( rc!=SQLITE_OK ){
    vec0IvfResultError(ctx, zFunc, p, rc);
  }else if( r<0 ){
    sqlite3_result_null(ctx);
  }else{
    sqlite3_result_double(ctx, r);
  }
}

int vsRegisterVec0Ivf(sqlite3 *db, Vec0Registry *pReg, char **pzErr){
  /* They read the table's shadow tables, and retrain writes them: not deterministic, and
  ** not for triggers, views or the schema (SQLITE_DIRECTONLY), where a query could write an
  ** index as a side effect. */
  static const VsFunction aFunc[] = {
    { "vecsync_ivf_retrain", 1, SQLITE_UTF8 | SQLITE_DIRECTONLY, vec0IvfRetrainFunc },
    { "vecsync_ivf_retrain", 2, SQLITE_UTF8 | SQLITE_DIRECTONLY, vec0IvfRetrainFunc },
    { "vecsync_index_info",  1, SQLITE_UTF8 | SQLITE_DIRECTONLY, vec0IvfInfoFunc },
    { "vecsync_ivf_recall",  4, SQLITE_UTF8 | SQLITE_DIRECTONLY, vec0IvfRecallFunc },
  };
  return vsCreateFunctions(db, aFunc, (int)(sizeof(aFunc)/sizeof(aFunc[0])), pReg, pzErr);
}
