/*
** vecsync_int.h: declarations shared by the files of the VecSync extension.
**
** The extension is split by concern, one file each:
**
**   vector_codec.c     vectors from SQL values (JSON-like text, F32 and F64 blobs), and back
**   vector_kernels.c   dot products, norms and distances; the BLAS block scorer
**   vector_topk.c      bounded heap that keeps the k nearest (distance, rowid) pairs
**   vector_sql.c       scalar SQL functions: vector32, vector_extract, distances, vec_*
**   vec0*.c            the vec0 virtual table and the batch search function
**   vector_index.c     libSQL's libsql_vector_idx() and vector_top_k()
**   vecsync_main.c     the entry point: registers everything, vecsync_debug()
**
** Every file includes this header first. It includes sqlite3ext.h: the extension reaches
** SQLite only through the routine table its entry point receives.
*/
#ifndef VECSYNC_INT_H
#define VECSYNC_INT_H

#include "sqlite3ext.h"
#include <stddef.h>
#include <stdint.h>

#ifndef SQLITE_CORE
extern const sqlite3_api_routines *sqlite3_api;
#endif

#define VECSYNC_VERSION "0.1.0"

/* The largest number of dimensions a vector may have (libSQL's limit too). */
#define VS_MAX_DIMS 65536

/* Element types. The numbers are libSQL's trailing type bytes. */
#define VS_F32 1
#define VS_F64 2

/*
** A vector decoded from an SQL value. aData points either into the value itself (when it
** was a suitably aligned little-endian F32 blob) or into pAlloc, which vsVectorFree frees.
*/
typedef struct VsVector VsVector;
struct VsVector {
  int eType;            /* VS_F32 or VS_F64 */
  int nDim;             /* Number of elements, 0..VS_MAX_DIMS */
  const void *aData;    /* float[nDim] or double[nDim] */
  void *pAlloc;         /* Owned buffer behind aData, or NULL */
};

/* Decode an SQL value (text or blob) as a vector. On error *pzErr gets a message that
** names the problem (sqlite3_malloc'ed) and SQLITE_ERROR is returned. eWant is VS_F32 or
** VS_F64 for the precision text is parsed at, or 0 to keep a blob's own type (text
** parses as F32). */
int vsVectorFromValue(sqlite3_value *pVal, int eWant, VsVector *pOut, char **pzErr);
/* Parse JSON-like text "[1, 2.5, -3e-2]" into doubles. */
int vsParseText(const char *z, int n, double **paOut, int *pnOut, char **pzErr);
/* Check every element is finite and representable (F32: |x| <= FLT_MAX). */
int vsVectorCheckFinite(const VsVector *p, char **pzErr);
/* Convert to a new F32 vector (a copy when the type differs or data is borrowed). */
int vsVectorToF32(const VsVector *p, float **paOut, char **pzErr);
void vsVectorFree(VsVector *p);
/* Element i as double, whatever the type. */
double vsVectorAt(const VsVector *p, int i);

/* Write float32 elements to a little-endian blob and back; memcpy on little-endian hosts. */
void vsF32ToLE(const float *a, int n, unsigned char *pOut);
void vsF32FromLE(const unsigned char *p, int n, float *aOut);

/* Results of encoding a vector into an SQL result. */
void vsResultF32(sqlite3_context *ctx, const float *a, int n);
void vsResultF64(sqlite3_context *ctx, const double *a, int n);

/* ---- kernels (vector_kernels.c) ----------------------------------------------------- */

/* Distance metrics of vec0 tables and vector indexes. */
#define VS_METRIC_L2     0
#define VS_METRIC_COSINE 1
#define VS_METRIC_DOT    2

float vsDotF32(const float *a, const float *b, int n);
float vsNormF32(const float *a, int n);
double vsDotF64(const VsVector *a, const VsVector *b);
double vsL2SqF64(const VsVector *a, const VsVector *b);

/* out[i] = dot(A[i*nDim ..], q) for the nRow rows of a row-major block. One sgemv. */
void vsScoreBlock(const float *A, int nRow, int nDim, const float *q, float *out);
/* out[j*nRow + i] = dot(A[i], Q[j]) for nQuery queries: one sgemm. */
void vsScoreBlockBatch(const float *A, int nRow, int nDim,
                       const float *Q, int nQuery, float *out);

/* Which BLAS and SIMD this build uses, for vecsync_debug(). */
const char *vsBlasName(void);
const char *vsSimdName(void);
void vsKernelsInit(void);

/* ---- top-k selection (vector_topk.c) -------------------------------------------------- */

/* One candidate: its distance and the rowid that breaks ties (ascending). */
typedef struct VsHit VsHit;
struct VsHit {
  double rDist;         /* Distance under the metric, smaller is nearer */
  sqlite3_int64 iRowid; /* Rowid, ascending among equal distances */
};

/* A bounded max-heap keeping the k smallest hits seen: O(n log k) over n candidates. */
typedef struct VsTopK VsTopK;
struct VsTopK {
  int nCap;             /* k: the most hits kept */
  int n;                /* Hits held now */
  VsHit *a;             /* Heap array, the worst kept hit at a[0] */
};
int vsTopKInit(VsTopK *p, sqlite3_int64 k, sqlite3_int64 nMaxCandidates);
void vsTopKFree(VsTopK *p);
/* Offer a candidate; kept when it beats the worst kept hit. */
void vsTopKPush(VsTopK *p, double rDist, sqlite3_int64 iRowid);
/* The threshold a candidate must beat, +inf while the heap is not full. */
double vsTopKBound(const VsTopK *p);
/* Sort the kept hits nearest first (destroys the heap order). */
void vsTopKSort(VsTopK *p);

/* ---- registration ---------------------------------------------------------------------- */

int vsRegisterScalarFunctions(sqlite3 *db, char **pzErr);
int vsRegisterVec0(sqlite3 *db, char **pzErr);
int vsRegisterVectorIndex(sqlite3 *db, char **pzErr);

#endif /* VECSYNC_INT_H */
