/* vecsync_main.c, built as the loadable extension (no SQLITE_CORE): Package.swift says why. */
#include "../vecsync/vecsync_main.c"
