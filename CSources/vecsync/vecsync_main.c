/*
** vecsync_main.c: the extension's entry point.
**
** Usage:
**
**   sqlite> .load .build/release/libvecsync          -- finds sqlite3_vecsync_init
**   sqlite> select vecsync_debug();
**
**   import sqlite3                                    # Python
**   conn.enable_load_extension(True); conn.load_extension(".build/release/libvecsync")
**
** How it works: sqlite3_vecsync_init() receives SQLite's routine table (through
** SQLITE_EXTENSION_INIT2, so no libsqlite3 is linked here) and registers the scalar
** functions, the vec0 module and libSQL's vector index functions on one connection. A
** host that links SQLite registers the same code for every connection it opens with
** sqlite3_auto_extension(vecsync_auto_extension_entry()).
*/
#include "vecsync_int.h"
#include "vecsync.h"
SQLITE_EXTENSION_INIT1

#include <pthread.h>

static pthread_once_t kernelsOnce = PTHREAD_ONCE_INIT;

#ifdef _WIN32
__declspec(dllexport)
#endif
int sqlite3_vecsync_init(
  sqlite3 *db,
  char **pzErrMsg,
  const sqlite3_api_routines *pApi
){
  int rc = SQLITE_OK;
  char *zErr = 0;
  Vec0Registry *pReg = 0;
  SQLITE_EXTENSION_INIT2(pApi);
  pthread_once(&kernelsOnce, vsKernelsInit);
  rc = vsRegisterScalarFunctions(db, &zErr);
  if( rc==SQLITE_OK ) rc = vsRegisterVec0(db, &pReg, &zErr);
  if( rc==SQLITE_OK ) rc = vsRegisterVectorIndex(db, pReg, &zErr);
  if( rc!=SQLITE_OK ){
    if( pzErrMsg ){
      *pzErrMsg = zErr;
      zErr = 0;
    }
  }
  sqlite3_free(zErr);
  return rc;
}

void (*vecsync_auto_extension_entry(void))(void){
  return (void(*)(void))sqlite3_vecsync_init;
}

const char *vecsync_version_string(void){
  return VECSYNC_VERSION;
}
