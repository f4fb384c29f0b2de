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
** functions, the vec0 module and the libSQL index functions on one connection. A
** host that links SQLite registers the same code for every connection it opens with
** sqlite3_auto_extension(vecsync_auto_extension_entry()).
*/
#include "vecsync_int.h"
#include "vecsync.h"
SQLITE_EXTENSION_INIT1

#include <pthread.h>
#include <string.h>

static pthread_once_t kernelsOnce = PTHREAD_ONCE_INIT;

/* Every connection the extension is registered on has one Vec0Registry, listed here so
** that loading the extension a second time on a connection finds it and registers
** nothing again (registering the modules anew would free what open tables point to). */
static pthread_mutex_t registryMutex = PTHREAD_MUTEX_INITIALIZER;
static Vec0Registry *pAllRegistries = 0;

/* Destructor of each module registered with a registry: the last one frees it. */
static void vsRegistryRelease(void *pArg){
  Vec0Registry *pReg = (Vec0Registry*)pArg;
  Vec0Registry **pp;
  int bFree;
  pthread_mutex_lock(&registryMutex);
  bFree = --pReg->nRef<=0;
  if( bFree ){
    for(pp=&pAllRegistries; *pp; pp=&(*pp)->pNextReg){
      if( *pp==pReg ){ *pp = pReg->pNextReg; break; }
    }
  }
  pthread_mutex_unlock(&registryMutex);
  if( bFree ){
    vec0MigrateForgetAll(pReg);
    sqlite3_free(pReg);
  }
}

/* The registry of db, new (*pbNew) when the extension was not registered on db yet. */
static int vsRegistryFor(sqlite3 *db, Vec0Registry **ppReg, int *pbNew){
  Vec0Registry *pReg;
  int rc = SQLITE_OK;
  *pbNew = 0;
  pthread_mutex_lock(&registryMutex);
  for(pReg=pAllRegistries; pReg && pReg->db!=db; pReg=pReg->pNextReg){}
  if( pReg==0 ){
    pReg = sqlite3_malloc(sizeof(*pReg));
    if( pReg==0 ){
      rc = SQLITE_NOMEM;
    }else{
      memset(pReg, 0, sizeof(*pReg));
      pReg->db = db;
      /* Held by this function until the modules hold it. */
      pReg->nRef = 1;
      pReg->xRelease = vsRegistryRelease;
      pReg->pNextReg = pAllRegistries;
      pAllRegistries = pReg;
      *pbNew = 1;
    }
  }
  pthread_mutex_unlock(&registryMutex);
  *ppReg = pReg;
  return rc;
}

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
  int bNew = 0;
  SQLITE_EXTENSION_INIT2(pApi);
  pthread_once(&kernelsOnce, vsKernelsInit);
  rc = vsRegistryFor(db, &pReg, &bNew);
  if( rc!=SQLITE_OK || !bNew ) return rc;     /* registered already: nothing to do */
  rc = vsRegisterScalarFunctions(db, &zErr);
  if( rc==SQLITE_OK ) rc = vsRegisterTypedFunctions(db, &zErr);
  if( rc==SQLITE_OK ) rc = vsRegisterVec0Module(db, pReg, &zErr);
  if( rc==SQLITE_OK ) rc = vsRegisterVec0Batch(db, pReg, &zErr);
  if( rc==SQLITE_OK ) rc = vsRegisterLibsqlIndex(db, pReg, &zErr);
  if( rc==SQLITE_OK ) rc = vsRegisterVec0Migrate(db, pReg, &zErr);
  vsRegistryRelease(pReg);                    /* the modules hold it now */
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

long long vecsync_memory_budget(long long bytes){
  return (long long)vec0MemoryBudget(bytes);
}
