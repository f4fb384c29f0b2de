/*
** fuzz_vec0_shared.c: fuzz_vec0's programs on a WAL database file shared by two
** connections (see FUZZ_VEC0_SHARED in fuzz_vec0.c): the process-wide copy of a vec0
** table, its change log, and the snapshots and private copies of each connection.
*/
#define FUZZ_VEC0_SHARED 1
#include "fuzz_vec0.c"
