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
** How it works: sqlite3_vecsync_init() registers the scalar functions, the vec0 module
** and the libSQL index functions on one connection. The same sources are built two ways:
**
**   - the loadable extension (libvecsync.so / .dylib, no SQLITE_CORE): SQLite hands the
**     entry point its routine table (SQLITE_EXTENSION_INIT2), so no libsqlite3 is linked;
**   - the host build (SQLITE_CORE, what the Swift package compiles into an app): the code
**     calls the SQLite the host links directly, whichever it is (Apple's, Debian's,
**     SQLCipher, a custom build), and the host installs it on each connection it opens
**     with vecsync_install(). Apple's SQLite makes sqlite3_auto_extension() a no-op that
**     returns SQLITE_MISUSE, so a host there cannot rely on it.
*/
#include "vecsync_int.h"
#include "vecsync.h"
SQLITE_EXTENSION_INIT1

#include <pthread.h>
#include <stdio.h>
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
    libsqlTopKMemoFree(pReg->pTopK);
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
#ifndef SQLITE_CORE
  /* The loadable build reaches SQLite only through pApi: without it there is nothing to
  ** call, not even sqlite3_mprintf() for the error text. */
  if( pApi==0 ) return SQLITE_MISUSE;
#endif
  SQLITE_EXTENSION_INIT2(pApi);
  pthread_once(&kernelsOnce, vsKernelsInit);
  rc = vsRegistryFor(db, &pReg, &bNew);
  if( rc!=SQLITE_OK || !bNew ) return rc;     /* registered already: nothing to do */
  rc = vsRegisterScalarFunctions(db, &zErr);
  if( rc==SQLITE_OK ) rc = vsRegisterTypedFunctions(db, &zErr);
  if( rc==SQLITE_OK ) rc = vsRegisterVec0Module(db, pReg, &zErr);
  if( rc==SQLITE_OK ) rc = vsRegisterVec0Batch(db, pReg, &zErr);
  if( rc==SQLITE_OK ) rc = vsRegisterVec0Ivf(db, pReg, &zErr);
  if( rc==SQLITE_OK ) rc = vsRegisterLibsqlIndex(db, pReg, &zErr);
  if( rc==SQLITE_OK ) rc = vsRegisterVec0Migrate(db, pReg, &zErr);
  if( rc==SQLITE_OK ) rc = vsRegisterVec0Export(db, pReg, &zErr);
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

int vecsync_install(sqlite3 *db, char *zErr, int nErr){
  int rc;
  char *zMsg = 0;
  if( zErr && nErr>0 ) zErr[0] = 0;
#ifdef SQLITE_CORE
  if( db==0 ) return SQLITE_MISUSE;
  rc = sqlite3_vecsync_init(db, &zMsg, 0);
  if( rc!=SQLITE_OK && zErr && nErr>0 ){
    snprintf(zErr, (size_t)nErr, "%s", zMsg ? zMsg : sqlite3_errstr(rc));
  }
  sqlite3_free(zMsg);
#else
  (void)db;
  (void)zMsg;
  rc = SQLITE_MISUSE;
  if( zErr && nErr>0 ){
    snprintf(zErr, (size_t)nErr, "%s", "this is the loadable build of VecSync: load it with "
        "sqlite3_load_extension(); vecsync_install() needs the SQLITE_CORE build");
  }
#endif
  return rc;
}

int vecsync_register_auto_extension(void){
#ifdef SQLITE_CORE
# if defined(__clang__)
#  pragma clang diagnostic push
   /* Apple's sqlite3.h deprecates it ("Process-global auto extensions are not supported on
   ** Apple platforms"); the caller reports what it returns, SQLITE_MISUSE there. */
#  pragma clang diagnostic ignored "-Wdeprecated-declarations"
# endif
  return sqlite3_auto_extension(vecsync_auto_extension_entry());
# if defined(__clang__)
#  pragma clang diagnostic pop
# endif
#else
  return SQLITE_MISUSE;
#endif
}

void vecsync_unregister_auto_extension(void){
#ifdef SQLITE_CORE
  sqlite3_cancel_auto_extension(vecsync_auto_extension_entry());
#endif
}

const char *vecsync_version_string(void){
  return VECSYNC_VERSION;
}

long long vecsync_memory_budget(long long bytes){
  return (long long)vec0MemoryBudget(bytes);
}
