/* vector_topk.c, built as the loadable extension (no SQLITE_CORE): Package.swift says why. */
#include "../vecsync/vector_topk.c"
