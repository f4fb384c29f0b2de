/* libsql_index.c, built as the loadable extension (no SQLITE_CORE): Package.swift says why. */
#include "../vecsync/libsql_index.c"
