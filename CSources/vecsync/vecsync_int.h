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

/* Everything declared below is internal to the extension: hidden, so a host that loads
** other extensions (sqlite-vec has vec0 functions of its own) sees only the entry point. */
#if defined(__GNUC__) || defined(__clang__)
# pragma GCC visibility push(hidden)
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
const char *vsScanName(void);
void vsKernelsInit(void);

/* ---- top-k selection (vector_topk.c) -------------------------------------------------- */

/* One candidate: its distance and the rowid that breaks ties (ascending). */
typedef struct VsHit VsHit;
struct VsHit {
  double rDist;         /* Distance under the metric, smaller is nearer */
  sqlite3_int64 iRowid; /* Rowid, ascending among equal distances */
  sqlite3_int64 iSlot;  /* Where the vector is stored, for re-ranking */
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
void vsTopKPush(VsTopK *p, double rDist, sqlite3_int64 iRowid, sqlite3_int64 iSlot);
/* The threshold a candidate must beat, +inf while the heap is not full. */
double vsTopKBound(const VsTopK *p);
/* Sort the kept hits nearest first (destroys the heap order). */
void vsTopKSort(VsTopK *p);

/* ---- vec0 (vec0.c, vec0_config.c, vec0_store.c) --------------------------------------- */

/* Kinds of vec0 columns. */
#define VEC0_PK      1   /* "id text primary key" or "id integer primary key" */
#define VEC0_VECTOR  2   /* "embedding float[768] distance_metric=cosine" */
#define VEC0_META    3   /* "album text": stored, filterable inside a KNN query */
#define VEC0_AUX     4   /* "+caption text": stored and returned, not filterable */

/* Declared types of primary key, metadata and auxiliary columns. */
#define VEC0_TYPE_ANY     0
#define VEC0_TYPE_TEXT    1
#define VEC0_TYPE_INTEGER 2
#define VEC0_TYPE_FLOAT   3
#define VEC0_TYPE_BOOLEAN 4
#define VEC0_TYPE_BLOB    5

#define VEC0_MAX_COLUMNS     64
#define VEC0_DEFAULT_CHUNK   1024

typedef struct Vec0Column Vec0Column;
struct Vec0Column {
  char *zName;          /* Column name as declared (unquoted) */
  int eKind;            /* VEC0_PK, VEC0_VECTOR, VEC0_META or VEC0_AUX */
  int eType;            /* VEC0_TYPE_* of PK, META and AUX columns */
};

typedef struct Vec0Config Vec0Config;
struct Vec0Config {
  int nCol;             /* User columns, in declared order */
  Vec0Column aCol[VEC0_MAX_COLUMNS];
  int iPk;              /* Index of the primary key column, or -1 (rowid only) */
  int iVec;             /* Index of the vector column */
  int nDim;             /* Dimensions of the vector column */
  int eMetric;          /* VS_METRIC_* */
  int nChunk;           /* Vectors a storage block holds */
};

int vec0ParseConfig(int argc, const char *const *argv, Vec0Config *pCfg, char **pzErr);
void vec0ConfigClear(Vec0Config *pCfg);
const char *vec0MetricName(int eMetric);

/* The in-memory copy of a vec0 table's vectors, in blocks of nChunk rows. */
typedef struct Vec0Cache Vec0Cache;
struct Vec0Cache {
  int bValid;                 /* True while the copy matches the shadow tables */
  sqlite3_int64 iGeneration;  /* _info 'generation' the copy reflects */
  unsigned int iDataVersion;  /* SQLITE_FCNTL_DATA_VERSION when last checked */
  int nBlock;                 /* Blocks allocated */
  float **apBlock;            /* apBlock[b]: nChunk*nDim floats, row-major */
  float *aNorm;               /* Per slot: L2 norm of the stored vector */
  sqlite3_int64 *aRowid;      /* Per slot: rowid of the row stored there */
  unsigned char *aLive;       /* Per slot: 1 when a row occupies it */
  sqlite3_int64 nSlot;        /* Slots in use or freed: the scanned range */
  sqlite3_int64 nLive;        /* Rows */
};

typedef struct Vec0Table Vec0Table;
struct Vec0Table {
  sqlite3_vtab base;          /* Base class: must be first */
  sqlite3 *db;                /* Connection the table lives on */
  char *zSchema;              /* "main", "temp" or an attached name */
  char *zName;                /* Table name */
  Vec0Config cfg;             /* Parsed declaration */
  Vec0Cache cache;            /* Vectors in memory, for the block scan */
  sqlite3_stmt *aStmt[16];    /* Prepared shadow-table statements, by VEC0_STMT_* */
  sqlite3_stmt *aCurStmt[3];  /* Cursor statements kept between queries, by VEC0_CURSTMT_* */
  unsigned char aCurBusy[3];  /* aCurStmt[i] is in use by an open cursor */
  int bGenerationBumped;      /* This write transaction already bumped 'generation' */
  Vec0Table *pNext;           /* Next vec0 table of the same connection */
  struct Vec0Registry *pReg;  /* The connection's list of vec0 tables */
};

/* The vec0 tables connected on one database connection, for the batch function and
** for vector_top_k, which stores its index in a vec0 table. */
typedef struct Vec0Registry Vec0Registry;
struct Vec0Registry {
  sqlite3 *db;                /* The connection */
  Vec0Table *pFirst;          /* Its vec0 tables */
};

/* Find a connected vec0 table by schema (NULL: any) and name, connecting it if needed. */
int vec0Find(sqlite3 *db, Vec0Registry *pReg, const char *zSchema, const char *zName,
             Vec0Table **ppTab, char **pzErr);
/* Bring the cache up to date with the shadow tables. */
int vec0CacheEnsure(Vec0Table *p);
/* Exact k nearest rows to q (nDim floats), restricted to slots with aMask[slot] set
** when aMask is not NULL. pTop receives at most k hits, nearest first. */
int vec0Search(Vec0Table *p, const float *q, sqlite3_int64 k,
               const unsigned char *aMask, VsTopK *pTop);
/* The same for nQuery queries at once (one sgemm per block); apTop[j] for query j. */
int vec0SearchBatch(Vec0Table *p, const float *Q, int nQuery, sqlite3_int64 k,
                    VsTopK *aTop);
/* The distance between q and v under eMetric, computed in double precision. */
double vec0Distance(int eMetric, const float *q, const float *v, int n);
/* Decode and check a vector for table p's vector column (dimensions, NaN, zero vector
** under cosine). *paOut is sqlite3_malloc'ed. zWhat names it in errors ("query"). */
int vec0VectorArg(Vec0Table *p, sqlite3_value *pVal, const char *zWhat,
                  float **paOut, char **pzErr);

/* Storage internals shared by vec0.c and vec0_store.c. */
int vec0ShadowCreate(Vec0Table *p);
int vec0ShadowDrop(Vec0Table *p);
void vec0StmtsFinalize(Vec0Table *p);
void vec0CacheClear(Vec0Table *p);
int vec0InfoGet(Vec0Table *p, const char *zKey, sqlite3_int64 *piVal);
int vec0InfoSet(Vec0Table *p, const char *zKey, sqlite3_int64 iVal);
int vec0NoteWrite(Vec0Table *p);
/* Statement slot i of p (VEC0_STMT_USER and up belong to vec0.c), prepared from the SQL
** that zFmt makes the first time; the caller resets it after use. */
#define VEC0_STMT_USER 8
int vec0CachedStmt(Vec0Table *p, int i, sqlite3_stmt **ppStmt, const char *zFmt, ...);
int vec0SlotAlloc(Vec0Table *p, sqlite3_int64 *piSlot);
int vec0SlotFree(Vec0Table *p, sqlite3_int64 iSlot);
int vec0VectorWrite(Vec0Table *p, sqlite3_int64 iSlot, sqlite3_int64 iRowid, const float *a);
int vec0VectorRead(Vec0Table *p, sqlite3_int64 iSlot, float *a);
void vec0CacheSetRowid(Vec0Table *p, sqlite3_int64 iSlot, sqlite3_int64 iRowid);

/* ---- registration ---------------------------------------------------------------------- */

int vsRegisterScalarFunctions(sqlite3 *db, char **pzErr);
int vsRegisterVec0(sqlite3 *db, Vec0Registry **ppReg, char **pzErr);
int vsRegisterVec0Module(sqlite3 *db, Vec0Registry *pReg, char **pzErr);
int vsRegisterVectorIndex(sqlite3 *db, Vec0Registry *pReg, char **pzErr);

#if defined(__GNUC__) || defined(__clang__)
# pragma GCC visibility pop
#endif
#endif /* VECSYNC_INT_H */
