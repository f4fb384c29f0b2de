/*
** apple_sqlite_shim.c: Apple's SQLite, as far as extensions go, over any other SQLite.
**
** Usage (what make test-apple-sqlite does):
**
**   cc -shared -fPIC -o .build/apple-sqlite/libapplesqlite.so scripts/apple-sqlite/apple_sqlite_shim.c
**   LD_PRELOAD=$PWD/.build/apple-sqlite/libapplesqlite.so swift test --skip-build ...
**
** How it works: preloaded, its definitions come before libsqlite3's for every caller in the
** process. The system SQLite of macOS and iOS
**   - marks sqlite3_auto_extension() "not supported on Apple platforms": it returns
**     SQLITE_MISUSE (21) and registers nothing (so every later connection lacks it);
**   - is built without extension loading: sqlite3_enable_load_extension() and
**     sqlite3_load_extension() fail.
** A host that installs VecSync per connection (the SQLITE_CORE build's vecsync_install())
** works the same with or without this shim; one that relies on the auto extension or on
** loading libvecsync fails here as it would on an iPhone.
*/
#include <string.h>

typedef struct sqlite3 sqlite3;

#define SHIM_MISUSE 21   /* SQLITE_MISUSE */
#define SHIM_ERROR  1    /* SQLITE_ERROR */

/* sqlite3_malloc'ed error text is what callers free; this shim cannot call into SQLite
** without resolving it, so it hands back no text (SQLite allows a NULL *pzErrMsg). */
int sqlite3_auto_extension(void (*xEntryPoint)(void)){
  (void)xEntryPoint;
  return SHIM_MISUSE;
}

int sqlite3_cancel_auto_extension(void (*xEntryPoint)(void)){
  (void)xEntryPoint;
  return 0;
}

int sqlite3_enable_load_extension(sqlite3 *db, int onoff){
  (void)db;
  (void)onoff;
  return SHIM_ERROR;
}

int sqlite3_load_extension(sqlite3 *db, const char *zFile, const char *zProc, char **pzErrMsg){
  (void)db;
  (void)zFile;
  (void)zProc;
  if( pzErrMsg ) *pzErrMsg = 0;
  return SHIM_ERROR;
}
