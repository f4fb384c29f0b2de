/*
** vecsync_zlib.h: gzip for the sync server's HTTP bodies, over the system's zlib.
**
** Two whole-buffer calls: vszGzip() compresses a response body, vszInflate() decompresses
** a request body sent with Content-Encoding gzip or deflate, refusing output past a limit
** (a small body that inflates to gigabytes stops at the limit, not at the memory's end).
** The output is allocated with malloc(); the caller frees it with free().
*/
#ifndef VECSYNC_ZLIB_H
#define VECSYNC_ZLIB_H

#include <stddef.h>

#define VSZ_OK        0   /* done */
#define VSZ_MALFORMED 1   /* the input is not one complete gzip or zlib stream */
#define VSZ_TOO_LARGE 2   /* the output would pass the limit */
#define VSZ_NOMEM     3   /* out of memory */
#define VSZ_ERROR     4   /* zlib failed otherwise */

/* Compresses aIn[0..nIn) into one gzip member. */
int vszGzip(const unsigned char *aIn, size_t nIn, unsigned char **paOut, size_t *pnOut);

/* Decompresses one gzip member or zlib stream (detected from its header) of at most
** nLimit bytes; bytes after the stream's end make the input malformed. */
int vszInflate(const unsigned char *aIn, size_t nIn, size_t nLimit, unsigned char **paOut, size_t *pnOut);

#endif
