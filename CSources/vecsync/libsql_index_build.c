/*
** libsql_index_build.c: the search data of a libSQL index, built, kept and removed.
**
** Usage (internal; vector_top_k and vecsync_rebuild call it):
**
**   rc = libsqlIndexBuild(db, pReg, &def, 0, 0, &zErr);     -- current: made if missing
**   rc = libsqlIndexBuild(db, pReg, &def, 1, &nRow, &zErr); -- emptied and filled again
**
** How it works: index I's search data is a vec0 table, vecsync_idx_I (each covered row's
** vector under the row's rowid, or a WITHOUT ROWID key's id from vecsync_idx_I_keys), with
** vecsync_idx_I_log (keys to recompute) and vecsync_idx_I_pending (rows a REPLACE may
** delete). Five triggers on the table, made of named pieces of core SQL
** (LibsqlTriggerParts), log each written key; a TEMP trigger per connection applies each
** entry at once (libsqlIndexApplyTrigger), and the next search applies what other
** connections logged (libsqlIndexSync). The store is complete when its 'backfilled' and
** 'definition' entries match this version and declaration; else it is built again. Its
** own declaration (exact, or "indexed by ivf(...)" for 'type=ivf') must fit the index's:
** else it is dropped and made again (libsqlStoreDrop), and an ivf index is trained on all
** the rows once they are in (libsqlStoreTrain).
** Tables and triggers of dropped indexes go at the next build (libsqlIndexDropOrphans).
*/
#include "vecsync_int.h"
SQLITE_EXTENSION_INIT3

#include <string.h>

/* The version of the triggers that keep an index's search data current; an index built
** with another version is rebuilt at its next search. 2: REPLACE handled with T_pending.
** 3: core-SQL triggers writing T_log, applied by a TEMP trigger; partial indexes. */
#define LIBSQL_INDEX_TRIGGERS 3

/* The five triggers on the indexed table, by name suffix: vecsync_idx_<index>_<suffix>. */
static const char *const azLibsqlTrigger[] = { "bi", "bu", "ai", "au", "ad" };
#define LIBSQL_TRIGGER_COUNT ((int)(sizeof(azLibsqlTrigger)/sizeof(azLibsqlTrigger[0])))

/* ---- pieces of SQL ---------------------------------------------------------------------- */

/* The WHERE clause matching rows that conflict with NEW on a UNIQUE index: rows an
** INSERT OR REPLACE would delete without firing DELETE triggers. */
static int libsqlUniqueConflicts(sqlite3 *db, const LibsqlIndex *pDef, char **pzWhere){
  sqlite3_str *pStr = sqlite3_str_new(db);
  sqlite3_stmt *pList = 0;
  char *zSql = sqlite3_mprintf(
      "SELECT name FROM pragma_index_list(%Q, %Q) WHERE \"unique\" AND partial=0",
      pDef->zTable, pDef->zSchema);
  int rc;
  if( zSql==0 ){ sqlite3_free(sqlite3_str_finish(pStr)); return SQLITE_NOMEM; }
  rc = sqlite3_prepare_v2(db, zSql, -1, &pList, 0);
  sqlite3_free(zSql);
  sqlite3_str_appendf(pStr, "%s=%s", pDef->zK, pDef->zNewK);
  while( rc==SQLITE_OK && sqlite3_step(pList)==SQLITE_ROW ){
    const char *zIdx = (const char*)sqlite3_column_text(pList, 0);
    sqlite3_stmt *pCols = 0;
    int nCol = 0, bExpr = 0;
    sqlite3_str *pTerm = sqlite3_str_new(db);
    char *zTerm;
    zSql = sqlite3_mprintf("SELECT name FROM pragma_index_info(%Q, %Q)", zIdx, pDef->zSchema);
    if( zSql==0 ){ sqlite3_free(sqlite3_str_finish(pTerm)); rc = SQLITE_NOMEM; break; }
    rc = sqlite3_prepare_v2(db, zSql, -1, &pCols, 0);
    sqlite3_free(zSql);
    while( rc==SQLITE_OK && sqlite3_step(pCols)==SQLITE_ROW ){
      const char *zCol = (const char*)sqlite3_column_text(pCols, 0);
      if( zCol==0 ){ bExpr = 1; continue; }
      sqlite3_str_appendf(pTerm, "%s\"%w\"=new.\"%w\"", nCol ? " AND " : "", zCol, zCol);
      nCol++;
    }
    sqlite3_finalize(pCols);
    zTerm = sqlite3_str_finish(pTerm);
    if( !bExpr && nCol>0 && zTerm ) sqlite3_str_appendf(pStr, " OR (%s)", zTerm);
    sqlite3_free(zTerm);
  }
  sqlite3_finalize(pList);
  *pzWhere = sqlite3_str_finish(pStr);
  if( *pzWhere==0 ) return SQLITE_NOMEM;
  return rc;
}

/* A number that changes when the index's definition does (FNV-1a of what the search data
** depends on), kept in the store's T_info as 'definition'. */
static sqlite3_int64 libsqlIndexHash(const LibsqlIndex *p){
  char *z = sqlite3_mprintf("%s|%s|%s|%d|%d|%d%s%s%s%s", p->zTable, p->zColumn,
                            p->zWhere ? p->zWhere : "", p->eColType, p->nDim, p->eMetric,
                            p->zKey ? "|" : "", p->zKey ? p->zKey : "",
                            p->zKey ? "|" : "", p->zKey ? p->zKeyColl : "");
  sqlite3_uint64 h = 1469598103934665603ULL;
  const unsigned char *u = (const unsigned char*)z;
  while( u && *u ){ h ^= *u++; h *= 1099511628211ULL; }
  sqlite3_free(z);
  return (sqlite3_int64)(h >> 1);
}

/* SQL true for a row (of the indexed table) whose column holds a vector of the wrong size
** for the index: blobs by their length and type byte (any of libSQL's layouts), text by its
** commas. Core SQL, so the triggers that test it need nothing from the extension. */
static char *libsqlDimsMismatchSql(const LibsqlIndex *p){
  const char *c = p->zColumn;
  int n = p->nDim;
  int nBits = (n+7)/8, n1Bit = nBits + (nBits%2==0 ? 1 : 0) + 2, n8 = ((n+3)/4)*4 + 8 + 3;
  /* 1-bit and F8 blobs end with the count of unused bits or padding bytes, then the type. */
  int nUnusedBits = 8*(n1Bit-1) - n, nPad = ((n+3)/4)*4 - n;
  return sqlite3_mprintf(
      "(\"%w\" IS NOT NULL AND NOT (CASE typeof(\"%w\")"
      " WHEN 'blob' THEN length(\"%w\")=%d"
      "   OR (length(\"%w\"), substr(\"%w\",-1)) IN"
      "     (VALUES (%d, x'01'), (%d, x'02'), (%d, x'05'), (%d, x'06'))"
      "   OR (length(\"%w\"), hex(substr(\"%w\",-2))) IN (VALUES (%d, '%02X03'), (%d, '%02X04'))"
      " WHEN 'text' THEN length(\"%w\")-length(replace(\"%w\",',',''))=%d"
      " ELSE 1 END))",
      c, c, c, 4*n, c, c, 4*n+1, 8*n+1, 2*n+1, 2*n+1,
      c, c, n1Bit, nUnusedBits & 0xff, n8, nPad, c, c, n-1);
}

/*
** The statements that bring the search data of the rows whose key satisfies zKeys (the
** rest of a condition on the key: "=new.rowid", " IN (SELECT rowid FROM ...)") up to
** date with the table. zQ qualifies the index's own tables ("" or "\"aux\"."), zQT the
** indexed table. A WITHOUT ROWID table's rows are stored under the id T_keys gives their
** primary key: an id is kept while the row stays indexed, so ties keep their order, and
** its key is rewritten when an UPDATE changes it to an equal one under its collation.
*/
static char *libsqlIndexApplySql(const LibsqlIndex *p, const char *zQ, const char *zQT,
                                 const char *zKeys){
  /* The named pieces: the search data's tables and the indexed table, qualified, and the
  ** condition a covered row meets. */
  char *zStore = sqlite3_mprintf("%s\"vecsync_idx_%w\"", zQ, p->zIndex);
  char *zKeyTab = sqlite3_mprintf("%s\"vecsync_idx_%w_keys\"", zQ, p->zIndex);
  char *zTable = sqlite3_mprintf("%s\"%w\"", zQT, p->zTable);
  char *zCovered = sqlite3_mprintf("\"%w\" IS NOT NULL AND (%s)", p->zColumn,
                                   p->zWhere ? p->zWhere : "1");
  sqlite3_str *pOut = sqlite3_str_new(0);
  const char *zK = p->zK;
  char *zSql;
  if( zStore && zKeyTab && zTable && zCovered && p->zKey==0 ){
    /* Rows with a rowid: their entries deleted, then the covered ones inserted again. */
    sqlite3_str_appendf(pOut, "DELETE FROM %s WHERE rowid%s;", zStore, zKeys);
    sqlite3_str_appendf(pOut, "INSERT INTO %s(rowid, embedding)"
                        " SELECT rowid, \"%w\" FROM %s WHERE rowid%s AND %s;",
                        zStore, p->zColumn, zTable, zKeys, zCovered);
  }else if( zStore && zKeyTab && zTable && zCovered ){
    /* WITHOUT ROWID: the entries deleted; the keys no longer covered forgotten; the
    ** covered keys given an id (kept when they had one); the entries inserted again. */
    sqlite3_str_appendf(pOut, "DELETE FROM %s WHERE rowid IN"
                        " (SELECT id FROM %s WHERE pk%s);", zStore, zKeyTab, zKeys);
    sqlite3_str_appendf(pOut, "DELETE FROM %s WHERE pk%s AND NOT EXISTS (SELECT 1 FROM %s"
                        " WHERE %s=%s.pk AND %s);", zKeyTab, zKeys, zTable, zK, zKeyTab,
                        zCovered);
    sqlite3_str_appendf(pOut, "INSERT INTO %s(pk) SELECT %s FROM %s WHERE %s%s AND %s"
                        " ON CONFLICT(pk) DO UPDATE SET pk=excluded.pk;",
                        zKeyTab, zK, zTable, zK, zKeys, zCovered);
    sqlite3_str_appendf(pOut, "INSERT INTO %s(rowid, embedding)"
                        " SELECT (SELECT id FROM %s WHERE pk=\"%w\".%s), \"%w\""
                        " FROM %s WHERE %s%s AND %s;", zStore, zKeyTab, p->zTable, zK,
                        p->zColumn, zTable, zK, zKeys, zCovered);
  }
  zSql = sqlite3_str_finish(pOut);
  if( zSql && !(zStore && zKeyTab && zTable && zCovered) ){
    sqlite3_free(zSql);
    zSql = 0;
  }
  sqlite3_free(zStore);
  sqlite3_free(zKeyTab);
  sqlite3_free(zTable);
  sqlite3_free(zCovered);
  return zSql;
}

/* Make this connection's TEMP trigger that applies the index's log entries at once (kept
** when the one there already says the same). */
static int libsqlIndexApplyTrigger(sqlite3 *db, const LibsqlIndex *p){
  sqlite3_stmt *pStmt = 0;
  char *zName = sqlite3_mprintf("vecsync_apply_%s_%s", p->zSchema, p->zIndex);
  /* A trigger's INSERT and DELETE name their tables unqualified, which a TEMP trigger
  ** resolves in temp, then main: attached databases' indexes have no TEMP trigger. It
  ** does nothing once the index is dropped. */
  char *zApply = libsqlIndexApplySql(p, "", "main.", "=new.rowid");
  char *zSql = zApply==0 ? 0 : sqlite3_mprintf(
      "CREATE TEMP TRIGGER \"%w\" AFTER INSERT ON main.\"vecsync_idx_%w_log\""
      " WHEN EXISTS (SELECT 1 FROM main.sqlite_schema WHERE type='index' AND name=%Q) BEGIN"
      " %s"
      " DELETE FROM \"vecsync_idx_%w_log\" WHERE rowid=new.rowid;"
      " END",
      zName, p->zIndex, p->zIndex, zApply, p->zIndex);
  int rc = SQLITE_OK, bSame = 0;
  sqlite3_free(zApply);
  if( zName==0 || zSql==0 ){ rc = SQLITE_NOMEM; goto cleanup; }
  if( sqlite3_stricmp(p->zSchema, "main")!=0 ) goto cleanup;
  rc = sqlite3_prepare_v2(db, "SELECT sql FROM sqlite_temp_schema WHERE type='trigger' AND name=?1",
                          -1, &pStmt, 0);
  if( rc!=SQLITE_OK ) goto cleanup;
  sqlite3_bind_text(pStmt, 1, zName, -1, SQLITE_STATIC);
  if( sqlite3_step(pStmt)==SQLITE_ROW ){
    const char *zOld = (const char*)sqlite3_column_text(pStmt, 0);
    bSame = zOld && strcmp(zOld, zSql)==0;
  }
  sqlite3_finalize(pStmt);
  pStmt = 0;
  if( !bSame ){
    char *zDrop = sqlite3_mprintf("DROP TRIGGER IF EXISTS temp.\"%w\"", zName);
    if( zDrop==0 ){ rc = SQLITE_NOMEM; goto cleanup; }
    rc = sqlite3_exec(db, zDrop, 0, 0, 0);
    sqlite3_free(zDrop);
    if( rc==SQLITE_OK ) rc = sqlite3_exec(db, zSql, 0, 0, 0);
  }

cleanup:
  sqlite3_finalize(pStmt);
  sqlite3_free(zName);
  sqlite3_free(zSql);
  return rc;
}

/* Apply the log entries other connections left (or all of them, on a connection without
** the TEMP trigger) to the search data. */
static int libsqlIndexSync(sqlite3 *db, const LibsqlIndex *p, char **pzErr){
  sqlite3_stmt *pStmt = 0;
  char *zSql = sqlite3_mprintf("SELECT EXISTS (SELECT 1 FROM \"%w\".\"vecsync_idx_%w_log\")",
                               p->zSchema, p->zIndex);
  int rc, bAny = 0;
  if( zSql==0 ) return SQLITE_NOMEM;
  rc = sqlite3_prepare_v2(db, zSql, -1, &pStmt, 0);
  sqlite3_free(zSql);
  if( rc!=SQLITE_OK ) return rc;
  if( sqlite3_step(pStmt)==SQLITE_ROW ) bAny = sqlite3_column_int(pStmt, 0);
  rc = sqlite3_finalize(pStmt);
  if( rc!=SQLITE_OK || !bAny ) return rc;
  {
    char *zQ = sqlite3_mprintf("\"%w\".", p->zSchema);
    char *zKeys = sqlite3_mprintf(" IN (SELECT rowid FROM \"%w\".\"vecsync_idx_%w_log\")",
                                  p->zSchema, p->zIndex);
    char *zApply = zQ && zKeys ? libsqlIndexApplySql(p, zQ, zQ, zKeys) : 0;
    zSql = zApply==0 ? 0 : sqlite3_mprintf(
        "SAVEPOINT vecsync_sync;%sDELETE FROM \"%w\".\"vecsync_idx_%w_log\";RELEASE vecsync_sync;",
        zApply, p->zSchema, p->zIndex);
    sqlite3_free(zQ);
    sqlite3_free(zKeys);
    sqlite3_free(zApply);
  }
  if( zSql==0 ) return SQLITE_NOMEM;
  rc = sqlite3_exec(db, zSql, 0, 0, pzErr);
  sqlite3_free(zSql);
  if( rc!=SQLITE_OK ){
    sqlite3_exec(db, "ROLLBACK TO vecsync_sync; RELEASE vecsync_sync;", 0, 0, 0);
  }
  return rc;
}

/* Remove what libSQL indexes of schema zSchema that were dropped left: their triggers
** (writes need nothing from them, and log nothing more), then their tables when SQLite
** allows it. */
static int libsqlIndexDropOrphans(sqlite3 *db, const char *zSchema){
  sqlite3_stmt *pStmt = 0;
  sqlite3_str *pDrop = sqlite3_str_new(db), *pTables = sqlite3_str_new(db);
  char *zTables = 0;
  char *zSql = sqlite3_mprintf(
      "SELECT substr(s.name, 13) FROM \"%w\".sqlite_schema AS s"
      " WHERE s.type='table' AND s.name GLOB 'vecsync_idx_*_log'"
      " AND NOT EXISTS (SELECT 1 FROM \"%w\".sqlite_schema AS i WHERE i.type='index'"
      "   AND i.name=substr(s.name, 13, length(s.name)-16))",
      zSchema, zSchema);
  char *zDrop;
  int rc;
  if( zSql==0 ){
    sqlite3_free(sqlite3_str_finish(pDrop));
    sqlite3_free(sqlite3_str_finish(pTables));
    return SQLITE_NOMEM;
  }
  rc = sqlite3_prepare_v2(db, zSql, -1, &pStmt, 0);
  sqlite3_free(zSql);
  while( rc==SQLITE_OK && sqlite3_step(pStmt)==SQLITE_ROW ){
    const char *zLog = (const char*)sqlite3_column_text(pStmt, 0);   /* "<index>_log" */
    int n = zLog ? (int)strlen(zLog) - 4 : 0;
    int i;
    if( n<=0 ) continue;
    for(i=0; i<LIBSQL_TRIGGER_COUNT; i++){
      sqlite3_str_appendf(pDrop, "DROP TRIGGER IF EXISTS \"%w\".\"vecsync_idx_%.*w_%s\";",
                          zSchema, n, zLog, azLibsqlTrigger[i]);
    }
    sqlite3_str_appendf(pDrop, "DELETE FROM \"%w\".\"vecsync_idx_%w\";", zSchema, zLog);
    sqlite3_str_appendf(pTables,
        "DROP TABLE IF EXISTS \"%w\".\"vecsync_idx_%.*w\";"
        "DROP TABLE IF EXISTS \"%w\".\"vecsync_idx_%.*w_pending\";"
        "DROP TABLE IF EXISTS \"%w\".\"vecsync_idx_%.*w_keys\";"
        "DROP TABLE IF EXISTS \"%w\".\"vecsync_idx_%w\";",
        zSchema, n, zLog, zSchema, n, zLog, zSchema, n, zLog, zSchema, zLog);
  }
  sqlite3_finalize(pStmt);
  zDrop = sqlite3_str_finish(pDrop);
  zTables = sqlite3_str_finish(pTables);
  if( rc==SQLITE_OK && zDrop && zDrop[0] ) rc = sqlite3_exec(db, zDrop, 0, 0, 0);
  if( rc==SQLITE_OK && zTables && zTables[0] ){
    /* SQLite drops no table while another statement reads (SQLITE_LOCKED): the emptied
    ** tables then stay, and a later search tries again. */
    char *zSql = sqlite3_mprintf("SAVEPOINT vecsync_orphans;%sRELEASE vecsync_orphans;", zTables);
    if( zSql==0 ){
      rc = SQLITE_NOMEM;
    }else if( sqlite3_exec(db, zSql, 0, 0, 0)!=SQLITE_OK ){
      sqlite3_exec(db, "ROLLBACK TO vecsync_orphans; RELEASE vecsync_orphans;", 0, 0, 0);
    }
    sqlite3_free(zSql);
  }
  sqlite3_free(zDrop);
  sqlite3_free(zTables);
  return rc;
}

/* ---- the triggers, from named pieces ------------------------------------------------- */

/* The statements the triggers are made of, each named for what it does (an index into
** LibsqlTriggerParts.az). T is the indexed table, K its key (rowid or the WITHOUT ROWID
** key), I the index. */
enum {
  LIBSQL_NOTE_CONFLICTS = 0,    /* K of the rows a REPLACE would delete, into T_pending */
  LIBSQL_NOTE_OTHERS,           /* The same for an UPDATE, except the row itself */
  LIBSQL_REFUSE,                /* RAISE when the new row's vector has the wrong size for I */
  LIBSQL_LOG_PENDING,           /* T_pending's keys into T_log, and T_pending emptied */
  LIBSQL_LOG_NEW,               /* new.K into T_log */
  LIBSQL_LOG_OLD,               /* old.K into T_log */
  LIBSQL_LOG_OLD_IF_CHANGED,    /* old.K into T_log when the row's entry may have changed */
  LIBSQL_LOG_NEW_IF_CHANGED,    /* new.K into T_log, likewise */
  LIBSQL_PART_COUNT
};
typedef struct LibsqlTriggerParts LibsqlTriggerParts;
struct LibsqlTriggerParts {
  char *az[LIBSQL_PART_COUNT];  /* Each statement, by LIBSQL_* */
};

static void libsqlTriggerPartsFree(LibsqlTriggerParts *x){
  int i;
  for(i=0; i<LIBSQL_PART_COUNT; i++) sqlite3_free(x->az[i]);
  memset(x, 0, sizeof(*x));
}

/* Make the pieces. zConflict: the rows an INSERT OR REPLACE deletes
** (libsqlUniqueConflicts); zMismatch: a row whose vector has the wrong size
** (libsqlDimsMismatchSql). SQLITE_NOMEM when one could not be made. */
static int libsqlTriggerPartsMake(const LibsqlIndex *p, const char *zConflict,
                                  const char *zMismatch, LibsqlTriggerParts *x){
  const char *zI = p->zIndex, *zT = p->zTable, *zK = p->zK;
  const char *zCond = p->zWhere ? p->zWhere : "1";
  /* A partial index's row may enter or leave it on any change; else only a new key or
  ** a new vector changes its entry. */
  char *zChanged = p->zWhere ? sqlite3_mprintf("1")
      : sqlite3_mprintf("(%s IS NOT %s COLLATE BINARY OR old.\"%w\" IS NOT new.\"%w\")",
                        p->zOldK, p->zNewK, p->zColumn, p->zColumn);
  char *zMsg = sqlite3_mprintf(
      "vector index %s: the vector's size is not the %d dimensions of %s.%s",
      zI, p->nDim, zT, p->zColumn);
  int i, rc = SQLITE_OK;
  memset(x, 0, sizeof(*x));
  if( zChanged==0 || zMsg==0 ){ rc = SQLITE_NOMEM; goto cleanup; }
  x->az[LIBSQL_NOTE_CONFLICTS] = sqlite3_mprintf(
      "  INSERT OR IGNORE INTO \"vecsync_idx_%w_pending\"(rowid)"
      "    SELECT %s FROM \"%w\" WHERE %s;", zI, zK, zT, zConflict);
  x->az[LIBSQL_NOTE_OTHERS] = sqlite3_mprintf(
      "  INSERT OR IGNORE INTO \"vecsync_idx_%w_pending\"(rowid)"
      "    SELECT %s FROM \"%w\" WHERE (%s) AND %s<>%s;", zI, zK, zT, zConflict, zK, p->zOldK);
  x->az[LIBSQL_REFUSE] = sqlite3_mprintf(
      "  SELECT RAISE(ABORT, %Q) FROM \"%w\" WHERE %s=%s AND %s AND (%s)"
      "    AND EXISTS (SELECT 1 FROM sqlite_schema WHERE type='index' AND name=%Q);",
      zMsg, zT, zK, p->zNewK, zMismatch, zCond, zI);
  x->az[LIBSQL_LOG_PENDING] = sqlite3_mprintf(
      "  INSERT OR REPLACE INTO \"vecsync_idx_%w_log\"(rowid) SELECT rowid FROM \"vecsync_idx_%w_pending\";"
      "  DELETE FROM \"vecsync_idx_%w_pending\";", zI, zI, zI);
  x->az[LIBSQL_LOG_NEW] = sqlite3_mprintf(
      "  INSERT OR REPLACE INTO \"vecsync_idx_%w_log\"(rowid) VALUES (%s);", zI, p->zNewK);
  x->az[LIBSQL_LOG_OLD] = sqlite3_mprintf(
      "  INSERT OR REPLACE INTO \"vecsync_idx_%w_log\"(rowid) VALUES (%s);", zI, p->zOldK);
  x->az[LIBSQL_LOG_OLD_IF_CHANGED] = sqlite3_mprintf(
      "  INSERT OR REPLACE INTO \"vecsync_idx_%w_log\"(rowid) SELECT %s WHERE %s;",
      zI, p->zOldK, zChanged);
  x->az[LIBSQL_LOG_NEW_IF_CHANGED] = sqlite3_mprintf(
      "  INSERT OR REPLACE INTO \"vecsync_idx_%w_log\"(rowid) SELECT %s WHERE %s;",
      zI, p->zNewK, zChanged);
  for(i=0; i<LIBSQL_PART_COUNT; i++){
    if( x->az[i]==0 ) rc = SQLITE_NOMEM;
  }

cleanup:
  if( rc!=SQLITE_OK ) libsqlTriggerPartsFree(x);
  sqlite3_free(zChanged);
  sqlite3_free(zMsg);
  return rc;
}

/* Append "CREATE TRIGGER S.vecsync_idx_I_<suffix> <event> ON T BEGIN <body> END;". */
static void libsqlTriggerAppend(sqlite3_str *pOut, const LibsqlIndex *p, const char *zSuffix,
                                const char *zEvent, const char *zBody){
  sqlite3_str_appendf(pOut, "CREATE TRIGGER \"%w\".\"vecsync_idx_%w_%s\" %s ON \"%w\" BEGIN%s END;",
                      p->zSchema, p->zIndex, zSuffix, zEvent, p->zTable, zBody);
}

/* The triggers log each written key in T_log (the TEMP trigger applies it at once);
** INSERT OR REPLACE and UPDATE OR REPLACE delete the rows they conflict with without
** firing DELETE triggers (unless recursive_triggers is on), so the BEFORE triggers note
** those rows in T_pending and the AFTER triggers log them. A vector of the wrong size
** for this index, in a row it covers, is refused while the index exists. */
static int libsqlTriggersCreate(sqlite3 *db, const LibsqlIndex *p, char **pzErr){
  LibsqlTriggerParts x;
  sqlite3_str *pOut = 0;
  char *zConflict = 0, *zMismatch = 0, *zSql = 0, *zAfterInsert = 0, *zAfterUpdate = 0;
  int i, rc;

  memset(&x, 0, sizeof(x));
  rc = libsqlUniqueConflicts(db, p, &zConflict);
  if( rc!=SQLITE_OK ) goto cleanup;
  zMismatch = libsqlDimsMismatchSql(p);
  if( zMismatch==0 ){ rc = SQLITE_NOMEM; goto cleanup; }
  rc = libsqlTriggerPartsMake(p, zConflict, zMismatch, &x);
  if( rc!=SQLITE_OK ) goto cleanup;
  zAfterInsert = sqlite3_mprintf("%s%s%s", x.az[LIBSQL_REFUSE], x.az[LIBSQL_LOG_PENDING],
                                 x.az[LIBSQL_LOG_NEW]);
  zAfterUpdate = sqlite3_mprintf("%s%s%s%s", x.az[LIBSQL_REFUSE], x.az[LIBSQL_LOG_PENDING],
                                 x.az[LIBSQL_LOG_OLD_IF_CHANGED], x.az[LIBSQL_LOG_NEW_IF_CHANGED]);
  if( zAfterInsert==0 || zAfterUpdate==0 ){ rc = SQLITE_NOMEM; goto cleanup; }

  pOut = sqlite3_str_new(db);
  sqlite3_str_appendf(pOut, "DELETE FROM \"%w\".\"vecsync_idx_%w_pending\";"
                            "DELETE FROM \"%w\".\"vecsync_idx_%w_log\";",
                      p->zSchema, p->zIndex, p->zSchema, p->zIndex);
  for(i=0; i<LIBSQL_TRIGGER_COUNT; i++){
    sqlite3_str_appendf(pOut, "DROP TRIGGER IF EXISTS \"%w\".\"vecsync_idx_%w_%s\";",
                        p->zSchema, p->zIndex, azLibsqlTrigger[i]);
  }
  libsqlTriggerAppend(pOut, p, "bi", "BEFORE INSERT", x.az[LIBSQL_NOTE_CONFLICTS]);
  libsqlTriggerAppend(pOut, p, "bu", "BEFORE UPDATE", x.az[LIBSQL_NOTE_OTHERS]);
  libsqlTriggerAppend(pOut, p, "ai", "AFTER INSERT", zAfterInsert);
  libsqlTriggerAppend(pOut, p, "au", "AFTER UPDATE", zAfterUpdate);
  libsqlTriggerAppend(pOut, p, "ad", "AFTER DELETE", x.az[LIBSQL_LOG_OLD]);
  zSql = sqlite3_str_finish(pOut);
  if( zSql==0 ){ rc = SQLITE_NOMEM; goto cleanup; }
  rc = sqlite3_exec(db, zSql, 0, 0, pzErr);

cleanup:
  libsqlTriggerPartsFree(&x);
  sqlite3_free(zConflict);
  sqlite3_free(zMismatch);
  sqlite3_free(zAfterInsert);
  sqlite3_free(zAfterUpdate);
  sqlite3_free(zSql);
  return rc;
}

/* ---- building the search data ----------------------------------------------------------- */

/* The arguments of the store's "USING vec0(...)": exact, or with the ivf index 'type=ivf'
** asks for. The store's declaration in sqlite_schema ends with them while it fits the
** index's (libsqlStoreState); an index re-created with another type, metric or ivf option
** has its store dropped and made again. */
static char *libsqlStoreArgs(const LibsqlIndex *p){
  sqlite3_str *pOut = sqlite3_str_new(0);
  sqlite3_str_appendf(pOut, "embedding float[%d] distance_metric=%s",
                      p->nDim, vec0MetricName(p->eMetric));
  if( p->bIvf ){
    sqlite3_str_appendall(pOut, " indexed by ivf(");
    if( p->nIvfList ) sqlite3_str_appendf(pOut, "nlist=%d", p->nIvfList);
    if( p->nIvfProbe ){
      sqlite3_str_appendf(pOut, "%snprobe=%d", p->nIvfList ? ", " : "", p->nIvfProbe);
    }
    sqlite3_str_appendall(pOut, ")");
  }
  return sqlite3_str_finish(pOut);
}

/* Whether the store (the vec0 table) exists, and whether it is complete: its five
** triggers there and its backfill finished with this version's triggers and this
** definition (iHash). A build that failed half way, one made with earlier triggers, or
** one for an index since re-created differently, is not complete. */
static int libsqlStoreState(sqlite3 *db, const LibsqlIndex *p, sqlite3_int64 iHash,
                            int *pbStore, int *pbFits, int *pbComplete){
  const char *zS = p->zSchema, *zI = p->zIndex;
  sqlite3_stmt *pStmt = 0;
  int rc, nTrigger = 0;
  char *zArgs = libsqlStoreArgs(p);
  char *zSql = sqlite3_mprintf(
      "SELECT (SELECT sql FROM \"%w\".sqlite_schema WHERE type='table' AND name='vecsync_idx_%q'),"
      " (SELECT count(*) FROM \"%w\".sqlite_schema WHERE type='trigger' AND tbl_name=%Q"
      "   AND name GLOB 'vecsync_idx_%q_*')",
      zS, zI, zS, p->zTable, zI);
  *pbStore = *pbFits = *pbComplete = 0;
  if( zSql==0 || zArgs==0 ){ rc = SQLITE_NOMEM; goto cleanup; }
  rc = sqlite3_prepare_v2(db, zSql, -1, &pStmt, 0);
  if( rc!=SQLITE_OK ) goto cleanup;
  if( sqlite3_step(pStmt)==SQLITE_ROW ){
    /* The store fits when its declaration ends "vec0(<zArgs>)". */
    const char *zDecl = (const char*)sqlite3_column_text(pStmt, 0);
    size_t nDecl = zDecl ? strlen(zDecl) : 0, nArgs = strlen(zArgs);
    *pbStore = zDecl!=0;
    *pbFits = nDecl>nArgs+6 && sqlite3_strnicmp(&zDecl[nDecl-nArgs-6], "vec0(", 5)==0
           && memcmp(&zDecl[nDecl-nArgs-1], zArgs, nArgs)==0 && zDecl[nDecl-1]==')';
    nTrigger = sqlite3_column_int(pStmt, 1);
  }
  rc = sqlite3_finalize(pStmt);
  pStmt = 0;
  if( rc!=SQLITE_OK || !*pbFits || nTrigger!=LIBSQL_TRIGGER_COUNT ) goto cleanup;
  sqlite3_free(zSql);
  zSql = sqlite3_mprintf(
      "SELECT (SELECT value FROM \"%w\".\"vecsync_idx_%w_info\" WHERE key='backfilled'),"
      " (SELECT value FROM \"%w\".\"vecsync_idx_%w_info\" WHERE key='definition')",
      zS, zI, zS, zI);
  if( zSql==0 ){ rc = SQLITE_NOMEM; goto cleanup; }
  rc = sqlite3_prepare_v2(db, zSql, -1, &pStmt, 0);
  if( rc!=SQLITE_OK ) goto cleanup;
  if( sqlite3_step(pStmt)==SQLITE_ROW ){
    *pbComplete = sqlite3_column_int64(pStmt, 0)==LIBSQL_INDEX_TRIGGERS
               && sqlite3_column_int64(pStmt, 1)==iHash;
  }
  rc = sqlite3_finalize(pStmt);
  pStmt = 0;

cleanup:
  sqlite3_finalize(pStmt);
  sqlite3_free(zSql);
  sqlite3_free(zArgs);
  return rc;
}

/* Drop a store made for another declaration (its vec0 shadow tables with it). SQLite drops
** no table while another statement reads, as vector_top_k's does: SQLITE_LOCKED then,
** nothing changed (read-only: SQLITE_READONLY). */
static int libsqlStoreDrop(sqlite3 *db, const LibsqlIndex *p, char **pzErr){
  char *zWhy = 0;
  char *zSql = sqlite3_mprintf("SAVEPOINT vecsync_store; DROP TABLE \"%w\".\"vecsync_idx_%w\";"
                               " RELEASE vecsync_store;", p->zSchema, p->zIndex);
  int rc = zSql ? sqlite3_exec(db, zSql, 0, 0, &zWhy) : SQLITE_NOMEM;
  if( rc!=SQLITE_OK && rc!=SQLITE_NOMEM ){
    sqlite3_exec(db, "ROLLBACK TO vecsync_store; RELEASE vecsync_store;", 0, 0, 0);
    if( (rc&0xff)==SQLITE_LOCKED ){
      *pzErr = sqlite3_mprintf("the search data of index %s was made for another declaration "
                               "of it, and cannot be made again while a statement reads: run "
                               "select vecsync_rebuild('%s')", p->zIndex, p->zIndex);
    }else{
      *pzErr = sqlite3_mprintf("the search data of index %s was made for another declaration "
                               "of it, and cannot be dropped: %s", p->zIndex,
                               zWhy ? zWhy : sqlite3_errstr(rc));
    }
  }
  sqlite3_free(zWhy);
  sqlite3_free(zSql);
  return rc;
}

/* The store emptied (bStore: it exists) or created, then T_pending and T_log (and, for a
** WITHOUT ROWID table, T_keys, emptied), with the key's collation. */
static int libsqlStoreTables(sqlite3 *db, const LibsqlIndex *p, int bStore, char **pzErr){
  const char *zS = p->zSchema, *zI = p->zIndex;
  sqlite3_str *pOut = sqlite3_str_new(db);
  char *zSql;
  int rc;
  if( bStore ){
    sqlite3_str_appendf(pOut,
        "DELETE FROM \"%w\".\"vecsync_idx_%w_info\" WHERE key IN ('backfilled', 'definition');"
        "DELETE FROM \"%w\".\"vecsync_idx_%w\";", zS, zI, zS, zI);
  }else{
    char *zArgs = libsqlStoreArgs(p);
    if( zArgs==0 ){ sqlite3_free(sqlite3_str_finish(pOut)); return SQLITE_NOMEM; }
    sqlite3_str_appendf(pOut, "CREATE VIRTUAL TABLE \"%w\".\"vecsync_idx_%w\" USING vec0(%s);",
                        zS, zI, zArgs);
    sqlite3_free(zArgs);
  }
  if( p->zKey ){
    /* T_keys gives each indexed key the id the search data stores it under. */
    sqlite3_str_appendf(pOut,
        "CREATE TABLE IF NOT EXISTS \"%w\".\"vecsync_idx_%w_pending\"(rowid PRIMARY KEY COLLATE \"%w\") WITHOUT ROWID;"
        "CREATE TABLE IF NOT EXISTS \"%w\".\"vecsync_idx_%w_log\"(rowid PRIMARY KEY COLLATE \"%w\") WITHOUT ROWID;"
        "CREATE TABLE IF NOT EXISTS \"%w\".\"vecsync_idx_%w_keys\"(id INTEGER PRIMARY KEY, pk UNIQUE COLLATE \"%w\");"
        "DELETE FROM \"%w\".\"vecsync_idx_%w_keys\";",
        zS, zI, p->zKeyColl, zS, zI, p->zKeyColl, zS, zI, p->zKeyColl, zS, zI);
  }else{
    sqlite3_str_appendf(pOut,
        "CREATE TABLE IF NOT EXISTS \"%w\".\"vecsync_idx_%w_pending\"(rowid INTEGER PRIMARY KEY);"
        "CREATE TABLE IF NOT EXISTS \"%w\".\"vecsync_idx_%w_log\"(rowid INTEGER PRIMARY KEY);",
        zS, zI, zS, zI);
  }
  zSql = sqlite3_str_finish(pOut);
  rc = zSql ? sqlite3_exec(db, zSql, 0, 0, pzErr) : SQLITE_NOMEM;
  sqlite3_free(zSql);
  return rc;
}

/* Train the ivf index of a filled store on all its rows (the fill's inserts trained it
** on the first VEC0_IVF_TRAIN_ROWS only, or not at all), in one savepoint. */
static int libsqlStoreTrain(sqlite3 *db, Vec0Registry *pReg, const LibsqlIndex *p,
                            char **pzErr){
  Vec0Table *pStore = 0;
  char *zStore = sqlite3_mprintf("vecsync_idx_%s", p->zIndex);
  int rc = zStore ? vec0Find(db, pReg, p->zSchema, zStore, &pStore, pzErr) : SQLITE_NOMEM;
  if( rc==SQLITE_OK ) rc = vec0StorageReady(pStore);
  if( rc==SQLITE_OK ) rc = sqlite3_exec(db, "SAVEPOINT vecsync_train", 0, 0, 0);
  if( rc==SQLITE_OK ){
    rc = vec0IvfTrain(pStore, 0);
    if( rc!=SQLITE_OK ){
      /* pStore is not used after the rollback: in a transaction that changed the schema
      ** (the one that made the store) it resets the schema, which disconnects pStore and
      ** frees it. Its lists go first, to be read again from what the file holds. */
      if( *pzErr==0 ) *pzErr = vec0TakeError(pStore);
      vec0IvfDrop(pStore);
      pStore = 0;
      sqlite3_exec(db, "ROLLBACK TO vecsync_train", 0, 0, 0);
    }
    sqlite3_exec(db, "RELEASE vecsync_train", 0, 0, 0);
  }
  if( rc!=SQLITE_OK && pStore && *pzErr==0 ) *pzErr = vec0TakeError(pStore);
  sqlite3_free(zStore);
  return rc;
}

/* Fill the store with every covered row (its key " IS NOT NULL": a rowid, or a WITHOUT
** ROWID key, never is), train its ivf index if it has one, then record it complete.
** *pnRow: the rows filled in. */
static int libsqlStoreFill(sqlite3 *db, Vec0Registry *pReg, const LibsqlIndex *p,
                           sqlite3_int64 iHash, sqlite3_int64 *pnRow, char **pzErr){
  char *zQ = sqlite3_mprintf("\"%w\".", p->zSchema);
  char *zSql = zQ ? libsqlIndexApplySql(p, zQ, zQ, " IS NOT NULL") : 0;
  int rc = zSql ? sqlite3_exec(db, zSql, 0, 0, pzErr) : SQLITE_NOMEM;
  sqlite3_free(zSql);
  zSql = 0;
  if( rc==SQLITE_OK && pnRow ) *pnRow = sqlite3_changes64(db);
  if( rc==SQLITE_OK && p->bIvf ) rc = libsqlStoreTrain(db, pReg, p, pzErr);
  if( rc==SQLITE_OK ){
    zSql = sqlite3_mprintf(
        "INSERT INTO \"%w\".\"vecsync_idx_%w_info\"(key, value)"
        " VALUES ('backfilled', %d), ('definition', %lld)",
        p->zSchema, p->zIndex, LIBSQL_INDEX_TRIGGERS, iHash);
    rc = zSql ? sqlite3_exec(db, zSql, 0, 0, pzErr) : SQLITE_NOMEM;
  }
  sqlite3_free(zQ);
  sqlite3_free(zSql);
  return rc;
}

int libsqlIndexBuild(sqlite3 *db, Vec0Registry *pReg, const LibsqlIndex *pDef, int bRebuild,
                     sqlite3_int64 *pnRow, char **pzErr){
  sqlite3_int64 iHash = libsqlIndexHash(pDef);
  int rc, bStore = 0, bFits = 0, bComplete = 0;

  rc = libsqlIndexDropOrphans(db, pDef->zSchema);
  if( rc==SQLITE_OK ) rc = libsqlStoreState(db, pDef, iHash, &bStore, &bFits, &bComplete);
  if( rc==SQLITE_OK && bStore && !bFits ){
    /* Made exact and now declared ivf, or the reverse: made again, never misread. */
    rc = libsqlStoreDrop(db, pDef, pzErr);
    bStore = 0;
  }
  if( rc!=SQLITE_OK ) return rc;
  if( bComplete && !bRebuild ){
    rc = libsqlIndexSync(db, pDef, pzErr);
  }else{
    rc = libsqlStoreTables(db, pDef, bStore, pzErr);
    if( rc==SQLITE_OK ) rc = libsqlTriggersCreate(db, pDef, pzErr);
    if( rc==SQLITE_OK ) rc = libsqlStoreFill(db, pReg, pDef, iHash, pnRow, pzErr);
  }
  /* The TEMP trigger only saves later searches the work: a connection that cannot make
  ** one (query_only) applies the log when it searches, or scans the table. */
  if( rc==SQLITE_OK ) (void)libsqlIndexApplyTrigger(db, pDef);
  return rc;
}
