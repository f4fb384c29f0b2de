/*
** vecsync_zlib.c: whole-buffer gzip and inflate for HTTP bodies (see vecsync_zlib.h).
**
** Usage (Swift, in VecSyncServer's HTTPCompression.swift):
**
**     var out: UnsafeMutablePointer<UInt8>? = nil; var n = 0
**     let rc = vszInflate(bytes, count, limit, &out, &n)   // VSZ_OK, VSZ_MALFORMED, VSZ_TOO_LARGE, …
**     defer { free(out) }
**
** How it works: both calls run vszStream(), one z_stream fed the whole input at once
** into an output buffer that grows by doubling (capped at the limit); they differ only
** in the stream's direction. windowBits 15+16 writes a gzip header, 15+32 reads either a
** gzip or a zlib header.
*/
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include "vecsync_zlib.h"

/* Grows *paBuf (of *pnAlloc bytes) to at least nWant bytes, at most nCap. */
static int vszGrow(unsigned char **paBuf, size_t *pnAlloc, size_t nWant, size_t nCap){
  int rc = VSZ_OK;
  size_t nNew = *pnAlloc ? *pnAlloc : 4096;
  unsigned char *aNew = 0;
  while( nNew<nWant ) nNew *= 2;
  if( nNew>nCap ) nNew = nCap;
  if( nNew<nWant ){
    rc = VSZ_TOO_LARGE;
    goto cleanup;
  }
  aNew = realloc(*paBuf, nNew ? nNew : 1);
  if( aNew==0 ){
    rc = VSZ_NOMEM;
    goto cleanup;
  }
  *paBuf = aNew;
  *pnAlloc = nNew;
cleanup:
  return rc;
}

/*
** Runs one z_stream over aIn[0..nIn) into a new buffer of at most nLimit bytes, handed
** to the caller in *paOut and *pnOut: deflate to one gzip member when bInflate is 0 (the
** buffer sized by deflateBound() first), else inflate one gzip or zlib stream, which must
** end exactly where the input does.
*/
static int vszStream(
  int bInflate,                   /* 1: inflate; 0: deflate to gzip */
  const unsigned char *aIn, size_t nIn,
  size_t nLimit,                  /* the most output bytes */
  unsigned char **paOut, size_t *pnOut
){
  int rc = VSZ_OK;
  int bInit = 0;
  z_stream z;
  unsigned char *aBuf = 0;
  size_t nAlloc = 0;
  size_t nUsed = 0;
  int zrc = Z_OK;

  *paOut = 0;
  *pnOut = 0;
  memset(&z, 0, sizeof(z));
  if( nIn>(size_t)UINT32_MAX ){ rc = VSZ_TOO_LARGE; goto cleanup; }
  if( bInflate ){
    zrc = inflateInit2(&z, 15+32);
  }else{
    zrc = deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15+16, 8, Z_DEFAULT_STRATEGY);
  }
  if( zrc!=Z_OK ){
    rc = VSZ_NOMEM;
    goto cleanup;
  }
  bInit = 1;
  if( !bInflate ){
    /* The whole member in one deflate() call. */
    rc = vszGrow(&aBuf, &nAlloc, deflateBound(&z, (uLong)nIn), nLimit);
    if( rc!=VSZ_OK ) goto cleanup;
  }
  z.next_in = (Bytef*)aIn;
  z.avail_in = (uInt)nIn;
  while( zrc!=Z_STREAM_END ){
    size_t nChunk;
    if( nUsed==nAlloc ){
      /* One byte past the limit: an output that fills the limit exactly still ends. */
      rc = vszGrow(&aBuf, &nAlloc, nUsed+1, nLimit<(size_t)-1 ? nLimit+1 : nLimit);
      if( rc!=VSZ_OK ) goto cleanup;
    }
    nChunk = nAlloc - nUsed;
    if( nChunk>(size_t)UINT32_MAX ) nChunk = UINT32_MAX;
    z.next_out = aBuf + nUsed;
    z.avail_out = (uInt)nChunk;
    zrc = bInflate ? inflate(&z, Z_NO_FLUSH) : deflate(&z, Z_FINISH);
    nUsed += nChunk - z.avail_out;
    if( nUsed>nLimit ){
      rc = VSZ_TOO_LARGE;
      goto cleanup;
    }
    if( !bInflate && zrc!=Z_STREAM_END ){
      rc = VSZ_ERROR;  /* deflateBound() promised room for the whole member */
      goto cleanup;
    }
    if( zrc==Z_MEM_ERROR ){
      rc = VSZ_NOMEM;
      goto cleanup;
    }
    if( zrc!=Z_OK && zrc!=Z_STREAM_END ){
      /* Z_DATA_ERROR, Z_NEED_DICT, or Z_BUF_ERROR with input used up: not a whole stream. */
      rc = VSZ_MALFORMED;
      goto cleanup;
    }
    if( zrc==Z_OK && z.avail_in==0 && z.avail_out>0 ){
      rc = VSZ_MALFORMED;  /* the input ends before the stream does */
      goto cleanup;
    }
  }
  if( z.avail_in!=0 ){
    rc = VSZ_MALFORMED;
    goto cleanup;
  }
  *pnOut = nUsed;
  *paOut = aBuf;
  aBuf = 0;
cleanup:
  if( bInit ){
    if( bInflate ){
      inflateEnd(&z);
    }else{
      deflateEnd(&z);
    }
  }
  free(aBuf);
  return rc;
}

int vszGzip(const unsigned char *aIn, size_t nIn, unsigned char **paOut, size_t *pnOut){
  return vszStream(0, aIn, nIn, (size_t)-1, paOut, pnOut);
}

int vszInflate(const unsigned char *aIn, size_t nIn, size_t nLimit, unsigned char **paOut, size_t *pnOut){
  return vszStream(1, aIn, nIn, nLimit, paOut, pnOut);
}
