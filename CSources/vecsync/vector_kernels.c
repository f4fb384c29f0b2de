/*
** vector_kernels.c: dot products, norms and distances, and the block scorer.
**
** Usage (internal; the SQL functions and vec0 call these):
**
**   vsScoreBlock(A, nRow, nDim, q, out);   // out[i] = A[i]·q, one cblas_sgemv
**   vsScoreBlockBatch(A, nRow, nDim, Q, nQuery, out);   // one cblas_sgemm
**
** How it works: vectors of a vec0 block are stored row-major and contiguous, so scoring a
** block against a query is a matrix-vector product, and against many queries a
** matrix-matrix product: BLAS does both at the speed memory allows. The BLAS is the one
** the system provides (Debian: libblas.so.3, which OpenBLAS or BLIS can stand behind;
** Apple: Accelerate). The CBLAS prototypes are declared here rather than taken from a
** header, because Debian ships cblas.h under an alternatives path; the CBLAS ABI (enum
** arguments passed as int) is the same everywhere.
**
** The pairwise kernels below are plain C the compiler vectorises; on x86-64 an AVX2+FMA
** variant is chosen at run time when the CPU has it (no build flags needed).
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
#endif

static float (*vsDotImpl)(const float*, const float*, int) = vsDotScalar;
static const char *zSimd = "scalar (compiler-vectorised, baseline ISA)";

void vsKernelsInit(void){
#ifdef VS_X86
  __builtin_cpu_init();
  if( __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") ){
    vsDotImpl = vsDotAvx2;
    zSimd = "avx2+fma (chosen at run time)";
  }else{
    zSimd = "sse2";
  }
#elif defined(__ARM_NEON) || defined(__aarch64__)
  zSimd = "neon (compiler-vectorised)";
#endif
}

const char *vsSimdName(void){ return zSimd; }

float vsDotF32(const float *a, const float *b, int n){ return vsDotImpl(a, b, n); }

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

/* ---- block scorers ------------------------------------------------------------------ */

void vsScoreBlock(const float *A, int nRow, int nDim, const float *q, float *out){
  if( nRow<=0 ) return;
  cblas_sgemv(VS_CBLAS_ROW_MAJOR, VS_CBLAS_NO_TRANS, nRow, nDim,
              1.0f, A, nDim, q, 1, 0.0f, out, 1);
}

void vsScoreBlockBatch(const float *A, int nRow, int nDim,
                       const float *Q, int nQuery, float *out){
  if( nRow<=0 || nQuery<=0 ) return;
  /* out (nQuery × nRow) = Q (nQuery × nDim) · Aᵀ (nDim × nRow) */
  cblas_sgemm(VS_CBLAS_ROW_MAJOR, VS_CBLAS_NO_TRANS, VS_CBLAS_TRANS, nQuery, nRow, nDim,
              1.0f, Q, nDim, A, nDim, 0.0f, out, nRow);
}

/* ---- which BLAS ---------------------------------------------------------------------- */

static char zBlas[256];

const char *vsBlasName(void){
#if defined(VECSYNC_ACCELERATE)
  return "Accelerate";
#elif !defined(_WIN32)
  Dl_info info;
  if( zBlas[0] ) return zBlas;
  memset(&info, 0, sizeof(info));
  if( dladdr((void*)cblas_sgemv, &info) && info.dli_fname ){
    char *zReal = realpath(info.dli_fname, 0);
    const char *zPath = zReal ? zReal : info.dli_fname;
    const char *zKind = "unknown BLAS";
    const char *zFile = strrchr(zPath, '/');
    if( strstr(zPath, "openblas") || dlsym(RTLD_DEFAULT, "openblas_get_config") ){
      zKind = "OpenBLAS";
    }else if( strstr(zPath, "blis") ){
      zKind = "BLIS";
    }else if( strstr(zPath, "atlas") ){
      zKind = "ATLAS";
    }else if( strstr(zPath, "mkl") ){
      zKind = "MKL";
    }else if( strstr(zPath, "/blas/") ){
      zKind = "reference BLAS (netlib)";
    }
    snprintf(zBlas, sizeof(zBlas), "%s (%s)", zKind, zFile ? zFile+1 : zPath);
    free(zReal);
    return zBlas;
  }
  return "unknown BLAS";
#else
  return "unknown BLAS";
#endif
}
