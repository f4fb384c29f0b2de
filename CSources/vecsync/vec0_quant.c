/*
** vec0_quant.c: the codes a quantized vec0 table keeps in memory, and their scorers.
**
** Usage (vec0_cache.c encodes, vec0_search.c scores):
**
**   vec0QuantEncode(&p->cfg, a, pCode, &rScale);      // one stored vector -> its code
**   vec0QuantQueryInit(&p->cfg, q, &qq);               // once per query
**   vec0QuantScore(&qq, c->aCode, c->aScale, nRow, aDist);   // a chunk's coarse distances
**   vec0QuantQueryClear(&qq);
**
** Two codes, chosen by "indexed by rescore(quantizer=...)":
**   int8  each vector scaled by its own largest magnitude to [-127, 127], one byte an
**         element, plus that scale (4 bytes). The query is coded the same way; the integer
**         dot product, times both scales, approximates q.x, and the exact norm the copy keeps
**         turns it into an approximate distance for every metric. 4x smaller than float32.
**   bit   one bit an element, set when the element is positive; the coarse distance is the
**         Hamming distance between the query's bits and the row's, and the best
**         VEC0_BIT_WIDEN times more rows than are re-scored are then ranked again by the
**         float query against their signs (a table lookup per code byte). 32x smaller.
** Either way the coarse distances only choose candidates: vec0_search.c re-scores the best
** k*oversample from the stored float32 vectors, exactly, before anything is returned.
*/
#include "vecsync_int.h"
SQLITE_EXTENSION_INIT3

#include <math.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
# include <immintrin.h>
# define VEC0_QUANT_X86 1
#endif

int vec0QuantCodeBytes(const Vec0Config *pCfg){
  switch( pCfg->eQuant ){
    case VEC0_QUANT_INT8: return pCfg->nDim;
    case VEC0_QUANT_BIT:  return (pCfg->nDim + 7)/8;
  }
  return 0;
}

/* Code n floats as int8 scaled by their largest magnitude: *pScale times a code is the
** element it stands for. A zero vector codes as zeros with scale 0. */
static void vec0QuantInt8(const float *a, int n, signed char *pCode, float *pScale){
  float rMax = 0.0f, rInv;
  int i;
  for(i=0; i<n; i++){
    float x = fabsf(a[i]);
    if( x>rMax ) rMax = x;
  }
  if( !(rMax>0.0f) ){
    memset(pCode, 0, (size_t)n);
    *pScale = 0.0f;
    return;
  }
  rInv = 127.0f/rMax;
  for(i=0; i<n; i++){
    /* Rounded half away from zero, in a form the compiler vectorises (lrintf is a call
    ** per element). Clamped to [-127, 127] first: never -128, which the scorer cannot
    ** negate, and a NaN or infinity read from a damaged file converts to a code too
    ** (converting them to int would be undefined). */
    float x = a[i]*rInv;
    if( !(x>=-127.0f) ) x = -127.0f;
    if( !(x<=127.0f) ) x = 127.0f;
    pCode[i] = (signed char)(int)(x + (x>=0.0f ? 0.5f : -0.5f));
  }
  *pScale = rMax/127.0f;
}

static void vec0QuantBits(const float *a, int n, unsigned char *pCode){
  int i;
  memset(pCode, 0, (size_t)(n+7)/8);
  for(i=0; i<n; i++){
    if( a[i]>0.0f ) pCode[i>>3] |= (unsigned char)(1u<<(i&7));
  }
}

int vec0QuantRecordBytes(const Vec0Config *pCfg){
  return vec0QuantCodeBytes(pCfg) + 4 + (pCfg->eQuant==VEC0_QUANT_INT8 ? 4 : 0);
}

static float vec0FloatLE(const unsigned char *p){
  float r;
  vsF32FromLE(p, 1, &r);
  return (r==r && r-r==0.0f) ? r : 0.0f;       /* NaN and infinities read as 0 */
}

void vec0QuantRecord(const Vec0Config *pCfg, const float *a, unsigned char *pRec){
  float rScale = 0.0f;
  vec0QuantEncode(pCfg, a, pRec, &rScale);
  vec0QuantRecordWrite(pCfg, pRec, vsNormF32(a, pCfg->nDim), rScale, pRec);
}

void vec0QuantRecordWrite(const Vec0Config *pCfg, const unsigned char *pCode, float rNorm,
                          float rScale, unsigned char *pRec){
  int nCode = vec0QuantCodeBytes(pCfg);
  if( pCode!=pRec ) memcpy(pRec, pCode, (size_t)nCode);
  vsF32ToLE(&rNorm, 1, pRec + nCode);
  if( pCfg->eQuant==VEC0_QUANT_INT8 ) vsF32ToLE(&rScale, 1, pRec + nCode + 4);
}

void vec0QuantRecordRead(const Vec0Config *pCfg, const unsigned char *pRec,
                         unsigned char *pCode, float *pNorm, float *pScale){
  int nCode = vec0QuantCodeBytes(pCfg);
  memcpy(pCode, pRec, (size_t)nCode);
  *pNorm = vec0FloatLE(pRec + nCode);
  *pScale = pCfg->eQuant==VEC0_QUANT_INT8 ? vec0FloatLE(pRec + nCode + 4) : 0.0f;
}

void vec0QuantEncode(const Vec0Config *pCfg, const float *a, unsigned char *pCode,
                     float *pScale){
  if( pCfg->eQuant==VEC0_QUANT_INT8 ){
    vec0QuantInt8(a, pCfg->nDim, (signed char*)pCode, pScale);
  }else{
    vec0QuantBits(a, pCfg->nDim, pCode);
    *pScale = 0.0f;
  }
}

int vec0QuantQueryInit(const Vec0Config *pCfg, const float *q, Vec0QuantQuery *pQ){
  int nCode = vec0QuantCodeBytes(pCfg);
  memset(pQ, 0, sizeof(*pQ));
  pQ->eQuant = pCfg->eQuant;
  pQ->eMetric = pCfg->eMetric;
  pQ->nDim = pCfg->nDim;
  pQ->nCode = nCode;
  pQ->qNorm = vsNormF32(q, pCfg->nDim);
  pQ->aCode = sqlite3_malloc64((size_t)nCode*2 + 32);
  if( pQ->aCode==0 ) return SQLITE_NOMEM;
  memset(pQ->aCode, 0, (size_t)nCode*2 + 32);
  pQ->aAbs = pQ->aCode + nCode + 16;
  vec0QuantEncode(pCfg, q, pQ->aCode, &pQ->rScale);
  if( pCfg->eQuant==VEC0_QUANT_BIT ){
    int j, v, t;
    pQ->aTable = sqlite3_malloc64(sizeof(float)*256*(size_t)nCode);
    if( pQ->aTable==0 ) return SQLITE_NOMEM;
    for(j=0; j<nCode; j++){
      /* T[0] has every element negative; setting bit t adds 2*q[8j+t]: each entry is the
      ** entry without its lowest set bit, plus that bit's share. */
      float *T = pQ->aTable + (size_t)j*256;
      float a2[8];
      T[0] = 0.0f;
      for(t=0; t<8; t++){
        float x = j*8+t<pQ->nDim ? q[j*8+t] : 0.0f;
        T[0] -= x;
        a2[t] = 2.0f*x;
      }
      for(v=1; v<256; v++) T[v] = T[v & (v-1)] + a2[__builtin_ctz((unsigned)v)];
    }
  }
  if( pCfg->eQuant==VEC0_QUANT_INT8 ){
    int i;
    for(i=0; i<nCode; i++){
      int v = ((signed char*)pQ->aCode)[i];
      pQ->aAbs[i] = (unsigned char)(v<0 ? -v : v);
    }
  }
  return SQLITE_OK;
}

void vec0QuantQueryClear(Vec0QuantQuery *pQ){
  sqlite3_free(pQ->aCode);
  sqlite3_free(pQ->aTable);
  memset(pQ, 0, sizeof(*pQ));
}

/* ---- int8 ---------------------------------------------------------------------------- */

static int vec0DotI8(const signed char *a, const signed char *b, int n){
  int i, s = 0;
  for(i=0; i<n; i++) s += a[i]*b[i];
  return s;
}

/* The int8 kernels prefetch the codes of the next four rows while they score four: an ivf
** query waits on its lists' codes, which come from memory (at 100,000 x 768, queries at
** nprobe 8 to 32 took 17-35% less time; two or four groups ahead did no better). */
#define VEC0_I8_AHEAD 4
#ifdef VEC0_QUANT_X86
/* q.b for 32 elements at a time: maddubs multiplies |q| (unsigned) by b carrying q's
** sign, which cannot saturate since no code is -128 (2*127*127 < 32768). */
__attribute__((target("avx2")))
static __m256i vec0DotI8Step(__m256i acc, __m256i va, __m256i vq, const signed char *b){
  const __m256i ones = _mm256_set1_epi16(1);
  __m256i vb = _mm256_sign_epi8(_mm256_loadu_si256((const __m256i*)b), vq);
  return _mm256_add_epi32(acc, _mm256_madd_epi16(_mm256_maddubs_epi16(va, vb), ones));
}

/* The four int32 sums of a, b, c and d's eight lanes each, in that order. */
__attribute__((target("avx2")))
static __m128i vec0SumI32x4(__m256i a, __m256i b, __m256i c, __m256i d){
  __m256i ab = _mm256_hadd_epi32(a, b), cd = _mm256_hadd_epi32(c, d);
  __m256i abcd = _mm256_hadd_epi32(ab, cd);
  return _mm_add_epi32(_mm256_castsi256_si128(abcd), _mm256_extracti128_si256(abcd, 1));
}

/* q.b for each of the nRow codes of n bytes at aCode into aDot, with STEP one 32-byte
** step of a row's sum: four rows at a time, which share the loads of q and a reduction.
** nAfter more codes follow the nRow in memory, and may be prefetched. */
#define VEC0_DOT_I8_ROWS(STEP)                                                                \
  int r = 0, i, j;                                                                          \
  for(; r+4<=nRow; r+=4){                                                                   \
    const signed char *b = aCode + (size_t)r*n;                                             \
    int nAhead = nRow + nAfter - (r + VEC0_I8_AHEAD);                                       \
    if( nAhead>VEC0_I8_AHEAD ) nAhead = VEC0_I8_AHEAD;                                      \
    for(i=0; i<nAhead*n; i+=64){                                                            \
      _mm_prefetch((const char*)b + (size_t)VEC0_I8_AHEAD*n + i, _MM_HINT_T0);              \
    }                                                                                       \
    __m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0;                         \
    int aTail[4];                                                                           \
    for(i=0; i+32<=n; i+=32){                                                               \
      __m256i vq = _mm256_loadu_si256((const __m256i*)(q+i));                               \
      __m256i va = _mm256_loadu_si256((const __m256i*)(qAbs+i));                            \
      a0 = STEP(a0, va, vq, b+i);                                                           \
      a1 = STEP(a1, va, vq, b+n+i);                                                         \
      a2 = STEP(a2, va, vq, b+2*n+i);                                                       \
      a3 = STEP(a3, va, vq, b+3*n+i);                                                       \
    }                                                                                       \
    for(j=0; j<4; j++) aTail[j] = vec0DotI8(q+i, b+(size_t)j*n+i, n-i);                     \
    _mm_storeu_si128((__m128i*)&aDot[r], _mm_add_epi32(vec0SumI32x4(a0, a1, a2, a3),        \
                                                      _mm_loadu_si128((const __m128i*)aTail))); \
  }                                                                                         \
  for(; r<nRow; r++){                                                                       \
    const signed char *b = aCode + (size_t)r*n;                                             \
    __m256i a0 = _mm256_setzero_si256(), z = a0;                                            \
    for(i=0; i+32<=n; i+=32){                                                               \
      a0 = STEP(a0, _mm256_loadu_si256((const __m256i*)(qAbs+i)),                           \
                _mm256_loadu_si256((const __m256i*)(q+i)), b+i);                            \
    }                                                                                       \
    aDot[r] = _mm_cvtsi128_si32(vec0SumI32x4(a0, z, z, z)) + vec0DotI8(q+i, b+i, n-i);      \
  }

__attribute__((target("avx2")))
static void vec0DotI8Avx2(const unsigned char *qAbs, const signed char *q,
                          const signed char *aCode, int n, int nRow, int nAfter, int *aDot){
  VEC0_DOT_I8_ROWS(vec0DotI8Step)
}

/* The same step in one instruction where the CPU has AVX-512 VNNI: vpdpbusd adds the four
** products |q|.b of each 32-bit lane to it, exactly the sum maddubs and madd make. */
__attribute__((target("avx2,avx512f,avx512vl,avx512vnni")))
static __m256i vec0DotI8StepVnni(__m256i acc, __m256i va, __m256i vq, const signed char *b){
  __m256i vb = _mm256_sign_epi8(_mm256_loadu_si256((const __m256i*)b), vq);
  return _mm256_dpbusd_epi32(acc, va, vb);
}

__attribute__((target("avx2,avx512f,avx512vl,avx512vnni")))
static void vec0DotI8Vnni(const unsigned char *qAbs, const signed char *q,
                          const signed char *aCode, int n, int nRow, int nAfter, int *aDot){
  VEC0_DOT_I8_ROWS(vec0DotI8StepVnni)
}
#endif

static void vec0ScoreInt8(const Vec0QuantQuery *pQ, const unsigned char *aCode,
                          const float *aScale, const float *aNorm, int nRow, float *aDist){
  const signed char *q = (const signed char*)pQ->aCode;
  int i, n = pQ->nDim;
#ifdef VEC0_QUANT_X86
  int eKernel = vsInt8Kernel();     /* 2: AVX-512 VNNI, 1: AVX2 */
  if( eKernel>0 ){
    int aDot[64], i0, j;
    for(i0=0; i0<nRow; i0+=64){
      int nB = nRow-i0<64 ? nRow-i0 : 64;
      const signed char *b = (const signed char*)aCode + (size_t)i0*n;
      if( eKernel==2 ){
        vec0DotI8Vnni(pQ->aAbs, q, b, n, nB, nRow-i0-nB, aDot);
      }else{
        vec0DotI8Avx2(pQ->aAbs, q, b, n, nB, nRow-i0-nB, aDot);
      }
      for(j=0; j<nB; j++){
        aDist[i0+j] = (float)vsScoreDistance(pQ->eMetric, (float)aDot[j]*pQ->rScale*aScale[i0+j],
                                             pQ->qNorm, aNorm[i0+j]);
      }
    }
    return;
  }
#endif
  for(i=0; i<nRow; i++){
    int dot = vec0DotI8(q, (const signed char*)aCode + (size_t)i*n, n);
    aDist[i] = (float)vsScoreDistance(pQ->eMetric, (float)dot*pQ->rScale*aScale[i],
                                      pQ->qNorm, aNorm[i]);
  }
}

/* ---- bit ------------------------------------------------------------------------------ */

#ifdef VEC0_QUANT_X86
/* vsHammingBytes with the POPCNT instruction, where the CPU has it. */
__attribute__((target("popcnt")))
static int vec0HammingPopcnt(const unsigned char *a, const unsigned char *b, int n){
  int i = 0, s = 0;
  for(; i+8<=n; i+=8){
    uint64_t x, y;
    memcpy(&x, a+i, 8);
    memcpy(&y, b+i, 8);
    s += (int)_mm_popcnt_u64(x^y);
  }
  for(; i<n; i++) s += _mm_popcnt_u32((unsigned)(a[i]^b[i]));
  return s;
}
#endif

static void vec0ScoreBits(const Vec0QuantQuery *pQ, const unsigned char *aCode, int nRow,
                          float *aDist){
  int i, n = pQ->nCode;
#ifdef VEC0_QUANT_X86
  if( __builtin_cpu_supports("popcnt") ){
    for(i=0; i<nRow; i++) aDist[i] = (float)vec0HammingPopcnt(pQ->aCode, aCode + (size_t)i*n, n);
    return;
  }
#endif
  for(i=0; i<nRow; i++) aDist[i] = (float)vsHammingBytes(pQ->aCode, aCode + (size_t)i*n, n);
}

void vec0QuantScore(const Vec0QuantQuery *pQ, const unsigned char *aCode, const float *aScale,
                    const float *aNorm, int nRow, float *aDist){
  if( pQ->eQuant==VEC0_QUANT_INT8 ){
    vec0ScoreInt8(pQ, aCode, aScale, aNorm, nRow, aDist);
  }else{
    vec0ScoreBits(pQ, aCode, nRow, aDist);
  }
}

float vec0QuantRefineBits(const Vec0QuantQuery *pQ, const unsigned char *pCode, float rNorm){
  float s = 0.0f;
  int j;
  for(j=0; j<pQ->nCode; j++) s += pQ->aTable[(size_t)j*256 + pCode[j]];
  /* The row stands for its signs times |x|/sqrt(n): q.x is about s*|x|/sqrt(n). */
  return (float)vsScoreDistance(pQ->eMetric, s*rNorm/sqrtf((float)pQ->nDim), pQ->qNorm, rNorm);
}

/* One row's coarse distance (a selective filter scores its few rows one by one). */
float vec0QuantScoreOne(const Vec0QuantQuery *pQ, const unsigned char *pCode, float rScale,
                        float rNorm){
  float d;
  vec0QuantScore(pQ, pCode, &rScale, &rNorm, 1, &d);
  return d;
}

/* ---- int8[N] and bit[N] columns ------------------------------------------------------- */

/* An int8 or bit column's vectors are not codes of anything: they are scanned as stored,
** and these give each row's exact key (smaller is nearer): int8 l2 the squared distance,
** l1 the sum of absolute differences, cosine 1 - cos (VS_NO_DIRECTION when the
** row is all zeros); bit the Hamming distance. All sums are exact integers. */

static void vec0I8Sums(const signed char *q, const signed char *v, int n,
                       sqlite3_int64 *pL2, sqlite3_int64 *pL1, sqlite3_int64 *pDot,
                       sqlite3_int64 *pVV){
  sqlite3_int64 l2 = 0, l1 = 0, dot = 0, vv = 0;
  int i;
  for(i=0; i<n; i++){
    int d = (int)q[i] - (int)v[i];
    l2 += d*d;
    l1 += d<0 ? -d : d;
    dot += (int)q[i]*(int)v[i];
    vv += (int)v[i]*(int)v[i];
  }
  *pL2 = l2; *pL1 = l1; *pDot = dot; *pVV = vv;
}

#ifdef VEC0_QUANT_X86
/* The sums the metric needs (l2: *pL2; l1: *pL1; cosine: *pDot and *pVV), 16 elements at
** a time, widened to 16 bits first, so every value from -128 to 127 is exact (no
** saturation): each 32-bit lane gains at most 2*255*255 an iteration, well inside its range
** for VS_MAX_DIMS elements. */
__attribute__((target("avx2")))
static void vec0I8SumsAvx2(int eMetric, const signed char *q, const signed char *v, int n,
                           sqlite3_int64 *pL2, sqlite3_int64 *pL1, sqlite3_int64 *pDot,
                           sqlite3_int64 *pVV){
  __m256i a0 = _mm256_setzero_si256(), a1 = _mm256_setzero_si256();
  const __m256i ones = _mm256_set1_epi16(1);
  int32_t t[2][8];
  sqlite3_int64 l2, l1, dot, vv, s0 = 0, s1 = 0;
  int i = 0, j;
  for(; i+16<=n; i+=16){
    __m256i x = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i*)(q+i)));
    __m256i y = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i*)(v+i)));
    if( eMetric==VS_METRIC_COSINE ){
      a0 = _mm256_add_epi32(a0, _mm256_madd_epi16(x, y));
      a1 = _mm256_add_epi32(a1, _mm256_madd_epi16(y, y));
    }else{
      __m256i d = _mm256_sub_epi16(x, y);
      if( eMetric==VS_METRIC_L1 ){
        a0 = _mm256_add_epi32(a0, _mm256_madd_epi16(_mm256_abs_epi16(d), ones));
      }else{
        a0 = _mm256_add_epi32(a0, _mm256_madd_epi16(d, d));
      }
    }
  }
  _mm256_storeu_si256((__m256i*)t[0], a0);
  _mm256_storeu_si256((__m256i*)t[1], a1);
  for(j=0; j<8; j++){ s0 += t[0][j]; s1 += t[1][j]; }
  vec0I8Sums(q+i, v+i, n-i, &l2, &l1, &dot, &vv);
  *pL2 = l2 + (eMetric==VS_METRIC_L2 ? s0 : 0);
  *pL1 = l1 + (eMetric==VS_METRIC_L1 ? s0 : 0);
  *pDot = dot + (eMetric==VS_METRIC_COSINE ? s0 : 0);
  *pVV = vv + (eMetric==VS_METRIC_COSINE ? s1 : 0);
}
#endif

void vec0TypedScore(const Vec0Config *pCfg, const unsigned char *q, const unsigned char *aRow,
                    int nStride, int nRow, double *aKey){
  int i;
  if( pCfg->eElem==VS_BIT ){
    int nByte = pCfg->nVecByte;
#ifdef VEC0_QUANT_X86
    if( __builtin_cpu_supports("popcnt") ){
      for(i=0; i<nRow; i++) aKey[i] = vec0HammingPopcnt(q, aRow + (size_t)i*nStride, nByte);
      return;
    }
#endif
    for(i=0; i<nRow; i++) aKey[i] = (double)vsHammingBytes(q, aRow + (size_t)i*nStride, nByte);
    return;
  }
  {
    const signed char *x = (const signed char*)q;
    sqlite3_int64 qq = 0, l2, l1, dot, vv;
    int n = pCfg->nDim;
#ifdef VEC0_QUANT_X86
    int bAvx2 = __builtin_cpu_supports("avx2");
#endif
    for(i=0; i<n; i++) qq += (int)x[i]*(int)x[i];
    for(i=0; i<nRow; i++){
      const signed char *y = (const signed char*)(aRow + (size_t)i*nStride);
#ifdef VEC0_QUANT_X86
      if( bAvx2 ) vec0I8SumsAvx2(pCfg->eMetric, x, y, n, &l2, &l1, &dot, &vv); else
#endif
      vec0I8Sums(x, y, n, &l2, &l1, &dot, &vv);
      switch( pCfg->eMetric ){
        case VS_METRIC_L1:     aKey[i] = (double)l1; break;
        case VS_METRIC_COSINE:
          aKey[i] = (vv==0 || qq==0) ? VS_NO_DIRECTION
                  : 1.0 - (double)dot/sqrt((double)qq*(double)vv);
          break;
        default:               aKey[i] = (double)l2; break;
      }
    }
  }
}

double vec0TypedFigure(const Vec0Config *pCfg, const unsigned char *q, const unsigned char *v){
  const signed char *x = (const signed char*)q, *y = (const signed char*)v;
  if( pCfg->eElem==VS_BIT ) return (double)vsHammingBytes(q, v, pCfg->nVecByte);
  switch( pCfg->eMetric ){
    case VS_METRIC_L1:     return (double)vsL1I8(x, y, pCfg->nDim);
    case VS_METRIC_COSINE: return vsCosineI8(x, y, pCfg->nDim);
  }
  return vsL2I8(x, y, pCfg->nDim);
}
