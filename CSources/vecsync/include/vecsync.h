/*
** vecsync.h: the public face of the VecSync SQLite extension.
**
** Usage, from the sqlite3 shell (the entry point is found from the file name):
**
**   sqlite> .load .build/release/libvecsync
**   sqlite> select vector_extract(vector32('[1, 2.5, -3e-2]'));
**   [1,2.5,-0.03]
**
** From a host that links SQLite itself and compiles these sources with SQLITE_CORE (the
** Swift package does), install it on each connection the host opens:
**
**   char zErr[256];
**   if( vecsync_install(db, zErr, sizeof(zErr))!=SQLITE_OK ) fprintf(stderr, "%s\n", zErr);
**
** sqlite3_auto_extension(vecsync_auto_extension_entry()) reaches every later connection
** instead, where the SQLite library allows it: Apple's returns SQLITE_MISUSE and does
** nothing.
**
** The declarations use incomplete struct types so this header can sit beside any
** sqlite3.h without redefining its typedefs.
*/
#ifndef VECSYNC_H
#define VECSYNC_H

#ifdef __cplusplus
extern "C" {
#endif

struct sqlite3;
struct sqlite3_api_routines;

/* The extension's entry point, as sqlite3_load_extension() looks it up. */
int sqlite3_vecsync_init(
  struct sqlite3 *db,                         /* Connection to register on */
  char **pzErrMsg,                            /* OUT: error text, sqlite3_malloc'ed */
  const struct sqlite3_api_routines *pApi     /* SQLite's routine table */
);

/* Installs the extension on one open connection of the SQLite the host links: the
** SQLITE_CORE build only (the loadable build answers SQLITE_MISUSE). Installing it twice on
** a connection is harmless. Returns an SQLite result code; on failure zErr (nErr bytes,
** may be NULL) receives the reason. */
int vecsync_install(struct sqlite3 *db, char *zErr, int nErr);

/* sqlite3_auto_extension(vecsync_auto_extension_entry()) in the SQLITE_CORE build, and its
** result: SQLITE_MISUSE on Apple's SQLite, which does not support auto extensions, and in
** the loadable build. */
int vecsync_register_auto_extension(void);

/* Undoes vecsync_register_auto_extension() (sqlite3_cancel_auto_extension()); nothing in
** the loadable build. */
void vecsync_unregister_auto_extension(void);

/* The entry point cast to the type sqlite3_auto_extension() takes. */
void (*vecsync_auto_extension_entry(void))(void);

/* The extension's version, e.g. "0.2.0". */
const char *vecsync_version_string(void);

/* The memory the process may spend on in-memory copies of vec0 tables, in bytes: a table
** whose vectors would take more is searched by reading them from the database instead.
** 0 (the default) means no limit. Sets it when bytes >= 0; returns the budget in force. */
long long vecsync_memory_budget(long long bytes);

#ifdef __cplusplus
}
#endif
#endif /* VECSYNC_H */
