/*
** vector_typed.c: sqlite-vec's vectors of three types (float32, int8, bit), its vec_*
** functions over them, and the table-valued function vec_each.
**
** Usage (sqlite-vec's SQL, unchanged):
**
**   select vec_int8('[1, -2, 3]');                       -- 3 bytes, subtype int8
**   select vec_bit(x'f0');                               -- 8 bits, subtype bit
**   select vec_type(vec_int8('[1]'));                    -- 'int8'
**   select vec_quantize_int8(vec_f32('[0.1, -0.2]'), 'unit');
**   select vec_quantize_binary('[1, -1, 0.5, -0.5, 0, 1, 1, -1]');   -- x'65'
**   select vec_distance_hamming(vec_bit(x'ff'), vec_bit(x'0f'));     -- 4.0
**   select vec_distance_l1('[1, 2]', '[3, 5]');          -- 5.0
**   select vec_to_json(vec_slice('[1, 2, 3, 4]', 1, 3)); -- '[2.000000,3.000000]'
**   select vec_to_json(vec_add('[1, 2]', '[3, 4]'));     -- '[4.000000,6.000000]'
**   select rowid, value from vec_each(vec_int8('[1, -2]'));   -- (0, 1), (1, -2)
**
** How it works. A vector's type travels with the value as its subtype, as in sqlite-vec:
** 223 float32, 224 bit, 225 int8. A blob that comes without one (read from a table, bound
** by the host) is float32, or float64 in libSQL's layout (trailing byte 0x02); text is
** float32 JSON. vsTypedFromValue reads any of them into a VsTyped; each function states
** which types it takes and returns its result with the subtype of its type. Vectors of
** different types or lengths are never combined, and zero-length vectors are refused, as
** sqlite-vec refuses them. Distances are computed as sqlite-vec computes them (float32
** sums, so vec_distance_l2 and vector_distance_l2 may differ in the last float32 digits:
** libSQL's names keep double-precision sums); float64 vectors, which sqlite-vec does not
** have, are summed in double.
*/
#include "vecsync_int.h"
SQLITE_EXTENSION_INIT3

#include <math.h>
#include <string.h>

/* Flags of functions that read their arguments' subtypes (SQLITE_SUBTYPE) and set their
** result's (SQLITE_RESULT_SUBTYPE, SQLite 3.45 and later: older versions ignore it). */
/* The subtype SQLite's JSON functions give JSON text ('J'), which vec_to_json sets. */
#define VS_SUBTYPE_JSON 74

#ifndef SQLITE_SUBTYPE
# define SQLITE_SUBTYPE 0x000100000
#endif
#ifndef SQLITE_RESULT_SUBTYPE
# define SQLITE_RESULT_SUBTYPE 0x001000000
#endif

/* A vector of any of the four types, decoded from an SQL value. */
typedef struct VsTyped VsTyped;
struct VsTyped {
  int eType;                  /* VS_F32, VS_F64, VS_I8 or VS_BIT */
  int nDim;                   /* Elements; bits for VS_BIT */
  VsVector f;                 /* The elements of VS_F32 and VS_F64 vectors */
  const unsigned char *aByte; /* The bytes of VS_I8 and VS_BIT vectors (the value's own) */
};

static const char *vsTypeName(int eType){
  switch( eType ){
    case VS_F32: return "float32";
    case VS_F64: return "float64";
    case VS_I8:  return "int8";
    case VS_BIT: return "bit";
  }
  return "unknown";
}

static void vsTypedFree(VsTyped *p){
  vsVectorFree(&p->f);
  memset(p, 0, sizeof(*p));
}

/* Read pVal as a vector: an int8 or bit blob by its subtype, else through the codec. The
** bytes of int8 and bit vectors are borrowed from pVal. Zero-length vectors are refused. */
static int vsTypedFromValue(sqlite3_value *pVal, VsTyped *pOut, char **pzErr){
  int rc = SQLITE_OK;
  unsigned int eSub = sqlite3_value_subtype(pVal);
  memset(pOut, 0, sizeof(*pOut));
  if( sqlite3_value_type(pVal)==SQLITE_BLOB
   && (eSub==VS_SUBTYPE_I8 || eSub==VS_SUBTYPE_BIT) ){
    int n = sqlite3_value_bytes(pVal);
    pOut->aByte = sqlite3_value_blob(pVal);
    pOut->eType = eSub==VS_SUBTYPE_I8 ? VS_I8 : VS_BIT;
    if( n>VS_MAX_DIMS ){
      *pzErr = sqlite3_mprintf("invalid vector: %d bytes, more than the maximum of %d",
                               n, VS_MAX_DIMS);
      rc = SQLITE_ERROR;
    }
    pOut->nDim = pOut->eType==VS_I8 ? n : n*8;
  }else{
    rc = vsVectorFromValue(pVal, 0, &pOut->f, pzErr);
    if( rc==SQLITE_OK ){
      pOut->eType = pOut->f.eType;
      pOut->nDim = pOut->f.nDim;
    }
  }
  if( rc==SQLITE_OK && pOut->nDim==0 ){
    *pzErr = sqlite3_mprintf("zero-length vectors are not supported");
    rc = SQLITE_ERROR;
  }
  if( rc!=SQLITE_OK ) vsTypedFree(pOut);
  return rc;
}

/* Element i as a double, whatever the type. */
static double vsTypedAt(const VsTyped *p, int i){
  switch( p->eType ){
    case VS_I8:  return (double)(signed char)p->aByte[i];
    case VS_BIT: return (double)((p->aByte[i>>3]>>(i&7)) & 1);
  }
  return vsVectorAt(&p->f, i);
}

/* Return nByte bytes a (copied) as a vector of type eType, with its subtype. */
static void vsResultBytes(sqlite3_context *ctx, const unsigned char *a, int nByte, int eType){
  sqlite3_result_blob(ctx, a, nByte, SQLITE_TRANSIENT);
  sqlite3_result_subtype(ctx, eType==VS_I8 ? VS_SUBTYPE_I8 : VS_SUBTYPE_BIT);
}

static void vsResultF32Typed(sqlite3_context *ctx, const float *a, int n){
  vsResultF32(ctx, a, n);
  sqlite3_result_subtype(ctx, VS_SUBTYPE_F32);
}

/* Decode both arguments of a binary function; they must be of one type and length. */
static int vsTypedPair(sqlite3_value **argv, VsTyped *pA, VsTyped *pB, char **pzErr){
  int rc = vsTypedFromValue(argv[0], pA, pzErr);
  memset(pB, 0, sizeof(*pB));
  if( rc==SQLITE_OK ) rc = vsTypedFromValue(argv[1], pB, pzErr);
  if( rc==SQLITE_OK && pA->eType!=pB->eType ){
    *pzErr = sqlite3_mprintf("vectors have different types: the first is %s, the second %s",
                             vsTypeName(pA->eType), vsTypeName(pB->eType));
    rc = SQLITE_ERROR;
  }
  if( rc==SQLITE_OK && pA->nDim!=pB->nDim ){
    *pzErr = sqlite3_mprintf("vectors have different dimensions: %d and %d",
                             pA->nDim, pB->nDim);
    rc = SQLITE_ERROR;
  }
  return rc;
}

/* ---- constructors ------------------------------------------------------------------------ */

/* vec_int8(x): JSON text of integers in [-128, 127], or a blob of bytes, as int8. */
static void vsInt8Func(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  double *aD = 0;
  signed char *a = 0;
  char *zErr = 0;
  int i, nDim = 0, rc = SQLITE_OK;
  (void)argc;
  switch( sqlite3_value_type(argv[0]) ){
    case SQLITE_BLOB: {
      int n = sqlite3_value_bytes(argv[0]);
      if( n==0 ){
        zErr = sqlite3_mprintf("zero-length vectors are not supported");
        rc = SQLITE_ERROR;
      }else if( n>VS_MAX_DIMS ){
        zErr = sqlite3_mprintf("invalid vector: %d bytes, more than the maximum of %d",
                               n, VS_MAX_DIMS);
        rc = SQLITE_ERROR;
      }else{
        vsResultBytes(ctx, sqlite3_value_blob(argv[0]), n, VS_I8);
      }
      goto cleanup;
    }
    case SQLITE_TEXT: {
      const char *z = (const char*)sqlite3_value_text(argv[0]);
      rc = vsParseText(z ? z : "", sqlite3_value_bytes(argv[0]), &aD, &nDim, &zErr);
      if( rc!=SQLITE_OK ) goto cleanup;
      if( nDim==0 ){
        zErr = sqlite3_mprintf("zero-length vectors are not supported");
        rc = SQLITE_ERROR;
        goto cleanup;
      }
      a = sqlite3_malloc64((size_t)nDim);
      if( a==0 ){ rc = SQLITE_NOMEM; goto cleanup; }
      for(i=0; i<nDim; i++){
        if( aD[i]!=floor(aD[i]) ){
          zErr = sqlite3_mprintf("element %d (%g) is not an integer", i, aD[i]);
          rc = SQLITE_ERROR;
          goto cleanup;
        }
        if( aD[i]<-128.0 || aD[i]>127.0 ){
          zErr = sqlite3_mprintf("element %d (%g) is out of int8 range [-128, 127]", i, aD[i]);
          rc = SQLITE_ERROR;
          goto cleanup;
        }
        a[i] = (signed char)aD[i];
      }
      vsResultBytes(ctx, (const unsigned char*)a, nDim, VS_I8);
      goto cleanup;
    }
    default:
      zErr = sqlite3_mprintf("expected JSON text like '[1, -2, 3]' or a blob, got %s",
          sqlite3_value_type(argv[0])==SQLITE_NULL ? "NULL"
          : sqlite3_value_type(argv[0])==SQLITE_INTEGER ? "an integer" : "a real number");
      rc = SQLITE_ERROR;
      goto cleanup;
  }

cleanup:
  if( rc!=SQLITE_OK ) vsResultError(ctx, rc, zErr);
  sqlite3_free(aD);
  sqlite3_free(a);
}

/* vec_bit(x): a blob, 8 bits a byte (least significant first), as a bit vector. */
static void vsBitFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  int n = sqlite3_value_bytes(argv[0]);
  (void)argc;
  if( sqlite3_value_type(argv[0])!=SQLITE_BLOB ){
    vsResultError(ctx, SQLITE_ERROR, sqlite3_mprintf(
        "expected a blob of bits (8 a byte), got %s",
        sqlite3_value_type(argv[0])==SQLITE_NULL ? "NULL"
        : sqlite3_value_type(argv[0])==SQLITE_TEXT ? "text" : "a number"));
  }else if( n==0 ){
    vsResultError(ctx, SQLITE_ERROR, sqlite3_mprintf("zero-length vectors are not supported"));
  }else if( n>VS_MAX_DIMS ){
    vsResultError(ctx, SQLITE_ERROR, sqlite3_mprintf(
        "invalid vector: %d bytes, more than the maximum of %d", n, VS_MAX_DIMS));
  }else{
    vsResultBytes(ctx, sqlite3_value_blob(argv[0]), n, VS_BIT);
  }
}

/* vec_quantize_binary(v): bit i set when element i is positive. float or int8 vectors
** whose length is a multiple of 8. */
static void vsQuantizeBinaryFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  VsTyped v;
  unsigned char *a = 0;
  char *zErr = 0;
  int i, rc = vsTypedFromValue(argv[0], &v, &zErr);
  (void)argc;
  if( rc==SQLITE_OK && v.eType==VS_BIT ){
    zErr = sqlite3_mprintf("only float and int8 vectors can be quantized, got a bit vector");
    rc = SQLITE_ERROR;
  }
  if( rc==SQLITE_OK && v.nDim%8!=0 ){
    zErr = sqlite3_mprintf(
        "binary quantization needs a length divisible by 8, got %d dimensions", v.nDim);
    rc = SQLITE_ERROR;
  }
  if( rc==SQLITE_OK ){
    a = sqlite3_malloc64((size_t)v.nDim/8);
    if( a==0 ) rc = SQLITE_NOMEM;
  }
  if( rc==SQLITE_OK ){
    memset(a, 0, (size_t)v.nDim/8);
    for(i=0; i<v.nDim; i++){
      if( vsTypedAt(&v, i)>0.0 ) a[i>>3] |= (unsigned char)(1u<<(i&7));
    }
    vsResultBytes(ctx, a, v.nDim/8, VS_BIT);
  }
  if( rc!=SQLITE_OK ) vsResultError(ctx, rc, zErr);
  sqlite3_free(a);
  vsTypedFree(&v);
}

/* vec_quantize_int8(v, 'unit'): a float vector whose elements lie in [-1, 1] mapped onto
** the 256 int8 steps with sqlite-vec's arithmetic, so both give the same bytes (values
** outside are clamped to -128 and 127). */
static void vsQuantizeInt8Func(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  VsTyped v;
  signed char *a = 0;
  char *zErr = 0;
  const char *zRange = (const char*)sqlite3_value_text(argv[1]);
  int i, rc;
  (void)argc;
  memset(&v, 0, sizeof(v));
  if( zRange==0 || sqlite3_stricmp(zRange, "unit")!=0 ){
    zErr = sqlite3_mprintf("the second argument must be 'unit', got %s",
                           zRange ? zRange : "NULL");
    rc = SQLITE_ERROR;
    goto cleanup;
  }
  rc = vsTypedFromValue(argv[0], &v, &zErr);
  if( rc!=SQLITE_OK ) goto cleanup;
  if( v.eType!=VS_F32 && v.eType!=VS_F64 ){
    zErr = sqlite3_mprintf("only float vectors can be quantized, got %s", vsTypeName(v.eType));
    rc = SQLITE_ERROR;
    goto cleanup;
  }
  a = sqlite3_malloc64((size_t)v.nDim);
  if( a==0 ){ rc = SQLITE_NOMEM; goto cleanup; }
  {
    /* The step is a float32, the rest double precision, then clamped and truncated. */
    const float fStep = (float)((1.0 - (-1.0)) / 255);
    for(i=0; i<v.nDim; i++){
      double x = (vsTypedAt(&v, i) - (-1.0)) / (double)fStep - 128.0;
      if( x>127.0 ) x = 127.0;
      if( x<-128.0 ) x = -128.0;
      a[i] = (signed char)(int)x;
    }
  }
  vsResultBytes(ctx, (const unsigned char*)a, v.nDim, VS_I8);

cleanup:
  if( rc!=SQLITE_OK ) vsResultError(ctx, rc, zErr);
  sqlite3_free(a);
  vsTypedFree(&v);
}

/* ---- inspection -------------------------------------------------------------------------- */

/* Read argument pVal of an inspection function into *pV; on error the function's result
** is the error, and 0 is returned. */
static int vsTypedArg(sqlite3_context *ctx, sqlite3_value *pVal, VsTyped *pV){
  char *zErr = 0;
  int rc = vsTypedFromValue(pVal, pV, &zErr);
  if( rc!=SQLITE_OK ) vsResultError(ctx, rc, zErr);
  return rc==SQLITE_OK;
}

/* vec_type(v): 'float32', 'int8' or 'bit' ('float64' for libSQL's F64 blobs). */
static void vsTypeFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  VsTyped v;
  (void)argc;
  if( !vsTypedArg(ctx, argv[0], &v) ) return;
  sqlite3_result_text(ctx, vsTypeName(v.eType), -1, SQLITE_STATIC);
  vsTypedFree(&v);
}

/* vec_length(v): elements (bits of a bit vector). */
static void vsTypedLengthFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  VsTyped v;
  (void)argc;
  if( !vsTypedArg(ctx, argv[0], &v) ) return;
  sqlite3_result_int(ctx, v.nDim);
  vsTypedFree(&v);
}

/* vec_to_json(v): '[1.000000,-2.500000]' for float vectors (%f, as sqlite-vec prints
** them), '[1,-2]' for int8, '[1,0,1,0,0,0,0,0]' for bits. */
static void vsTypedToJsonFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  VsTyped v;
  char *zErr = 0;
  sqlite3_str *pStr = 0;
  int i, rc = vsTypedFromValue(argv[0], &v, &zErr);
  (void)argc;
  if( rc!=SQLITE_OK ){ vsResultError(ctx, rc, zErr); return; }
  pStr = sqlite3_str_new(sqlite3_context_db_handle(ctx));
  sqlite3_str_appendchar(pStr, 1, '[');
  for(i=0; i<v.nDim; i++){
    if( i ) sqlite3_str_appendchar(pStr, 1, ',');
    if( v.eType==VS_I8 || v.eType==VS_BIT ){
      sqlite3_str_appendf(pStr, "%d", (int)vsTypedAt(&v, i));
    }else{
      sqlite3_str_appendf(pStr, "%f", vsTypedAt(&v, i));
    }
  }
  sqlite3_str_appendchar(pStr, 1, ']');
  rc = sqlite3_str_errcode(pStr);
  if( rc!=SQLITE_OK ){
    sqlite3_free(sqlite3_str_finish(pStr));
    sqlite3_result_error_code(ctx, rc);
  }else{
    int n = sqlite3_str_length(pStr);
    sqlite3_result_text(ctx, sqlite3_str_finish(pStr), n, sqlite3_free);
    sqlite3_result_subtype(ctx, VS_SUBTYPE_JSON);   /* JSON text, as json() marks it */
  }
  vsTypedFree(&v);
}

/* ---- arithmetic -------------------------------------------------------------------------- */

/* vec_normalize(v): a float vector scaled to unit length, as float32. A zero vector has no
** direction and is refused (sqlite-vec returns NaNs). */
static void vsTypedNormalizeFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  VsTyped v;
  char *zErr = 0;
  float *a = 0;
  double rNorm = 0.0;
  int i, rc = vsTypedFromValue(argv[0], &v, &zErr);
  (void)argc;
  if( rc==SQLITE_OK && v.eType!=VS_F32 && v.eType!=VS_F64 ){
    zErr = sqlite3_mprintf("only float vectors can be normalized, got %s", vsTypeName(v.eType));
    rc = SQLITE_ERROR;
  }
  if( rc==SQLITE_OK && v.eType==VS_F32 ){
    /* sqlite-vec's figures: the sum of squares in float32, its root a float32. */
    const float *x = v.f.aData;
    float fSum = 0.0f;
    for(i=0; i<v.nDim; i++) fSum += x[i]*x[i];
    rNorm = (float)sqrt((double)fSum);
  }else if( rc==SQLITE_OK ){
    rNorm = sqrt(vsDotF64(&v.f, &v.f));
  }
  if( rc==SQLITE_OK ){
    if( rNorm==0.0 || isinf(rNorm) ){
      zErr = sqlite3_mprintf(rNorm==0.0 ? "cannot normalize a zero vector"
                             : "the vector's length overflows float32");
      rc = SQLITE_ERROR;
    }
  }
  if( rc==SQLITE_OK ){
    a = sqlite3_malloc64(sizeof(float)*(size_t)v.nDim);
    if( a==0 ) rc = SQLITE_NOMEM;
  }
  if( rc==SQLITE_OK ){
    if( v.eType==VS_F32 ){
      const float *x = v.f.aData;
      for(i=0; i<v.nDim; i++) a[i] = x[i] / (float)rNorm;
    }else{
      for(i=0; i<v.nDim; i++) a[i] = (float)(vsTypedAt(&v, i) / rNorm);
    }
    vsResultF32Typed(ctx, a, v.nDim);
  }else{
    vsResultError(ctx, rc, zErr);
  }
  sqlite3_free(a);
  vsTypedFree(&v);
}

/* vec_slice(v, start, end): elements start..end-1, of the same type. For a bit vector
** both bounds must be multiples of 8. */
static void vsSliceFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  VsTyped v;
  char *zErr = 0;
  sqlite3_int64 iStart = sqlite3_value_int64(argv[1]);
  sqlite3_int64 iEnd = sqlite3_value_int64(argv[2]);
  int n, rc = vsTypedFromValue(argv[0], &v, &zErr);
  (void)argc;
  if( rc!=SQLITE_OK ) goto cleanup;
  if( iStart<0 ){
    zErr = sqlite3_mprintf("start (%lld) must not be negative", iStart);
    rc = SQLITE_ERROR;
  }else if( iEnd<0 ){
    zErr = sqlite3_mprintf("end (%lld) must not be negative", iEnd);
    rc = SQLITE_ERROR;
  }else if( iEnd>v.nDim ){
    zErr = sqlite3_mprintf("end (%lld) is beyond the vector's %d dimensions", iEnd, v.nDim);
    rc = SQLITE_ERROR;
  }else if( iStart>iEnd ){
    zErr = sqlite3_mprintf("start (%lld) is after end (%lld)", iStart, iEnd);
    rc = SQLITE_ERROR;
  }else if( iStart==iEnd ){
    zErr = sqlite3_mprintf("start and end are both %lld: zero-length vectors are not supported",
                           iStart);
    rc = SQLITE_ERROR;
  }else if( v.eType==VS_BIT && (iStart%8!=0 || iEnd%8!=0) ){
    zErr = sqlite3_mprintf("the bounds of a bit vector's slice must be multiples of 8, "
                           "got %lld and %lld", iStart, iEnd);
    rc = SQLITE_ERROR;
  }
  if( rc!=SQLITE_OK ) goto cleanup;
  n = (int)(iEnd - iStart);
  switch( v.eType ){
    case VS_F32: vsResultF32Typed(ctx, (const float*)v.f.aData + iStart, n); break;
    case VS_F64: vsResultF64(ctx, (const double*)v.f.aData + iStart, n); break;
    case VS_I8:  vsResultBytes(ctx, v.aByte + iStart, n, VS_I8); break;
    default:     vsResultBytes(ctx, v.aByte + iStart/8, n/8, VS_BIT); break;
  }

cleanup:
  if( rc!=SQLITE_OK ) vsResultError(ctx, rc, zErr);
  vsTypedFree(&v);
}

/* vec_add(a, b), vec_sub(a, b) (user data's name says which): element by element, float
** or int8 (int8 wraps around, as sqlite-vec's does). */
static void vsAddSubFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  VsTyped a, b;
  char *zErr = 0;
  void *pOut = 0;
  int bSub = strcmp((const char*)sqlite3_user_data(ctx), "vec_sub")==0;
  int i, rc = vsTypedPair(argv, &a, &b, &zErr);
  (void)argc;
  if( rc==SQLITE_OK && a.eType==VS_BIT ){
    zErr = sqlite3_mprintf("bit vectors cannot be %s", bSub ? "subtracted" : "added");
    rc = SQLITE_ERROR;
  }
  if( rc==SQLITE_OK ){
    pOut = sqlite3_malloc64((size_t)a.nDim * (a.eType==VS_F64 ? 8 : 4));
    if( pOut==0 ) rc = SQLITE_NOMEM;
  }
  if( rc!=SQLITE_OK ){
    vsResultError(ctx, rc, zErr);
  }else if( a.eType==VS_I8 ){
    signed char *o = pOut;
    for(i=0; i<a.nDim; i++){
      int x = (signed char)a.aByte[i], y = (signed char)b.aByte[i];
      o[i] = (signed char)(unsigned char)(bSub ? x - y : x + y);
    }
    vsResultBytes(ctx, (const unsigned char*)o, a.nDim, VS_I8);
  }else if( a.eType==VS_F32 ){
    const float *x = a.f.aData, *y = b.f.aData;
    float *o = pOut;
    for(i=0; i<a.nDim; i++) o[i] = bSub ? x[i] - y[i] : x[i] + y[i];
    vsResultF32Typed(ctx, o, a.nDim);
  }else{
    const double *x = a.f.aData, *y = b.f.aData;
    double *o = pOut;
    for(i=0; i<a.nDim; i++) o[i] = bSub ? x[i] - y[i] : x[i] + y[i];
    vsResultF64(ctx, o, a.nDim);
  }
  sqlite3_free(pOut);
  vsTypedFree(&a);
  vsTypedFree(&b);
}

/* ---- distances --------------------------------------------------------------------------- */

#define VS_DIST_L2      1
#define VS_DIST_COSINE  2
#define VS_DIST_L1      3
#define VS_DIST_HAMMING 4

/* vec_distance_l2, _cosine, _l1, _hamming (the function's name, its user data, says
** which). Bits take only hamming; hamming takes only bits. */
static void vsTypedDistanceFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  VsTyped a, b;
  char *zErr = 0;
  const char *zName = (const char*)sqlite3_user_data(ctx);
  int eDist = strcmp(zName, "vec_distance_l2")==0 ? VS_DIST_L2
            : strcmp(zName, "vec_distance_cosine")==0 ? VS_DIST_COSINE
            : strcmp(zName, "vec_distance_l1")==0 ? VS_DIST_L1 : VS_DIST_HAMMING;
  int rc = vsTypedPair(argv, &a, &b, &zErr);
  (void)argc;
  if( rc==SQLITE_OK && eDist==VS_DIST_HAMMING && a.eType!=VS_BIT ){
    zErr = sqlite3_mprintf("the hamming distance is defined for bit vectors, not %s",
                           vsTypeName(a.eType));
    rc = SQLITE_ERROR;
  }else if( rc==SQLITE_OK && eDist!=VS_DIST_HAMMING && a.eType==VS_BIT ){
    zErr = sqlite3_mprintf("bit vectors have no %s distance; use vec_distance_hamming",
        eDist==VS_DIST_L2 ? "L2" : eDist==VS_DIST_L1 ? "L1" : "cosine");
    rc = SQLITE_ERROR;
  }
  if( rc!=SQLITE_OK ){
    vsResultError(ctx, rc, zErr);
  }else if( eDist==VS_DIST_HAMMING ){
    sqlite3_result_double(ctx, (double)vsHammingBytes(a.aByte, b.aByte, a.nDim/8));
  }else if( a.eType==VS_I8 ){
    const signed char *x = (const signed char*)a.aByte, *y = (const signed char*)b.aByte;
    if( eDist==VS_DIST_L1 ){
      sqlite3_result_int64(ctx, vsL1I8(x, y, a.nDim));
    }else if( eDist==VS_DIST_L2 ){
      sqlite3_result_double(ctx, vsL2I8(x, y, a.nDim));
    }else{
      double r = vsCosineI8(x, y, a.nDim);
      if( r!=r ) sqlite3_result_null(ctx); else sqlite3_result_double(ctx, r);
    }
  }else if( eDist==VS_DIST_L1 ){
    sqlite3_result_double(ctx, vsL1F64(&a.f, &b.f));
  }else if( eDist==VS_DIST_L2 && a.eType==VS_F32 ){
    sqlite3_result_double(ctx, vsL2F32Seq((const float*)a.f.aData, (const float*)b.f.aData, a.nDim));
  }else if( eDist==VS_DIST_COSINE && a.eType==VS_F32 ){
    double r = vsCosineF32Seq((const float*)a.f.aData, (const float*)b.f.aData, a.nDim);
    if( r!=r ) sqlite3_result_null(ctx); else sqlite3_result_double(ctx, r);
  }else if( eDist==VS_DIST_L2 ){
    sqlite3_result_double(ctx, sqrt(vsL2SqF64(&a.f, &b.f)));
  }else{
    double rAA = vsDotF64(&a.f, &a.f), rBB = vsDotF64(&b.f, &b.f);
    if( rAA==0.0 || rBB==0.0 ){
      sqlite3_result_null(ctx);           /* a zero vector has no direction */
    }else{
      double r = 1.0 - vsDotF64(&a.f, &b.f)/sqrt(rAA*rBB);
      sqlite3_result_double(ctx, r<0.0 ? 0.0 : r>2.0 ? 2.0 : r);
    }
  }
  vsTypedFree(&a);
  vsTypedFree(&b);
}

/* ---- vec_each ---------------------------------------------------------------------------- */

/*
** vec_each(v): one row per element, rowid the element's position from 0, column value
** (REAL for float vectors, INTEGER for int8 and bit, each byte's bits from the most
** significant, as sqlite-vec lists them).
*/
#define VEACH_COL_VALUE  0
#define VEACH_COL_VECTOR 1

typedef struct VeachCursor VeachCursor;
struct VeachCursor {
  VsCursor base;              /* Base class: must be first; its rows are the elements */
  int eType;                  /* VS_F32, VS_F64, VS_I8 or VS_BIT */
  int nDim;                   /* Elements */
  void *aCopy;                /* The vector's elements or bytes, copied */
};

/* Forget the last vector. */
static void veachReset(sqlite3_vtab_cursor *cur){
  VeachCursor *pCur = (VeachCursor*)cur;
  sqlite3_free(pCur->aCopy);
  pCur->aCopy = 0;
  pCur->nDim = 0;
  pCur->base.iRow = pCur->base.nRow = 0;
}

static int veachConnect(sqlite3 *db, void *pAux, int argc, const char *const *argv,
                        sqlite3_vtab **ppVtab, char **pzErr){
  int rc = vsTableFunctionConnect(db, pAux, "CREATE TABLE x(value, vector HIDDEN)",
                                  sizeof(VeachCursor), veachReset, ppVtab);
  (void)argc; (void)argv; (void)pzErr;
  if( rc==SQLITE_OK ) sqlite3_vtab_config(db, SQLITE_VTAB_INNOCUOUS);
  return rc;
}

static int veachBestIndex(sqlite3_vtab *pVtab, sqlite3_index_info *pInfo){
  int rc = vsTableFunctionArgs(pVtab, pInfo, VEACH_COL_VECTOR, 1,
                               "vec_each(vector) needs its argument");
  if( rc==SQLITE_OK ){
    pInfo->estimatedCost = 10.0;
    pInfo->estimatedRows = 100;
  }
  return rc;
}


static int veachFilter(sqlite3_vtab_cursor *cur, int idxNum, const char *idxStr,
                       int argc, sqlite3_value **argv){
  VeachCursor *pCur = (VeachCursor*)cur;
  VsTyped v;
  char *zErr = 0;
  size_t nByte = 0;
  int rc;
  (void)idxNum; (void)idxStr;
  veachReset(cur);
  memset(&v, 0, sizeof(v));
  if( argc<1 ){
    zErr = sqlite3_mprintf("needs its argument");
    rc = SQLITE_ERROR;
    goto cleanup;
  }
  rc = vsTypedFromValue(argv[0], &v, &zErr);
  if( rc!=SQLITE_OK ) goto cleanup;
  switch( v.eType ){
    case VS_F32: nByte = (size_t)v.nDim*4; break;
    case VS_F64: nByte = (size_t)v.nDim*8; break;
    case VS_I8:  nByte = (size_t)v.nDim; break;
    default:     nByte = (size_t)v.nDim/8; break;
  }
  pCur->aCopy = sqlite3_malloc64(nByte);
  if( pCur->aCopy==0 ){ rc = SQLITE_NOMEM; goto cleanup; }
  memcpy(pCur->aCopy, v.aByte ? (const void*)v.aByte : v.f.aData, nByte);
  pCur->eType = v.eType;
  pCur->nDim = pCur->base.nRow = v.nDim;

cleanup:
  if( rc!=SQLITE_OK && rc!=SQLITE_NOMEM ){
    sqlite3_free(cur->pVtab->zErrMsg);
    cur->pVtab->zErrMsg = sqlite3_mprintf("vec_each: %s", zErr ? zErr : "error");
  }
  sqlite3_free(zErr);
  vsTypedFree(&v);
  return rc;
}



static int veachColumn(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int i){
  VeachCursor *pCur = (VeachCursor*)cur;
  int k = pCur->base.iRow;
  if( i!=VEACH_COL_VALUE ) return SQLITE_OK;
  switch( pCur->eType ){
    case VS_F32: sqlite3_result_double(ctx, ((const float*)pCur->aCopy)[k]); break;
    case VS_F64: sqlite3_result_double(ctx, ((const double*)pCur->aCopy)[k]); break;
    case VS_I8:  sqlite3_result_int(ctx, ((const signed char*)pCur->aCopy)[k]); break;
    default:
      /* Most significant bit first, as sqlite-vec's vec_each reads a byte (its
      ** vec_to_json and vec_quantize_binary go least significant first). */
      sqlite3_result_int(ctx, (((const unsigned char*)pCur->aCopy)[k>>3]>>(7-(k&7))) & 1);
      break;
  }
  return SQLITE_OK;
}

static sqlite3_module veachModule = VS_TABLE_FUNCTION_MODULE(
    veachConnect, veachBestIndex, veachFilter, vsCursorNext, vsCursorEof, veachColumn,
    vsCursorRowid);

/* ---- registration ------------------------------------------------------------------------ */

/* Pure functions of their arguments (and their subtypes): DETERMINISTIC and INNOCUOUS as
** in vector_sql.c; SUBTYPE because they read their arguments' subtypes, RESULT_SUBTYPE
** because they set their result's. */
#define VS_TYPED (SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS \
                  | SQLITE_SUBTYPE | SQLITE_RESULT_SUBTYPE)

int vsRegisterTypedFunctions(sqlite3 *db, char **pzErr){
  static const VsFunction aFunc[] = {
    { "vec_int8",             1, VS_TYPED, vsInt8Func },
    { "vec_bit",              1, VS_TYPED, vsBitFunc },
    { "vec_quantize_binary",  1, VS_TYPED, vsQuantizeBinaryFunc },
    { "vec_quantize_int8",    2, VS_TYPED, vsQuantizeInt8Func },
    { "vec_type",             1, VS_TYPED, vsTypeFunc },
    { "vec_length",           1, VS_TYPED, vsTypedLengthFunc },
    { "vec_to_json",          1, VS_TYPED, vsTypedToJsonFunc },
    { "vec_normalize",        1, VS_TYPED, vsTypedNormalizeFunc },
    { "vec_slice",            3, VS_TYPED, vsSliceFunc },
    { "vec_add",              2, VS_TYPED, vsAddSubFunc },
    { "vec_sub",              2, VS_TYPED, vsAddSubFunc },
    { "vec_distance_l2",      2, VS_TYPED, vsTypedDistanceFunc },
    { "vec_distance_cosine",  2, VS_TYPED, vsTypedDistanceFunc },
    { "vec_distance_l1",      2, VS_TYPED, vsTypedDistanceFunc },
    { "vec_distance_hamming", 2, VS_TYPED, vsTypedDistanceFunc },
  };
  int rc = vsCreateFunctions(db, aFunc, (int)(sizeof(aFunc)/sizeof(aFunc[0])), 0, pzErr);
  if( rc==SQLITE_OK ){
    rc = sqlite3_create_module(db, "vec_each", &veachModule, 0);
    if( rc!=SQLITE_OK ){
      *pzErr = sqlite3_mprintf("vecsync: cannot register vec_each: %s", sqlite3_errmsg(db));
    }
  }
  return rc;
}
