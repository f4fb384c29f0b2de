/* vec0_ivf.c, built as the loadable extension (no SQLITE_CORE): Package.swift says why. */
#include "../vecsync/vec0_ivf.c"
