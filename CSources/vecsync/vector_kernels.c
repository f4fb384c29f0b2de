/*
** vector_kernels.c: dot products, norms and distances, and the block scorer.
**
** Usage (internal; the SQL functions and vec0 call these):
**
**   vsScoreBlock(A, nRow, nDim, q, out);   // out[i] = A[i]·q, one query against a block
**   vsScoreBlockBatch(A, nRow, nDim, Q, nQuery, out);   // many queries against a block
**
** How it works: vectors of a vec0 block are stored row-major and contiguous, so scoring a
** block against a query is a matrix-vector product, and against many queries a
** matrix-matrix product. What computes them is chosen once, by vsKernelsInit():
**
**   one query (vsScoreBlock): on x86-64 with AVX2 and FMA, the AVX2 kernel of this file
**     (vsScoreRowsAvx2, eight rows a pass), which scans faster than the reference BLAS's
**     and OpenBLAS's sgemv; elsewhere (arm64, older x86-64) the system BLAS's cblas_sgemv;
**   many queries (vsScoreBlockBatch, vecsync_knn_batch): the system BLAS's cblas_sgemm;
**     on x86-64 with AVX2 and FMA and a BLAS not known to be tuned (vsBlasTuned: the
**     reference BLAS, whose sgemm is not cache-blocked, or a wheel's bundled copy), the
**     tiled AVX2 kernel (vsScoreBatchAvx2) instead;
**   VECSYNC_SCAN=blas in the environment keeps BLAS for both, for comparison; vsScanName()
**     (vecsync_debug()'s "scan:" line) says which is in use.
**
** The BLAS is the one the system provides (Debian: libblas.so.3, which OpenBLAS or BLIS can
** stand behind; Apple: Accelerate). The CBLAS prototypes are declared here rather than
** taken from a header, because Debian ships cblas.h under an alternatives path; the CBLAS
** ABI (enum arguments passed as int) is the same everywhere.
**
** The pairwise kernels below (dot products, norms, the exact distances, L1 rows) are plain
** C the compiler vectorises; on x86-64 an AVX2 variant (with FMA for the dot products) is
** chosen at run time when the CPU has it (no build flags needed).
*/
#define _GNU_SOURCE 1
#include "vecsync_int.h"
SQLITE_EXTENSION_INIT3

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__x86_64__) || defined(__i386__)
# include <immintrin.h>
# define VS_X86 1
#endif
#if !defined(_WIN32)
# include <dlfcn.h>
#endif

/* CBLAS, as every implementation exports it. */
#define VS_CBLAS_ROW_MAJOR 101
#define VS_CBLAS_NO_TRANS  111
#define VS_CBLAS_TRANS     112
void cblas_sgemv(int order, int trans, int m, int n, float alpha, const float *a,
                 int lda, const float *x, int incx, float beta, float *y, int incy);
void cblas_sgemm(int order, int transA, int transB, int m, int n, int k, float alpha,
                 const float *a, int lda, const float *b, int ldb, float beta,
                 float *c, int ldc);

/* ---- pairwise kernels ----------------------------------------------------------------- */

static float vsDotScalar(const float *a, const float *b, int n){
  float s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  int i = 0;
  for(; i+4<=n; i+=4){
    s0 += a[i]*b[i]; s1 += a[i+1]*b[i+1];
    s2 += a[i+2]*b[i+2]; s3 += a[i+3]*b[i+3];
  }
  for(; i<n; i++) s0 += a[i]*b[i];
  return (s0+s1)+(s2+s3);
}

#ifdef VS_X86
__attribute__((target("avx2,fma")))
static float vsDotAvx2(const float *a, const float *b, int n){
  __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps();
  __m256 s2 = _mm256_setzero_ps(), s3 = _mm256_setzero_ps();
  float aTail[8];
  int i = 0;
  for(; i+32<=n; i+=32){
    s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a+i),    _mm256_loadu_ps(b+i),    s0);
    s1 = _mm256_fmadd_ps(_mm256_loadu_ps(a+i+8),  _mm256_loadu_ps(b+i+8),  s1);
    s2 = _mm256_fmadd_ps(_mm256_loadu_ps(a+i+16), _mm256_loadu_ps(b+i+16), s2);
    s3 = _mm256_fmadd_ps(_mm256_loadu_ps(a+i+24), _mm256_loadu_ps(b+i+24), s3);
  }
  for(; i+8<=n; i+=8){
    s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a+i), _mm256_loadu_ps(b+i), s0);
  }
  s0 = _mm256_add_ps(_mm256_add_ps(s0, s1), _mm256_add_ps(s2, s3));
  _mm256_storeu_ps(aTail, s0);
  {
    float s = ((aTail[0]+aTail[1])+(aTail[2]+aTail[3]))
            + ((aTail[4]+aTail[5])+(aTail[6]+aTail[7]));
    for(; i<n; i++) s += a[i]*b[i];
    return s;
  }
}

/* vsArgMinScaled's eight lanes: each keeps its smallest key and the first index holding it,
** then the lanes' best, the smaller index on a tie; the leftover keys one by one after
** (their indexes are larger, so a strict less-than keeps the first). */
__attribute__((target("avx2,fma")))
static int vsArgMinAvx2(const float *s, const float *c, float m, int n){
  __m256 vm = _mm256_set1_ps(m), vBest, vIdx, vStep = _mm256_set1_ps(8.0f);
  __m256 vCur = _mm256_setr_ps(0, 1, 2, 3, 4, 5, 6, 7);
  float aBest[8], aIdx[8], rBest;
  int i = 8, j, iBest;
  vBest = _mm256_mul_ps(vm, _mm256_loadu_ps(s));
  if( c ) vBest = _mm256_add_ps(vBest, _mm256_loadu_ps(c));
  vIdx = vCur;
  for(; i+8<=n; i+=8){
    __m256 k = _mm256_mul_ps(vm, _mm256_loadu_ps(s+i)), lt;
    if( c ) k = _mm256_add_ps(k, _mm256_loadu_ps(c+i));
    vCur = _mm256_add_ps(vCur, vStep);
    lt = _mm256_cmp_ps(k, vBest, _CMP_LT_OQ);
    vBest = _mm256_blendv_ps(vBest, k, lt);
    vIdx = _mm256_blendv_ps(vIdx, vCur, lt);
  }
  _mm256_storeu_ps(aBest, vBest);
  _mm256_storeu_ps(aIdx, vIdx);
  rBest = aBest[0];
  iBest = (int)aIdx[0];
  for(j=1; j<8; j++){
    if( aBest[j]<rBest || (aBest[j]==rBest && (int)aIdx[j]<iBest) ){
      rBest = aBest[j];
      iBest = (int)aIdx[j];
    }
  }
  for(; i<n; i++){
    float r = m*s[i] + (c ? c[i] : 0.0f);
    if( r<rBest ){ rBest = r; iBest = i; }
  }
  return iBest;
}

/* Sum of the 8 lanes of v. */
__attribute__((target("avx2,fma")))
static float vsHsum256(__m256 v){
  __m128 lo = _mm256_castps256_ps128(v), hi = _mm256_extractf128_ps(v, 1);
  lo = _mm_add_ps(lo, hi);
  lo = _mm_add_ps(lo, _mm_movehl_ps(lo, lo));
  lo = _mm_add_ss(lo, _mm_shuffle_ps(lo, lo, 1));
  return _mm_cvtss_f32(lo);
}

/* out[i] = A[i]·q for a row-major block. Eight rows a pass share each load of q, one
** accumulator a row (eight independent FMA chains hide the latency, which four rows a
** pass did not). Leftover rows go four, then one at a time, with two accumulators a row. */
__attribute__((target("avx2,fma")))
static void vsScoreRowsAvx2(const float *A, int nRow, int nDim, const float *q, float *out){
  int i = 0;
  for(; i+8<=nRow && (nDim%8)==0; i+=8){
    const float *a = A + (size_t)i*nDim;
    __m256 s[8];
    float r[8];
    int d, k;
    for(k=0; k<8; k++) s[k] = _mm256_setzero_ps();
    for(d=0; d<nDim; d+=8){
      __m256 x = _mm256_loadu_ps(q+d);
      for(k=0; k<8; k++) s[k] = _mm256_fmadd_ps(_mm256_loadu_ps(a + (size_t)k*nDim + d), x, s[k]);
    }
    for(k=0; k<8; k++) r[k] = vsHsum256(s[k]);
    for(k=0; k<8; k++) out[i+k] = r[k];
  }
  for(; i+4<=nRow; i+=4){
    const float *a0 = A + (size_t)i*nDim, *a1 = a0 + nDim, *a2 = a1 + nDim, *a3 = a2 + nDim;
    __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps();
    __m256 s2 = _mm256_setzero_ps(), s3 = _mm256_setzero_ps();
    __m256 t0 = _mm256_setzero_ps(), t1 = _mm256_setzero_ps();
    __m256 t2 = _mm256_setzero_ps(), t3 = _mm256_setzero_ps();
    int d = 0;
    for(; d+16<=nDim; d+=16){
      __m256 x = _mm256_loadu_ps(q+d), y = _mm256_loadu_ps(q+d+8);
      s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a0+d), x, s0);
      s1 = _mm256_fmadd_ps(_mm256_loadu_ps(a1+d), x, s1);
      s2 = _mm256_fmadd_ps(_mm256_loadu_ps(a2+d), x, s2);
      s3 = _mm256_fmadd_ps(_mm256_loadu_ps(a3+d), x, s3);
      t0 = _mm256_fmadd_ps(_mm256_loadu_ps(a0+d+8), y, t0);
      t1 = _mm256_fmadd_ps(_mm256_loadu_ps(a1+d+8), y, t1);
      t2 = _mm256_fmadd_ps(_mm256_loadu_ps(a2+d+8), y, t2);
      t3 = _mm256_fmadd_ps(_mm256_loadu_ps(a3+d+8), y, t3);
    }
    {
      float r0 = vsHsum256(_mm256_add_ps(s0, t0)), r1 = vsHsum256(_mm256_add_ps(s1, t1));
      float r2 = vsHsum256(_mm256_add_ps(s2, t2)), r3 = vsHsum256(_mm256_add_ps(s3, t3));
      for(; d<nDim; d++){
        r0 += a0[d]*q[d]; r1 += a1[d]*q[d]; r2 += a2[d]*q[d]; r3 += a3[d]*q[d];
      }
      out[i] = r0; out[i+1] = r1; out[i+2] = r2; out[i+3] = r3;
    }
  }
  for(; i<nRow; i++) out[i] = vsDotAvx2(A + (size_t)i*nDim, q, nDim);
}

/* out[j*nRow + i] = A[i]·Q[j], tile by tile: a tile of rows small enough to stay in the
** L2 cache is read from memory once and scored against every query, four rows by three
** queries at a time (twelve accumulators, each load of a row feeding three FMAs). For BLAS
** builds whose sgemm is not blocked for the cache (the reference BLAS). */
#define VS_BATCH_TILE 32
__attribute__((target("avx2,fma")))
static void vsScore4x3(const float *A, int nDim, const float *Q, float *out, int nRow){
  const float *a0 = A, *a1 = A + nDim, *a2 = A + 2*(size_t)nDim, *a3 = A + 3*(size_t)nDim;
  const float *q0 = Q, *q1 = Q + nDim, *q2 = Q + 2*(size_t)nDim;
  __m256 c00 = _mm256_setzero_ps(), c01 = _mm256_setzero_ps(), c02 = _mm256_setzero_ps();
  __m256 c10 = _mm256_setzero_ps(), c11 = _mm256_setzero_ps(), c12 = _mm256_setzero_ps();
  __m256 c20 = _mm256_setzero_ps(), c21 = _mm256_setzero_ps(), c22 = _mm256_setzero_ps();
  __m256 c30 = _mm256_setzero_ps(), c31 = _mm256_setzero_ps(), c32 = _mm256_setzero_ps();
  int d;
  for(d=0; d<nDim; d+=8){
    __m256 x0 = _mm256_loadu_ps(q0+d), x1 = _mm256_loadu_ps(q1+d), x2 = _mm256_loadu_ps(q2+d);
    __m256 r = _mm256_loadu_ps(a0+d);
    c00 = _mm256_fmadd_ps(r, x0, c00); c01 = _mm256_fmadd_ps(r, x1, c01); c02 = _mm256_fmadd_ps(r, x2, c02);
    r = _mm256_loadu_ps(a1+d);
    c10 = _mm256_fmadd_ps(r, x0, c10); c11 = _mm256_fmadd_ps(r, x1, c11); c12 = _mm256_fmadd_ps(r, x2, c12);
    r = _mm256_loadu_ps(a2+d);
    c20 = _mm256_fmadd_ps(r, x0, c20); c21 = _mm256_fmadd_ps(r, x1, c21); c22 = _mm256_fmadd_ps(r, x2, c22);
    r = _mm256_loadu_ps(a3+d);
    c30 = _mm256_fmadd_ps(r, x0, c30); c31 = _mm256_fmadd_ps(r, x1, c31); c32 = _mm256_fmadd_ps(r, x2, c32);
  }
  out[0] = vsHsum256(c00); out[1] = vsHsum256(c10); out[2] = vsHsum256(c20); out[3] = vsHsum256(c30);
  out += nRow;
  out[0] = vsHsum256(c01); out[1] = vsHsum256(c11); out[2] = vsHsum256(c21); out[3] = vsHsum256(c31);
  out += nRow;
  out[0] = vsHsum256(c02); out[1] = vsHsum256(c12); out[2] = vsHsum256(c22); out[3] = vsHsum256(c32);
}

__attribute__((target("avx2,fma")))
static void vsScoreBatchAvx2(const float *A, int nRow, int nDim,
                             const float *Q, int nQuery, float *out){
  int i0, j;
  for(i0=0; i0<nRow; i0+=VS_BATCH_TILE){
    int nTile = nRow-i0 < VS_BATCH_TILE ? nRow-i0 : VS_BATCH_TILE;
    const float *T = A + (size_t)i0*nDim;
    j = 0;
    if( nDim%8==0 ){
      for(; j+3<=nQuery; j+=3){
        int i = 0;
        for(; i+4<=nTile; i+=4){
          vsScore4x3(T + (size_t)i*nDim, nDim, Q + (size_t)j*nDim, out + (size_t)j*nRow + i0 + i, nRow);
        }
        for(; i<nTile; i++){
          int jj;
          for(jj=j; jj<j+3; jj++){
            out[(size_t)jj*nRow + i0 + i] = vsDotAvx2(T + (size_t)i*nDim, Q + (size_t)jj*nDim, nDim);
          }
        }
      }
    }
    for(; j<nQuery; j++){
      vsScoreRowsAvx2(T, nTile, nDim, Q + (size_t)j*nDim, out + (size_t)j*nRow + i0);
    }
  }
}

/* Whether the BLAS is one whose sgemm is tuned (OpenBLAS, BLIS, ATLAS, MKL, Accelerate):
** the reference BLAS and any library not recognised are not. */
static int vsBlasTuned(void){
  const char *z = vsBlasName();
  return strncmp(z, "OpenBLAS", 8)==0 || strncmp(z, "BLIS", 4)==0 || strncmp(z, "ATLAS", 5)==0
      || strncmp(z, "MKL", 3)==0 || strncmp(z, "Accelerate", 10)==0;
}

#endif /* VS_X86 */

/* ---- double-precision sums (vsDistanceF32) -------------------------------------------- */

/* What vsDistanceF32 sums, into pS:
**   VS_SUMS_DOT     q.v
**   VS_SUMS_COSINE  q.v, q.q and v.v
**   VS_SUMS_L2      (q-v).(q-v)
** each as eight running sums, element i into sum i%8 and the last n%8 elements into sum 0,
** added ((0+1)+(2+3))+((4+5)+(6+7)): the additions do not wait on one another. The AVX2
** version adds in the same order, and gives the same bits: a float times a float is exact
** in double, so its fused multiply-adds round once, as the multiply and add here do (l2
** squares a difference, which is not exact: it multiplies, then adds). */
#define VS_SUMS_DOT    0
#define VS_SUMS_COSINE 1
#define VS_SUMS_L2     2

/* Elements i to n-1 into sum 0 of a (and b, c), then each set of eight sums added up. */
static void vsSumsFinish(const float *q, const float *v, int i, int n, int eWhat,
                         double *a, double *b, double *c, double *pS){
  int j;
  for(; i<n; i++){
    if( eWhat==VS_SUMS_L2 ){
      double d = (double)q[i]-v[i];
      a[0] += d*d;
    }else{
      a[0] += (double)q[i]*v[i];
      if( eWhat==VS_SUMS_COSINE ){ b[0] += (double)q[i]*q[i]; c[0] += (double)v[i]*v[i]; }
    }
  }
  for(j=0; j<3; j++){
    const double *x = j==0 ? a : j==1 ? b : c;
    pS[j] = ((x[0] + x[1]) + (x[2] + x[3])) + ((x[4] + x[5]) + (x[6] + x[7]));
  }
}

static void vsSumsScalar(const float *q, const float *v, int n, int eWhat, double *pS){
  double a[8] = {0}, b[8] = {0}, c[8] = {0};
  int i = 0, j;
  for(; i+8<=n; i+=8){
    for(j=0; j<8; j++){
      if( eWhat==VS_SUMS_L2 ){
        double d = (double)q[i+j]-v[i+j];
        a[j] += d*d;
      }else{
        a[j] += (double)q[i+j]*v[i+j];
        if( eWhat==VS_SUMS_COSINE ){
          b[j] += (double)q[i+j]*q[i+j];
          c[j] += (double)v[i+j]*v[i+j];
        }
      }
    }
  }
  vsSumsFinish(q, v, i, n, eWhat, a, b, c, pS);
}

#ifdef VS_X86
__attribute__((target("avx2,fma")))
static void vsSumsAvx2(const float *q, const float *v, int n, int eWhat, double *pS){
  __m256d a0 = _mm256_setzero_pd(), a1 = a0, b0 = a0, b1 = a0, c0 = a0, c1 = a0;
  double a[8], b[8], c[8];
  int i = 0;
  for(; i+8<=n; i+=8){
    __m256d x0 = _mm256_cvtps_pd(_mm_loadu_ps(q+i)), x1 = _mm256_cvtps_pd(_mm_loadu_ps(q+i+4));
    __m256d y0 = _mm256_cvtps_pd(_mm_loadu_ps(v+i)), y1 = _mm256_cvtps_pd(_mm_loadu_ps(v+i+4));
    if( eWhat==VS_SUMS_L2 ){
      __m256d d0 = _mm256_sub_pd(x0, y0), d1 = _mm256_sub_pd(x1, y1);
      a0 = _mm256_add_pd(a0, _mm256_mul_pd(d0, d0));   /* d*d is not exact: no fma */
      a1 = _mm256_add_pd(a1, _mm256_mul_pd(d1, d1));
    }else{
      a0 = _mm256_fmadd_pd(x0, y0, a0);
      a1 = _mm256_fmadd_pd(x1, y1, a1);
      if( eWhat==VS_SUMS_COSINE ){
        b0 = _mm256_fmadd_pd(x0, x0, b0); b1 = _mm256_fmadd_pd(x1, x1, b1);
        c0 = _mm256_fmadd_pd(y0, y0, c0); c1 = _mm256_fmadd_pd(y1, y1, c1);
      }
    }
  }
  _mm256_storeu_pd(a, a0); _mm256_storeu_pd(a+4, a1);
  _mm256_storeu_pd(b, b0); _mm256_storeu_pd(b+4, b1);
  _mm256_storeu_pd(c, c0); _mm256_storeu_pd(c+4, c1);
  vsSumsFinish(q, v, i, n, eWhat, a, b, c, pS);
}
#endif

static void (*vsSumsImpl)(const float*, const float*, int, int, double*) = vsSumsScalar;

static float (*vsDotImpl)(const float*, const float*, int) = vsDotScalar;
static void (*vsScoreBatchImpl)(const float*, int, int, const float*, int, float*) = 0;
/* The single-query block scorer: BLAS sgemv, or the AVX2 kernel when the CPU has it. */
static void (*vsScoreRowsImpl)(const float*, int, int, const float*, float*) = 0;
static const char *zSimd = "scalar (compiler-vectorised, baseline ISA)";
#ifdef VS_X86
static int vsAvx2 = 0;            /* The AVX2 kernels were chosen (vsKernelsInit) */
#endif
/* What scores int8 codes (vec0_quant.c): 2 AVX-512 VNNI, 1 AVX2, 0 portable C. */
static int vsInt8Level = 0;

/* The best int8 kernel this CPU runs; VECSYNC_INT8=avx2 or =c in the environment asks for a
** lesser one, to compare them or to test each. */
static void vsInt8Init(void){
  const char *zWant = getenv("VECSYNC_INT8");
  int nMax = zWant==0 ? 2 : strcmp(zWant, "c")==0 ? 0 : strcmp(zWant, "avx2")==0 ? 1 : 2;
  vsInt8Level = 0;
#ifdef VS_X86
  if( __builtin_cpu_supports("avx2") ){
    vsInt8Level = __builtin_cpu_supports("avx512vnni") && __builtin_cpu_supports("avx512vl")
                ? 2 : 1;
  }
#endif
  if( vsInt8Level>nMax ) vsInt8Level = nMax;
}

int vsInt8Kernel(void){ return vsInt8Level; }

const char *vsInt8KernelName(void){
  static const char *azName[] = { "portable C", "avx2 kernel", "avx512-vnni kernel" };
  return azName[vsInt8Level];
}

void vsKernelsInit(void){
#ifdef VS_X86
  const char *zWant = getenv("VECSYNC_SIMD");
  __builtin_cpu_init();
  if( zWant && strcmp(zWant, "c")==0 ){
    /* VECSYNC_SIMD=c: the portable code (and BLAS) on this CPU too, to test one against
    ** the other. */
    zSimd = "portable C (VECSYNC_SIMD=c)";
  }else if( __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") ){
    vsAvx2 = 1;
    vsDotImpl = vsDotAvx2;
    vsSumsImpl = vsSumsAvx2;
    /* This kernel scans faster than the sgemv of the reference BLAS and of OpenBLAS; for
    ** batches the tiled kernel replaces the reference BLAS's sgemm (and any BLAS not known
    ** to be tuned: a wheel's bundled copy has a name of its own) and matches OpenBLAS's,
    ** which is kept where present (figures: bench/RESULTS.md, its "reference BLAS" rows).
    ** VECSYNC_SCAN=blas forces BLAS for both, for comparison. */
    if( getenv("VECSYNC_SCAN")==0 || strcmp(getenv("VECSYNC_SCAN"), "blas")!=0 ){
      vsScoreRowsImpl = vsScoreRowsAvx2;
      if( !vsBlasTuned() ) vsScoreBatchImpl = vsScoreBatchAvx2;
    }
    zSimd = "avx2+fma (chosen at run time)";
  }else{
    zSimd = "sse2";
  }
#elif defined(__ARM_NEON) || defined(__aarch64__)
  zSimd = "neon (compiler-vectorised)";
#endif
  vsInt8Init();
}

const char *vsSimdName(void){ return zSimd; }

const char *vsScanName(void){
  if( vsScoreRowsImpl==0 ) return "BLAS sgemv; batches: BLAS sgemm";
  if( vsScoreBatchImpl ) return "avx2 kernel; batches: tiled avx2 kernel";
  return "avx2 kernel; batches: BLAS sgemm";
}

float vsDotF32(const float *a, const float *b, int n){ return vsDotImpl(a, b, n); }

static int vsArgMinScalar(const float *s, const float *c, float m, int n){
  float rBest = m*s[0] + (c ? c[0] : 0.0f);
  int i, iBest = 0;
  for(i=1; i<n; i++){
    float r = m*s[i] + (c ? c[i] : 0.0f);
    if( r<rBest ){ rBest = r; iBest = i; }
  }
  return iBest;
}

int vsArgMinScaled(const float *s, const float *c, float m, int n){
#ifdef VS_X86
  /* Indexes ride in float lanes: exact below 2^24. */
  if( vsDotImpl==vsDotAvx2 && n>=8 && n<(1<<24) ) return vsArgMinAvx2(s, c, m, n);
#endif
  return vsArgMinScalar(s, c, m, n);
}

float vsNormF32(const float *a, int n){
  return sqrtf(vsDotImpl(a, a, n));
}

/* Exact-ish pairwise products in double, for the scalar SQL functions. */
double vsDotF64(const VsVector *a, const VsVector *b){
  double s = 0;
  int i;
  if( a->eType==VS_F32 && b->eType==VS_F32 ){
    const float *x = a->aData, *y = b->aData;
    for(i=0; i<a->nDim; i++) s += (double)x[i]*(double)y[i];
  }else{
    for(i=0; i<a->nDim; i++) s += vsVectorAt(a, i)*vsVectorAt(b, i);
  }
  return s;
}

double vsL2SqF64(const VsVector *a, const VsVector *b){
  double s = 0;
  int i;
  if( a->eType==VS_F32 && b->eType==VS_F32 ){
    const float *x = a->aData, *y = b->aData;
    for(i=0; i<a->nDim; i++){ double d = (double)x[i]-(double)y[i]; s += d*d; }
  }else{
    for(i=0; i<a->nDim; i++){ double d = vsVectorAt(a, i)-vsVectorAt(b, i); s += d*d; }
  }
  return s;
}

double vsDistanceF32(int eMetric, const float *q, const float *v, int n){
  double s[3], d = 0;
  int i;
  switch( eMetric ){
    case VS_METRIC_COSINE: {
      double r;
      vsSumsImpl(q, v, n, VS_SUMS_COSINE, s);
      r = 1.0 - s[0]/sqrt(s[1]*s[2]);
      return r<0.0 ? 0.0 : (r>2.0 ? 2.0 : r);
    }
    case VS_METRIC_DOT:
      vsSumsImpl(q, v, n, VS_SUMS_DOT, s);
      return -s[0];
    case VS_METRIC_L1:
      /* vec_distance_l1's figure: the same sum, in the same order (vsL1F64). */
      for(i=0; i<n; i++) d += fabs((double)q[i]-(double)v[i]);
      return d;
  }
  vsSumsImpl(q, v, n, VS_SUMS_L2, s);
  return sqrt(s[0]);
}

double vsScoreDistance(int eMetric, float s, float qNorm, float vNorm){
  double d2;
  switch( eMetric ){
    case VS_METRIC_COSINE:
      if( qNorm==0.0f || vNorm==0.0f ) return VS_NO_DIRECTION;
      return 1.0 - (double)s/((double)qNorm*(double)vNorm);
    case VS_METRIC_DOT:    return -(double)s;
    case VS_METRIC_L1:     return (double)s;
  }
  d2 = (double)qNorm*qNorm + (double)vNorm*vNorm - 2.0*(double)s;
  return d2>0.0 ? d2 : 0.0;
}

/* ---- block scorers ------------------------------------------------------------------ */

static float vsL1RowScalar(const float *a, const float *q, int n){
  float s[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  int i = 0, t;
  for(; i+8<=n; i+=8){
    for(t=0; t<8; t++) s[t] += fabsf(a[i+t] - q[i+t]);
  }
  for(; i<n; i++) s[0] += fabsf(a[i] - q[i]);
  return ((s[0]+s[1]) + (s[2]+s[3])) + ((s[4]+s[5]) + (s[6]+s[7]));
}

#ifdef VS_X86
__attribute__((target("avx2")))
static float vsL1RowAvx2(const float *a, const float *q, int n){
  const __m256 mAbs = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
  __m256 acc = _mm256_setzero_ps();
  float s[8], r = 0.0f;
  int i = 0, t;
  for(; i+8<=n; i+=8){
    __m256 d = _mm256_sub_ps(_mm256_loadu_ps(a+i), _mm256_loadu_ps(q+i));
    acc = _mm256_add_ps(acc, _mm256_and_ps(d, mAbs));
  }
  _mm256_storeu_ps(s, acc);
  for(t=0; t<8; t++) r += s[t];
  for(; i<n; i++) r += fabsf(a[i] - q[i]);
  return r;
}
#endif

void vsL1Block(const float *A, int nRow, int nDim, const float *q, float *out){
  int i;
#ifdef VS_X86
  if( vsAvx2 ){
    for(i=0; i<nRow; i++) out[i] = vsL1RowAvx2(A + (size_t)i*nDim, q, nDim);
    return;
  }
#endif
  for(i=0; i<nRow; i++) out[i] = vsL1RowScalar(A + (size_t)i*nDim, q, nDim);
}

void vsScoreBlock(const float *A, int nRow, int nDim, const float *q, float *out){
  if( nRow<=0 ) return;
  if( vsScoreRowsImpl ){
    vsScoreRowsImpl(A, nRow, nDim, q, out);
    return;
  }
  cblas_sgemv(VS_CBLAS_ROW_MAJOR, VS_CBLAS_NO_TRANS, nRow, nDim,
              1.0f, A, nDim, q, 1, 0.0f, out, 1);
}

void vsScoreBlockBatch(const float *A, int nRow, int nDim,
                       const float *Q, int nQuery, float *out){
  if( nRow<=0 || nQuery<=0 ) return;
  if( vsScoreBatchImpl ){
    vsScoreBatchImpl(A, nRow, nDim, Q, nQuery, out);
    return;
  }
  /* out (nQuery × nRow) = Q (nQuery × nDim) · Aᵀ (nDim × nRow) */
  cblas_sgemm(VS_CBLAS_ROW_MAJOR, VS_CBLAS_NO_TRANS, VS_CBLAS_TRANS, nQuery, nRow, nDim,
              1.0f, Q, nDim, A, nDim, 0.0f, out, nRow);
}

/* OpenBLAS's pthread build scores an sgemv of a block (1024 rows of a few hundred floats
** are far above its threshold) on all its threads; a scan that starts threads of its own
** around it would run twice as many as there are cores. Its documented
** openblas_get_num_threads() says how many; it is looked up in the library that holds
** cblas_sgemv and its dependencies (Debian's libblas.so.3 alternative is a wrapper of
** libopenblas.so.0), since a library loaded by a host's dlopen() is not in the global
** scope. Other BLAS libraries (the reference one, BLIS as Debian sets it up, Accelerate)
** are counted as one thread. */
int vsScoreBlockThreads(void){
  int n = 1;
#if !defined(_WIN32) && !defined(VECSYNC_ACCELERATE)
  Dl_info info;
  if( vsScoreRowsImpl ) return 1;   /* our own kernel scores the blocks */
  memset(&info, 0, sizeof(info));
  if( dladdr((void*)cblas_sgemv, &info) && info.dli_fname ){
    void *pLib = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
    if( pLib ){
      int (*xThreads)(void) = 0;
      *(void**)&xThreads = dlsym(pLib, "openblas_get_num_threads");
      if( xThreads ) n = xThreads();
      dlclose(pLib);
    }
  }
#endif
  return n<1 ? 1 : n;
}

/* ---- which BLAS ---------------------------------------------------------------------- */

#if !defined(_WIN32) && !defined(VECSYNC_ACCELERATE)
/* The kernels OpenBLAS chose (openblas_get_corename(), in the library zLib that holds
** cblas_sgemv, as vsScoreBlockThreads finds it), or NULL. */
static const char *vsOpenblasCore(const char *zLib){
  static char zCore[64];
  void *pLib = dlopen(zLib, RTLD_LAZY | RTLD_NOLOAD);
  if( pLib ){
    char *(*xCore)(void) = 0;
    *(void**)&xCore = dlsym(pLib, "openblas_get_corename");
    if( xCore ){
      const char *z = xCore();
      if( z ) snprintf(zCore, sizeof(zCore), "%s", z);
    }
    dlclose(pLib);
  }
  return zCore[0] ? zCore : 0;
}

/* Whether the CPU has AVX2 (a build for another architecture: no). */
static int vsCpuHasAvx2(void){
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  return __builtin_cpu_supports("avx2");
#else
  return 0;
#endif
}
#endif

const char *vsBlasName(void){
#if defined(VECSYNC_ACCELERATE)
  return "Accelerate";
#elif !defined(_WIN32)
  static char zBlas[256];
  Dl_info info;
  if( zBlas[0] ) return zBlas;
  memset(&info, 0, sizeof(info));
  if( dladdr((void*)cblas_sgemv, &info) && info.dli_fname ){
    char *zReal = realpath(info.dli_fname, 0);
    const char *zPath = zReal ? zReal : info.dli_fname;
    const char *zKind = "unknown BLAS", *zCore = 0;
    const char *zFile = strrchr(zPath, '/');
    if( strstr(zPath, "openblas") || dlsym(RTLD_DEFAULT, "openblas_get_config") ){
      zKind = "OpenBLAS";
      zCore = vsOpenblasCore(info.dli_fname);
    }else if( strstr(zPath, "blis") ){
      zKind = "BLIS";
    }else if( strstr(zPath, "atlas") ){
      zKind = "ATLAS";
    }else if( strstr(zPath, "mkl") ){
      zKind = "MKL";
    }else if( strstr(zPath, "/blas/") ){
      zKind = "reference BLAS (netlib)";
    }
    if( zCore ){
      /* OpenBLAS picks its kernels by the CPU's model; in a virtual machine that names no
      ** model it can fall back to "Prescott" (SSE3), which made sgemm 1.7 times slower
      ** than its SkylakeX kernels on an AVX-512 machine (an ivf retrain of 1,000,000 x 384:
      ** 45.6 against 27.2 s). Say so, with the remedy, where the CPU has AVX2. */
      int bGeneric = sqlite3_stricmp(zCore, "Prescott")==0 || sqlite3_stricmp(zCore, "Core2")==0
                  || sqlite3_stricmp(zCore, "Nehalem")==0 || sqlite3_stricmp(zCore, "Atom")==0;
      snprintf(zBlas, sizeof(zBlas), "%s (%s), %s kernels%s", zKind, zFile ? zFile+1 : zPath,
               zCore, bGeneric && vsCpuHasAvx2()
                      ? "; this CPU has AVX2: set OPENBLAS_CORETYPE=Haswell (or SkylakeX on "
                        "AVX-512) in the environment before the process starts" : "");
    }else{
      snprintf(zBlas, sizeof(zBlas), "%s (%s)", zKind, zFile ? zFile+1 : zPath);
    }
    free(zReal);
    return zBlas;
  }
  return "unknown BLAS";
#else
  return "unknown BLAS";
#endif
}

/* ---- sqlite-vec's distances ----------------------------------------------------------- */

/* As sqlite-vec computes them: L1 of float vectors summed in double precision; int8
** squares and products summed in float32, the square roots taken in double. */
double vsL1F64(const VsVector *a, const VsVector *b){
  double s = 0;
  int i;
  for(i=0; i<a->nDim; i++) s += fabs(vsVectorAt(a, i)-vsVectorAt(b, i));
  return s;
}

sqlite3_int64 vsL1I8(const signed char *a, const signed char *b, int n){
  sqlite3_int64 s = 0;
  int i;
  for(i=0; i<n; i++) s += abs((int)a[i]-(int)b[i]);
  return s;
}

double vsL2I8(const signed char *a, const signed char *b, int n){
  float s = 0;
  int i;
  for(i=0; i<n; i++){
    float d = (float)((int)a[i]-(int)b[i]);
    s += d*d;
  }
  return (float)sqrt((double)s);
}

double vsCosineI8(const signed char *a, const signed char *b, int n){
  float dot = 0, aa = 0, bb = 0;
  int i;
  for(i=0; i<n; i++){
    dot += (float)a[i]*(float)b[i];
    aa += (float)a[i]*(float)a[i];
    bb += (float)b[i]*(float)b[i];
  }
  if( aa==0 || bb==0 ) return NAN;
  return (float)(1.0 - (double)dot/(sqrt((double)aa)*sqrt((double)bb)));
}

/* The float32 sums a cosine takes, a·b, a·a and b·b, element after element in float32
** (each product its own statement, so no compiler fuses it into the sum): the sums both
** libSQL's and sqlite-vec's figures start from. */
static void vsCosineSumsF32(const float *a, const float *b, int n, float *pDot, float *pAA,
                            float *pBB){
  float dot = 0, aa = 0, bb = 0;
  int i;
  for(i=0; i<n; i++){
    float pd = a[i]*b[i], pa = a[i]*a[i], pb = b[i]*b[i];
    dot += pd;
    aa += pa;
    bb += pb;
  }
  *pDot = dot;
  *pAA = aa;
  *pBB = bb;
}

/* libSQL's float32 cosine distance (vectorF32DistanceCos): float32 sums, the product of
** the two squared norms rounded to float32, the rest in double, the result rounded to
** float32. A zero vector gives NaN. */
double vsCosineLibsqlF32(const float *a, const float *b, int n){
  float dot, aa, bb, nn;
  vsCosineSumsF32(a, b, n, &dot, &aa, &bb);
  nn = aa*bb;
  return (float)(1.0 - (double)dot/sqrt((double)nn));
}

sqlite3_int64 vsHammingBytes(const unsigned char *a, const unsigned char *b, int nByte){
  sqlite3_int64 s = 0;
  int i;
  for(i=0; i<nByte; i++) s += __builtin_popcount((unsigned)(a[i]^b[i]));
  return s;
}

/* sqlite-vec's float32 L2 and cosine: float32 sums, element after element (each product
** its own statement, so no compiler fuses it into the sum), square roots in double. */
double vsL2F32Seq(const float *a, const float *b, int n){
  float s = 0;
  int i;
  for(i=0; i<n; i++){
    float d = a[i] - b[i];
    float p = d*d;
    s += p;
  }
  return (float)sqrt((double)s);
}

double vsCosineF32Seq(const float *a, const float *b, int n){
  float dot, aa, bb;
  vsCosineSumsF32(a, b, n, &dot, &aa, &bb);
  if( aa==0 || bb==0 ) return NAN;
  return (float)(1.0 - (double)dot/(sqrt((double)aa)*sqrt((double)bb)));
}
