/*
** vec0_table.c: what every file of the vec0 module shares about a connected table: its
** error text, and the connection's list of tables (Vec0Registry), where the batch
** function, vecsync_cache_info(), the migration and vector_top_k find one by name.
**
** Usage (internal):
**
**   vec0SetError(p, "vec0 \"%s\": storage is damaged: ...", p->zName);
**   zErr = vec0TakeError(p);                      -- the message, to report elsewhere
**   rc = vec0Find(db, pReg, "main", "vec_photos", &p, &zErr);
**
** How it works: a table's error text is its sqlite3_vtab's zErrMsg, which SQLite reports
** for a failed method. vec0Find looks through the registry's list (vec0.c adds a table on
** connect, removes it on disconnect); a table not connected yet on this connection is
** connected by preparing a statement that names it.
*/
#include "vecsync_int.h"
SQLITE_EXTENSION_INIT3

#include <stdarg.h>
#include <string.h>

/* ---- errors ------------------------------------------------------------------------------ */

void vec0SetError(Vec0Table *p, const char *zFmt, ...){
  va_list ap;
  va_start(ap, zFmt);
  sqlite3_free(p->base.zErrMsg);
  p->base.zErrMsg = sqlite3_vmprintf(zFmt, ap);
  va_end(ap);
}

char *vec0TakeError(Vec0Table *p){
  char *z = p->base.zErrMsg;
  p->base.zErrMsg = 0;
  return z;
}

/* ---- the connection's tables ------------------------------------------------------------ */

void vec0RegistryAdd(Vec0Registry *pReg, Vec0Table *p){
  p->pReg = pReg;
  p->pNext = pReg->pFirst;
  pReg->pFirst = p;
}

void vec0RegistryRemove(Vec0Table *p){
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
  int bTried = 0, rc = SQLITE_OK;
  *ppTab = 0;
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
      if( zSql==0 ) return SQLITE_NOMEM;
      rc = sqlite3_prepare_v2(db, zSql, -1, &pStmt, 0);
      sqlite3_free(zSql);
      sqlite3_finalize(pStmt);
      if( rc!=SQLITE_OK ){
        *pzErr = sqlite3_mprintf("no such vec0 table: %s (%s)", zName, sqlite3_errmsg(db));
        return rc==SQLITE_NOMEM ? rc : SQLITE_ERROR;
      }
    }
  }
  *pzErr = sqlite3_mprintf("%s is not a vec0 table", zName);
  return SQLITE_ERROR;
}
