/* The public header, for the loadable build: the one in CSources/vecsync/include. */
#include "../../vecsync/include/vecsync.h"
