/* vector_sql.c, built as the loadable extension (no SQLITE_CORE): Package.swift says why. */
#include "../vecsync/vector_sql.c"
