/*
** vector_codec.c: vectors from SQL values, and vectors back into SQL results.
**
** Usage (every vector function goes through this file):
**
**   select vector32('[1, 2.5, -3e-2]');        -- text in, raw little-endian float32 out
**   select vector32(x'0000803f00000040');       -- an F32 blob is checked and kept
**   select vector64('[1,2]');                   -- F64: 8 bytes an element, type byte 0x02
**
** Formats, as libSQL defines them:
**   text  '[' number (',' number)* ']' with blanks anywhere between tokens; '[]' is the
**         empty vector. Numbers are decimal with optional sign, fraction and exponent.
**   F32   4·D bytes of little-endian IEEE-754 binary32, optionally followed by one type
**         byte 0x01.
**   F64   8·D bytes of little-endian binary64 followed by the type byte 0x02.
**
** Nothing is accepted silently wrong: NaN, infinities, values beyond float32's range in
** an F32 vector, blobs of the wrong length and vectors over 65,536 elements are errors
** whose message names the problem.
*/
#define _GNU_SOURCE 1
#include "vecsync_int.h"
SQLITE_EXTENSION_INIT3

#include <float.h>
#include <locale.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#ifdef __APPLE__
# include <xlocale.h>
#endif

/* Text is parsed in the "C" locale whatever the host program set, so '2.5' is 2.5. */
static locale_t cLocale = (locale_t)0;
static pthread_once_t cLocaleOnce = PTHREAD_ONCE_INIT;
static void vsCLocaleInit(void){
  cLocale = newlocale(LC_ALL_MASK, "C", (locale_t)0);
}

static int vsIsBlank(char c){
  return c==' ' || c=='\t' || c=='\n' || c=='\r' || c=='\f' || c=='\v';
}
static int vsIsDigit(char c){ return c>='0' && c<='9'; }

/* Length of the number token at z[0..n), 0 if none: [+-] digits [. digits] [e [+-] digits],
** or a fraction with no leading digits (".5"). */
static int vsNumberLength(const char *z, int n){
  int i = 0, nDigit = 0;
  if( i<n && (z[i]=='+' || z[i]=='-') ) i++;
  while( i<n && vsIsDigit(z[i]) ){ i++; nDigit++; }
  if( i<n && z[i]=='.' ){
    i++;
    while( i<n && vsIsDigit(z[i]) ){ i++; nDigit++; }
  }
  if( nDigit==0 ) return 0;
  if( i<n && (z[i]=='e' || z[i]=='E') ){
    int j = i+1, nExp = 0;
    if( j<n && (z[j]=='+' || z[j]=='-') ) j++;
    while( j<n && vsIsDigit(z[j]) ){ j++; nExp++; }
    if( nExp==0 ) return 0;
    i = j;
  }
  return i;
}

/* A short quotation of the input for error messages. */
static char *vsQuote(const char *z, int n){
  if( n>48 ) return sqlite3_mprintf("'%.40s…'", z);
  return sqlite3_mprintf("'%.*s'", n, z);
}

int vsParseText(const char *z, int n, double **paOut, int *pnOut, char **pzErr){
  int rc = SQLITE_OK;
  int i = 0, nElem = 0, nAlloc = 0;
  double *a = 0;
  char zNum[400];
  char *zQuoted = 0;

  pthread_once(&cLocaleOnce, vsCLocaleInit);
  *paOut = 0;
  *pnOut = 0;
  while( i<n && vsIsBlank(z[i]) ) i++;
  if( i>=n || z[i]!='[' ){
    zQuoted = vsQuote(z, n);
    *pzErr = sqlite3_mprintf("invalid vector text %s: it must start with '['", zQuoted);
    rc = SQLITE_ERROR;
    goto cleanup;
  }
  i++;
  while( i<n && vsIsBlank(z[i]) ) i++;
  if( i<n && z[i]==']' ){
    i++;
  }else{
    for(;;){
      int nTok;
      double v;
      char *zEnd = 0;
      while( i<n && vsIsBlank(z[i]) ) i++;
      nTok = vsNumberLength(&z[i], n-i);
      if( nTok==0 || nTok>=(int)sizeof(zNum) ){
        zQuoted = vsQuote(z, n);
        *pzErr = sqlite3_mprintf(
          "invalid vector text %s: expected a number at offset %d", zQuoted, i);
        rc = SQLITE_ERROR;
        goto cleanup;
      }
      memcpy(zNum, &z[i], nTok);
      zNum[nTok] = 0;
      v = cLocale ? strtod_l(zNum, &zEnd, cLocale) : strtod(zNum, &zEnd);
      if( zEnd!=&zNum[nTok] ){
        zQuoted = vsQuote(z, n);
        *pzErr = sqlite3_mprintf(
          "invalid vector text %s: cannot read the number at offset %d", zQuoted, i);
        rc = SQLITE_ERROR;
        goto cleanup;
      }
      if( !isfinite(v) ){
        *pzErr = sqlite3_mprintf(
          "invalid vector: element %d (%s) is out of range", nElem, zNum);
        rc = SQLITE_ERROR;
        goto cleanup;
      }
      if( nElem>=VS_MAX_DIMS ){
        *pzErr = sqlite3_mprintf(
          "invalid vector: more than %d dimensions", VS_MAX_DIMS);
        rc = SQLITE_ERROR;
        goto cleanup;
      }
      if( nElem>=nAlloc ){
        int nNew = nAlloc ? nAlloc*2 : 64;
        double *aNew = sqlite3_realloc64(a, sizeof(double)*(sqlite3_uint64)nNew);
        if( aNew==0 ){ rc = SQLITE_NOMEM; goto cleanup; }
        a = aNew;
        nAlloc = nNew;
      }
      a[nElem++] = v;
      i += nTok;
      while( i<n && vsIsBlank(z[i]) ) i++;
      if( i<n && z[i]==',' ){ i++; continue; }
      if( i<n && z[i]==']' ){ i++; break; }
      zQuoted = vsQuote(z, n);
      *pzErr = sqlite3_mprintf(
        "invalid vector text %s: expected ',' or ']' at offset %d", zQuoted, i);
      rc = SQLITE_ERROR;
      goto cleanup;
    }
  }
  while( i<n && vsIsBlank(z[i]) ) i++;
  if( i<n ){
    zQuoted = vsQuote(z, n);
    *pzErr = sqlite3_mprintf(
      "invalid vector text %s: unexpected text after ']' at offset %d", zQuoted, i);
    rc = SQLITE_ERROR;
    goto cleanup;
  }
  *paOut = a;
  *pnOut = nElem;
  a = 0;

cleanup:
  sqlite3_free(a);
  sqlite3_free(zQuoted);
  return rc;
}

void vsF32ToLE(const float *a, int n, unsigned char *pOut){
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__==__ORDER_BIG_ENDIAN__
  int i;
  for(i=0; i<n; i++){
    uint32_t u;
    memcpy(&u, &a[i], 4);
    pOut[4*i] = u & 0xff; pOut[4*i+1] = (u>>8) & 0xff;
    pOut[4*i+2] = (u>>16) & 0xff; pOut[4*i+3] = u>>24;
  }
#else
  memcpy(pOut, a, (size_t)n*4);
#endif
}

void vsF32FromLE(const unsigned char *p, int n, float *aOut){
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__==__ORDER_BIG_ENDIAN__
  int i;
  for(i=0; i<n; i++){
    uint32_t u = (uint32_t)p[4*i] | ((uint32_t)p[4*i+1]<<8)
               | ((uint32_t)p[4*i+2]<<16) | ((uint32_t)p[4*i+3]<<24);
    memcpy(&aOut[i], &u, 4);
  }
#else
  if( (const void*)p!=(const void*)aOut ) memcpy(aOut, p, (size_t)n*4);
#endif
}

static void vsF64FromLE(const unsigned char *p, int n, double *aOut){
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__==__ORDER_BIG_ENDIAN__
  int i, j;
  for(i=0; i<n; i++){
    uint64_t u = 0;
    for(j=7; j>=0; j--) u = (u<<8) | p[8*i+j];
    memcpy(&aOut[i], &u, 8);
  }
#else
  memcpy(aOut, p, (size_t)n*8);
#endif
}

static const char *vsLibsqlTypeName(int t){
  switch( t ){
    case 3: return "FLOAT1BIT";
    case 4: return "FLOAT8";
    case 5: return "FLOAT16";
    case 6: return "FLOATB16";
  }
  return 0;
}

/* Decode a blob: F32 (4·D bytes, or 4·D+1 ending in 0x01) or F64 (8·D+1 ending in 0x02). */
static int vsVectorFromBlob(const unsigned char *p, int n, VsVector *pOut, char **pzErr){
  int eType, nDim;
  size_t nElemBytes;
  if( n%4==0 ){
    eType = VS_F32;
    nDim = n/4;
  }else if( n%4==1 && p[n-1]==VS_F32 ){
    eType = VS_F32;
    nDim = (n-1)/4;
  }else if( (n-1)%8==0 && p[n-1]==VS_F64 ){
    eType = VS_F64;
    nDim = (n-1)/8;
  }else if( n%2==1 && vsLibsqlTypeName(p[n-1]) ){
    *pzErr = sqlite3_mprintf(
      "invalid vector: libSQL %s vectors are not supported; use F32 or F64",
      vsLibsqlTypeName(p[n-1]));
    return SQLITE_ERROR;
  }else{
    *pzErr = sqlite3_mprintf(
      "invalid vector: a blob of %d bytes is not a float32 vector "
      "(its length must be a multiple of 4)", n);
    return SQLITE_ERROR;
  }
  if( nDim>VS_MAX_DIMS ){
    *pzErr = sqlite3_mprintf(
      "invalid vector: %d dimensions, more than the maximum of %d", nDim, VS_MAX_DIMS);
    return SQLITE_ERROR;
  }
  pOut->eType = eType;
  pOut->nDim = nDim;
  nElemBytes = eType==VS_F32 ? 4 : 8;
#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__!=__ORDER_BIG_ENDIAN__
  if( ((uintptr_t)p % nElemBytes)==0 ){
    pOut->aData = p;      /* Borrowed: valid while the SQL value is */
    return SQLITE_OK;
  }
#endif
  pOut->pAlloc = sqlite3_malloc64(nElemBytes*(size_t)(nDim ? nDim : 1));
  if( pOut->pAlloc==0 ) return SQLITE_NOMEM;
  if( eType==VS_F32 ){
    vsF32FromLE(p, nDim, (float*)pOut->pAlloc);
  }else{
    vsF64FromLE(p, nDim, (double*)pOut->pAlloc);
  }
  pOut->aData = pOut->pAlloc;
  return SQLITE_OK;
}

int vsVectorCheckFinite(const VsVector *p, char **pzErr){
  int i;
  for(i=0; i<p->nDim; i++){
    double v = vsVectorAt(p, i);
    if( isnan(v) ){
      *pzErr = sqlite3_mprintf("invalid vector: element %d is NaN", i);
      return SQLITE_ERROR;
    }
    if( isinf(v) ){
      *pzErr = sqlite3_mprintf("invalid vector: element %d is infinite", i);
      return SQLITE_ERROR;
    }
  }
  return SQLITE_OK;
}

double vsVectorAt(const VsVector *p, int i){
  if( p->eType==VS_F32 ) return ((const float*)p->aData)[i];
  return ((const double*)p->aData)[i];
}

void vsVectorFree(VsVector *p){
  sqlite3_free(p->pAlloc);
  memset(p, 0, sizeof(*p));
}

/* Narrow doubles to a new float array, refusing values beyond float32's range. */
static int vsNarrow(const double *a, int n, float **paOut, char **pzErr){
  int i;
  float *aF = sqlite3_malloc64(sizeof(float)*(size_t)(n ? n : 1));
  if( aF==0 ) return SQLITE_NOMEM;
  for(i=0; i<n; i++){
    /* Out of range is what rounds to infinity: 3.40282347e+38 is FLT_MAX itself. */
    if( isinf((float)a[i]) ){
      *pzErr = sqlite3_mprintf(
        "invalid vector: element %d (%g) is out of float32 range", i, a[i]);
      sqlite3_free(aF);
      return SQLITE_ERROR;
    }
    aF[i] = (float)a[i];
  }
  *paOut = aF;
  return SQLITE_OK;
}

int vsVectorToF32(const VsVector *p, float **paOut, char **pzErr){
  float *aF;
  *paOut = 0;
  if( p->eType==VS_F64 ) return vsNarrow((const double*)p->aData, p->nDim, paOut, pzErr);
  aF = sqlite3_malloc64(sizeof(float)*(size_t)(p->nDim ? p->nDim : 1));
  if( aF==0 ) return SQLITE_NOMEM;
  memcpy(aF, p->aData, sizeof(float)*(size_t)p->nDim);
  *paOut = aF;
  return SQLITE_OK;
}

int vsVectorFromValue(sqlite3_value *pVal, int eWant, VsVector *pOut, char **pzErr){
  int rc = SQLITE_OK;
  memset(pOut, 0, sizeof(*pOut));
  switch( sqlite3_value_type(pVal) ){
    case SQLITE_BLOB: {
      const unsigned char *p = sqlite3_value_blob(pVal);
      int n = sqlite3_value_bytes(pVal);
      rc = vsVectorFromBlob(p ? p : (const unsigned char*)"", n, pOut, pzErr);
      if( rc==SQLITE_OK ) rc = vsVectorCheckFinite(pOut, pzErr);
      if( rc==SQLITE_OK && eWant==VS_F32 && pOut->eType==VS_F64 ){
        float *aF = 0;
        rc = vsNarrow((const double*)pOut->aData, pOut->nDim, &aF, pzErr);
        if( rc==SQLITE_OK ){
          int nDim = pOut->nDim;
          vsVectorFree(pOut);
          pOut->eType = VS_F32;
          pOut->nDim = nDim;
          pOut->aData = pOut->pAlloc = aF;
        }
      }else if( rc==SQLITE_OK && eWant==VS_F64 && pOut->eType==VS_F32 ){
        int i, nDim = pOut->nDim;
        double *aD = sqlite3_malloc64(sizeof(double)*(size_t)(nDim ? nDim : 1));
        if( aD==0 ){ rc = SQLITE_NOMEM; break; }
        for(i=0; i<nDim; i++) aD[i] = ((const float*)pOut->aData)[i];
        vsVectorFree(pOut);
        pOut->eType = VS_F64;
        pOut->nDim = nDim;
        pOut->aData = pOut->pAlloc = aD;
      }
      break;
    }
    case SQLITE_TEXT: {
      double *aD = 0;
      int nDim = 0;
      const char *z = (const char*)sqlite3_value_text(pVal);
      int n = sqlite3_value_bytes(pVal);
      rc = vsParseText(z ? z : "", n, &aD, &nDim, pzErr);
      if( rc!=SQLITE_OK ) break;
      if( eWant==VS_F64 ){
        pOut->eType = VS_F64;
        pOut->nDim = nDim;
        pOut->aData = pOut->pAlloc = aD;
      }else{
        float *aF = 0;
        rc = vsNarrow(aD, nDim, &aF, pzErr);
        sqlite3_free(aD);
        if( rc==SQLITE_OK ){
          pOut->eType = VS_F32;
          pOut->nDim = nDim;
          pOut->aData = pOut->pAlloc = aF;
        }
      }
      break;
    }
    case SQLITE_NULL:
      *pzErr = sqlite3_mprintf("invalid vector: NULL");
      rc = SQLITE_ERROR;
      break;
    default:
      *pzErr = sqlite3_mprintf(
        "invalid vector: got %s, expected text like '[1,2,3]' or a float32 blob",
        sqlite3_value_type(pVal)==SQLITE_INTEGER ? "an integer" : "a real number");
      rc = SQLITE_ERROR;
      break;
  }
  if( rc!=SQLITE_OK ) vsVectorFree(pOut);
  return rc;
}

void vsResultF32(sqlite3_context *ctx, const float *a, int n){
  unsigned char *p;
  if( n==0 ){
    sqlite3_result_zeroblob(ctx, 0);
    return;
  }
  p = sqlite3_malloc64((size_t)n*4);
  if( p==0 ){
    sqlite3_result_error_nomem(ctx);
    return;
  }
  vsF32ToLE(a, n, p);
  sqlite3_result_blob(ctx, p, n*4, sqlite3_free);
}

void vsResultF64(sqlite3_context *ctx, const double *a, int n){
  size_t nByte = (size_t)n*8 + 1;
  unsigned char *p = sqlite3_malloc64(nByte);
  int i, j;
  if( p==0 ){
    sqlite3_result_error_nomem(ctx);
    return;
  }
  for(i=0; i<n; i++){
    uint64_t u;
    memcpy(&u, &a[i], 8);
    for(j=0; j<8; j++){ p[8*i+j] = u & 0xff; u >>= 8; }
  }
  p[nByte-1] = VS_F64;
  sqlite3_result_blob64(ctx, p, nByte, sqlite3_free);
}
