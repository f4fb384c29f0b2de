/*
** vecsync_int.h: declarations shared by the files of the VecSync extension.
**
** The extension is split by concern, one file each, listed from the bottom up: a file
** calls only files listed above it (scripts/check-c-calls.py keeps it so).
**
**   vector_codec.c       vectors from SQL values (JSON-like text, F32 and F64 blobs), and back
**   vector_kernels.c     dot products, norms and distances; the BLAS/AVX2 block scorers
**   vector_topk.c        bounded heap that keeps the k nearest (distance, rowid) pairs
**   vector_sql.c         scalar SQL functions: vector32, vector_extract, distances,
**                        vec_f32, vecsync_debug(); what table-valued functions share
**   vector_typed.c       sqlite-vec's int8 and bit vectors, its vec_* functions, vec_each
**   vec0_quant.c         int8 and bit codes of a quantized table, and their scorers
**   vec0_parallel.c      the block scan cut into parts, on helper threads (PRAGMA threads)
**   vec0_table.c         a vec0 table's error text; the connection's tables (vec0Find)
**   vec0_config.c        a vec0 declaration: columns, types, options, the block limit
**   vec0_store.c         shadow tables, their statements, slots, the change log
**   vec0_cache.c         the in-memory copy: snapshots shared by the process, the budget;
**                        the owner of a write (storage, then copy)
**   vec0_plan.c          KNN, point and scan plans: xBestIndex, idxStr, the filter mask
**   vec0_search.c        query checks, the block scan, the top-k heap feed, exact re-rank
**   vec0_ivf.c           "indexed by ivf(...)": k-means lists, trained, kept on write,
**                        searched (nprobe lists, then more until k rows pass the filters)
**   vec0_write.c         one row written: checks, keys, conflicts (INSERT, UPDATE, DELETE)
**   vec0_migrate.c       a table sqlite-vec wrote, read from a copy, made ours on request
**                        (vecsync_migrate_sqlite_vec()); vec0StorageReady(): the storage
**                        a statement reads
**   vec0_export.c        a table written back in sqlite-vec's format
**                        (vecsync_export_sqlite_vec())
**   vec0.c               the vec0 module: create/connect, cursors, xUpdate, transactions
**   vec0_batch.c         vecsync_knn_batch(): many queries in one pass; vecsync_cache_info(),
**                        vecsync_memory_budget()
**   vec0_ivf_sql.c       vecsync_ivf_retrain(), vecsync_index_info(), vecsync_ivf_recall()
**   libsql_index_parse.c a libSQL index's CREATE INDEX: options, column type, WHERE, key
**   libsql_index_build.c a libSQL index's search data: its vec0 table, log and triggers
**   libsql_index_topk.c  vector_top_k(): a libSQL index searched
**   libsql_index.c       libsql_vector_idx(), vecsync_rebuild(); registers the three
**   vecsync_main.c       the entry point: the connections' registries, registers everything
**
** Two kinds of index, one name each: a "vec0 table" is CREATE VIRTUAL TABLE ... USING
** vec0(...) (vec0*.c; what the Swift host's VectorIndex makes); a "libSQL index" is
** CREATE INDEX ... (libsql_vector_idx(col)) (libsql_index*.c), whose search data is a vec0
** table.
**
** Every file includes this header first. It includes sqlite3ext.h: the loadable build
** reaches SQLite only through the routine table its entry point receives; the host build
** (SQLITE_CORE, CSources/vecsync-loadable/ says which is which) calls it directly.
*/
#ifndef VECSYNC_INT_H
#define VECSYNC_INT_H

#include "sqlite3ext.h"
#include <stddef.h>
#include <stdint.h>

/* No fused multiply-add unless written as one (the AVX2 kernels' intrinsics): aarch64 and
** Apple's clang would otherwise fuse a*b + c in the plain C, and answers (a vector8 blob
** decoded, vec_normalize, a double L2, the order of near ties) would differ by platform.
** Every file includes this header first, so the pragma covers all of them; GCC ignores it
** and needs -ffp-contract=off (the Python build passes it). */
#if defined(__clang__)
# pragma STDC FP_CONTRACT OFF
#endif

/* Everything declared below is internal to the extension: hidden, so a host that loads
** other extensions (sqlite-vec has vec0 functions of its own) sees only the entry point. */
#if defined(__GNUC__) || defined(__clang__)
# pragma GCC visibility push(hidden)
#endif

/* SQLite's routines, as the loading library handed them to the entry point: hidden with
** the rest, so two copies of the library loaded into two SQLite libraries of one process
** (Python's sqlite3 and apsw, which carries its own) keep one each. SQLite opens an
** extension RTLD_GLOBAL: an exported sqlite3_api would be the first copy's for both. */
#ifndef SQLITE_CORE
extern const sqlite3_api_routines *sqlite3_api;
#endif

#define VECSYNC_VERSION "0.2.0"

/* The sqlite-vec release whose SQL (functions, vec0 declarations and queries) this
** extension covers, measured against it: what vec_version() answers, with a "v". */
#define VS_SQLITE_VEC_VERSION "0.1.9"

/* The largest number of dimensions a vector may have (libSQL's limit too). */
#define VS_MAX_DIMS 65536

/* ---- vectors from SQL values, and back (vector_codec.c) ------------------------------ */

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

/* Write float32 elements to a little-endian blob and back; memcpy on little-endian hosts.
** vsF32FromLE may convert in place (p == aOut). */
void vsF32ToLE(const float *a, int n, unsigned char *pOut);
void vsF32FromLE(const unsigned char *p, int n, float *aOut);

/* Results of encoding a vector into an SQL result. */
void vsResultF32(sqlite3_context *ctx, const float *a, int n);
void vsResultF64(sqlite3_context *ctx, const double *a, int n);

/* ---- kernels and distances (vector_kernels.c) ---------------------------------------- */

/* Distance metrics of vec0 tables and libSQL indexes. */
#define VS_METRIC_L2     0
#define VS_METRIC_COSINE 1
#define VS_METRIC_DOT    2
#define VS_METRIC_L1     3   /* vec0 only: sum of |q[i] - v[i]|, sqlite-vec's l1 */
#define VS_METRIC_HAMMING 4  /* vec0 bit[N] columns only: differing bits */

float vsDotF32(const float *a, const float *b, int n);
float vsNormF32(const float *a, int n);
double vsDotF64(const VsVector *a, const VsVector *b);
double vsL2SqF64(const VsVector *a, const VsVector *b);
/* The distance between q and v under eMetric, computed in double precision: the figure
** a KNN query reports and orders by. */
double vsDistanceF32(int eMetric, const float *q, const float *v, int n);
/* The distance a float32 score s = q·v stands for, for ranking candidates before the
** exact re-rank (L2 is squared: same order, no square root a candidate). Under L1 the
** score is the distance already (vsL1Block), and is returned as it is. Under cosine, a
** zero norm (q or v all zeros: no direction) gives VS_NO_DIRECTION. */
double vsScoreDistance(int eMetric, float s, float qNorm, float vNorm);
/* The ranking key of a vector with no direction under cosine (all zeros): after every
** cosine distance (at most 2), its reported distance NULL. */
#define VS_NO_DIRECTION 3.0
/* out[i] = sum |A[i][j] - q[j]| in float32 for the nRow rows of a row-major block: the
** scan's L1 scores (AVX2 where the CPU has it), re-ranked exactly by vsDistanceF32. */
void vsL1Block(const float *A, int nRow, int nDim, const float *q, float *out);

/* The first j < n (n > 0) with the smallest c[j] + m*s[j] (c NULL: m*s[j]), for m = -1 or
** -2, whose products are exact: the nearest of n centroids scored s = x.c (ivf: -s under
** cosine, |c|^2 - 2s under l2). AVX2 where the CPU has it, with the scalar loop's answer
** for finite scores. */
int vsArgMinScaled(const float *s, const float *c, float m, int n);

/* out[i] = dot(A[i*nDim ..], q) for the nRow rows of a row-major block. One sgemv. */
void vsScoreBlock(const float *A, int nRow, int nDim, const float *q, float *out);
/* out[j*nRow + i] = dot(A[i], Q[j]) for nQuery queries: one sgemm. */
void vsScoreBlockBatch(const float *A, int nRow, int nDim,
                       const float *Q, int nQuery, float *out);
/* Threads one vsScoreBlock call already runs on: more than 1 only when BLAS scores the
** blocks and threads its sgemv itself (OpenBLAS, openblas_get_num_threads()). */
int vsScoreBlockThreads(void);

/* Which BLAS and SIMD this build uses, for vecsync_debug(). */
const char *vsBlasName(void);
const char *vsSimdName(void);
const char *vsScanName(void);
int vsInt8Kernel(void);               /* what scores int8 codes: 2 AVX-512 VNNI, 1 AVX2, 0 C */
const char *vsInt8KernelName(void);
void vsKernelsInit(void);

/* ---- top-k selection (vector_topk.c) ------------------------------------------------- */

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
/* Room for min(k, nMaxCandidates) hits (at least one). k may be any positive int64. */
int vsTopKInit(VsTopK *p, sqlite3_int64 k, sqlite3_int64 nMaxCandidates);
void vsTopKFree(VsTopK *p);
/* Offer a candidate; kept when it beats the worst kept hit. */
void vsTopKPush(VsTopK *p, double rDist, sqlite3_int64 iRowid, sqlite3_int64 iSlot);
/* The threshold a candidate must beat, +inf while the heap is not full. */
double vsTopKBound(const VsTopK *p);
/* Sort the kept hits nearest first (destroys the heap order). */
void vsTopKSort(VsTopK *p);
/* After vsTopKSort: the hits whose distance is NaN (no direction: NULL in SQL), which rank
** last, moved first, keeping both groups' order: the order of ORDER BY distance, where
** NULL comes first. */
void vsTopKNullsFirst(VsTopK *p);

/* ---- vec0: declaration (vec0_config.c) ----------------------------------------------- */

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

/* The most bytes one block of a vec0 table may take: chunk_size vectors of 4*nWord bytes
** (float[D]: 4*D), the unit the in-memory copy allocates, scans and streams. Every other
** allocation sized by a declaration, a stored value or a statement's arguments is bounded
** by it or by the rows there are. The largest default block (1024 vectors of float[65536])
** fits; a declaration whose block exceeds it is refused at CREATE (vec0BlockCheck), and a
** table declared before the limit existed answers every statement with that error. */
#ifndef VEC0_MAX_BLOCK_BYTES
# define VEC0_MAX_BLOCK_BYTES ((sqlite3_int64)256*1024*1024)
#endif

typedef struct Vec0Column Vec0Column;
struct Vec0Column {
  char *zName;          /* Column name as declared (unquoted) */
  int eKind;            /* VEC0_PK, VEC0_VECTOR, VEC0_META or VEC0_AUX */
  int eType;            /* VEC0_TYPE_* of PK, META and AUX columns */
  int bPartition;       /* "partition key": T_rows has an index on it */
  int bNotNull;         /* META and AUX: declared "not null", NULL refused */
  int nDim;             /* Vector columns: dimensions */
  int eElem;            /* Vector columns: VS_F32, VS_I8 or VS_BIT */
  int eMetric;          /* Vector columns: VS_METRIC_* */
  int nVecByte;         /* Vector columns: bytes of one value (4*nDim, nDim or nDim/8) */
};

typedef struct Vec0Config Vec0Config;
struct Vec0Config {
  int nCol;             /* User columns, in declared order */
  Vec0Column aCol[VEC0_MAX_COLUMNS];
  int iPk;              /* Index of the primary key column, or -1 (rowid only) */
  int bRowidPk;         /* "rowid integer primary key" was declared (as LangChain and
                        ** sqlite-vec-client do): the table's own rowid, no column added */
  int iVec;             /* Index of the first vector column: the one the fields below
                        ** describe, kept in T_vectors and the in-memory copy. Further
                        ** vector columns ("extra") are stored in T_rows and scanned from
                        ** there (vec0SearchColumn) */
  int nExtraVec;        /* Vector columns after the first */
  int nDim;             /* Dimensions of the vector column */
  int eElem;            /* Its elements: VS_F32 (float[N]), VS_I8 (int8[N]), VS_BIT (bit[N]) */
  int nVecByte;         /* Bytes of one vector's value: 4*nDim, nDim or nDim/8 */
  int nWord;            /* 4-byte words a vector takes in storage and in the copy: nDim for
                        ** float32; an int8 or bit vector's bytes, zero-padded to a word */
  int eMetric;          /* VS_METRIC_* (bit columns: VS_METRIC_HAMMING) */
  int nChunk;           /* Slots a chunk (the unit of the block scan) holds: chunk_size */
  int eQuant;           /* VEC0_QUANT_*: what the in-memory copy keeps of each vector */
  int nOversample;      /* Quantized scans: candidates re-scored exactly per result */
  int bIvf;             /* "indexed by ivf(...)" (or diskann(...), answered with it): the
                        ** first vector column has an approximate index (vec0_ivf.c) */
  int nIvfList;         /* ivf: lists declared by nlist=N; 0: chosen at training, ~sqrt(n) */
  int nIvfProbe;        /* ivf: lists a query scans unless "nprobe = ?" says otherwise */
  int eIvfQuant;        /* ivf: what its lists keep of each vector: VEC0_QUANT_INT8 (the
                        ** default), VEC0_QUANT_BIT (quantizer=binary), or VEC0_QUANT_NONE
                        ** (quantizer=none: they scan the copy's float32 vectors) */
  int nIvfOversample;   /* ivf: coded lists: candidates re-scored exactly per result */
  int bIvfNoCodes;      /* ivf: stored_codes=0: T_ivf_assign keeps no code, and a list's
                        ** read codes its rows' vectors (less disk, slower cold reads) */
};

/* "indexed by ivf(nlist=N, nprobe=N, quantizer=none|int8|binary, oversample=N)", sqlite-vec
** 0.1.10's declaration of an inverted-file index; "indexed by diskann(...)" is accepted and
** answered with the same index. */
#define VEC0_IVF_MAX_LISTS      65536
#define VEC0_IVF_DEFAULT_PROBE  10      /* sqlite-vec's default nprobe */
/* int8 lists: candidates re-scored per result. 100,000 x 768 clustered, cosine: recall@10
** the same at 4 as at 8 for every nprobe measured, 0.43 ms instead of 0.53 at nprobe 5 */
#define VEC0_IVF_DEFAULT_OVERSAMPLE 4

/* "indexed by rescore(quantizer=int8|bit, oversample=N)": the in-memory copy keeps codes
** (vec0_quant.c) instead of float32 vectors; the best k*nOversample by code are re-scored
** from the stored float32 vectors. */
#define VEC0_QUANT_NONE 0
#define VEC0_QUANT_INT8 1
#define VEC0_QUANT_BIT  2
#define VEC0_DEFAULT_OVERSAMPLE 8       /* int8 */
#define VEC0_DEFAULT_OVERSAMPLE_BIT 16  /* bit: recall@10 0.915 at 8, 0.980 at 16 on 1M x 384 */
#define VEC0_MAX_OVERSAMPLE 1024

int vec0ParseConfig(int argc, const char *const *argv, Vec0Config *pCfg, char **pzErr);
/* Whether user column i is an extra vector column (a vector column other than iVec). */
int vec0IsExtraVector(const Vec0Config *pCfg, int i);
/* Whether user column i has a column cI in T_rows: metadata, auxiliary, extra vector. */
int vec0IsStored(const Vec0Config *pCfg, int i);
/* pCfg as seen from vector column iCol: pOut's vector fields (iVec, nDim, eElem, nVecByte,
** nWord, eMetric) describe iCol, and it has no quantizer. For checks and figures. */
void vec0ColumnConfig(const Vec0Config *pCfg, int iCol, Vec0Config *pOut);
void vec0ConfigClear(Vec0Config *pCfg);
/* SQLITE_OK when a block of table zTable's declaration fits VEC0_MAX_BLOCK_BYTES, else
** SQLITE_ERROR and *pzErr says by how much and which chunk_size would fit. */
int vec0BlockCheck(const Vec0Config *pCfg, const char *zTable, char **pzErr);
const char *vec0MetricName(int eMetric);

/* ---- vec0: a connected table (vec0_table.c; its copy's types: vec0_cache.c) ---------- */

/*
** Words, one meaning each:
**   slot   where one vector lives: a number from 0 to next_slot-1
**   chunk  cfg.nChunk consecutive slots: the unit the in-memory copy is scanned in
**   blob   one row of T_vectors (column chunk_id numbers it): nPerBlob consecutive slots
**          of one chunk, or fewer at a chunk's end when nPerBlob does not divide nChunk
**          (vec0BlobOf)
*/

/* One chunk of the in-memory copy: nChunk slots' vectors, norms, rowids and liveness.
** Immutable once a snapshot that others can see holds it; shared by every snapshot that
** did not change it (nRef counts them). */
typedef struct Vec0Slab Vec0Slab;   /* Memory several chunks' vectors share (vec0_cache.c) */
typedef struct Vec0Chunk Vec0Chunk;
struct Vec0Chunk {
  int nRef;                   /* Snapshots holding this chunk (atomic) */
  float *aVec;                /* nChunk*nDim floats, row-major, 64-byte aligned */
  float *aNorm;               /* Per slot: L2 norm of the stored vector (NULL if streamed) */
  sqlite3_int64 *aRowid;      /* Per slot: rowid of the row stored there */
  unsigned char *aLive;       /* Per slot: 1 when a row occupies it */
  unsigned char *aCode;       /* Quantized tables: nChunk codes instead of aVec (NULL if not) */
  float *aScale;              /* int8 codes: per slot, the code's scale (else NULL) */
  Vec0Slab *pSlab;            /* aVec or aCode lies in this shared mapping, or NULL */
};

/* The vectors of a vec0 table as of one generation (one committed write transaction, or
** a transaction in progress on the connection that holds it privately). Committed
** snapshots are shared by every connection of the process that reads the same file and
** table at that generation (vec0_cache.c). */
typedef struct Vec0Snapshot Vec0Snapshot;
struct Vec0Snapshot {
  int nRef;                   /* Connections and the process-wide list holding it (atomic) */
  sqlite3_int64 iGeneration;  /* T_info 'generation' it reflects */
  sqlite3_int64 nSlot;        /* Slots in use or freed: the scanned range */
  sqlite3_int64 nLive;        /* Rows */
  int nChunkAlloc;            /* Entries of apChunk */
  Vec0Chunk **apChunk;        /* apChunk[c] holds slots c*nChunk .. (c+1)*nChunk-1 */
  int bStreamed;              /* Over the memory budget: chunks hold no vectors (aVec is
                              ** NULL), searches read them from T_vectors */
  int bProvisional;           /* Streamed only because it was the process's first search
                              ** of the table: the next search loads the vectors */
};

/* The process-wide list of snapshots of one table (vec0_cache.c). */
typedef struct Vec0Shared Vec0Shared;

/* The table's statements, one entry each in Vec0Table.aStmt, prepared on first use from
** the SQL vec0StmtSql() writes for them (as FTS5 keeps fts5_storage.c's aStmt[]). */
enum {
  VEC0_STMT_INFO_GET = 0,     /* SELECT value FROM T_info WHERE key=?1 */
  VEC0_STMT_INFO_SET,         /* REPLACE INTO T_info(key, value) VALUES(?1, ?2) */
  VEC0_STMT_FREE_FIRST,       /* SELECT slot FROM T_free ORDER BY slot LIMIT 1 */
  VEC0_STMT_FREE_DEL,         /* DELETE FROM T_free WHERE slot=?1 */
  VEC0_STMT_FREE_ADD,         /* INSERT INTO T_free(slot) VALUES(?1) */
  VEC0_STMT_FREE_COUNT,       /* SELECT count(*) FROM T_free WHERE slot>=?1 AND slot<?2 */
  VEC0_STMT_FREE_TRIM,        /* DELETE FROM T_free WHERE slot>=?1 */
  VEC0_STMT_BLOB_DEL,         /* DELETE FROM T_vectors WHERE chunk_id=?1 */
  VEC0_STMT_CODES_NEW,        /* INSERT INTO T_codes(chunk_id, codes) VALUES(?1, zeroblob(?2)) */
  VEC0_STMT_CODES_DEL,        /* DELETE FROM T_codes WHERE chunk_id=?1 */
  VEC0_STMT_CODES_IDS,        /* SELECT chunk_id FROM T_codes ORDER BY chunk_id */
  VEC0_STMT_BLOB_NEW,         /* INSERT INTO T_vectors(chunk_id, vectors) VALUES(?1, zeroblob(?2)) */
  VEC0_STMT_BLOB_IDS,         /* SELECT chunk_id FROM T_vectors ORDER BY chunk_id */
  VEC0_STMT_BLOB_RANGE,       /* SELECT min(chunk_id), max(chunk_id) FROM T_vectors */
  VEC0_STMT_SLOT_BY_ROWID,    /* SELECT rowid, slot FROM T_rows WHERE rowid=?1 */
  VEC0_STMT_SLOT_BY_ID,       /* SELECT rowid, slot FROM T_rows WHERE id=?1 */
  VEC0_STMT_SLOT_ALL,         /* SELECT rowid, slot FROM T_rows */
  VEC0_STMT_SLOT_ALL_BY_ID,   /* ... ORDER BY id: a text key's order */
  VEC0_STMT_ROW_DELETE,       /* DELETE FROM T_rows WHERE rowid=?1 */
  VEC0_STMT_ROW_INSERT,       /* INSERT INTO T_rows(rowid, slot, [id,] cN...) VALUES(...) */
  VEC0_STMT_ROW_UPDATE,       /* UPDATE T_rows SET rowid=?, slot=?, [id=?,] cN=?... WHERE rowid=? */
  VEC0_STMT_NEXT_ROWID,       /* SELECT coalesce(max(rowid), 0) + 1 FROM T_rows */
  VEC0_STMT_READ_BY_ROWID,    /* SELECT <row> FROM T_rows WHERE rowid=?1: cursors */
  VEC0_STMT_READ_BY_ID,       /* SELECT <row> FROM T_rows WHERE id=?1: cursors */
  VEC0_STMT_READ_ALL,         /* SELECT <row> FROM T_rows ORDER BY rowid: cursors */
  VEC0_STMT_LOG_ADD,          /* INSERT OR REPLACE INTO T_changes(generation, slot, rowid) */
  VEC0_STMT_LOG_RANGE,        /* SELECT slot, rowid FROM T_changes WHERE generation in (?1, ?2] */
  VEC0_STMT_LOG_COUNT,        /* SELECT count(*), reload marks FROM T_changes WHERE ... (?1, ?2] */
  VEC0_STMT_LOG_PRUNE,        /* DELETE FROM T_changes WHERE generation<=?1 */
  VEC0_STMT_LOG_MARK,         /* DELETE this generation's rows, for a "reload" mark */
  /* T_ivf_assign: a statement of T_info ivf_list_index 3 or 4 with its code (a coded list's),
  ** then those a table of ivf_list_index 2 or 3 runs (rowid column), then each one's form
  ** for an older table (slot and list only, rowid read as NULL). */
  VEC0_STMT_IVF_ASSIGN_CODE,  /* INSERT OR REPLACE INTO T_ivf_assign(slot, list, rowid, code) */
  VEC0_STMT_IVF_LIST_CODES,   /* SELECT slot, rowid, code FROM T_ivf_assign WHERE list=?1 */
  VEC0_STMT_IVF_ASSIGN_PUT,   /* INSERT OR REPLACE INTO T_ivf_assign(slot, list, rowid) */
  VEC0_STMT_IVF_ASSIGN_SET,   /* INSERT OR REPLACE INTO T_ivf_assign(slot, list) VALUES(?1, ?2) */
  VEC0_STMT_IVF_ASSIGN_AT,    /* SELECT list, rowid FROM T_ivf_assign WHERE slot=?1 */
  VEC0_STMT_IVF_ASSIGN_GET,   /* SELECT list, NULL FROM T_ivf_assign WHERE slot=?1 */
  VEC0_STMT_IVF_LIST_ROWS,    /* SELECT slot, rowid FROM T_ivf_assign WHERE list=?1 */
  VEC0_STMT_IVF_LIST_SLOTS,   /* SELECT slot, NULL FROM T_ivf_assign WHERE list=?1 */
  VEC0_STMT_IVF_ASSIGN_ROWID, /* UPDATE T_ivf_assign SET rowid=?2 WHERE slot=?1 */
  VEC0_STMT_IVF_ASSIGN_DEL,   /* DELETE FROM T_ivf_assign WHERE slot=?1 */
  VEC0_STMT_IVF_LIST_SIZES,   /* SELECT list, count(*), min(slot), max(slot), rowids not
                              ** integers FROM T_ivf_assign GROUP BY list (an older
                              ** table's rowid is its slot) */
  VEC0_STMT_IVF_LIST_SIZES_CODED, /* the same, the rows whose code is NULL and those
                              ** whose code is in their list's pack (a layout with codes) */
  VEC0_STMT_IVF_PACK,         /* SELECT codes FROM T_ivf_packs WHERE list=?1 AND part=?2 */
  VEC0_STMT_IVF_PACK_PUT,     /* INSERT INTO T_ivf_packs(list, part, codes) VALUES(...) */
  VEC0_STMT_IVF_PACK_BYTES,   /* SELECT sum(length(codes)) FROM T_ivf_packs */
  VEC0_STMT_COUNT
};

/* Columns of the <row> a cursor reads (VEC0_STMT_READ_*): rowid, id (or NULL), slot, then
** user column i at VEC0_ROW_USER+i (NULL for the key and the vector). */
#define VEC0_ROW_ROWID 0
#define VEC0_ROW_ID    1
#define VEC0_ROW_SLOT  2
#define VEC0_ROW_USER  3

typedef struct Vec0Registry Vec0Registry;
typedef struct LibsqlTopKMemo LibsqlTopKMemo;
typedef struct Vec0Table Vec0Table;
typedef struct Vec0Ivf Vec0Ivf;     /* An ivf index's lists in memory (vec0_ivf.c) */
struct Vec0Table {
  sqlite3_vtab base;          /* Base class: must be first */
  sqlite3 *db;                /* Connection the table lives on */
  char *zSchema;              /* "main", "temp" or an attached name */
  char *zName;                /* Table name */
  sqlite3 *dbStore;           /* Connection holding the shadow tables: db, or dbCopy */
  const char *zStoreSchema;   /* Their schema there: zSchema, or "main" of dbCopy */
  sqlite3 *dbCopy;            /* A sqlite-vec table this connection cannot migrate: a
                              ** private in-memory database holding it migrated, which
                              ** reads serve (vec0_migrate.c), or NULL */
  unsigned int iCopySource;   /* The file's SQLITE_FCNTL_DATA_VERSION dbCopy was made at */
  int bNoConflict;            /* Rows inserted outside a statement (the migration): a key
                              ** conflict is an error, with no ON CONFLICT to consult */
  Vec0Config cfg;             /* Parsed declaration */
  int nPerBlob;               /* Slots a blob of T_vectors holds (T_info vectors_per_blob) */
  int bStorageChecked;        /* T_info was read and matches the declaration */
  Vec0Snapshot *pView;        /* The copy of the vectors this connection reads, or NULL */
  int bViewPrivate;           /* pView holds this transaction's writes: not shared */
  unsigned int iDataVersion;  /* SQLITE_FCNTL_DATA_VERSION when pView was last checked */
  Vec0Shared *pShared;        /* Snapshots of this file and table in the process, or NULL */
  sqlite3_int64 iUid;         /* T_info 'uid': which table this storage is, 0 if none */
  int bChangeLog;             /* T_changes exists (tables made before it have none) */
  int bCodes;                 /* T_codes exists: a quantized table's codes, kept on write */
  int nLogged;                /* T_changes rows this generation wrote; -1: marked "reload" */
  sqlite3_int64 iWriteGen;    /* The generation this write transaction bumped to */
  sqlite3_int64 aBuild[3];    /* Views taken from the process (0), replayed (1), loaded (2) */
  int nScanThreads;           /* Threads the last KNN scan ran on (vec0_parallel.c) */
  Vec0Ivf *pIvf;              /* "indexed by ivf": its lists as this connection last read
                              ** or wrote them, or NULL (vec0_ivf.c) */
  sqlite3_stmt *aStmt[VEC0_STMT_COUNT];       /* By VEC0_STMT_*, prepared on first use */
  unsigned char aStmtBusy[VEC0_STMT_COUNT];   /* aStmt[i] is lent to an open cursor */
  int bGenerationBumped;      /* This write transaction's bump of 'generation' stands */
  int bWriteTx;               /* This transaction wrote the table (views are private) */
  Vec0Table *pNext;           /* Next vec0 table of the same connection */
  Vec0Registry *pReg;         /* The connection's list of vec0 tables */
};

/* What the extension keeps for one connection: its vec0 tables (for the batch function
** and for vector_top_k, which stores its index in a vec0 table). Shared by the modules
** registered on the connection, freed when the last of them is. */
struct Vec0Registry {
  sqlite3 *db;                /* The connection */
  Vec0Table *pFirst;          /* Its vec0 tables */
  int nRef;                   /* Modules registered with this registry */
  void (*xRelease)(void*);    /* What each module's destructor is: drops its reference,
                              ** the last one frees the registry (vsRegistryRelease, set
                              ** by vecsync_main.c, which owns the registries) */
  Vec0Registry *pNextReg;     /* Next connection's registry (vecsync_main.c's list) */
  LibsqlTopKMemo *pTopK;      /* vector_top_k's last index, found and made current
                              ** (libsql_index_topk.c), or NULL */
};

/* The connection's list of tables (vec0_table.c): a table joins it on connect and leaves
** it on disconnect. */
void vec0RegistryAdd(Vec0Registry *pReg, Vec0Table *p);
void vec0RegistryRemove(Vec0Table *p);
/* Find a connected vec0 table by schema (NULL: any) and name, connecting it if needed. */
int vec0Find(sqlite3 *db, Vec0Registry *pReg, const char *zSchema, const char *zName,
             Vec0Table **ppTab, char **pzErr);
/* Take the error text a vec0 operation left on table p (sqlite3_malloc'ed, or NULL). */
char *vec0TakeError(Vec0Table *p);
/* Set the table's error text (replacing any). */
void vec0SetError(Vec0Table *p, const char *zFmt, ...);

/* ---- vec0: storage (vec0_store.c) ---------------------------------------------------- */

int vec0ShadowCreate(Vec0Table *p);
/* T_ivf_assign keyed by (list, slot), each row's rowid and code beside them, with a unique
** index on slot, T_ivf_packs (a list's codes written by a training, one blob a list) and
** T_info ivf_list_index 4: for a new table (vec0ShadowCreate), or made again, empty, for a
** table made before it (vecsync_ivf_retrain, inside its savepoint, which fills them). A
** query then reads a list's slots, rowids and codes as one range of the table and one
** blob, when it needs them, without reading its rows' vectors. Layout 3 kept every code
** in its row of T_ivf_assign, layout 2 no code (slot the key, an index on (list, rowid)),
** layout 1 the list alone. */
#define VEC0_IVF_LAYOUT 4
#define VEC0_IVF_LAYOUT_CODES 3
#define VEC0_IVF_LAYOUT_ROWIDS 2
int vec0ShadowIvfIndex(Vec0Table *p);
/* Whether table T_zSuffix exists in the table's schema. */
int vec0ShadowExists(Vec0Table *p, const char *zSuffix, int *pbExists);
int vec0ShadowDrop(Vec0Table *p);
/* sqlite-vec's storage (for vec0_migrate.c): drop only its shadow tables; whether T_rows
** (ours) and T_rowids (sqlite-vec's) exist; forget a storage check after the storage changed (the caller clears the copy first). */
int vec0ShadowDropForeign(Vec0Table *p);
/* Drop only this extension's shadow tables (vec0_export.c). */
int vec0ShadowDropOwn(Vec0Table *p);
int vec0ShadowPresent(Vec0Table *p, int *pbOurs, int *pbTheirs);
void vec0StorageForget(Vec0Table *p);
/* Read T_info and check it matches the declaration. *pbForeign: the shadow tables are
** sqlite-vec's (SQLITE_OK, nothing checked): vec0StorageReady reads them from a copy.
** Statements call vec0StorageReady (vec0_migrate.c), which calls this. */
int vec0StorageCheck(Vec0Table *p, int *pbForeign);
/* After an operation failed with rc: SQLITE_CORRUPT_VTAB (and the reason) when the
** storage turns out to be damaged (a shadow table dropped, say), else rc. */
int vec0StorageExplain(Vec0Table *p, int rc);
/* Statement eStmt, prepared on first use; the caller resets it after use. */
int vec0Stmt(Vec0Table *p, int eStmt, sqlite3_stmt **ppStmt);
/* Run statement eStmt, one that returns no row, with ?1 = iArg. */
int vec0StmtRun(Vec0Table *p, int eStmt, sqlite3_int64 iArg);
/* A cursor's statement: the kept one when free, else a private copy. Give it back with
** vec0StmtGiveBack(). */
int vec0StmtBorrow(Vec0Table *p, int eStmt, sqlite3_stmt **ppStmt);
void vec0StmtGiveBack(Vec0Table *p, int eStmt, sqlite3_stmt *pStmt);
void vec0StmtsFinalize(Vec0Table *p);
int vec0InfoGet(Vec0Table *p, const char *zKey, sqlite3_int64 *piVal);
int vec0InfoSet(Vec0Table *p, const char *zKey, sqlite3_int64 iVal);
/* Check a slot read from T_rows or T_free: SQLITE_CORRUPT_VTAB unless 0 <= iSlot < next_slot. */
int vec0SlotCheck(Vec0Table *p, sqlite3_int64 iSlot, const char *zWhere);
/* The storage side of a write; vec0_cache.c's vec0Write* call these, then keep the copy in
** step. vec0SlotAlloc: a free slot, or a new one at the end (*pnGrown: the new next_slot,
** else 0). vec0SlotFree: a slot back to T_free, its vector zeroed. vec0StorageTrim: the
** trailing blobs whose every slot is free given back (*pbTrimmed: slots went away).
** vec0VectorWrite: vector a into slot iSlot's blob and code. vec0LogSlot: T_changes notes
** that slot iSlot holds row iRowid (bLive) or nothing. */
int vec0SlotAlloc(Vec0Table *p, sqlite3_int64 *piSlot, sqlite3_int64 *pnGrown);
int vec0SlotFree(Vec0Table *p, sqlite3_int64 iSlot);
int vec0StorageTrim(Vec0Table *p, int *pbTrimmed);
int vec0VectorWrite(Vec0Table *p, sqlite3_int64 iSlot, const float *a);
int vec0LogSlot(Vec0Table *p, sqlite3_int64 iSlot, int bLive, sqlite3_int64 iRowid);
/* The slot of T_changes' marks: a generation readers load whole (VEC0_LOG_RELOAD, its only
** row), and one that gave back trailing slots (VEC0_LOG_TRIMMED, beside its slots' rows:
** a reader's replay takes next_slot down with it; a build that knows only the reload mark
** reads any negative slot as one, and loads whole). */
#define VEC0_LOG_RELOAD  (-1)
#define VEC0_LOG_TRIMMED (-2)
/* A macro's value as SQL text: VS_STR(VEC0_LOG_TRIMMED) is "(-2)". */
#define VS_STR(x) VS_STR_(x)
#define VS_STR_(x) #x
/* Whether this connection's view is the state it reads now (its own writes included). */
int vec0ViewCurrent(Vec0Table *p);
/* Open blob iBlob of T_codes (checked against its expected size). */
int vec0CodesOpen(Vec0Table *p, sqlite3_int64 iBlob, int bWrite, sqlite3_blob **ppBlob);
/* Read slot iSlot's stored vector straight from T_vectors into a (nDim floats). */
int vec0StoredVector(Vec0Table *p, sqlite3_int64 iSlot, float *a);
/* The same for many slots: keeps one blob handle open and moves it (read them in slot
** order). Zero it before the first read; close it after the last. */
typedef struct Vec0Reader Vec0Reader;
struct Vec0Reader {
  sqlite3_blob *pBlob;        /* Open on blob iBlob of T_vectors, or NULL */
  sqlite3_int64 iBlob;
  unsigned char *pBuf;        /* One vector's bytes */
};
int vec0ReaderRead(Vec0Table *p, Vec0Reader *r, sqlite3_int64 iSlot, float *a);
/* The whole blob iBlob (its vec0BlobFirst count of vectors) into a, straight from the
** file's pages. */
int vec0ReaderBlob(Vec0Table *p, Vec0Reader *r, sqlite3_int64 iBlob, float *a);
/* The blob of T_vectors holding slot iSlot, and (piAt, may be NULL) its place there; the
** first slot blob iBlob holds, and (pnSlot) how many. -1 for a negative slot or blob. */
sqlite3_int64 vec0BlobOf(const Vec0Table *p, sqlite3_int64 iSlot, int *piAt);
sqlite3_int64 vec0BlobFirst(const Vec0Table *p, sqlite3_int64 iBlob, int *pnSlot);
void vec0ReaderClose(Vec0Reader *r);
/* Check next_slot against the blobs of T_vectors (before allocating for them): the first
** and last blob ids, read from the ends of the table. A blob missing in between is found
** by whatever reads through them (a load, a streamed scan, a vector read). */
int vec0BlobsCheck(Vec0Table *p, sqlite3_int64 nSlot);
/* next_slot, checked. */
int vec0NextSlot(Vec0Table *p, sqlite3_int64 *pnSlot);
/* The generation as this connection sees it, and the oldest one T_changes still covers. */
int vec0Generation(Vec0Table *p, sqlite3_int64 *piGen);
int vec0LogFrom(Vec0Table *p, sqlite3_int64 *piFrom);
unsigned int vec0DataVersion(Vec0Table *p);
/* The first write of a transaction: 'generation' bumped from *piOld (the change log pruned
** now and then); then vec0WriteStart records that this transaction wrote generation iGen. */
int vec0GenerationBump(Vec0Table *p, sqlite3_int64 *piOld);
void vec0WriteStart(Vec0Table *p, sqlite3_int64 iGen);
/* The transaction ended (commit, rollback): forget that it wrote. */
void vec0WriteEnd(Vec0Table *p);
/* A statement failed or ROLLBACK TO ran: the bump may be undone, so the next write bumps
** again; the transaction is still one that wrote. */
void vec0WriteRetry(Vec0Table *p);

/* ---- vec0: the in-memory copy (vec0_cache.c) ----------------------------------------- */

/* Make p->pView the copy this connection's read should scan: the shared snapshot of its
** generation, else one built from an older snapshot and T_changes, else loaded whole. The
** caller has made the storage ready (vec0StorageReady) and says what it needs: */
#define VEC0_NEED_COPY   0    /* the vectors in memory (the batch function) */
#define VEC0_NEED_SEARCH 1    /* one search: the process's first whole load streams */
#define VEC0_NEED_INFO   2    /* a report (vecsync_cache_info): the view as it is */
int vec0CacheEnsure(Vec0Table *p, int eNeed);
/* Release the view and the process-wide entry (disconnect). */
void vec0CacheClear(Vec0Table *p);
/* Drop the view: the next search builds it again (rollback, a failed write). */
void vec0CacheDrop(Vec0Table *p);
/* Connect p to the process-wide snapshots of its file and table (after the storage check). */
int vec0CacheAttach(Vec0Table *p);
/* The transaction committed: the private view is now the shared snapshot of its
** generation. */
void vec0CacheCommit(Vec0Table *p);
/* A write, owned here: the storage written through vec0_store.c, then the same change
** applied to the transaction's private view (when it has one) and logged for the other
** connections. vec0WriteBegin before the first write of a transaction (bumps the
** generation, makes the view private); a new slot; vector a into slot iSlot for row
** iRowid; a new rowid for the row in iSlot (an UPDATE of the key); a slot freed. */
int vec0WriteBegin(Vec0Table *p);
int vec0WriteNewSlot(Vec0Table *p, sqlite3_int64 *piSlot);
int vec0WriteVector(Vec0Table *p, sqlite3_int64 iSlot, sqlite3_int64 iRowid, const float *a);
int vec0WriteRowid(Vec0Table *p, sqlite3_int64 iSlot, sqlite3_int64 iRowid);
int vec0WriteFreeSlot(Vec0Table *p, sqlite3_int64 iSlot);
/* The vector in slot iSlot into a (nWord words): from the view when it is current, else
** from T_vectors. */
int vec0ReadVector(Vec0Table *p, sqlite3_int64 iSlot, float *a);
/* The same, reading T_vectors through r (many slots in slot order keep its blob open). */
int vec0ReadVectorWith(Vec0Table *p, Vec0Reader *r, sqlite3_int64 iSlot, float *a);
/* How this connection's copy stands, as the JSON text of vecsync_cache_info()
** (sqlite3_malloc'ed; NULL: out of memory). The view must be ensured. */
char *vec0CacheInfo(Vec0Table *p);
/* For a search that can answer without the copy (an ivf index whose lists hold their
** rowids): whether to, because the copy would hold no vectors: over the memory budget (a
** view made under a larger one is dropped), or, this connection holding no view, the
** process's first search of the table, which would stream it (the table's next search
** loads it, as after a streamed first search). */
int vec0CacheSkip(Vec0Table *p);
/* The copy of slot iSlot's vector, or NULL when there is no view, it does not cover
** iSlot, or it is streamed (over the memory budget). */
const float *vec0CacheVector(Vec0Table *p, sqlite3_int64 iSlot);
/* The process's memory budget for vec0 copies in bytes (0: none); sets it when iNew >= 0. */
sqlite3_int64 vec0MemoryBudget(sqlite3_int64 iNew);
/* vecsync_memory_budget([bytes]): read or set it from SQL. */
void vec0MemoryBudgetFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv);

/* ---- vec0: quantized codes (vec0_quant.c) -------------------------------------------- */

/* Bytes of one vector's code (0 when the table is not quantized). */
int vec0QuantCodeBytes(const Vec0Config *pCfg);
/* T_codes keeps, per slot, a record: the code, then the vector's norm, then (int8) the
** code's scale, floats little-endian; a blob a chunk (chunk_id = chunk number). A load
** reads these instead of every vector. */
int vec0QuantRecordBytes(const Vec0Config *pCfg);
void vec0QuantRecord(const Vec0Config *pCfg, const float *a, unsigned char *pRec);
/* The record of a code already made: pCode (vec0QuantCodeBytes), rNorm and rScale. */
void vec0QuantRecordWrite(const Vec0Config *pCfg, const unsigned char *pCode, float rNorm,
                          float rScale, unsigned char *pRec);
/* Read a record back: its code into pCode, *pNorm and *pScale (a value that is not a finite
** number, from a damaged file, reads as 0). */
void vec0QuantRecordRead(const Vec0Config *pCfg, const unsigned char *pRec,
                         unsigned char *pCode, float *pNorm, float *pScale);
/* Code vector a (nDim floats) into pCode (vec0QuantCodeBytes bytes); *pScale: int8's scale. */
void vec0QuantEncode(const Vec0Config *pCfg, const float *a, unsigned char *pCode,
                     float *pScale);
/* A query prepared for scoring codes. */
typedef struct Vec0QuantQuery Vec0QuantQuery;
struct Vec0QuantQuery {
  int eQuant, eMetric, nDim, nCode;
  unsigned char *aCode;       /* The query's code */
  unsigned char *aAbs;        /* int8: magnitudes of its codes */
  float rScale;               /* int8: its scale */
  float qNorm;                /* L2 norm of the query */
  float *aTable;              /* bit: per code byte j and value v, the sum of the query's
                              ** elements 8j..8j+7 signed by v's bits (+ set, - clear) */
};
int vec0QuantQueryInit(const Vec0Config *pCfg, const float *q, Vec0QuantQuery *pQ);
void vec0QuantQueryClear(Vec0QuantQuery *pQ);
/* Coarse distances of nRow consecutive codes (smaller is nearer; only their order is used). */
void vec0QuantScore(const Vec0QuantQuery *pQ, const unsigned char *aCode, const float *aScale,
                    const float *aNorm, int nRow, float *aDist);
float vec0QuantScoreOne(const Vec0QuantQuery *pQ, const unsigned char *pCode, float rScale,
                        float rNorm);
/* bit: a finer coarse distance for one row: the float query against the row's signs scaled
** to its norm (a table lookup a code byte), for the few rows the Hamming scan kept. */
float vec0QuantRefineBits(const Vec0QuantQuery *pQ, const unsigned char *pCode, float rNorm);
/* bit: how many more rows the Hamming scan keeps than are re-scored exactly. */
#define VEC0_BIT_WIDEN 8

/* int8[N] and bit[N] columns, scanned as stored: each row's exact key for ranking (int8:
** squared L2, L1, or 1 - cos; bit: Hamming), rows nStride bytes apart. A row with no
** direction under cosine (all zeros) ranks after every other, at VS_NO_DIRECTION. */
void vec0TypedScore(const Vec0Config *pCfg, const unsigned char *q, const unsigned char *aRow,
                    int nStride, int nRow, double *aKey);
/* The distance a KNN query reports for one row: the figure sqlite-vec's vec_distance_l2,
** _cosine, _l1 or _hamming gives (NaN under cosine for a zero vector). */
double vec0TypedFigure(const Vec0Config *pCfg, const unsigned char *q, const unsigned char *v);

/* ---- vec0: search (vec0_search.c) ---------------------------------------------------- */

/* Decode and check a vector for table p's vector column (dimensions, NaN, zero vector
** under cosine). *paOut is sqlite3_malloc'ed. zWhat names it in errors ("query"). */
int vec0VectorArg(Vec0Table *p, sqlite3_value *pVal, const char *zWhat,
                  float **paOut, char **pzErr);
/* The same for vector column iCol (the first or an extra one): *paOut gets nWord words,
** float32 or the int8/bit bytes zero-padded. */
int vec0ColumnVectorArg(Vec0Table *p, int iCol, sqlite3_value *pVal, const char *zWhat,
                        float **paOut, char **pzErr);
/* Check a value of extra vector column iCol read back from T_rows (row iRowid): a blob of
** the column's bytes, else SQLITE_CORRUPT_VTAB with the table named. */
int vec0ExtraCheck(Vec0Table *p, int iCol, sqlite3_int64 iRowid, sqlite3_value *pVal);
/* The checks of vec0VectorArg on float32 data already decoded: finite, not all zeros under
** cosine. */
int vec0VectorCheck(Vec0Table *p, const float *a, const char *zWhat, char **pzErr);
/* Bounds on the distance a KNN query accepts ("distance > ?" and friends), for paging. */
typedef struct Vec0Range Vec0Range;
struct Vec0Range {
  int bLo, bLoOpen;           /* A lower bound; exclusive (>) when bLoOpen, else >= */
  double rLo;
  int bHi, bHiOpen;           /* An upper bound; exclusive (<) when bHiOpen, else <= */
  double rHi;
};
/* Exact k nearest rows to q (nDim floats), restricted to slots with aMask[slot] set
** when aMask is not NULL, and to distances within pRange when it is not NULL. pTop
** receives at most k hits, nearest first. */
int vec0Search(Vec0Table *p, const float *q, sqlite3_int64 k,
               const unsigned char *aMask, const Vec0Range *pRange, VsTopK *pTop);
/* Exact k nearest rows by extra vector column iCol: every row's stored value read from
** T_rows (no in-memory copy), with the mask, range and k semantics of vec0Search; the
** distances are the figures sqlite-vec reports. */
int vec0SearchColumn(Vec0Table *p, int iCol, const float *q, sqlite3_int64 k,
                     const unsigned char *aMask, const Vec0Range *pRange, VsTopK *pTop);
/* Replace the hits' distances (ordered by vec0Search) by the l2 and cosine figures
** sqlite-vec reports, its float32 sums; the order is kept. */
int vec0ReportDistances(Vec0Table *p, const float *q, VsTopK *pTop);
/* The same for nQuery queries at once (one sgemm per chunk); aTop[j] for query j. */
int vec0SearchBatch(Vec0Table *p, const float *Q, int nQuery, sqlite3_int64 k,
                    VsTopK *aTop);

/* ---- vec0: the ivf index (vec0_ivf.c) ------------------------------------------------ */

/* Search with the index when the table has one, it is trained, the copy is in memory and
** no distance bound is given; else vec0Search. nProbe: lists to scan (0: the declared
** nprobe); more are scanned, nearest first, until k rows pass aMask. */
int vec0IvfSearch(Vec0Table *p, const float *q, sqlite3_int64 k, int nProbe,
                  const unsigned char *aMask, const Vec0Range *pRange, VsTopK *pTop);
/* What a search of p asks vec0CacheEnsure for: the vectors in memory (VEC0_NEED_COPY) for
** an ivf index of float32 lists, which scans the copy's vectors; else VEC0_NEED_SEARCH
** (the process's first search streams; coded lists answer from a streamed copy, reading
** their candidates' vectors from T_vectors). */
int vec0IvfCacheNeed(const Vec0Table *p);
/* After row iRowid's vector a was written to slot iSlot (and its row to T_rows): the slot
** into its nearest list (the insert that brings an untrained table to its training size
** trains it); a NULL: the row's rowid changed, not its vector. After slot iSlot was freed:
** out of its list. No-ops without an index. */
int vec0IvfPut(Vec0Table *p, sqlite3_int64 iSlot, sqlite3_int64 iRowid, const float *a);
int vec0IvfRemove(Vec0Table *p, sqlite3_int64 iSlot);
/* Forget the lists in memory (a rollback, a failed write, disconnect): read again next. */
void vec0IvfDrop(Vec0Table *p);
/* p->pIvf made current with the storage; train the index on the rows now (nList lists,
** 0: the declaration's nlist or about sqrt(rows)) inside the caller's savepoint. */
int vec0IvfReady(Vec0Table *p);
int vec0IvfTrain(Vec0Table *p, int nList);
/* After vec0IvfReady: its lists (0: not trained); its report as JSON text into *pzOut
** (sqlite3_malloc'ed); recall@k at nProbe over nQuery stored rows
** taken as queries against the exact search (*prRecall -1 for an empty table). */
int vec0IvfLists(Vec0Table *p);
/* A query's nprobe from a SQL value: an integer from 1 to VEC0_IVF_MAX_LISTS, else 0. */
int vec0IvfProbeValue(sqlite3_value *pVal);
int vec0IvfInfo(Vec0Table *p, char **pzOut);
int vec0IvfRecall(Vec0Table *p, sqlite3_int64 nQuery, sqlite3_int64 k, int nProbe,
                  double *prRecall);

/* ---- vec0: the scan on several threads (vec0_parallel.c) ----------------------------- */

/* A block scan cut into parts, runs of consecutive chunks, each scanned by one thread into
** a heap of its own; vec0ScanRun merges them into the scan's heap, a result that does not
** depend on how many threads ran (1 + PRAGMA threads at most, for large tables). */
typedef struct Vec0ScanJob Vec0ScanJob;
typedef struct Vec0ScanPart Vec0ScanPart;
struct Vec0ScanPart {
  const Vec0ScanJob *pJob;    /* The scan it belongs to */
  int iFirst, iEnd;           /* Chunks iFirst .. iEnd-1 of the copy */
  VsTopK *pTop;               /* Where its candidates go (NULL when the scan keeps none) */
  VsTopK top;                 /* Its own heap, when the scan has several parts */
  void *pScratch;             /* pJob->nScratch bytes of its own */
  sqlite3_int64 nOffered;     /* Rows the part offered to its heap (xPart sets it) */
};
struct Vec0ScanJob {
  /* Scan one part's chunks into pPart->pTop. It runs on a helper thread: it may not
  ** allocate, call SQLite, or write what another part reads (unless bSerial). */
  int (*xPart)(const Vec0ScanJob *pJob, Vec0ScanPart *pPart);
  void *pCtx;                 /* What the parts read: the query, mask, range */
  size_t nScratch;            /* Bytes of scratch memory a part needs */
  int bBlas;                  /* xPart scores blocks with vsScoreBlock */
  int bSerial;                /* xPart reads SQLite (a streamed copy): one thread only */
  /* After every part is done, on the calling thread, in part order (or NULL). */
  void (*xFold)(const Vec0ScanJob *pJob, const Vec0ScanPart *pPart);
};
/* Run the job over every chunk of p's copy; pTop (initialised, or NULL) gets the best of
** the parts' candidates. Sets p->nScanThreads. */
int vec0ScanRun(Vec0Table *p, const Vec0ScanJob *pJob, VsTopK *pTop);

/* ---- vec0: plans (vec0_plan.c; the rowid column: vec0_config.c) ---------------------- */

/* Query plans (idxNum). */
#define VEC0_PLAN_SCAN  1
#define VEC0_PLAN_POINT 2
#define VEC0_PLAN_KNN   3
/* Or'ed into VEC0_PLAN_KNN: the statement never reads the distance column, so the hits'
** reported figures (vec0ReportDistances) are not computed. */
#define VEC0_PLAN_NO_DISTANCE 0x100

/* What one xFilter argument is (Vec0PlanArg.eArg). */
#define VEC0_ARG_MATCH  'M'   /* the query vector */
#define VEC0_ARG_K      'K'   /* k = ? */
#define VEC0_ARG_LIMIT  'L'   /* LIMIT ? */
#define VEC0_ARG_FILTER 'F'   /* a constraint on a column */
#define VEC0_ARG_POINT  'P'   /* the key of a point lookup */
#define VEC0_ARG_DISTANCE 'D' /* a bound on distance: >, >=, <, <= ? */
#define VEC0_ARG_NPROBE 'N'   /* nprobe = ?: lists an ivf index scans */

/* Operators of filters (Vec0PlanArg.eOp). */
#define VEC0_OP_EQ        'e'
#define VEC0_OP_GT        'g'
#define VEC0_OP_GE        'G'
#define VEC0_OP_LT        'l'
#define VEC0_OP_LE        'L'
#define VEC0_OP_NE        'n'
#define VEC0_OP_IS        'i'
#define VEC0_OP_ISNOT     'I'
#define VEC0_OP_ISNULL    'u'
#define VEC0_OP_ISNOTNULL 'U'
#define VEC0_OP_IN        'x'   /* an IN list, handed over whole */

/* Column of a filter or point lookup on the rowid (Vec0PlanArg.iCol). */
#define VEC0_COL_ROWID (-1)

/* One xFilter argument as idxStr records it: four characters, eArg, eOp and iCol as two
** hex digits ("--" for the rowid). */
typedef struct Vec0PlanArg Vec0PlanArg;
struct Vec0PlanArg {
  char eArg;            /* VEC0_ARG_* */
  char eOp;             /* VEC0_OP_*, or ' ' */
  int iCol;             /* User column, or VEC0_COL_ROWID */
};

int vec0BestIndex(sqlite3_vtab *pVtab, sqlite3_index_info *pInfo);
/* Read idxStr back: *pnArg arguments into aArg (room for nMax). SQLITE_ERROR when idxStr
** is not one vec0BestIndex wrote. */
int vec0PlanDecode(const char *zIdx, Vec0PlanArg *aArg, int nMax, int *pnArg);
/* Mark the slots of the rows that pass the plan's filters: (*paMask)[slot] = 1. */
int vec0FilterMask(Vec0Table *p, const Vec0PlanArg *aArg, int nArg, sqlite3_value **argv,
                   unsigned char **paMask);
/* The stored column of T_rows that user column iCol (or VEC0_COL_ROWID) reads. */
char *vec0StoredColumn(Vec0Table *p, int iCol);
/* A table without a primary key shows its rowid as a first column, "rowid", as sqlite-vec
** does (so "insert into t values (1, ?)" and "select *" work alike). vec0ColumnOffset
** (vec0_config.c) is 1 then, else 0; vec0UserColumn maps a column SQLite names (as xBestIndex and xColumn see
** it) to a user column, or VEC0_COL_ROWID for either rowid, or nCol and nCol+1 for the
** hidden distance and k. */
int vec0ColumnOffset(const Vec0Table *p);
int vec0UserColumn(const Vec0Table *p, int iSqlCol);
/* Whether the primary key is a text column, kept in T_rows.id (vec0_config.c). */
int vec0HasTextPk(Vec0Table *p);

/* ---- registration (vector_sql.c, vector_typed.c, vec0*.c, libsql_index.c) ------------ */

/* An SQL function's error, as "fn: message" (fn is the function's user data); frees zErr. */
void vsResultError(sqlite3_context *ctx, int rc, char *zErr);
/* PRAGMA zSchema.zName (an integer pragma: schema_version, page_size, cache_size) read into
** *piVal, or set to *piVal when bSet. */
int vsPragma(sqlite3 *db, const char *zSchema, const char *zName, sqlite3_int64 *piVal,
             int bSet);
/* What the table-valued functions (vecsync_knn_batch, vec_each, vector_top_k) share: their
** table, which xConnect (vsTableFunctionConnect, after declaring zDecl) makes and
** xDisconnect frees; xOpen makes a zeroed cursor of nCursor bytes, xClose lets xReset free
** what the cursor holds, then frees it. */
typedef struct VsTableFunction VsTableFunction;
struct VsTableFunction {
  sqlite3_vtab base;          /* Base class: must be first */
  sqlite3 *db;                /* The connection */
  void *pAux;                 /* The module's client data (a Vec0Registry, or NULL) */
  size_t nCursor;             /* Bytes of its cursor */
  void (*xReset)(sqlite3_vtab_cursor*);  /* Frees what a cursor holds (NULL: nothing) */
};
int vsTableFunctionConnect(sqlite3 *db, void *pAux, const char *zDecl, size_t nCursor,
                           void (*xReset)(sqlite3_vtab_cursor*), sqlite3_vtab **ppVtab);
int vsTableFunctionDisconnect(sqlite3_vtab *pVtab);
int vsTableFunctionOpen(sqlite3_vtab *pVtab, sqlite3_vtab_cursor **ppCur);
int vsTableFunctionClose(sqlite3_vtab_cursor *cur);
/* A cursor over rows 0 .. nRow-1, in order: its xNext, xEof, and xRowid (the row's
** number). */
typedef struct VsCursor VsCursor;
struct VsCursor {
  sqlite3_vtab_cursor base;   /* Base class: must be first */
  int iRow;                   /* The current row */
  int nRow;                   /* Rows the last xFilter found */
};
int vsCursorNext(sqlite3_vtab_cursor *cur);
int vsCursorEof(sqlite3_vtab_cursor *cur);
int vsCursorRowid(sqlite3_vtab_cursor *cur, sqlite3_int64 *pRowid);
/* xBestIndex's part they share: the arguments are hidden columns iFirst .. iFirst+nArg-1,
** each needing a usable "=" constraint, handed to xFilter in that order; else
** SQLITE_CONSTRAINT (one not usable: SQLite tries another plan) or SQLITE_ERROR with
** zMissing as the table's error. */
#define VS_MAX_TABLE_FUNCTION_ARGS 8
int vsTableFunctionArgs(sqlite3_vtab *pVtab, sqlite3_index_info *pInfo, int iFirst, int nArg,
                        const char *zMissing);
/* The method table of a table-valued function: eponymous only (no CREATE VIRTUAL TABLE),
** read only, the named methods in their slots and every other slot empty. */
#define VS_TABLE_FUNCTION_MODULE(Connect, BestIndex, Filter, Next, Eof, Column, Rowid) { \
  .iVersion = 0, .xCreate = 0, .xConnect = Connect, .xBestIndex = BestIndex, \
  .xDisconnect = vsTableFunctionDisconnect, .xDestroy = 0, .xOpen = vsTableFunctionOpen, \
  .xClose = vsTableFunctionClose, .xFilter = Filter, .xNext = Next, .xEof = Eof, \
  .xColumn = Column, .xRowid = Rowid }
/* A zeroed cursor of nByte bytes (every module's xOpen). */
int vsCursorOpen(size_t nByte, sqlite3_vtab_cursor **ppCur);
/* Each registers its functions or modules on db (vecsync_main.c calls them in this
** order). Modules take a reference to pReg and drop it with pReg->xRelease when SQLite
** frees them. */
/* A scalar SQL function for vsCreateFunctions(): its SQL name, argument count, SQLITE_*
** flags and implementation. */
typedef struct VsFunction VsFunction;
struct VsFunction {
  const char *zName;
  int nArg;
  int flags;
  void (*xFunc)(sqlite3_context*, int, sqlite3_value**);
};
/* Registers aFunc[0 .. nFunc-1] on db, each with pApp as its user data (its own name when
** pApp is NULL); stops at the first failure, *pzErr naming the function (vector_sql.c). */
int vsCreateFunctions(sqlite3 *db, const VsFunction *aFunc, int nFunc, void *pApp, char **pzErr);
int vsRegisterScalarFunctions(sqlite3 *db, char **pzErr);
int vsRegisterTypedFunctions(sqlite3 *db, char **pzErr);
int vsRegisterVec0Module(sqlite3 *db, Vec0Registry *pReg, char **pzErr);
int vsRegisterVec0Batch(sqlite3 *db, Vec0Registry *pReg, char **pzErr);
int vsRegisterLibsqlIndex(sqlite3 *db, Vec0Registry *pReg, char **pzErr);
int vsRegisterVec0Migrate(sqlite3 *db, Vec0Registry *pReg, char **pzErr);
int vsRegisterVec0Export(sqlite3 *db, Vec0Registry *pReg, char **pzErr);
int vsRegisterVec0Ivf(sqlite3 *db, Vec0Registry *pReg, char **pzErr);

/* ---- vec0: one row written (vec0_write.c) -------------------------------------------- */

/* After vec0WriteBegin: xUpdate's INSERT (argv[0] NULL) or UPDATE, and DELETE of the row
** whose rowid is pRowid. vec0InsertRow inserts one row given as xUpdate's arguments
** outside any statement on the table (a migration): every check an INSERT makes. */
int vec0UpdateWrite(Vec0Table *p, int argc, sqlite3_value **argv, sqlite3_int64 *pRowid);
int vec0UpdateDelete(Vec0Table *p, sqlite3_value *pRowid);
int vec0InsertRow(Vec0Table *p, int argc, sqlite3_value **argv);

/* ---- vec0: a table sqlite-vec wrote; the storage a statement reads (vec0_migrate.c) --- */

/* Before a statement reads or writes the table: its storage checked (vec0StorageCheck) and
** attached to the process's snapshots, or, when the shadow tables are sqlite-vec's, a
** migrated copy made or kept current: a read never changes the file. vec0MigrateCopy
** migrates the table into dbCopy, which p then reads; vec0CopyClose forgets that copy. */
int vec0StorageReady(Vec0Table *p);
int vec0MigrateCopy(Vec0Table *p);
void vec0CopyClose(Vec0Table *p);
/* The body of vecsync_migrate_sqlite_vec(table) and vecsync_export_sqlite_vec(table): the
** table found (held by a statement, so a rollback cannot free it), refused on a read-only
** database, rewritten by xRewrite (rows counted, its error in *pzErr), and the answer
** "T: N rows <zDone>", or zFunc's error. */
void vec0RewriteFunc(sqlite3_context *ctx, sqlite3_value *pTable, const char *zFunc,
                     const char *zDone, int (*xRewrite)(Vec0Table*, sqlite3_int64*, char**));
/* Run xBody(pCtx, pnRow) in savepoint zName on p's connection: released when it succeeds
** (a failed release, and a failed savepoint, say why in *pzErr), else rolled back, the file
** as it was; either way p's copy and storage check are dropped, the storage having changed
** under them. */
int vec0InSavepoint(Vec0Table *p, const char *zName,
                    int (*xBody)(void*, sqlite3_int64*), void *pCtx, sqlite3_int64 *pnRow,
                    char **pzErr);


/* ---- libSQL indexes (libsql_index*.c) ------------------------------------------------ */

/* A "libSQL index" is CREATE INDEX ... ON t(libsql_vector_idx(col)): SQLite keeps the
** declaration, the search data lives in a vec0 table named vecsync_idx_<index> (kept by
** triggers), and vector_top_k() searches it. (A "vec0 table" is CREATE VIRTUAL TABLE ...
** USING vec0(...): what the Swift host's VectorIndex makes.) */

/* Column types of libSQL vectors: the numbers are libSQL's trailing type bytes. */
#define VS_LIBSQL_F32   VS_F32
#define VS_LIBSQL_F64   VS_F64

/* What the CREATE INDEX statement of a libSQL index says (libsql_index_parse.c). */
typedef struct LibsqlIndex LibsqlIndex;
struct LibsqlIndex {
  char *zSchema;        /* Schema of the index and its table: "main" or an attached name */
  char *zIndex;         /* Index name */
  char *zTable;         /* Indexed table */
  char *zColumn;        /* Indexed column */
  char *zWhere;         /* A partial index's WHERE condition, or NULL */
  int eColType;         /* VS_LIBSQL_* of the column's declared type */
  int nDim;             /* From the column's declared type, F32_BLOB(n) */
  int eMetric;          /* VS_METRIC_COSINE (libSQL's default) or VS_METRIC_L2 */
  int bOneBit;          /* 'compress_neighbors=float1bit' (refused with metric=l2) */
  int bIvf;             /* 'type=ivf': the search data has vec0's approximate ivf index;
                        ** else (libSQL's type=diskann, the default) the search is exact */
  int nIvfList;         /* 'nlist=N' of an ivf index; 0: chosen at training, ~sqrt(rows) */
  int nIvfProbe;        /* 'nprobe=N' of an ivf index; 0: vec0's default */
  char *zKey;           /* A WITHOUT ROWID table's primary key column, or NULL (rowid) */
  char *zKeyColl;       /* That key's collation ("BINARY", "NOCASE", ...) */
  int bKeyRowidLike;    /* That key has INTEGER affinity and BINARY collation */
  char *zK;             /* SQL naming the row's key in the table: rowid or "key" */
  char *zNewK;          /* The same in a trigger: new.rowid or new."key" */
  char *zOldK;          /* old.rowid or old."key" */
};
void libsqlIndexClear(LibsqlIndex *p);
/* Look up index zName ("name" or "schema.name") and read its declaration; libSQL's
** errors where libSQL has one. */
int libsqlIndexLookup(sqlite3 *db, const char *zName, LibsqlIndex *pDef, char **pzErr);
/* Check one 'key=value' option of libsql_vector_idx() and note it in pDef (eMetric,
** bOneBit, bIvf, nIvfList, nIvfProbe); then, all read, check them together. */
int libsqlIndexOption(const char *zOpt, LibsqlIndex *pDef, char **pzErr);
int libsqlIndexOptionsCheck(const LibsqlIndex *pDef, char **pzErr);
/* Whether a CREATE statement is running on db. */
int libsqlCreateRunning(sqlite3 *db);
/* Make the search data of an index current (libsql_index_build.c): created, filled and
** given its triggers when missing or stale, else the log applied; with bRebuild, emptied
** and filled again (an ivf index trained on the rows). *pnRow: rows a (re)build indexed.
** SQLITE_LOCKED: the search data was made for another declaration and cannot be dropped
** while a statement reads (vector_top_k then scans the table). */
int libsqlIndexBuild(sqlite3 *db, Vec0Registry *pReg, const LibsqlIndex *pDef, int bRebuild,
                     sqlite3_int64 *pnRow, char **pzErr);
/* vector_top_k(index, query, k), an eponymous table (libsql_index_topk.c); the memo of its
** last index a registry keeps, freed with the registry. */
extern const sqlite3_module libsqlTopKModule;
void libsqlTopKMemoFree(LibsqlTopKMemo *pMemo);

/* ---- sqlite-vec's int8 and bit vectors: their distances (vector_kernels.c) ----------- */

/* The value subtypes sqlite-vec gives the vectors its functions return, so that a blob made
** by vec_int8() or vec_bit() is read as int8 or bit by the function it is passed to (a
** blob stored in a table and read back has no subtype: it is float32 again). */
#define VS_SUBTYPE_F32  223
#define VS_SUBTYPE_BIT  224
#define VS_SUBTYPE_I8   225

/* Element types beyond VS_F32 and VS_F64, for sqlite-vec's vectors. */
#define VS_I8   0x81          /* one signed byte an element */
#define VS_BIT  0x82          /* one bit an element, least significant bit first */

/* Distances over int8 and bit vectors, and L1, computed as sqlite-vec computes them. */
double vsL1F64(const VsVector *a, const VsVector *b);
sqlite3_int64 vsL1I8(const signed char *a, const signed char *b, int n);
double vsL2I8(const signed char *a, const signed char *b, int n);
/* 1 - cos(a, b); NaN when either is all zeros. */
double vsCosineI8(const signed char *a, const signed char *b, int n);
/* sqlite-vec's float32 L2 and 1 - cosine (NaN when either is all zeros), its figures. */
double vsL2F32Seq(const float *a, const float *b, int n);
double vsCosineF32Seq(const float *a, const float *b, int n);
/* libSQL's float32 cosine distance, as its vector_distance_cos computes it. */
double vsCosineLibsqlF32(const float *a, const float *b, int n);
/* Number of differing bits over nByte bytes. */
sqlite3_int64 vsHammingBytes(const unsigned char *a, const unsigned char *b, int nByte);



/* ---- libSQL's compact vector types (vector_codec.c) ---------------------------------- */

/* libSQL's type bytes for its compact vectors (F32 is VS_F32, F64 VS_F64). vsVectorFrom-
** Value reads blobs of these types as F32 vectors. */
#define VS_LIBSQL_1BIT  3
#define VS_LIBSQL_F8    4
#define VS_LIBSQL_F16   5
#define VS_LIBSQL_FB16  6
/* The libSQL type of a value: its blob's trailing type byte, VS_F32 for text and for blobs
** of even length (anything else is what vsVectorFromValue would refuse). */
int vsValueLibsqlType(sqlite3_value *pVal);
/* Encode n float32 elements as libSQL's type eType (VS_LIBSQL_*). */
void vsResultLibsql(sqlite3_context *ctx, int eType, const float *a, int n);
float vsF16ToFloat(uint16_t h);
uint16_t vsF16FromFloat(float f);

#if defined(__GNUC__) || defined(__clang__)
# pragma GCC visibility pop
#endif
#endif /* VECSYNC_INT_H */
