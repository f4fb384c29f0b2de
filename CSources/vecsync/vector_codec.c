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
**   libSQL's compact types, read as float32 (vector8, vector16, vectorb16, vector1bit
**   write them, see vsResultLibsql):
**   F16   2·D bytes of IEEE binary16, then 0x05.     FB16  2·D bytes of bfloat16, then 0x06.
**   F8    D bytes q, padded to a multiple of 4, float32 alpha and shift (x = alpha·q +
**         shift), a zero byte, the number of padding bytes, then 0x04.
**   1BIT  ceil(D/8) bytes, bit i of byte i/8 set for x > 0 (read back as +1, else -1), a
**         zero byte when that count is even, the number of unused bits, then 0x03.
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

float vsF16ToFloat(uint16_t h){
  uint32_t sign = (uint32_t)(h & 0x8000) << 16, exp = (h >> 10) & 0x1f, mant = h & 0x3ff, u;
  float f;
  if( exp==0x1f ){
    u = sign | 0x7f800000 | (mant << 13);                 /* infinity or NaN */
  }else if( exp==0 ){
    f = (float)mant * (1.0f/16777216.0f);                 /* zero or subnormal: mant·2^-24 */
    return sign ? -f : f;
  }else{
    u = sign | ((exp + 112) << 23) | (mant << 13);
  }
  memcpy(&f, &u, 4);
  return f;
}

uint16_t vsF16FromFloat(float f){
  uint32_t u, sign, mant;
  int exp;
  memcpy(&u, &f, 4);
  sign = (u >> 16) & 0x8000;
  exp = (int)((u >> 23) & 0xff) - 127;
  mant = u & 0x7fffff;
  if( exp==128 ) return (uint16_t)(sign | 0x7c00 | (mant ? 0x200 : 0));
  if( exp>15 ) return (uint16_t)(sign | 0x7c00);          /* too large: infinity */
  if( exp<-25 ) return (uint16_t)sign;                     /* too small: zero */
  if( exp<-14 ){
    /* Subnormal: the mantissa with its leading 1, shifted, rounded to nearest even. */
    uint32_t m = mant | 0x800000;
    int shift = -exp - 1;                                  /* 14..24 */
    uint32_t half = m >> shift, rest = m & ((1u << shift) - 1), mid = 1u << (shift - 1);
    if( rest>mid || (rest==mid && (half & 1)) ) half++;
    return (uint16_t)(sign | half);
  }
  {
    uint32_t h = ((uint32_t)(exp + 15) << 10) | (mant >> 13), rest = mant & 0x1fff;
    if( rest>0x1000 || (rest==0x1000 && (h & 1)) ) h++;   /* may carry into the exponent */
    return (uint16_t)(sign | h);
  }
}

/* Read one of libSQL's compact blobs (type byte t = p[n-1], 3..6) as float32 elements. */
static int vsVectorFromLibsqlBlob(const unsigned char *p, int n, VsVector *pOut, char **pzErr){
  int t = p[n-1], nDim = 0, i, nData = n - 1;
  float *a;
  const char *zName = t==3 ? "FLOAT1BIT" : t==4 ? "FLOAT8" : t==5 ? "FLOAT16" : "FLOATB16";
  if( t==5 || t==6 ){
    if( nData%2!=0 ) goto bad_length;
    nDim = nData/2;
  }else if( t==4 ){
    if( nData<2+8 || nData%2!=0 ) goto bad_length;
    nDim = nData - 2 - 8 - p[nData-1];
    if( nDim<0 || ((nDim+3)/4)*4 != nData - 2 - 8 ) goto bad_length;
  }else{
    if( nData<2 || nData%2!=0 ) goto bad_length;
    nDim = nData*8 - p[nData-1];
    /* the bits, then a zero byte when their count is even, then the unused-bit count */
    if( nDim<0 || (nDim+7)/8 + ((((nDim+7)/8)%2==0) ? 1 : 0) + 1 != nData ) goto bad_length;
  }
  if( nDim>VS_MAX_DIMS ){
    *pzErr = sqlite3_mprintf(
        "invalid vector: %d dimensions, more than the maximum of %d", nDim, VS_MAX_DIMS);
    return SQLITE_ERROR;
  }
  a = sqlite3_malloc64(sizeof(float)*(size_t)(nDim ? nDim : 1));
  if( a==0 ) return SQLITE_NOMEM;
  for(i=0; i<nDim; i++){
    switch( t ){
      case 5: a[i] = vsF16ToFloat((uint16_t)(p[2*i] | (p[2*i+1] << 8))); break;
      case 6: {
        uint32_t u = (uint32_t)(p[2*i] | (p[2*i+1] << 8)) << 16;
        memcpy(&a[i], &u, 4);
        break;
      }
      case 4: {
        float rAlpha, rShift;
        int iParam = ((nDim+3)/4)*4;
        vsF32FromLE(&p[iParam], 1, &rAlpha);
        vsF32FromLE(&p[iParam+4], 1, &rShift);
        a[i] = rAlpha * (float)p[i] + rShift;          /* in float32, as libSQL */
        if( isinf(a[i]) ) a[i] = (float)((double)rAlpha * p[i] + (double)rShift);
        break;
      }
      default: a[i] = ((p[i/8] >> (i&7)) & 1) ? 1.0f : -1.0f; break;
    }
  }
  pOut->eType = VS_F32;
  pOut->nDim = nDim;
  pOut->aData = pOut->pAlloc = a;
  return SQLITE_OK;

bad_length:
  *pzErr = sqlite3_mprintf("invalid vector: a blob of %d bytes is not a libSQL %s vector", n, zName);
  return SQLITE_ERROR;
}

int vsValueLibsqlType(sqlite3_value *pVal){
  const unsigned char *p;
  int n;
  if( sqlite3_value_type(pVal)!=SQLITE_BLOB ) return VS_F32;
  p = sqlite3_value_blob(pVal);
  n = sqlite3_value_bytes(pVal);
  if( p==0 || n%2==0 ) return VS_F32;
  return p[n-1];
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
  }else if( n%2==1 && p[n-1]>=3 && p[n-1]<=6 ){
    return vsVectorFromLibsqlBlob(p, n, pOut, pzErr);
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

/* Write a as one of libSQL's compact types (VS_LIBSQL_TYPE_*: 3 1-bit, 4 F8, 5 F16, 6
** FB16), laid out as libSQL's vector1bit, vector8, vector16 and vectorb16 write them. */
void vsResultLibsql(sqlite3_context *ctx, int eType, const float *a, int n){
  size_t nData, nBlob;
  unsigned char *p;
  int i;
  if( n==0 ){
    sqlite3_result_zeroblob(ctx, 0);
    return;
  }
  switch( eType ){
    case 5: case 6: nData = (size_t)n*2; nBlob = nData + 1; break;
    case 4: nData = (size_t)((n+3)/4)*4 + 8; nBlob = nData + 3; break;
    default: nData = (size_t)(n+7)/8; nBlob = nData + (nData%2==0 ? 1 : 0) + 2; break;
  }
  p = sqlite3_malloc64(nBlob);
  if( p==0 ){ sqlite3_result_error_nomem(ctx); return; }
  memset(p, 0, nBlob);
  if( eType==5 || eType==6 ){
    for(i=0; i<n; i++){
      uint32_t u;
      uint16_t h;
      memcpy(&u, &a[i], 4);
      h = eType==5 ? vsF16FromFloat(a[i]) : (uint16_t)(u >> 16);   /* bfloat16: truncated */
      p[2*i] = (unsigned char)(h & 0xff);
      p[2*i+1] = (unsigned char)(h >> 8);
    }
  }else if( eType==4 ){
    /* alpha = (max - min)/255, shift = min; q = round((x - shift)/alpha), clamped, in
    ** float32 as libSQL computes it. When max - min overflows float32 (alpha itself always
    ** fits), the same in double. */
    float rMin = a[0], rMax = a[0], rAlpha, rShift;
    int iParam = ((n+3)/4)*4, bWide;
    for(i=1; i<n; i++){ if( a[i]<rMin ) rMin = a[i]; if( a[i]>rMax ) rMax = a[i]; }
    rShift = rMin;
    rAlpha = (rMax - rMin) / 255;
    bWide = isinf(rAlpha);
    if( bWide ) rAlpha = (float)(((double)rMax - (double)rMin) / 255);
    for(i=0; i<n; i++){
      double q;
      if( bWide ) q = ((double)a[i] - (double)rShift) / (double)rAlpha;
      else q = rAlpha>0 ? (a[i] - rShift) / rAlpha : 0.0f;
      p[i] = !(q>0) ? 0 : q>255 ? 255 : (unsigned char)(int)(bWide ? q + 0.5 : (float)q + 0.5f);
    }
    vsF32ToLE(&rAlpha, 1, &p[iParam]);
    vsF32ToLE(&rShift, 1, &p[iParam+4]);
    p[nBlob-2] = (unsigned char)(iParam - n);
  }else{
    for(i=0; i<n; i++) if( a[i]>0 ) p[i/8] |= (unsigned char)(1u << (i&7));
    p[nBlob-2] = (unsigned char)(8*(nBlob-1) - (size_t)n);
  }
  p[nBlob-1] = (unsigned char)eType;
  sqlite3_result_blob64(ctx, p, nBlob, sqlite3_free);
}
