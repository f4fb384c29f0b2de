/*
** vec0_ivf.c: the approximate index of a vec0 table, "indexed by ivf(...)": an inverted
** file of k-means lists over the table's first vector column.
**
** Usage:
**
**   create virtual table docs using vec0(
**     embedding float[768] distance_metric=cosine indexed by ivf(nprobe=8),
**     lang text);
**   -- inserts; the index trains itself when the table reaches VEC0_IVF_TRAIN_ROWS rows
**   select vecsync_ivf_retrain('docs');              -- train now (again), one savepoint
**   select rowid, distance from docs where embedding match :q and k = 10;
**   select rowid, distance from docs
**    where embedding match :q and k = 10 and nprobe = 32 and lang = 'en';
**   select vecsync_index_info('docs');               -- lists, sizes, drift (JSON)
**   select vecsync_ivf_recall('docs', 100, 10, 8);   -- recall@10 at nprobe 8 vs exact
**
** How it works: training (vec0IvfTrain) runs k-means on a sample of the rows taken in
** rowid order, or a text key's order (so two replicas holding the same rows train the
** same centroids, whatever order the rows reached them in; the seed is a constant, never
** the clock), scoring the sample against the centroids with one
** sgemm a block of rows (vsScoreBlockBatch); under cosine the k-means is spherical
** (rows and centroids of unit length). Every row then joins the list of its nearest
** centroid. T_ivf_centroids keeps the centroids, T_ivf_assign each row's list, slot,
** rowid and code (keyed by (list, slot): a list's rows are one range of it; a unique
** index on slot), T_info ivf_lists, ivf_trained_rows, ivf_trained_max (the largest
** list's rows then), ivf_version (random, new at each training) and ivf_list_index (3;
** 2: a table made before the codes, keyed by slot and indexed on (list, rowid); 1: before
** the rowids, indexed on list alone; 0: not indexed).
** A training writes every row's code; a later write leaves its row's code NULL, and the
** list's read codes that row's vector.
**
** A connection keeps the index in memory (Vec0Ivf): per list the slots and rowids of its
** rows and, unless quantizer=none, their int8 (or bit) codes in one block, vec0_quant.c's;
** per slot its list and place, so a delete is O(1); past VEC0_IVF_CODED_CENTROIDS lists
** the centroids' int8 codes too. It is stamped with the generation and ivf_version it
** reflects: after another connection's commit it replays the slots that changed (from
** T_changes), or reads itself again. Writes (vec0IvfPut, vec0IvfRemove) change the
** shadow table and the lists together; a statement or transaction rolled back drops the
** lists (vec0IvfDrop), which are then read again. Under a memory budget the lists read
** when needed are held to it: the least recently scanned are given back (vec0IvfFitBudget)
** and read again when a query next scans them, and a training keeps none of them.
**
** A KNN query (vec0IvfSearch) orders the lists by centroid distance (vec0IvfProbeOrder),
** scans the nprobe nearest, then further lists, nearest first, until k rows that pass
** the query's filters are found or no list is left: a filtered query still returns k
** rows when k rows match. Coded lists keep the k*oversample best by code, which are
** ranked again by float32 key from the in-memory copy; the best k + VEC0_IVF_EXTRA get the
** exact (double) distance the exact scan orders by, and are reported with its figures.
** Coded lists need no copy at all when it would hold no vectors (over the memory budget,
** or the process's first search, which would stream it): their rowids name the rows, and
** the kept candidates' vectors are read from T_vectors instead, the same answer. A table
** made before the lists kept rowids takes them from a streamed copy (rowids and liveness).
** Before training, at nprobe >= the lists, with distance bounds, with a filter that passes
** few rows (VEC0_IVF_FILTER_EXACT), and for float32 lists over the budget, the query is
** the exact search.
*/
#include "vecsync_int.h"
SQLITE_EXTENSION_INIT3

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Rows a table reaches before an insert trains its index (a smaller table is searched
** exactly until vecsync_ivf_retrain() asks). */
#define VEC0_IVF_TRAIN_ROWS 4096
/* Rows of the training sample per list, and the sample's most bytes. */
#define VEC0_IVF_SAMPLE_PER_LIST 64
#define VEC0_IVF_MAX_SAMPLE_BYTES ((sqlite3_int64)512*1024*1024)
/* k-means iterations. */
#define VEC0_IVF_ITERATIONS 10
/* Rows scored against the centroids at once (bounded again by VEC0_IVF_BLOCK_SCORES). */
#define VEC0_IVF_BLOCK_ROWS 1024
#define VEC0_IVF_BLOCK_SCORES ((sqlite3_int64)4*1024*1024)
/* A training writes its rows this many at a time at most, or as many as have
** VEC0_IVF_PENDING_BYTES of records, each block in the order of T_ivf_assign's key. */
#define VEC0_IVF_PENDING_ROWS 65536
#define VEC0_IVF_PENDING_BYTES ((sqlite3_int64)32*1024*1024)
/* A lean training that writes its codes to T_ivf_packs makes a part of each list's pack a
** block: its blocks hold this many bytes of records (a row count of no bound of its own),
** so that the parts are long (a part's last page is partly empty). */
#define VEC0_IVF_PENDING_PACK_BYTES ((sqlite3_int64)128*1024*1024)
/* A training of coded lists writes a list's codes to T_ivf_packs in parts of at most this
** many bytes; a row of T_ivf_assign names its code by the part above bit
** VEC0_IVF_PACK_SHIFT and its place in the part below. */
#define VEC0_IVF_PACK_BYTES ((sqlite3_int64)8*1024*1024)
#define VEC0_IVF_PACK_SHIFT 32
#define VEC0_IVF_PACK_MASK ((((sqlite3_int64)1)<<VEC0_IVF_PACK_SHIFT)-1)
#define vec0IvfPackPlace(iAt, nPerPart) \
  ((((sqlite3_int64)(iAt)/(nPerPart))<<VEC0_IVF_PACK_SHIFT) | ((sqlite3_int64)(iAt)%(nPerPart)))
/* Candidates kept beyond k for the exact re-score: float32 keys may misorder near ties. */
#define VEC0_IVF_EXTRA 16
/* Above this many lists the centroids are scored by their int8 codes first (a quarter of
** the bytes read a query and an insert), and only the best lists again in float32: the
** VEC0_IVF_REFINE best for an insert's list, nprobe + VEC0_IVF_REFINE for a query's. */
#define VEC0_IVF_CODED_CENTROIDS 64
#define VEC0_IVF_REFINE 8
/* A filter that passes at most this many times the rows nprobe lists hold is answered by
** the exact scan of the rows it passes. */
#define VEC0_IVF_FILTER_EXACT 4

/* One list: the slots of its rows, in no order, and (coded lists) each row's code, one
** contiguous block that a query scans. */
typedef struct Vec0IvfList Vec0IvfList;
struct Vec0IvfList {
  int n;                      /* Rows in the list */
  int nAlloc;                 /* Room for rows in the arrays below */
  sqlite3_int64 *aSlot;       /* Their slots */
  sqlite3_int64 *aRowid;      /* Vec0Ivf.bRowids: their rowids, in aSlot's order */
  unsigned char *aCode;       /* Coded lists: n codes of nCode bytes, in aSlot's order */
  float *aScale;              /* Coded lists: each code's scale (int8) */
  float *aNorm;               /* Coded lists: each vector's L2 norm */
  int bUnread;                /* Not read from T_ivf_assign yet (Vec0Ivf.bLazy), or given
                              ** back under the memory budget: empty */
  sqlite3_uint64 iUsed;       /* Vec0Ivf.iTick when a query last scanned it */
};

struct Vec0Ivf {
  sqlite3_int64 iGen;         /* T_info generation the lists reflect */
  sqlite3_int64 iVersion;     /* T_info ivf_version they reflect */
  int nList;                  /* Lists; 0 while the index is not trained */
  int nDim;                   /* Dimensions of a centroid */
  Vec0Config cfgCode;         /* The table's declaration with eQuant set to the lists'
                              ** codes (eIvfQuant), for vec0_quant.c; shares its names */
  Vec0Config cfgCent;         /* The same with int8 codes: the centroids' */
  unsigned char *aCentCode;   /* More than VEC0_IVF_CODED_CENTROIDS lists: their int8 codes */
  float *aCentScale;          /* ... each code's scale */
  float *aCentNorm;           /* ... each centroid's L2 norm */
  int nCode;                  /* Bytes of a code; 0: the lists scan the copy's float32 */
  float *aCent;               /* nList*nDim floats: the centroids (unit length: cosine) */
  float *aCentSq;             /* nList floats: their squared norms */
  sqlite3_int64 nTrained;     /* Rows the lists were trained on */
  sqlite3_int64 nTrainedMax;  /* Rows of the largest list then (T_info ivf_trained_max;
                              ** 0 in a file that predates it) */
  sqlite3_int64 nSlot;        /* Entries of aListOf and aPos */
  int *aListOf;               /* Per slot: its list, or -1 */
  int *aPos;                  /* Per slot: its place in that list's aSlot */
  Vec0IvfList *aList;         /* nList lists */
  int bLazy;                  /* Lists are read when a query first scans them, a range of
                              ** T_ivf_assign's key or index (T_info ivf_list_index) */
  int bRowids;                /* T_ivf_assign keeps each slot's rowid (ivf_list_index 2
                              ** or 3): the lists hold them, and a query needs no copy */
  int bCodes;                 /* Coded lists whose T_ivf_assign keeps each row's code, or
                              ** its place in T_ivf_packs (ivf_list_index 3 or 4): a list
                              ** is read without its vectors */
  int bPacks;                 /* T_ivf_packs is there (ivf_list_index 4): a training writes
                              ** coded lists' codes to it, a list's as one blob */
  sqlite3_uint64 iTick;       /* Lists scanned so far, by every query */
  sqlite3_int64 nGivenBack;   /* Lists given back to keep under the memory budget */
  sqlite3_int64 nNoCopy;      /* Queries answered from the lists alone (no copy made) */
};

/* List pL's arrays freed: it holds no row. */
static void vec0IvfListEmpty(Vec0IvfList *pL){
  sqlite3_free(pL->aSlot);
  sqlite3_free(pL->aRowid);
  sqlite3_free(pL->aCode);
  sqlite3_free(pL->aScale);
  sqlite3_free(pL->aNorm);
  pL->aSlot = pL->aRowid = 0;
  pL->aCode = 0;
  pL->aScale = pL->aNorm = 0;
  pL->n = pL->nAlloc = 0;
}

static void vec0IvfFree(Vec0Ivf *x){
  int i;
  if( x==0 ) return;
  for(i=0; i<x->nList; i++) vec0IvfListEmpty(&x->aList[i]);
  sqlite3_free(x->aList);
  sqlite3_free(x->aCent);
  sqlite3_free(x->aCentSq);
  sqlite3_free(x->aCentCode);
  sqlite3_free(x->aCentScale);
  sqlite3_free(x->aCentNorm);
  sqlite3_free(x->aListOf);
  sqlite3_free(x->aPos);
  sqlite3_free(x);
}

void vec0IvfDrop(Vec0Table *p){
  vec0IvfFree(p->pIvf);
  p->pIvf = 0;
}

/* The storage is damaged: say where, as every damaged shadow table does. */
static int vec0IvfCorrupt(Vec0Table *p, const char *zWhat){
  vec0SetError(p, "vec0 \"%s\": storage is damaged: %s", p->zName, zWhat);
  return SQLITE_CORRUPT_VTAB;
}

/* ---- the lists in memory ---------------------------------------------------------------- */

/* An empty index of nList lists with room for nSlot slots (centroids not set). */
static int vec0IvfNew(const Vec0Table *p, int nList, sqlite3_int64 nSlot, Vec0Ivf **ppOut){
  Vec0Ivf *x = sqlite3_malloc(sizeof(*x));
  int nDim = p->cfg.nDim;
  int rc = SQLITE_OK;
  *ppOut = 0;
  if( x==0 ) return SQLITE_NOMEM;
  memset(x, 0, sizeof(*x));
  x->nDim = nDim;
  x->cfgCode = p->cfg;
  x->cfgCode.eQuant = p->cfg.eIvfQuant;
  x->nCode = x->cfgCode.eQuant!=VEC0_QUANT_NONE ? vec0QuantCodeBytes(&x->cfgCode) : 0;
  x->cfgCent = p->cfg;
  x->cfgCent.eQuant = VEC0_QUANT_INT8;
  if( nSlot>0x7fffffff ){
    rc = SQLITE_TOOBIG;                       /* places are ints */
  }else if( nList>0 ){
    x->aCent = sqlite3_malloc64(sizeof(float)*(sqlite3_uint64)nList*(sqlite3_uint64)nDim);
    x->aCentSq = sqlite3_malloc64(sizeof(float)*(sqlite3_uint64)nList);
    x->aList = sqlite3_malloc64(sizeof(Vec0IvfList)*(sqlite3_uint64)nList);
    if( nList>VEC0_IVF_CODED_CENTROIDS ){
      x->aCentCode = sqlite3_malloc64((sqlite3_uint64)nList*(sqlite3_uint64)nDim);
      x->aCentScale = sqlite3_malloc64(sizeof(float)*(sqlite3_uint64)nList);
      x->aCentNorm = sqlite3_malloc64(sizeof(float)*(sqlite3_uint64)nList);
      if( x->aCentCode==0 || x->aCentScale==0 || x->aCentNorm==0 ) rc = SQLITE_NOMEM;
    }
    if( x->aCent==0 || x->aCentSq==0 || x->aList==0 ) rc = SQLITE_NOMEM;
    else memset(x->aList, 0, sizeof(Vec0IvfList)*(size_t)nList);
    if( rc==SQLITE_OK ) x->nList = nList;
  }
  if( rc==SQLITE_OK && nSlot>0 ){
    x->aListOf = sqlite3_malloc64(sizeof(int)*(sqlite3_uint64)nSlot);
    x->aPos = sqlite3_malloc64(sizeof(int)*(sqlite3_uint64)nSlot);
    if( x->aListOf==0 || x->aPos==0 ) rc = SQLITE_NOMEM;
    else memset(x->aListOf, 0xff, sizeof(int)*(size_t)nSlot);
    x->nSlot = nSlot;
  }
  if( rc!=SQLITE_OK ){
    vec0IvfFree(x);
    return rc;
  }
  *ppOut = x;
  return SQLITE_OK;
}

/* Resizes the array *pp to n elements of nByte bytes each; on SQLITE_NOMEM *pp is left as
** it was (still owned by the caller's structure). */
static int vec0IvfResize(void *pp, sqlite3_uint64 nByte, sqlite3_uint64 n){
  void *pOld, *pNew;
  memcpy(&pOld, pp, sizeof(pOld));
  pNew = sqlite3_realloc64(pOld, nByte*n);
  if( pNew==0 ) return SQLITE_NOMEM;
  memcpy(pp, &pNew, sizeof(pNew));
  return SQLITE_OK;
}

/* Room for slots 0 .. nSlot-1. */
static int vec0IvfSlotsGrow(Vec0Ivf *x, sqlite3_int64 nSlot){
  sqlite3_int64 nNew = x->nSlot;
  if( nSlot<=x->nSlot ) return SQLITE_OK;
  if( nSlot>0x7fffffff ) return SQLITE_TOOBIG;
  while( nNew<nSlot ) nNew = nNew<64 ? 64 : nNew*2;
  if( nNew>0x7fffffff ) nNew = 0x7fffffff;
  if( vec0IvfResize(&x->aListOf, sizeof(int), (sqlite3_uint64)nNew)
   || vec0IvfResize(&x->aPos, sizeof(int), (sqlite3_uint64)nNew) ){
    return SQLITE_NOMEM;
  }
  memset(&x->aListOf[x->nSlot], 0xff, sizeof(int)*(size_t)(nNew - x->nSlot));
  x->nSlot = nNew;
  return SQLITE_OK;
}

/* Take slot iSlot out of its list, if it is in one: the last slot of the list takes its
** place (O(1)). */
static void vec0IvfListRemove(Vec0Ivf *x, sqlite3_int64 iSlot){
  int iList, iPos;
  Vec0IvfList *pL;
  if( iSlot<0 || iSlot>=x->nSlot || (iList = x->aListOf[iSlot])<0 ) return;
  pL = &x->aList[iList];
  iPos = x->aPos[iSlot];
  pL->aSlot[iPos] = pL->aSlot[pL->n-1];
  x->aPos[pL->aSlot[iPos]] = iPos;
  if( pL->aRowid ) pL->aRowid[iPos] = pL->aRowid[pL->n-1];
  if( x->nCode ){
    memcpy(&pL->aCode[(size_t)iPos*(size_t)x->nCode],
           &pL->aCode[(size_t)(pL->n-1)*(size_t)x->nCode], (size_t)x->nCode);
    pL->aScale[iPos] = pL->aScale[pL->n-1];
    pL->aNorm[iPos] = pL->aNorm[pL->n-1];
  }
  pL->n--;
  x->aListOf[iSlot] = -1;
}

/* Room for one more row in list pL. */
static int vec0IvfListRoom(Vec0Ivf *x, Vec0IvfList *pL){
  sqlite3_uint64 nNew;
  if( pL->n<pL->nAlloc ) return SQLITE_OK;
  if( pL->nAlloc>=0x3fffffff ) return SQLITE_TOOBIG;
  nNew = pL->nAlloc<16 ? 16 : (sqlite3_uint64)pL->nAlloc*2;
  if( vec0IvfResize(&pL->aSlot, sizeof(sqlite3_int64), nNew) ) return SQLITE_NOMEM;
  if( x->bRowids && vec0IvfResize(&pL->aRowid, sizeof(sqlite3_int64), nNew) ) return SQLITE_NOMEM;
  if( x->nCode
   && (vec0IvfResize(&pL->aCode, (sqlite3_uint64)x->nCode, nNew)
       || vec0IvfResize(&pL->aScale, sizeof(float), nNew)
       || vec0IvfResize(&pL->aNorm, sizeof(float), nNew)) ){
    return SQLITE_NOMEM;
  }
  pL->nAlloc = (int)nNew;
  return SQLITE_OK;
}

/* Lists iFirst .. iEnd-1's arrays cut to the rows they hold, after a load or a training
** added their rows one at a time (each array doubles as it grows: up to half of it was
** left unused). */
static void vec0IvfListsFit(Vec0Ivf *x, int iFirst, int iEnd){
  int i;
  for(i=iFirst; i<iEnd; i++){
    Vec0IvfList *pL = &x->aList[i];
    sqlite3_uint64 n = pL->n>0 ? (sqlite3_uint64)pL->n : 1;
    if( (sqlite3_uint64)pL->nAlloc<=n ) continue;
    /* An array whose smaller block is refused keeps its larger one: every array then has
    ** room for at least n rows, which is what nAlloc promises. */
    (void)vec0IvfResize(&pL->aSlot, sizeof(sqlite3_int64), n);
    if( x->bRowids ) (void)vec0IvfResize(&pL->aRowid, sizeof(sqlite3_int64), n);
    if( x->nCode ){
      (void)vec0IvfResize(&pL->aCode, (sqlite3_uint64)x->nCode, n);
      (void)vec0IvfResize(&pL->aScale, sizeof(float), n);
      (void)vec0IvfResize(&pL->aNorm, sizeof(float), n);
    }
    pL->nAlloc = (int)n;
  }
}

/* Bytes list pL holds in memory: its slots, rowids and (coded lists) codes, scales and
** norms. */
static sqlite3_int64 vec0IvfListBytes(const Vec0Ivf *x, const Vec0IvfList *pL){
  sqlite3_int64 nRow = sizeof(sqlite3_int64)*(x->bRowids ? 2 : 1)
                     + (x->nCode ? x->nCode + 2*sizeof(float) : 0);
  return (sqlite3_int64)pL->nAlloc*nRow;
}

/* Bytes every list holds in memory. */
static sqlite3_int64 vec0IvfListsBytes(const Vec0Ivf *x){
  sqlite3_int64 n = 0;
  int i;
  for(i=0; i<x->nList; i++) n += vec0IvfListBytes(x, &x->aList[i]);
  return n;
}

/* Give list pL back: empty, its rows out of the per-slot arrays, read again from
** T_ivf_assign (by the index on list) when a query next scans it. */
static void vec0IvfListGiveBack(Vec0Ivf *x, Vec0IvfList *pL){
  int i;
  for(i=0; i<pL->n; i++) x->aListOf[pL->aSlot[i]] = -1;
  vec0IvfListEmpty(pL);
  pL->bUnread = 1;
  x->nGivenBack++;
}

/* Under a memory budget (vecsync_memory_budget), lists that can be read again (x->bLazy)
** are given back, least recently scanned first and never list iKeep, until the lists hold
** at most the budget. O(lists) a list given back: a list read costs far more. */
static void vec0IvfFitBudget(Vec0Ivf *x, int iKeep){
  sqlite3_int64 nBudget = vec0MemoryBudget(-1), nHeld;
  if( nBudget<=0 || !x->bLazy ) return;
  nHeld = vec0IvfListsBytes(x);
  while( nHeld>nBudget ){
    int i, iOld = -1;
    for(i=0; i<x->nList; i++){
      const Vec0IvfList *pL = &x->aList[i];
      if( i==iKeep || pL->bUnread ) continue;
      if( iOld<0 || pL->iUsed<x->aList[iOld].iUsed ) iOld = i;
    }
    if( iOld<0 ) break;
    nHeld -= vec0IvfListBytes(x, &x->aList[iOld]);
    vec0IvfListGiveBack(x, &x->aList[iOld]);
  }
}

/* Put slot iSlot (< x->nSlot) of row iRowid, whose vector is a, into list iList, out of
** any other; a coded list keeps a's code (again, when the slot stays in its list), or the
** code of record pRec (vec0QuantRecord's) when it is given. A list not read yet takes
** nothing: the slot is among those it reads from T_ivf_assign when it is. */
static int vec0IvfListAdd(Vec0Ivf *x, int iList, sqlite3_int64 iSlot, sqlite3_int64 iRowid,
                          const float *a, const unsigned char *pRec){
  Vec0IvfList *pL = &x->aList[iList];
  int iPos, rc;
  if( pL->bUnread ){
    /* Not in memory: the list is read with this slot when a query needs it. */
    vec0IvfListRemove(x, iSlot);
    return SQLITE_OK;
  }
  if( x->aListOf[iSlot]!=iList ){
    vec0IvfListRemove(x, iSlot);
    rc = vec0IvfListRoom(x, pL);
    if( rc!=SQLITE_OK ) return rc;
    x->aListOf[iSlot] = iList;
    x->aPos[iSlot] = pL->n;
    pL->aSlot[pL->n++] = iSlot;
  }
  iPos = x->aPos[iSlot];
  if( pL->aRowid ) pL->aRowid[iPos] = iRowid;
  if( x->nCode && pRec ){
    vec0QuantRecordRead(&x->cfgCode, pRec, &pL->aCode[(size_t)iPos*(size_t)x->nCode],
                        &pL->aNorm[iPos], &pL->aScale[iPos]);
  }else if( x->nCode ){
    vec0QuantEncode(&x->cfgCode, a, &pL->aCode[(size_t)iPos*(size_t)x->nCode],
                    &pL->aScale[iPos]);
    pL->aNorm[iPos] = vsNormF32(a, x->nDim);
  }
  return SQLITE_OK;
}

/* Squared norms of the centroids, and unit length under cosine. */
static void vec0IvfCentroidsDone(Vec0Ivf *x, int eMetric){
  int i, j;
  for(i=0; i<x->nList; i++){
    float *c = &x->aCent[(size_t)i*(size_t)x->nDim];
    float r = vsDotF32(c, c, x->nDim);
    if( eMetric==VS_METRIC_COSINE && r>0 ){
      float s = 1.0f/sqrtf(r);
      for(j=0; j<x->nDim; j++) c[j] *= s;
      r = vsDotF32(c, c, x->nDim);
    }
    x->aCentSq[i] = r;
    if( x->aCentCode ){
      vec0QuantEncode(&x->cfgCent, c, &x->aCentCode[(size_t)i*(size_t)x->nDim],
                      &x->aCentScale[i]);
      x->aCentNorm[i] = sqrtf(r);
    }
  }
}

/* How far centroid i is from a query or row scored s = q.c against it (smaller is
** nearer): l2 |c|^2 - 2 q.c orders by |q - c|; cosine the largest q.c (c unit length). */
static float vec0IvfCentroidKey(const Vec0Ivf *x, int eMetric, int i, float s){
  return eMetric==VS_METRIC_COSINE ? -s : x->aCentSq[i] - 2.0f*s;
}

/* Coarse distances of every centroid to q, from their int8 codes, into aOut (nList). */
static int vec0IvfCoarse(const Vec0Ivf *x, const float *q, float *aOut){
  Vec0QuantQuery qq;
  int rc = vec0QuantQueryInit(&x->cfgCent, q, &qq);
  if( rc==SQLITE_OK ){
    vec0QuantScore(&qq, x->aCentCode, x->aCentScale, x->aCentNorm, x->nList, aOut);
  }
  vec0QuantQueryClear(&qq);
  return rc;
}

/* The nearest centroid to a vector scored s[j] = a.c against each (vec0IvfCentroidKey's
** order, the first on a tie). */
static int vec0IvfNearestScored(const Vec0Ivf *x, int eMetric, const float *s){
  return eMetric==VS_METRIC_COSINE ? vsArgMinScaled(s, 0, -1.0f, x->nList)
                                   : vsArgMinScaled(s, x->aCentSq, -2.0f, x->nList);
}

/* For each of the nRow rows of X (row-major, nDim), its nearest centroid into aBest:
** one sgemm a block. aScore has room for VEC0_IVF_BLOCK_SCORES floats. */
static void vec0IvfNearest(const Vec0Ivf *x, int eMetric, const float *X, int nRow,
                           float *aScore, int *aBest){
  int nBlock = (int)(VEC0_IVF_BLOCK_SCORES / x->nList);
  int i0, i;
  if( nBlock<1 ) nBlock = 1;
  if( nBlock>VEC0_IVF_BLOCK_ROWS ) nBlock = VEC0_IVF_BLOCK_ROWS;
  for(i0=0; i0<nRow; i0+=nBlock){
    int nB = nRow-i0<nBlock ? nRow-i0 : nBlock;
    vsScoreBlockBatch(x->aCent, x->nList, x->nDim, &X[(size_t)i0*(size_t)x->nDim], nB, aScore);
    for(i=0; i<nB; i++){
      aBest[i0+i] = vec0IvfNearestScored(x, eMetric, &aScore[(size_t)i*(size_t)x->nList]);
    }
  }
}

/* The nearest list of one vector: one sgemv over the centroids, or (many lists) their
** codes scored, then the VEC0_IVF_REFINE best again in float32. */
static int vec0IvfNearestOne(const Vec0Ivf *x, int eMetric, const float *a, int *piList){
  float *aScore = sqlite3_malloc64(sizeof(float)*(sqlite3_uint64)x->nList);
  int aBest[VEC0_IVF_REFINE];
  int j, t, nBest = 0, iBest = 0, rc = SQLITE_OK;
  float rBest = 0;
  if( aScore==0 ) return SQLITE_NOMEM;
  if( x->aCentCode==0 ){
    vsScoreBlock(x->aCent, x->nList, x->nDim, a, aScore);
    iBest = vec0IvfNearestScored(x, eMetric, aScore);
  }else{
    rc = vec0IvfCoarse(x, a, aScore);
    /* The VEC0_IVF_REFINE best by code, kept sorted (insertion: few and small). */
    for(j=0; rc==SQLITE_OK && j<x->nList; j++){
      if( nBest==VEC0_IVF_REFINE && !(aScore[j]<aScore[aBest[nBest-1]]) ) continue;
      t = nBest<VEC0_IVF_REFINE ? nBest++ : nBest-1;
      while( t>0 && aScore[aBest[t-1]]>aScore[j] ){ aBest[t] = aBest[t-1]; t--; }
      aBest[t] = j;
    }
    for(t=0; t<nBest; t++){
      const float *c = &x->aCent[(size_t)aBest[t]*(size_t)x->nDim];
      float r = vec0IvfCentroidKey(x, eMetric, aBest[t], vsDotF32(a, c, x->nDim));
      if( t==0 || r<rBest || (r==rBest && aBest[t]<iBest) ){ rBest = r; iBest = aBest[t]; }
    }
  }
  sqlite3_free(aScore);
  *piList = iBest;
  return rc;
}

/* ---- the lists read from the shadow tables ---------------------------------------------- */

/* Prepare zFmt (schema and table name as its two %w) on the storage connection. */
static int vec0IvfPrepare(Vec0Table *p, const char *zFmt, sqlite3_stmt **ppStmt){
  char *zSql = sqlite3_mprintf(zFmt, p->zStoreSchema, p->zName);
  int rc;
  *ppStmt = 0;
  if( zSql==0 ) return SQLITE_NOMEM;
  rc = sqlite3_prepare_v2(p->dbStore, zSql, -1, ppStmt, 0);
  sqlite3_free(zSql);
  return rc;
}

/* The stamp of the stored index: generation and ivf_version. */
static int vec0IvfStamp(Vec0Table *p, sqlite3_int64 *piGen, sqlite3_int64 *piVersion){
  int rc = vec0Generation(p, piGen);
  *piVersion = 0;
  if( rc==SQLITE_OK ) rc = vec0InfoGet(p, "ivf_version", piVersion);
  return rc;
}

/* The statement of T_ivf_assign's layout: eCodes for a table that keeps coded lists'
** codes there, eRowids for one that keeps rowids, else eOld (see VEC0_STMT_IVF_ASSIGN_CODE). */
static int vec0IvfStmt(Vec0Table *p, const Vec0Ivf *x, int eCodes, int eRowids, int eOld,
                       sqlite3_stmt **ppStmt){
  return vec0Stmt(p, x->bCodes ? eCodes : x->bRowids ? eRowids : eOld, ppStmt);
}

/* A list's pack (T_ivf_packs) as a list read meets it: the part last read. */
typedef struct Vec0IvfPack Vec0IvfPack;
struct Vec0IvfPack {
  sqlite3_stmt *pStmt;        /* VEC0_STMT_IVF_PACK, stepped to the part (the caller
                              ** resets it) */
  int iList;                  /* The list */
  sqlite3_int64 iPart;        /* The part read, or -1 */
  const unsigned char *a;     /* Its records, one after another */
  sqlite3_int64 n;            /* How many */
};

/* The record at place iAt of pPack's list (a row of T_ivf_assign's integer code: the
** part above bit 32, the place in it below) into *ppRec, its part read when it is not
** the one read last (a list's rows name their places in order: each part is read once). */
static int vec0IvfPackAt(Vec0Table *p, const Vec0Ivf *x, Vec0IvfPack *pPack,
                         sqlite3_int64 iAt, const unsigned char **ppRec){
  sqlite3_int64 nRec = vec0QuantRecordBytes(&x->cfgCode), nByte;
  sqlite3_int64 iPart = iAt>>VEC0_IVF_PACK_SHIFT, i = iAt & VEC0_IVF_PACK_MASK;
  if( iAt>=0 && iPart!=pPack->iPart ){
    sqlite3_reset(pPack->pStmt);
    pPack->iPart = -1;
    pPack->n = 0;
    sqlite3_bind_int(pPack->pStmt, 1, pPack->iList);
    sqlite3_bind_int64(pPack->pStmt, 2, iPart);
    if( sqlite3_step(pPack->pStmt)==SQLITE_ROW ){
      pPack->a = sqlite3_column_blob(pPack->pStmt, 0);
      nByte = sqlite3_column_bytes(pPack->pStmt, 0);
      if( sqlite3_column_type(pPack->pStmt, 0)!=SQLITE_BLOB || pPack->a==0
       || nByte%nRec!=0 ){
        return vec0IvfCorrupt(p, "a pack of T_ivf_packs is not a whole number of codes");
      }
      pPack->iPart = iPart;
      pPack->n = nByte/nRec;
    }else{
      int rc = sqlite3_reset(pPack->pStmt);
      if( rc!=SQLITE_OK ) return rc;
    }
  }
  if( iAt<0 || iPart!=pPack->iPart || i>=pPack->n ){
    return vec0IvfCorrupt(p, "a row of T_ivf_assign names no code of its list's pack");
  }
  *ppRec = &pPack->a[(size_t)i*(size_t)nRec];
  return SQLITE_OK;
}

/* Slot iSlot of list iList, read from T_ivf_assign with the rowid in column iCol of pStmt
** (NULL unless x->bRowids) and, x->bCodes, the row's code in column iCol+1 (or, an
** integer, its place in the list's pack pPack), into the list in memory. A coded list
** without that code reads the row's vector through r into a and codes it. */
static int vec0IvfAddRead(Vec0Table *p, Vec0Ivf *x, Vec0Reader *r, sqlite3_int64 iSlot,
                          sqlite3_int64 iList, sqlite3_stmt *pStmt, int iCol,
                          Vec0IvfPack *pPack, float *a){
  const unsigned char *pRec = 0;
  int rc = SQLITE_OK;
  if( iSlot<0 || iSlot>=x->nSlot || iList<0 || iList>=x->nList
   || (x->bRowids && sqlite3_column_type(pStmt, iCol)!=SQLITE_INTEGER) ){
    return vec0IvfCorrupt(p, "a row of T_ivf_assign names no slot, no list or no rowid");
  }
  if( x->bCodes && pPack && sqlite3_column_type(pStmt, iCol+1)==SQLITE_INTEGER ){
    rc = vec0IvfPackAt(p, x, pPack, sqlite3_column_int64(pStmt, iCol+1), &pRec);
    if( rc!=SQLITE_OK ) return rc;
  }else if( x->bCodes && sqlite3_column_type(pStmt, iCol+1)!=SQLITE_NULL ){
    /* Any bytes make a code (the record's non-finite floats read as 0); their count
    ** must be the record's. */
    pRec = sqlite3_column_blob(pStmt, iCol+1);
    if( sqlite3_column_type(pStmt, iCol+1)!=SQLITE_BLOB || pRec==0
     || sqlite3_column_bytes(pStmt, iCol+1)!=vec0QuantRecordBytes(&x->cfgCode) ){
      return vec0IvfCorrupt(p, "a code in T_ivf_assign is not a code of the table's lists");
    }
  }else if( x->nCode ){
    /* The vector: from the copy when it is current, else from T_vectors, in slot order
    ** (the order of T_ivf_assign's key within a list, and of its older indexes). */
    rc = vec0ReadVectorWith(p, r, iSlot, a);
  }
  if( rc==SQLITE_OK ){
    rc = vec0IvfListAdd(x, (int)iList, iSlot, sqlite3_column_int64(pStmt, iCol), a, pRec);
  }
  return rc;
}

/* List iList, not read yet, read: its slots (rowids, codes) by T_ivf_assign's key, or its
** index on list, and the codes of its pack. The caller drops the whole index on an error
** (the list may hold part of its rows). */
static int vec0IvfListRead(Vec0Table *p, Vec0Ivf *x, int iList, Vec0Reader *r){
  Vec0IvfList *pL = &x->aList[iList];
  sqlite3_stmt *pStmt = 0;
  Vec0IvfPack pack;
  float *a = sqlite3_malloc64(sizeof(float)*(sqlite3_uint64)p->cfg.nWord);
  int rc = a ? vec0IvfStmt(p, x, VEC0_STMT_IVF_LIST_CODES, VEC0_STMT_IVF_LIST_ROWS,
                           VEC0_STMT_IVF_LIST_SLOTS, &pStmt)
             : SQLITE_NOMEM;
  memset(&pack, 0, sizeof(pack));
  pack.iList = iList;
  pack.iPart = -1;
  pL->bUnread = 0;
  if( rc==SQLITE_OK && x->bCodes && x->bPacks ){
    rc = vec0Stmt(p, VEC0_STMT_IVF_PACK, &pack.pStmt);
  }
  if( rc==SQLITE_OK ){
    sqlite3_bind_int(pStmt, 1, iList);
    while( rc==SQLITE_OK && sqlite3_step(pStmt)==SQLITE_ROW ){
      if( sqlite3_column_type(pStmt, 0)!=SQLITE_INTEGER ){
        rc = vec0IvfCorrupt(p, "a row of T_ivf_assign names no slot, no list or no rowid");
        break;
      }
      rc = vec0IvfAddRead(p, x, r, sqlite3_column_int64(pStmt, 0), iList, pStmt, 1,
                          pack.pStmt ? &pack : 0, a);
    }
    {
      int rc2 = sqlite3_reset(pStmt);
      if( rc==SQLITE_OK ) rc = rc2;
    }
  }
  if( pack.pStmt ){
    int rc2 = sqlite3_reset(pack.pStmt);
    if( rc==SQLITE_OK ) rc = rc2;
  }
  if( rc==SQLITE_OK ) vec0IvfListsFit(x, iList, iList+1);
  sqlite3_free(a);
  return rc;
}

/* Read the centroids and, unless the lists are read when needed (T_info ivf_list_index),
** every slot's list, every value checked before use. */
static int vec0IvfLoad(Vec0Table *p, sqlite3_int64 iGen, sqlite3_int64 iVersion,
                       Vec0Ivf **ppOut){
  sqlite3_int64 nList = 0, nTrained = 0, nTrainedMax = 0, nSlot = 0, iLayout = 0;
  sqlite3_stmt *pStmt = 0;
  Vec0Ivf *x = 0;
  Vec0Reader r;
  float *a = 0;
  int nDim = p->cfg.nDim, i = 0, rc, j;
  *ppOut = 0;
  memset(&r, 0, sizeof(r));
  rc = vec0InfoGet(p, "ivf_lists", &nList);
  if( rc==SQLITE_OK ) rc = vec0InfoGet(p, "ivf_trained_rows", &nTrained);
  if( rc==SQLITE_OK ) rc = vec0InfoGet(p, "ivf_trained_max", &nTrainedMax);
  if( rc==SQLITE_OK ) rc = vec0InfoGet(p, "ivf_list_index", &iLayout);
  if( rc==SQLITE_OK ) rc = vec0NextSlot(p, &nSlot);
  if( rc!=SQLITE_OK ) goto cleanup;
  if( nList<0 || nList>VEC0_IVF_MAX_LISTS || nTrained<0 || nTrainedMax<0
   || nTrainedMax>nTrained ){
    rc = vec0IvfCorrupt(p, "ivf_lists, ivf_trained_rows or ivf_trained_max out of range");
    goto cleanup;
  }
  rc = vec0IvfNew(p, (int)nList, nSlot, &x);
  if( rc!=SQLITE_OK ) goto cleanup;
  x->iGen = iGen;
  x->iVersion = iVersion;
  x->nTrained = nTrained;
  x->nTrainedMax = nTrainedMax;
  x->bLazy = iLayout!=0;
  x->bRowids = iLayout>=VEC0_IVF_LAYOUT_ROWIDS;
  x->bCodes = iLayout>=VEC0_IVF_LAYOUT_CODES && x->nCode>0 && !p->cfg.bIvfNoCodes;
  x->bPacks = iLayout>=VEC0_IVF_LAYOUT;
  if( nList==0 ) goto cleanup;
  rc = vec0IvfPrepare(p, "SELECT list, centroid FROM \"%w\".\"%w_ivf_centroids\" ORDER BY list",
                      &pStmt);
  while( rc==SQLITE_OK && sqlite3_step(pStmt)==SQLITE_ROW ){
    const unsigned char *pBlob = sqlite3_column_blob(pStmt, 1);
    float *c = &x->aCent[(size_t)i*(size_t)nDim];
    if( i>=nList || sqlite3_column_type(pStmt, 0)!=SQLITE_INTEGER
     || sqlite3_column_int64(pStmt, 0)!=i
     || sqlite3_column_bytes(pStmt, 1)!=4*nDim || pBlob==0 ){
      rc = vec0IvfCorrupt(p, "a row of T_ivf_centroids is not the next list's centroid of "
                             "the table's dimensions");
      break;
    }
    vsF32FromLE(pBlob, nDim, c);
    for(j=0; j<nDim; j++){
      if( !isfinite(c[j]) ){ rc = vec0IvfCorrupt(p, "a centroid is not finite"); break; }
    }
    i++;
  }
  if( pStmt ){
    int rc2 = sqlite3_finalize(pStmt);
    if( rc==SQLITE_OK ) rc = rc2;
    pStmt = 0;
  }
  if( rc==SQLITE_OK && i!=nList ){
    rc = vec0IvfCorrupt(p, "T_ivf_centroids holds fewer centroids than ivf_lists");
  }
  if( rc!=SQLITE_OK ) goto cleanup;
  vec0IvfCentroidsDone(x, p->cfg.eMetric);
  if( x->bLazy ){
    /* A query reads the lists it scans: opening a large table costs its centroids. */
    for(j=0; j<x->nList; j++) x->aList[j].bUnread = 1;
    goto cleanup;
  }
  a = sqlite3_malloc64(sizeof(float)*(sqlite3_uint64)p->cfg.nWord);
  if( a==0 ){ rc = SQLITE_NOMEM; goto cleanup; }
  /* The first layout (no index, no rowids): every list at once. */
  rc = vec0IvfPrepare(p, "SELECT slot, list, NULL FROM \"%w\".\"%w_ivf_assign\"", &pStmt);
  while( rc==SQLITE_OK && sqlite3_step(pStmt)==SQLITE_ROW ){
    if( sqlite3_column_type(pStmt, 1)!=SQLITE_INTEGER ){
      rc = vec0IvfCorrupt(p, "a row of T_ivf_assign names no slot, no list or no rowid");
      break;
    }
    rc = vec0IvfAddRead(p, x, &r, sqlite3_column_int64(pStmt, 0),
                        sqlite3_column_int64(pStmt, 1), pStmt, 2, 0, a);
  }
  if( pStmt ){
    int rc2 = sqlite3_finalize(pStmt);
    if( rc==SQLITE_OK ) rc = rc2;
  }
  if( rc==SQLITE_OK ) vec0IvfListsFit(x, 0, x->nList);

cleanup:
  vec0ReaderClose(&r);
  sqlite3_free(a);
  if( rc!=SQLITE_OK ){
    vec0IvfFree(x);
    x = 0;
  }
  *ppOut = x;
  return rc;
}

/* Bring x from its generation to iGen by T_changes: each slot written since is set again
** from T_ivf_assign (its list, its vector's code) or taken out of its list. *pbDone stays 0
** when the log cannot (pruned past x's generation, or marked "reload" by a large
** transaction): the caller reads the whole index instead. Costs a lookup a changed slot,
** where a whole read costs one a row. */
static int vec0IvfCatchUp(Vec0Table *p, Vec0Ivf *x, sqlite3_int64 iGen, int *pbDone){
  sqlite3_stmt *pLog = 0, *pAt = 0;
  sqlite3_int64 iLogFrom = 0, nSlot = 0;
  Vec0Reader r;               /* T_vectors, when the copy is not current */
  float *a = 0;
  int rc, bReload = 0;
  *pbDone = 0;
  memset(&r, 0, sizeof(r));
  if( !p->bChangeLog ) return SQLITE_OK;
  rc = vec0LogFrom(p, &iLogFrom);
  if( rc!=SQLITE_OK || x->iGen<iLogFrom ) return rc;
  rc = vec0NextSlot(p, &nSlot);
  if( rc==SQLITE_OK ) rc = vec0IvfSlotsGrow(x, nSlot);
  if( rc==SQLITE_OK ){
    a = sqlite3_malloc64(sizeof(float)*(sqlite3_uint64)p->cfg.nWord);
    if( a==0 ) rc = SQLITE_NOMEM;
  }
  if( rc==SQLITE_OK ){
    rc = vec0IvfStmt(p, x, VEC0_STMT_IVF_ASSIGN_AT, VEC0_STMT_IVF_ASSIGN_AT,
                     VEC0_STMT_IVF_ASSIGN_GET, &pAt);
  }
  if( rc==SQLITE_OK ) rc = vec0Stmt(p, VEC0_STMT_LOG_RANGE, &pLog);
  if( rc!=SQLITE_OK ) goto cleanup;
  sqlite3_bind_int64(pLog, 1, x->iGen);
  sqlite3_bind_int64(pLog, 2, iGen);
  while( rc==SQLITE_OK && sqlite3_step(pLog)==SQLITE_ROW ){
    sqlite3_int64 iSlot = sqlite3_column_int64(pLog, 0), iList = -1, iRowid = 0;
    int bRowid = 0;
    if( iSlot==VEC0_LOG_TRIMMED ) continue;
    if( iSlot<0 ){ bReload = 1; break; }
    if( iSlot>=nSlot ){
      /* Given back since (vec0StorageTrim): free now, in no list. */
      vec0IvfListRemove(x, iSlot);
      continue;
    }
    sqlite3_bind_int64(pAt, 1, iSlot);
    if( sqlite3_step(pAt)==SQLITE_ROW ){
      iList = sqlite3_column_int64(pAt, 0);
      iRowid = sqlite3_column_int64(pAt, 1);
      bRowid = sqlite3_column_type(pAt, 1)==SQLITE_INTEGER;
    }
    rc = sqlite3_reset(pAt);
    if( rc!=SQLITE_OK ) break;
    if( iList<0 ){
      vec0IvfListRemove(x, iSlot);
    }else if( iList>=x->nList || (x->bRowids && !bRowid) ){
      rc = vec0IvfCorrupt(p, "a row of T_ivf_assign names no list or no rowid");
    }else{
      if( x->nCode ) rc = vec0ReadVectorWith(p, &r, iSlot, a);
      if( rc==SQLITE_OK ) rc = vec0IvfListAdd(x, (int)iList, iSlot, iRowid, a, 0);
    }
  }
  if( pLog ){
    int rc2 = sqlite3_reset(pLog);
    if( rc==SQLITE_OK ) rc = rc2;
  }
  if( rc==SQLITE_OK ) *pbDone = !bReload;

cleanup:
  vec0ReaderClose(&r);
  sqlite3_free(a);
  return rc;
}

/* Make p->pIvf the index as this connection sees the storage now. Lists loaded before
** this transaction's first write (which bumped the generation by one) are still its. */
int vec0IvfReady(Vec0Table *p){
  sqlite3_int64 iGen = 0, iVersion = 0;
  Vec0Ivf *x = p->pIvf;
  int rc;
  /* Inside this connection's write transaction nobody else writes the table, and this
  ** connection's own writes and trainings keep the lists current: no stamp to read. */
  if( x && p->bWriteTx && p->bGenerationBumped && x->iGen==p->iWriteGen ) return SQLITE_OK;
  rc = vec0IvfStamp(p, &iGen, &iVersion);
  if( rc!=SQLITE_OK ) return rc;
  if( x && x->iVersion==iVersion
   && (x->iGen==iGen
       || (p->bGenerationBumped && p->iWriteGen==iGen && x->iGen==iGen-1)) ){
    x->iGen = iGen;
    return SQLITE_OK;
  }
  if( x && x->iVersion==iVersion && x->iGen<iGen && x->nList>0 ){
    /* Other connections committed rows since: replay the slots they changed. */
    int bDone = 0;
    rc = vec0IvfCatchUp(p, x, iGen, &bDone);
    if( rc==SQLITE_OK && bDone ){
      x->iGen = iGen;
      return SQLITE_OK;
    }
  }
  vec0IvfDrop(p);
  if( rc!=SQLITE_OK ) return rc;
  rc = vec0IvfLoad(p, iGen, iVersion, &p->pIvf);
  return rc;
}

/* ---- training ---------------------------------------------------------------------------- */

/* splitmix64: the seeded generator of the initial centroids. Its seed depends on nothing
** but the rows and the declaration, so replicas agree. */
static sqlite3_uint64 vec0IvfRandom(sqlite3_uint64 *pState){
  sqlite3_uint64 z = (*pState += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

typedef struct Vec0IvfRow Vec0IvfRow;
struct Vec0IvfRow {
  sqlite3_int64 iRowid;
  sqlite3_int64 iSlot;
};
static int vec0IvfRowCmp(const void *a, const void *b){
  sqlite3_int64 x = ((const Vec0IvfRow*)a)->iRowid, y = ((const Vec0IvfRow*)b)->iRowid;
  return x<y ? -1 : x>y;
}

/* Every row's rowid and slot, in the order of the key two replicas share: the rowid, or a
** text key's order (its rowid is T_rows' own, given in the order rows arrived, which
** differs from replica to replica). */
static int vec0IvfRows(Vec0Table *p, Vec0IvfRow **paRow, sqlite3_int64 *pnRow){
  sqlite3_stmt *pStmt = 0;
  Vec0IvfRow *a = 0;
  sqlite3_int64 n = 0, nAlloc = 0;
  int bTextKey = vec0HasTextPk(p);
  int rc = vec0Stmt(p, bTextKey ? VEC0_STMT_SLOT_ALL_BY_ID : VEC0_STMT_SLOT_ALL, &pStmt);
  while( rc==SQLITE_OK && sqlite3_step(pStmt)==SQLITE_ROW ){
    if( n>=nAlloc ){
      Vec0IvfRow *aNew;
      nAlloc = nAlloc ? nAlloc*2 : 1024;
      aNew = sqlite3_realloc64(a, sizeof(Vec0IvfRow)*(sqlite3_uint64)nAlloc);
      if( aNew==0 ){ rc = SQLITE_NOMEM; break; }
      a = aNew;
    }
    a[n].iRowid = sqlite3_column_int64(pStmt, 0);
    a[n].iSlot = sqlite3_column_int64(pStmt, 1);
    rc = vec0SlotCheck(p, a[n].iSlot, "a row");
    n++;
  }
  if( pStmt ){
    int rc2 = sqlite3_reset(pStmt);
    if( rc==SQLITE_OK ) rc = rc2;
  }
  if( rc==SQLITE_OK && n>1 && !bTextKey ){
    qsort(a, (size_t)n, sizeof(Vec0IvfRow), vec0IvfRowCmp);
  }
  if( rc!=SQLITE_OK ){
    sqlite3_free(a);
    a = 0;
    n = 0;
  }
  *paRow = a;
  *pnRow = n;
  return rc;
}

/* Rows aRow[iFirst .. iFirst+n-1]'s vectors into X (n rows of nDim), through r when the
** copy does not hold them. */
static int vec0IvfReadRows(Vec0Table *p, Vec0Reader *r, const Vec0IvfRow *aRow,
                           sqlite3_int64 iFirst, int n, float *X){
  int i, rc = SQLITE_OK;
  for(i=0; i<n && rc==SQLITE_OK; i++){
    rc = vec0ReadVectorWith(p, r, aRow[iFirst+i].iSlot, &X[(size_t)i*(size_t)p->cfg.nDim]);
  }
  return rc;
}

/* k-means over the m sample rows of X into x's centroids: seeded choice of nList rows,
** then VEC0_IVF_ITERATIONS rounds of assignment (sgemm) and means. A list left empty takes
** the centroid of the largest, nudged, so that one splits in two. */
static int vec0IvfKmeans(Vec0Table *p, Vec0Ivf *x, float *X, int m){
  int nList = x->nList, nDim = x->nDim, eMetric = p->cfg.eMetric;
  /* One block of ints: each sample row's nearest list, the sample's order, list sizes. */
  int *aBest = sqlite3_malloc64(sizeof(int)*(2*(sqlite3_uint64)m + (sqlite3_uint64)nList));
  int *aIdx = aBest ? &aBest[m] : 0;
  int *aCount = aBest ? &aBest[2*(sqlite3_int64)m] : 0;
  double *aSum = sqlite3_malloc64(sizeof(double)*(sqlite3_uint64)nList*(sqlite3_uint64)nDim);
  float *aScore = sqlite3_malloc64(sizeof(float)*(sqlite3_uint64)VEC0_IVF_BLOCK_SCORES
                                   + sizeof(float)*(sqlite3_uint64)nList);
  sqlite3_uint64 iState = 0x5645435359ULL ^ ((sqlite3_uint64)m<<20) ^ (sqlite3_uint64)nDim
                        ^ ((sqlite3_uint64)nList<<40);
  int rc = SQLITE_OK, i, j, it;

  if( aBest==0 || aSum==0 || aScore==0 ){
    rc = SQLITE_NOMEM;
    goto cleanup;
  }
  if( eMetric==VS_METRIC_COSINE ){
    for(i=0; i<m; i++){
      float *r = &X[(size_t)i*(size_t)nDim];
      float s = vsDotF32(r, r, nDim);
      if( s>0 ){
        s = 1.0f/sqrtf(s);
        for(j=0; j<nDim; j++) r[j] *= s;
      }
    }
  }
  /* The first centroids: nList distinct sample rows, a partial Fisher-Yates shuffle. */
  for(i=0; i<m; i++) aIdx[i] = i;
  for(i=0; i<nList; i++){
    int r = i + (int)(vec0IvfRandom(&iState) % (sqlite3_uint64)(m - i));
    int t = aIdx[i]; aIdx[i] = aIdx[r]; aIdx[r] = t;
    memcpy(&x->aCent[(size_t)i*(size_t)nDim], &X[(size_t)aIdx[i]*(size_t)nDim],
           sizeof(float)*(size_t)nDim);
  }
  vec0IvfCentroidsDone(x, eMetric);
  for(it=0; it<VEC0_IVF_ITERATIONS; it++){
    int iLargest = 0;
    vec0IvfNearest(x, eMetric, X, m, aScore, aBest);
    memset(aCount, 0, sizeof(int)*(size_t)nList);
    memset(aSum, 0, sizeof(double)*(size_t)nList*(size_t)nDim);
    for(i=0; i<m; i++){
      double *s = &aSum[(size_t)aBest[i]*(size_t)nDim];
      const float *r = &X[(size_t)i*(size_t)nDim];
      aCount[aBest[i]]++;
      for(j=0; j<nDim; j++) s[j] += r[j];
    }
    for(i=0; i<nList; i++) if( aCount[i]>aCount[iLargest] ) iLargest = i;
    for(i=0; i<nList; i++){
      float *c = &x->aCent[(size_t)i*(size_t)nDim];
      if( aCount[i]>0 ){
        const double *s = &aSum[(size_t)i*(size_t)nDim];
        for(j=0; j<nDim; j++) c[j] = (float)(s[j]/aCount[i]);
      }else{
        /* Split the largest list: this centroid becomes a nudged copy of its centroid. */
        const float *cL = &x->aCent[(size_t)iLargest*(size_t)nDim];
        for(j=0; j<nDim; j++){
          float e = (vec0IvfRandom(&iState) & 1) ? 1.0f/1024 : -1.0f/1024;
          c[j] = cL[j] + e*(fabsf(cL[j]) + 1e-6f);
        }
        aCount[iLargest] /= 2;
      }
    }
    vec0IvfCentroidsDone(x, eMetric);
  }

cleanup:
  sqlite3_free(aBest);  /* aIdx and aCount with it */
  sqlite3_free(aSum);
  sqlite3_free(aScore);
  return rc;
}

/* Run one statement of SQL text zFmt (schema, table name as its %w). */
static int vec0IvfExec(Vec0Table *p, const char *zFmt){
  char *zSql = sqlite3_mprintf(zFmt, p->zStoreSchema, p->zName);
  int rc;
  if( zSql==0 ) return SQLITE_NOMEM;
  rc = sqlite3_exec(p->dbStore, zSql, 0, 0, 0);
  sqlite3_free(zSql);
  return rc;
}

/* Slot iSlot's row into T_ivf_assign: list iList, rowid iRowid and (x->bCodes, a
** training's rows) its code's record pRec, or its place iPacked in its list's pack
** (vec0IvfPacksWrite); with neither (pRec 0, iPacked -1) the code is NULL, and a list read
** codes the row's vector. *ppStmt is the statement, found at the first call: each caller
** passes a code always or never. */
static int vec0IvfWrite(Vec0Table *p, Vec0Ivf *x, sqlite3_stmt **ppStmt, sqlite3_int64 iSlot,
                        int iList, sqlite3_int64 iRowid, const unsigned char *pRec,
                        sqlite3_int64 iPacked){
  int bCode = x->bCodes && (pRec || iPacked>=0);
  if( *ppStmt==0 ){
    int rc = vec0IvfStmt(p, x, bCode ? VEC0_STMT_IVF_ASSIGN_CODE : VEC0_STMT_IVF_ASSIGN_PUT,
                         VEC0_STMT_IVF_ASSIGN_PUT, VEC0_STMT_IVF_ASSIGN_SET, ppStmt);
    if( rc!=SQLITE_OK ) return rc;
  }
  sqlite3_bind_int64(*ppStmt, 1, iSlot);
  sqlite3_bind_int(*ppStmt, 2, iList);
  if( x->bRowids ) sqlite3_bind_int64(*ppStmt, 3, iRowid);
  if( bCode && pRec ){
    /* Copied: the statement is kept (vec0Stmt) after the block of records is freed. */
    sqlite3_bind_blob(*ppStmt, 4, pRec, vec0QuantRecordBytes(&x->cfgCode),
                      SQLITE_TRANSIENT);
  }else if( bCode ){
    sqlite3_bind_int64(*ppStmt, 4, iPacked);
  }
  sqlite3_step(*ppStmt);
  return sqlite3_reset(*ppStmt);
}

/* A training's row waiting to be written (vec0IvfFlush). */
typedef struct Vec0IvfPending Vec0IvfPending;
struct Vec0IvfPending {
  sqlite3_int64 iSlot, iRowid;
  int iList;
  int iRec;                   /* Its record's place in the block of records, or (lists
                              ** written to T_ivf_packs) its place in its list */
};
static int vec0IvfPendingCmp(const void *a, const void *b){
  const Vec0IvfPending *u = a, *v = b;
  if( u->iList!=v->iList ) return u->iList<v->iList ? -1 : 1;
  return u->iSlot<v->iSlot ? -1 : u->iSlot>v->iSlot;
}

/* Records a part of a pack holds: VEC0_IVF_PACK_BYTES of them, and no more than the
** connection lets a blob hold. */
static sqlite3_int64 vec0IvfPackPerPart(Vec0Table *p, const Vec0Ivf *x){
  sqlite3_int64 nRec = vec0QuantRecordBytes(&x->cfgCode);
  sqlite3_int64 nByte = sqlite3_limit(p->dbStore, SQLITE_LIMIT_LENGTH, -1) - 64;
  if( nByte>VEC0_IVF_PACK_BYTES ) nByte = VEC0_IVF_PACK_BYTES;  /* 64: the row's keys */
  return nByte/nRec>0 ? nByte/nRec : 1;
}

/* Part iPart of list iList's pack: the n records of aRec. */
static int vec0IvfPackPut(Vec0Table *p, const Vec0Ivf *x, int iList, sqlite3_int64 iPart,
                          const unsigned char *aRec, sqlite3_int64 n){
  sqlite3_stmt *pStmt = 0;
  int rc = vec0Stmt(p, VEC0_STMT_IVF_PACK_PUT, &pStmt);
  if( rc!=SQLITE_OK ) return rc;
  sqlite3_bind_int(pStmt, 1, iList);
  sqlite3_bind_int64(pStmt, 2, iPart);
  sqlite3_bind_blob64(pStmt, 3, aRec, (sqlite3_uint64)(n*vec0QuantRecordBytes(&x->cfgCode)),
                      SQLITE_STATIC);
  sqlite3_step(pStmt);
  rc = sqlite3_reset(pStmt);
  sqlite3_clear_bindings(pStmt);
  return rc;
}

/* The n rows of aPend written to T_ivf_assign in (list, slot) order, each with its code:
** none (aRec 0, nPerPart 0); its record of aRec (nPerPart 0); its place in its list's pack
** (nPerPart > 0), which vec0IvfPacksWrite writes later from the lists (aRec 0: iRec is
** the place) or, a lean training's, written here (aRec given): each list's rows of the
** block make a part of its pack, numbered from *piPart on. A list's rows of the block go
** to one place of the table's key, one after another. Written one at a time as they were
** assigned (a row at each list's end by turns), a lean retrain at 1,000,000 x 384 and 1,000
** lists took 24.6-26.4 s; in blocks of 65,536 rows in key order, 22.2-22.4 s, 5.2 s of it
** these writes (the same retrain writing each row's list and rowid alone, without its
** code: 12.5-13.4 s). */
static int vec0IvfFlush(Vec0Table *p, Vec0Ivf *x, sqlite3_stmt **ppStmt,
                        Vec0IvfPending *aPend, int n, const unsigned char *aRec,
                        sqlite3_int64 nPerPart, sqlite3_int64 *piPart){
  int nRec = aRec ? vec0QuantRecordBytes(&x->cfgCode) : 0, i, j, k, rc = SQLITE_OK;
  unsigned char *aPart = 0;       /* A lean training's part, gathered */
  qsort(aPend, (size_t)n, sizeof(Vec0IvfPending), vec0IvfPendingCmp);
  if( aRec && nPerPart>0 ){
    aPart = sqlite3_malloc64((sqlite3_uint64)(n<nPerPart ? n : nPerPart)*(sqlite3_uint64)nRec);
    if( aPart==0 ) return SQLITE_NOMEM;
  }
  for(i=0; i<n && rc==SQLITE_OK; i=j){
    j = i + 1;
    if( aPart==0 ){
      rc = vec0IvfWrite(p, x, ppStmt, aPend[i].iSlot, aPend[i].iList, aPend[i].iRowid,
                        aRec ? &aRec[(size_t)aPend[i].iRec*(size_t)nRec] : 0,
                        nPerPart>0 ? vec0IvfPackPlace(aPend[i].iRec, nPerPart) : -1);
      continue;
    }
    /* Rows i..j-1: this list's rows of the block, at most a part of them. */
    while( j<n && j-i<nPerPart && aPend[j].iList==aPend[i].iList ) j++;
    for(k=i; k<j; k++){
      memcpy(&aPart[(size_t)(k-i)*(size_t)nRec], &aRec[(size_t)aPend[k].iRec*(size_t)nRec],
             (size_t)nRec);
    }
    rc = vec0IvfPackPut(p, x, aPend[i].iList, *piPart, aPart, j-i);
    for(k=i; k<j && rc==SQLITE_OK; k++){
      rc = vec0IvfWrite(p, x, ppStmt, aPend[k].iSlot, aPend[k].iList, aPend[k].iRowid, 0,
                        (*piPart<<VEC0_IVF_PACK_SHIFT) | (sqlite3_int64)(k-i));
    }
    (*piPart)++;
  }
  sqlite3_free(aPart);
  return rc;
}

/* Each coded list in memory, as a training left it, into T_ivf_packs: its codes' records
** in the order of its slots, nPerPart a part, which a row of T_ivf_assign names by its
** place (vec0IvfPackPlace). */
static int vec0IvfPacksWrite(Vec0Table *p, Vec0Ivf *x, sqlite3_int64 nPerPart){
  sqlite3_int64 nRec = vec0QuantRecordBytes(&x->cfgCode), nMax = 0, j, iPart;
  unsigned char *aBuf;
  int i, rc = SQLITE_OK;
  for(i=0; i<x->nList; i++) if( x->aList[i].n>nMax ) nMax = x->aList[i].n;
  if( nMax>nPerPart ) nMax = nPerPart;
  aBuf = sqlite3_malloc64((sqlite3_uint64)(nMax*nRec + 1));
  if( aBuf==0 ) return SQLITE_NOMEM;
  for(i=0; i<x->nList && rc==SQLITE_OK; i++){
    const Vec0IvfList *pL = &x->aList[i];
    for(iPart=0; iPart*nPerPart<pL->n && rc==SQLITE_OK; iPart++){
      sqlite3_int64 iFirst = iPart*nPerPart;
      sqlite3_int64 n = pL->n-iFirst<nPerPart ? pL->n-iFirst : nPerPart;
      for(j=0; j<n; j++){
        vec0QuantRecordWrite(&x->cfgCode, &pL->aCode[(size_t)(iFirst+j)*(size_t)x->nCode],
                             pL->aNorm[iFirst+j], pL->aScale[iFirst+j],
                             &aBuf[(size_t)j*(size_t)nRec]);
      }
      rc = vec0IvfPackPut(p, x, i, iPart, aBuf, n);
    }
  }
  sqlite3_free(aBuf);
  return rc;
}

/* A training's writes, before its rows are assigned: the old centroids and lists deleted,
** x's centroids written, and SQLite's cache raised (*piOld its size before, *pbSet whether
** it was changed) to hold a page at each list's end. The rows then go into T_ivf_assign a
** block at a time (vec0IvfFlush), in slot order from block to block: each one lands at its
** list's end in the key (list, slot) of the table (or, an older layout, at the table's
** end and its list's end in the index). One page a list is written to at once, more than
** SQLite's default cache of 2 MB holds from about 250 lists. At 1,000,000 rows and 1,000
** lists this took an older layout's retrain from 23.5 to 14.7 s (in list order and the
** default cache, the table's pages were written in random order). */
static int vec0IvfStoreBegin(Vec0Table *p, Vec0Ivf *x, sqlite3_int64 *piOld, int *pbSet){
  sqlite3_stmt *pStmt = 0;
  unsigned char *pBlob = sqlite3_malloc64(4*(sqlite3_uint64)x->nDim + 1);
  sqlite3_int64 nPage = 0, nWant = 2*(sqlite3_int64)x->nList + 2048;
  int rc = pBlob ? SQLITE_OK : SQLITE_NOMEM, i;
  *pbSet = 0;
  if( rc==SQLITE_OK ) rc = vec0IvfExec(p, "DELETE FROM \"%w\".\"%w_ivf_centroids\"");
  if( rc==SQLITE_OK ) rc = vec0IvfExec(p, "DELETE FROM \"%w\".\"%w_ivf_assign\"");
  if( rc==SQLITE_OK && x->bPacks ){
    rc = vec0IvfExec(p, "DELETE FROM \"%w\".\"%w_ivf_packs\"");
  }
  if( rc==SQLITE_OK ){
    rc = vec0IvfPrepare(p, "INSERT INTO \"%w\".\"%w_ivf_centroids\"(list, centroid) "
                           "VALUES(?1, ?2)", &pStmt);
  }
  for(i=0; rc==SQLITE_OK && i<x->nList; i++){
    vsF32ToLE(&x->aCent[(size_t)i*(size_t)x->nDim], x->nDim, pBlob);
    sqlite3_bind_int(pStmt, 1, i);
    sqlite3_bind_blob(pStmt, 2, pBlob, 4*x->nDim, SQLITE_STATIC);
    sqlite3_step(pStmt);
    rc = sqlite3_reset(pStmt);
  }
  sqlite3_finalize(pStmt);
  sqlite3_free(pBlob);
  if( rc==SQLITE_OK ) rc = vsPragma(p->dbStore, p->zStoreSchema, "cache_size", piOld, 0);
  if( rc==SQLITE_OK ) rc = vsPragma(p->dbStore, p->zStoreSchema, "page_size", &nPage, 0);
  if( rc==SQLITE_OK && nPage>0 ){
    /* cache_size: pages, or -KiB. */
    *pbSet = (*piOld>=0 ? *piOld : (-*piOld*1024)/nPage) < nWant;
  }
  if( rc==SQLITE_OK && *pbSet ){
    rc = vsPragma(p->dbStore, p->zStoreSchema, "cache_size", &nWant, 1);
    if( rc!=SQLITE_OK ) *pbSet = 0;
  }
  return rc;
}

/* A training's writes, after its rows: the cache set back (bSet), and (rc SQLITE_OK)
** T_info's keys of the index written. */
static int vec0IvfStoreEnd(Vec0Table *p, Vec0Ivf *x, sqlite3_int64 iOld, int bSet, int rc){
  sqlite3_int64 iVersion = 0;
  if( bSet ){
    int rc2 = vsPragma(p->dbStore, p->zStoreSchema, "cache_size", &iOld, 1);
    if( rc==SQLITE_OK ) rc = rc2;
  }
  /* A new version, never a count: a retrain rolled back with an outer transaction leaves
  ** this connection's lists stamped with a version the file never kept, which a later
  ** retrain elsewhere must not reach again. */
  while( iVersion<=0 ){
    sqlite3_randomness(sizeof(iVersion), &iVersion);
    iVersion &= 0x7fffffffffffffffLL;
  }
  if( rc==SQLITE_OK ) rc = vec0InfoSet(p, "ivf_version", iVersion);
  if( rc==SQLITE_OK ) rc = vec0InfoSet(p, "ivf_lists", x->nList);
  if( rc==SQLITE_OK ) rc = vec0InfoSet(p, "ivf_trained_rows", x->nTrained);
  if( rc==SQLITE_OK ) rc = vec0InfoSet(p, "ivf_trained_max", x->nTrainedMax);
  if( rc==SQLITE_OK ) x->iVersion = iVersion;
  return rc;
}

static int vec0IvfSlotCmp(const void *a, const void *b){
  sqlite3_int64 x = ((const Vec0IvfRow*)a)->iSlot, y = ((const Vec0IvfRow*)b)->iSlot;
  return x<y ? -1 : x>y;
}

/* Train the index on the table's rows now: centroids (nList of them, or the declaration's
** nlist, or about sqrt(rows)), every row's list, stored; p->pIvf becomes it. The caller
** holds a savepoint or a statement: a failure leaves the storage as it was. */
int vec0IvfTrain(Vec0Table *p, int nListWant){
  Vec0IvfRow *aRow = 0;
  sqlite3_int64 n = 0, m, i, nSlot = 0, iGen = 0, iVersion = 0, iLayout = 0, iOldCache = 0;
  sqlite3_stmt *pWrite = 0;
  Vec0IvfPending *aPend = 0;      /* Rows assigned, not written yet (nPend of nPendMax) */
  unsigned char *aPendRec = 0;    /* ... their records (nRec bytes each, x->bCodes) */
  int nPend = 0, nPendMax = 0, nRec = 0;
  sqlite3_int64 nPerPart = 0;     /* Codes written to T_ivf_packs: records a part */
  sqlite3_int64 iPart = 0;        /* ... a lean training's next part */
  int bPackAtEnd = 0;             /* ... from the lists in memory, once all are assigned */
  Vec0Ivf *x = 0;
  Vec0Reader r;
  float *X = 0, *aScore = 0;
  int *aBest = 0;
  sqlite3_int64 *aCount = 0;      /* Rows assigned to each list */
  int nDim = p->cfg.nDim, nList, rc, bLean, bCacheSet = 0;

  memset(&r, 0, sizeof(r));
  vec0IvfDrop(p);
  rc = vec0IvfRows(p, &aRow, &n);
  if( rc==SQLITE_OK ) rc = vec0NextSlot(p, &nSlot);
  if( rc==SQLITE_OK ) rc = vec0IvfStamp(p, &iGen, &iVersion);
  if( rc==SQLITE_OK ) rc = vec0InfoGet(p, "ivf_list_index", &iLayout);
  if( rc!=SQLITE_OK ) goto cleanup;
  nList = nListWant>0 ? nListWant : p->cfg.nIvfList;
  if( nList<=0 ) nList = (int)(sqrt((double)n) + 0.5);
  if( nList>VEC0_IVF_MAX_LISTS ) nList = VEC0_IVF_MAX_LISTS;
  if( nList>n ) nList = (int)n;
  rc = vec0IvfNew(p, nList, nSlot, &x);
  if( rc!=SQLITE_OK ) goto cleanup;
  x->nTrained = n;
  x->iGen = iGen;
  x->bLazy = iLayout!=0;
  x->bRowids = iLayout>=VEC0_IVF_LAYOUT_ROWIDS;
  x->bCodes = iLayout>=VEC0_IVF_LAYOUT_CODES && x->nCode>0 && !p->cfg.bIvfNoCodes;
  x->bPacks = iLayout>=VEC0_IVF_LAYOUT;
  /* Under a memory budget, lists that can be read again keep nothing while training
  ** (T_ivf_assign stores every row as it is assigned), and are read when queries scan
  ** them: at 10,000,000 x 384 the codes of every list are 3.7 GiB. */
  bLean = x->bLazy && vec0MemoryBudget(-1)>0;
  /* Lists held in memory write their codes to T_ivf_packs once every row is assigned, a
  ** list's in one blob; a lean training, which holds no list whole, writes a part of each
  ** list's pack a block of rows (VEC0_IVF_PENDING_PACK_BYTES: at 10,000,000 x 384 and
  ** 3,162 lists about 105 codes a part, and the packs took 1.4% more pages than their
  ** codes' bytes; blocks of 65,536 rows, 21 codes a part, 5.7% more). */
  if( x->bCodes && x->bPacks ){
    nPerPart = vec0IvfPackPerPart(p, x);
    bPackAtEnd = !bLean;
  }
  if( nList>0 ){
    /* The sample: m rows spread evenly over the rows in rowid order. */
    m = (sqlite3_int64)VEC0_IVF_SAMPLE_PER_LIST*nList;
    if( m>n ) m = n;
    if( m*4*nDim>VEC0_IVF_MAX_SAMPLE_BYTES ) m = VEC0_IVF_MAX_SAMPLE_BYTES/(4*nDim);
    if( m<nList ) m = nList;                    /* at most 65536 rows: bounded */
    X = sqlite3_malloc64(sizeof(float)*(sqlite3_uint64)m*(sqlite3_uint64)nDim);
    if( X==0 ){ rc = SQLITE_NOMEM; goto cleanup; }
    for(i=0; i<m && rc==SQLITE_OK; i++){
      rc = vec0ReadVectorWith(p, &r, aRow[(i*n)/m].iSlot, &X[(size_t)i*(size_t)nDim]);
    }
    if( rc==SQLITE_OK ) rc = vec0IvfKmeans(p, x, X, (int)m);
    sqlite3_free(X);
    X = 0;
    if( rc!=SQLITE_OK ) goto cleanup;
    /* Every row into the list of its nearest centroid, a block at a time, in slot order:
    ** T_vectors is read in its order, and T_ivf_assign written in the order above. */
    for(i=1; i<n && aRow[i-1].iSlot<aRow[i].iSlot; i++){}
    if( i<n ) qsort(aRow, (size_t)n, sizeof(Vec0IvfRow), vec0IvfSlotCmp);
    X = sqlite3_malloc64(sizeof(float)*(sqlite3_uint64)VEC0_IVF_BLOCK_ROWS*(sqlite3_uint64)nDim);
    aScore = sqlite3_malloc64(sizeof(float)*(sqlite3_uint64)VEC0_IVF_BLOCK_SCORES
                              + sizeof(float)*(sqlite3_uint64)nList);
    aBest = sqlite3_malloc64(sizeof(int)*VEC0_IVF_BLOCK_ROWS);
    aCount = sqlite3_malloc64(sizeof(sqlite3_int64)*(sqlite3_uint64)nList);
    if( X==0 || aScore==0 || aBest==0 || aCount==0 ){ rc = SQLITE_NOMEM; goto cleanup; }
    memset(aCount, 0, sizeof(sqlite3_int64)*(size_t)nList);
  }
  if( nList>0 ){
    /* Room for a block of rows waiting to be written: VEC0_IVF_PENDING_BYTES of records,
    ** and at least a block of assigned rows. */
    nRec = x->bCodes && !bPackAtEnd ? vec0QuantRecordBytes(&x->cfgCode) : 0;
    nPendMax = nRec>0 ? (int)(VEC0_IVF_PENDING_BYTES/nRec) : VEC0_IVF_PENDING_ROWS;
    if( nPendMax>VEC0_IVF_PENDING_ROWS ) nPendMax = VEC0_IVF_PENDING_ROWS;
    if( nRec>0 && nPerPart>0 ) nPendMax = (int)(VEC0_IVF_PENDING_PACK_BYTES/nRec);
    if( nPendMax<VEC0_IVF_BLOCK_ROWS ) nPendMax = VEC0_IVF_BLOCK_ROWS;
    aPend = sqlite3_malloc64(sizeof(Vec0IvfPending)*(sqlite3_uint64)nPendMax);
    if( nRec>0 ) aPendRec = sqlite3_malloc64((sqlite3_uint64)nRec*(sqlite3_uint64)nPendMax);
    if( aPend==0 || (nRec>0 && aPendRec==0) ){ rc = SQLITE_NOMEM; goto cleanup; }
  }
  rc = vec0IvfStoreBegin(p, x, &iOldCache, &bCacheSet);
  for(i=0; i<n && nList>0 && rc==SQLITE_OK; i+=VEC0_IVF_BLOCK_ROWS){
    int nB = n-i<VEC0_IVF_BLOCK_ROWS ? (int)(n-i) : VEC0_IVF_BLOCK_ROWS, j;
    rc = vec0IvfReadRows(p, &r, aRow, i, nB, X);
    if( rc!=SQLITE_OK ) break;
    vec0IvfNearest(x, p->cfg.eMetric, X, nB, aScore, aBest);
    if( nPend+nB>nPendMax ){
      rc = vec0IvfFlush(p, x, &pWrite, aPend, nPend, aPendRec, nPerPart, &iPart);
      nPend = 0;
    }
    for(j=0; j<nB && rc==SQLITE_OK; j++){
      Vec0IvfPending *pP = &aPend[nPend];
      unsigned char *pRec = nRec>0 ? &aPendRec[(size_t)nPend*(size_t)nRec] : 0;
      const float *a = &X[(size_t)j*(size_t)nDim];
      pP->iSlot = aRow[i+j].iSlot;
      pP->iRowid = aRow[i+j].iRowid;
      pP->iList = aBest[j];
      pP->iRec = nPend++;
      if( ++aCount[aBest[j]]>x->nTrainedMax ) x->nTrainedMax = aCount[aBest[j]];
      if( pRec ) vec0QuantRecord(&x->cfgCode, a, pRec);
      if( !bLean ) rc = vec0IvfListAdd(x, pP->iList, pP->iSlot, pP->iRowid, a, pRec);
      if( bPackAtEnd ) pP->iRec = x->aPos[pP->iSlot];     /* its place in its list's pack */
    }
  }
  if( rc==SQLITE_OK && nPend>0 ){
    rc = vec0IvfFlush(p, x, &pWrite, aPend, nPend, aPendRec, nPerPart, &iPart);
  }
  if( rc==SQLITE_OK && bPackAtEnd ) rc = vec0IvfPacksWrite(p, x, nPerPart);
  vec0ReaderClose(&r);
  rc = vec0IvfStoreEnd(p, x, iOldCache, bCacheSet, rc);
  if( rc==SQLITE_OK ) vec0IvfListsFit(x, 0, x->nList);
  if( rc==SQLITE_OK && bLean ){
    /* Stored: every list is read when a query needs it. */
    for(i=0; i<x->nList; i++) x->aList[i].bUnread = 1;
  }
  if( rc==SQLITE_OK ){
    p->pIvf = x;
    x = 0;
  }

cleanup:
  vec0ReaderClose(&r);
  vec0IvfFree(x);
  sqlite3_free(aRow);
  sqlite3_free(X);
  sqlite3_free(aScore);
  sqlite3_free(aBest);
  sqlite3_free(aCount);
  sqlite3_free(aPend);
  sqlite3_free(aPendRec);
  return rc;
}

/* ---- writes ------------------------------------------------------------------------------ */

/* Rows of the table: next_slot less the free slots below it. */
static int vec0IvfRowCount(Vec0Table *p, sqlite3_int64 *pnRow){
  sqlite3_int64 nSlot = 0, nFree = 0;
  sqlite3_stmt *pStmt = 0;
  int rc = vec0NextSlot(p, &nSlot);
  if( rc==SQLITE_OK ) rc = vec0Stmt(p, VEC0_STMT_FREE_COUNT, &pStmt);
  if( rc==SQLITE_OK ){
    sqlite3_bind_int64(pStmt, 1, 0);
    sqlite3_bind_int64(pStmt, 2, nSlot);
    if( sqlite3_step(pStmt)==SQLITE_ROW ) nFree = sqlite3_column_int64(pStmt, 0);
    rc = sqlite3_reset(pStmt);
  }
  *pnRow = nSlot - nFree;
  return rc;
}

/* After a statement run on the storage connection: SQLite may have rolled back the
** statement's savepoint while it ran (an interrupt, a full disk), and the rollback drops
** the lists (vec0RollbackTo). The write is then refused, never applied to lists that are
** gone. */
static int vec0IvfAfterWrite(Vec0Table *p, int rc){
  if( rc==SQLITE_OK && p->pIvf==0 ){
    vec0SetError(p, "vec0 \"%s\": the ivf index was rolled back while a write updated it",
                 p->zName);
    rc = SQLITE_ABORT;
  }
  return rc;
}

/* Row iRowid's new rowid into T_ivf_assign and its list in memory: an UPDATE of the key
** that kept the vector. */
static int vec0IvfPutRowid(Vec0Table *p, sqlite3_int64 iSlot, sqlite3_int64 iRowid){
  Vec0Ivf *x = p->pIvf;
  sqlite3_stmt *pStmt = 0;
  int rc;
  if( !x->bRowids || x->nList==0 ) return SQLITE_OK;
  rc = vec0Stmt(p, VEC0_STMT_IVF_ASSIGN_ROWID, &pStmt);
  if( rc==SQLITE_OK ){
    sqlite3_bind_int64(pStmt, 1, iSlot);
    sqlite3_bind_int64(pStmt, 2, iRowid);
    sqlite3_step(pStmt);
    rc = vec0IvfAfterWrite(p, sqlite3_reset(pStmt));
  }
  if( rc==SQLITE_OK && iSlot<x->nSlot && x->aListOf[iSlot]>=0 ){
    x->aList[x->aListOf[iSlot]].aRowid[x->aPos[iSlot]] = iRowid;
  }
  return rc;
}

int vec0IvfPut(Vec0Table *p, sqlite3_int64 iSlot, sqlite3_int64 iRowid, const float *a){
  sqlite3_stmt *pStmt = 0;
  int rc, iList = 0;
  if( !p->cfg.bIvf ) return SQLITE_OK;
  rc = vec0IvfReady(p);
  if( rc!=SQLITE_OK ) return rc;
  if( a==0 ){
    rc = vec0IvfPutRowid(p, iSlot, iRowid);
    if( rc!=SQLITE_OK ) vec0IvfDrop(p);
    return rc;
  }
  if( p->pIvf->nList==0 ){
    /* Not trained: the insert that brings the table to VEC0_IVF_TRAIN_ROWS rows trains it
    ** (this row included: it is in T_rows already). */
    sqlite3_int64 nRow = 0;
    rc = vec0IvfRowCount(p, &nRow);
    if( rc==SQLITE_OK && nRow>=VEC0_IVF_TRAIN_ROWS && p->pIvf->nTrained==0 ){
      rc = vec0IvfTrain(p, 0);
    }
    return rc;
  }
  /* The row's code is not written: its list's next read codes the vector. A code of
  ** 776 bytes (768 dimensions) in each write halved the inserts into a trained index at
  ** 100,000 x 768 (12,928 to 6,250 rows/s, 1,000-row transactions); the next training
  ** writes every row's code, in the table's key order. */
  rc = vec0IvfNearestOne(p->pIvf, p->cfg.eMetric, a, &iList);
  if( rc==SQLITE_OK ) rc = vec0IvfSlotsGrow(p->pIvf, iSlot+1);
  if( rc==SQLITE_OK ) rc = vec0IvfWrite(p, p->pIvf, &pStmt, iSlot, iList, iRowid, 0, -1);
  if( rc==SQLITE_OK ) rc = vec0IvfAfterWrite(p, rc);
  if( rc==SQLITE_OK ) rc = vec0IvfListAdd(p->pIvf, iList, iSlot, iRowid, a, 0);
  if( rc!=SQLITE_OK ) vec0IvfDrop(p);
  return rc;
}

int vec0IvfRemove(Vec0Table *p, sqlite3_int64 iSlot){
  int rc;
  if( !p->cfg.bIvf ) return SQLITE_OK;
  rc = vec0IvfReady(p);
  if( rc==SQLITE_OK ) rc = vec0IvfAfterWrite(p, vec0StmtRun(p, VEC0_STMT_IVF_ASSIGN_DEL, iSlot));
  if( rc==SQLITE_OK ) vec0IvfListRemove(p->pIvf, iSlot);
  else vec0IvfDrop(p);
  return rc;
}

/* ---- search ------------------------------------------------------------------------------ */

typedef struct Vec0IvfOrder Vec0IvfOrder;
struct Vec0IvfOrder {
  float r;                    /* How far the list's centroid is (smaller: nearer) */
  int iList;
};
static int vec0IvfOrderCmp(const void *a, const void *b){
  const Vec0IvfOrder *x = a, *y = b;
  if( x->r<y->r ) return -1;
  if( x->r>y->r ) return 1;
  return x->iList - y->iList;
}

/* Sift a[j] down the max-heap a[0..m) (vec0IvfOrderCmp's order: the root the farthest). */
static void vec0IvfOrderSift(Vec0IvfOrder *a, int m, int j){
  for(;;){
    int l = 2*j+1, b = j;
    Vec0IvfOrder t;
    if( l<m && vec0IvfOrderCmp(&a[l], &a[b])>0 ) b = l;
    if( l+1<m && vec0IvfOrderCmp(&a[l+1], &a[b])>0 ) b = l+1;
    if( b==j ) return;
    t = a[j]; a[j] = a[b]; a[b] = t;
    j = b;
  }
}

/* The m first of a[0..n) in vec0IvfOrderCmp's order moved to the front, sorted; the rest
** follow in no order. A query needs its nprobe + VEC0_IVF_REFINE nearest lists in order,
** rarely more: a max-heap of m finds them in O(n log m) instead of sorting all n. */
static void vec0IvfOrderFirst(Vec0IvfOrder *a, int n, int m){
  int i;
  if( m>n ) m = n;
  if( m<=0 ) return;
  if( (sqlite3_int64)m*8>=n ){
    qsort(a, (size_t)n, sizeof(Vec0IvfOrder), vec0IvfOrderCmp);
    return;
  }
  for(i=m/2-1; i>=0; i--) vec0IvfOrderSift(a, m, i);
  for(i=m; i<n; i++){
    if( vec0IvfOrderCmp(&a[i], &a[0])<0 ){
      Vec0IvfOrder t = a[0];
      a[0] = a[i];
      a[i] = t;
      vec0IvfOrderSift(a, m, 0);
    }
  }
  qsort(a, (size_t)m, sizeof(Vec0IvfOrder), vec0IvfOrderCmp);
}

/* The lists in the order a query probes them, nearest centroid first: the first
** *pnSorted in order, the rest after them in no order (the caller sorts them if it goes
** that far). *paOrder is sqlite3_malloc'ed (nList entries). */
static int vec0IvfProbeOrder(Vec0Table *p, const float *q, int nProbe,
                             Vec0IvfOrder **paOrder, int *pnSorted){
  const Vec0Ivf *x = p->pIvf;
  Vec0IvfOrder *aOrder = sqlite3_malloc64(sizeof(Vec0IvfOrder)*(sqlite3_uint64)x->nList);
  float *aScore = sqlite3_malloc64(sizeof(float)*(sqlite3_uint64)x->nList);
  int i, rc = SQLITE_OK, nSorted = x->nList;
  if( aOrder==0 || aScore==0 ){
    sqlite3_free(aOrder);
    aOrder = 0;
    rc = SQLITE_NOMEM;
  }else if( x->aCentCode==0 ){
    vsScoreBlock(x->aCent, x->nList, x->nDim, q, aScore);
    for(i=0; i<x->nList; i++){
      aOrder[i].iList = i;
      aOrder[i].r = vec0IvfCentroidKey(x, p->cfg.eMetric, i, aScore[i]);
    }
    qsort(aOrder, (size_t)x->nList, sizeof(Vec0IvfOrder), vec0IvfOrderCmp);
  }else{
    /* By code, then the first nProbe + VEC0_IVF_REFINE again in float32: the lists a
    ** query scans are in the order of their exact centroid distance. */
    int nRefine = nProbe>x->nList-VEC0_IVF_REFINE ? x->nList : nProbe + VEC0_IVF_REFINE;
    rc = vec0IvfCoarse(x, q, aScore);
    for(i=0; rc==SQLITE_OK && i<x->nList; i++){
      aOrder[i].iList = i;
      aOrder[i].r = aScore[i];
    }
    if( rc==SQLITE_OK ){
      vec0IvfOrderFirst(aOrder, x->nList, nRefine);
      for(i=0; i<nRefine; i++){
        const float *c = &x->aCent[(size_t)aOrder[i].iList*(size_t)x->nDim];
        aOrder[i].r = vec0IvfCentroidKey(x, p->cfg.eMetric, aOrder[i].iList,
                                         vsDotF32(q, c, x->nDim));
      }
      qsort(aOrder, (size_t)nRefine, sizeof(Vec0IvfOrder), vec0IvfOrderCmp);
      nSorted = nRefine;
    }else{
      sqlite3_free(aOrder);
      aOrder = 0;
    }
  }
  sqlite3_free(aScore);
  *paOrder = aOrder;
  *pnSorted = nSorted;
  return rc;
}

/* Whether slot iSlot holds a row that passes the query's filters, by the copy v (NULL: no
** copy, no row found). */
static const Vec0Chunk *vec0IvfLiveChunk(const Vec0Table *p, const Vec0Snapshot *v,
                                         sqlite3_int64 iSlot, const unsigned char *aMask){
  const Vec0Chunk *c;
  if( v==0 || iSlot<0 || iSlot>=v->nSlot || (aMask && !aMask[iSlot]) ) return 0;
  c = v->apChunk[iSlot/p->cfg.nChunk];
  if( c==0 || !c->aLive[iSlot%p->cfg.nChunk] ) return 0;
  return c;
}

/* A candidate's float32 vector: the copy v's, or (no copy, or one over the memory budget,
** which holds no vectors) read from T_vectors through r into aBuf. NULL, and *pRc set, on
** an error. */
static const float *vec0IvfVector(Vec0Table *p, const Vec0Snapshot *v, Vec0Reader *r,
                                  sqlite3_int64 iSlot, float *aBuf, int *pRc){
  const Vec0Chunk *c = vec0IvfLiveChunk(p, v, iSlot, 0);
  if( c && c->aVec ) return c->aVec + (size_t)(iSlot%p->cfg.nChunk)*(size_t)p->cfg.nWord;
  *pRc = vec0ReaderRead(p, r, iSlot, aBuf);
  return *pRc==SQLITE_OK ? aBuf : 0;
}

/* The approximate search itself, the index trained (vec0IvfUsable): the lists in probe
** order, nProbe of them and then more while fewer than k rows passed the filters (aMask);
** each row ranked by its code (coded lists: the best k*oversample kept) or by its float32
** vector; the kept candidates re-scored from the float32 vectors (the copy's, or read
** from T_vectors) in double precision, as the exact scan orders them. v: the copy, current,
** or NULL when the lists hold rowids and the query needs none (vec0CacheSkip). */
static int vec0IvfScan(Vec0Table *p, const Vec0Snapshot *v, const float *q, sqlite3_int64 k,
                       int nProbe, const unsigned char *aMask, VsTopK *pTop){
  Vec0Ivf *x = p->pIvf;
  Vec0IvfOrder *aOrder = 0;
  Vec0QuantQuery qq;
  Vec0Reader r;
  float *aDist = 0, *aVec = 0;
  double *aExact = 0;             /* Streamed copy: candidates' exact distances ... */
  sqlite3_int64 *aExactSlot = 0;  /* ... and their slots (in aExact's block) */
  float qNorm = vsNormF32(q, p->cfg.nDim);
  int nChunk = p->cfg.nChunk, nWord = p->cfg.nWord, nDim = p->cfg.nDim;
  sqlite3_int64 nKeep, nLive = 0;
  int rc = SQLITE_OK, i, j, nDistAlloc = 0, nSorted = 0, nExact = 0;

  memset(&qq, 0, sizeof(qq));
  memset(&r, 0, sizeof(r));
  /* Without the copy (the lists hold rowids) the rows are counted from the storage. */
  if( v ) nLive = v->nLive;
  else rc = vec0IvfRowCount(p, &nLive);
  if( rc!=SQLITE_OK ) return rc;
  /* k may be any int64: no more than the rows, so k*oversample cannot overflow. */
  if( k>nLive ) k = nLive>0 ? nLive : 1;
  nKeep = k + VEC0_IVF_EXTRA;
  if( x->nCode ) nKeep = k*x->cfgCode.nIvfOversample;
  rc = vsTopKInit(pTop, nKeep, nLive);
  if( rc==SQLITE_OK ) rc = vec0IvfProbeOrder(p, q, nProbe, &aOrder, &nSorted);
  if( rc==SQLITE_OK ){
    aVec = sqlite3_malloc64(sizeof(float)*(sqlite3_uint64)nWord);
    if( aVec==0 ) rc = SQLITE_NOMEM;
  }
  if( rc==SQLITE_OK && x->nCode ) rc = vec0QuantQueryInit(&x->cfgCode, q, &qq);
  if( rc!=SQLITE_OK ) goto cleanup;
  vec0IvfFitBudget(x, -1);          /* the budget may have been lowered, writes grow lists */
  for(i=0; i<x->nList; i++){
    Vec0IvfList *pL;
    /* Until k rows passed the filters the heap is not full (it holds nKeep >= k): every
    ** row that passed is in it. */
    if( i>=nProbe && pTop->n>=k ) break;
    if( i==nSorted ){
      qsort(&aOrder[i], (size_t)(x->nList-i), sizeof(Vec0IvfOrder), vec0IvfOrderCmp);
      nSorted = x->nList;
    }
    pL = &x->aList[aOrder[i].iList];
    pL->iUsed = ++x->iTick;
    if( pL->bUnread ){
      rc = vec0IvfListRead(p, x, aOrder[i].iList, &r);
      if( rc!=SQLITE_OK ) goto cleanup;
      /* Lists scanned before in this query may go: their candidates are in the heap by
      ** slot, and re-scored from the copy or T_vectors, not from the lists. */
      vec0IvfFitBudget(x, aOrder[i].iList);
    }
    if( x->nCode ){
      double rBound = vsTopKBound(pTop);
      if( pL->n>nDistAlloc ){
        sqlite3_free(aDist);
        nDistAlloc = pL->n;
        aDist = sqlite3_malloc64(sizeof(float)*(sqlite3_uint64)nDistAlloc);
        if( aDist==0 ){ rc = SQLITE_NOMEM; goto cleanup; }
      }
      vec0QuantScore(&qq, pL->aCode, pL->aScale, pL->aNorm, pL->n, aDist);
      for(j=0; j<pL->n; j++){
        sqlite3_int64 iSlot = pL->aSlot[j], iRowid;
        /* A row the heap would refuse is not looked up: its chunk's flags and rowid
        ** are a cache miss each, most of a query's time when read for every row. */
        if( aDist[j]>rBound ) continue;
        if( pL->aRowid ){
          /* A list that holds rowids holds live rows only (a delete takes its row out). */
          if( aMask && (iSlot>=v->nSlot || !aMask[iSlot]) ) continue;
          iRowid = pL->aRowid[j];
        }else{
          const Vec0Chunk *c = vec0IvfLiveChunk(p, v, iSlot, aMask);
          if( c==0 ) continue;
          iRowid = c->aRowid[iSlot%nChunk];
        }
        vsTopKPush(pTop, aDist[j], iRowid, iSlot);
        rBound = vsTopKBound(pTop);
      }
    }else{
      for(j=0; j<pL->n; j++){
        sqlite3_int64 iSlot = pL->aSlot[j];
        const Vec0Chunk *c = vec0IvfLiveChunk(p, v, iSlot, aMask);
        int iIn = (int)(iSlot%nChunk);
        float s;
        if( c==0 ) continue;
        s = vsDotF32(q, &c->aVec[(size_t)iIn*(size_t)nWord], nDim);
        vsTopKPush(pTop, vsScoreDistance(p->cfg.eMetric, s, qNorm, c->aNorm[iIn]),
                   c->aRowid[iIn], iSlot);
      }
    }
  }
  if( x->nCode ){
    /* The coded candidates ranked by float32 key, as the exact scan ranks rows; the best
    ** k + VEC0_IVF_EXTRA go on to the exact distance. A vector read from T_vectors gets
    ** its exact distance now, so that it is read once. */
    if( v==0 || v->bStreamed ){
      aExact = sqlite3_malloc64((sizeof(double) + sizeof(sqlite3_int64))*(sqlite3_uint64)pTop->n
                                + 1);
      if( aExact==0 ){ rc = SQLITE_NOMEM; goto cleanup; }
      aExactSlot = (sqlite3_int64*)&aExact[pTop->n];
    }
    for(i=0; i<pTop->n && rc==SQLITE_OK; i++){
      sqlite3_int64 iSlot = pTop->a[i].iSlot;
      const Vec0Chunk *c = vec0IvfLiveChunk(p, v, iSlot, 0);
      const float *f = vec0IvfVector(p, v, &r, iSlot, aVec, &rc);
      if( f ){
        float rNorm = c && c->aNorm ? c->aNorm[iSlot%nChunk] : vsNormF32(f, nDim);
        pTop->a[i].rDist = vsScoreDistance(p->cfg.eMetric, vsDotF32(q, f, nDim), qNorm, rNorm);
        if( aExact ){
          aExactSlot[nExact] = iSlot;
          aExact[nExact++] = vsDistanceF32(p->cfg.eMetric, q, f, nDim);
        }
      }
    }
    if( rc!=SQLITE_OK ) goto cleanup;
    vsTopKSort(pTop);
    if( pTop->n>k + VEC0_IVF_EXTRA ) pTop->n = (int)(k + VEC0_IVF_EXTRA);
  }
  for(i=0; i<pTop->n && rc==SQLITE_OK; i++){
    const float *f;
    /* A row with no direction (an all-zero vector under cosine) stays last, NULL. */
    if( pTop->a[i].rDist==VS_NO_DIRECTION ) continue;
    if( aExact ){
      for(j=0; j<nExact && aExactSlot[j]!=pTop->a[i].iSlot; j++){}
      if( j<nExact ){
        pTop->a[i].rDist = aExact[j];
        continue;
      }
    }
    f = vec0IvfVector(p, v, &r, pTop->a[i].iSlot, aVec, &rc);
    if( f ) pTop->a[i].rDist = vsDistanceF32(p->cfg.eMetric, q, f, nDim);
  }
  if( rc!=SQLITE_OK ) goto cleanup;
  vsTopKSort(pTop);
  if( pTop->n>k ) pTop->n = (int)k;
  for(i=0; i<pTop->n; i++){
    if( pTop->a[i].rDist==VS_NO_DIRECTION ) pTop->a[i].rDist = NAN;
  }

cleanup:
  vec0ReaderClose(&r);
  vec0QuantQueryClear(&qq);
  sqlite3_free(aOrder);
  sqlite3_free(aDist);
  sqlite3_free(aVec);
  sqlite3_free(aExact);           /* aExactSlot with it */
  if( rc!=SQLITE_OK ) vsTopKFree(pTop);
  return rc;
}

/* Whether the index can answer with the copy: trained, and the copy's vectors in memory,
** or coded lists (a copy over the memory budget, or the process's first search, holds
** rowids and liveness only: the lists' codes choose the candidates, whose vectors are
** read from T_vectors). */
static int vec0IvfUsable(Vec0Table *p){
  return p->pIvf && p->pIvf->nList>0 && p->pView && p->pView->nChunkAlloc>0
      && (!p->pView->bStreamed || p->pIvf->nCode>0);
}

int vec0IvfCacheNeed(const Vec0Table *p){
  return p->cfg.bIvf && p->cfg.eIvfQuant==VEC0_QUANT_NONE ? VEC0_NEED_COPY : VEC0_NEED_SEARCH;
}

int vec0IvfSearch(Vec0Table *p, const float *q, sqlite3_int64 k, int nProbe,
                  const unsigned char *aMask, const Vec0Range *pRange, VsTopK *pTop){
  Vec0Ivf *x;
  int rc = SQLITE_OK, bAlone;
  if( p->cfg.bIvf && pRange==0 && p->pView && !p->pView->bStreamed && !p->bViewPrivate
   && vec0MemoryBudget(-1)<=0 ){
    /* A copy with vectors, which this query will use (no budget can make it skip it):
    ** brought up to date first, so that the lists' catch-up below codes the rows other
    ** connections wrote from it, not from T_vectors a second time (a reader's first query
    ** after a 1,000-row commit at 768 dimensions: 20 ms, 10 of them the lists'). */
    rc = vec0CacheEnsure(p, vec0IvfCacheNeed(p));
  }
  if( rc==SQLITE_OK && p->cfg.bIvf && pRange==0 ) rc = vec0IvfReady(p);
  if( rc!=SQLITE_OK ) return rc;
  x = p->cfg.bIvf && pRange==0 ? p->pIvf : 0;
  if( nProbe<=0 ) nProbe = p->cfg.nIvfProbe;
  /* Coded lists that hold their rows' rowids answer without the copy when it would hold
  ** no vectors (vec0CacheSkip): a new process's first query reads the centroids and the
  ** lists it probes, not every row's rowid and slot (at 10,000,000 rows that scan of
  ** T_rows took 1.3 s with the file in memory, 3 s from disk), and over the memory
  ** budget no query reads them. A copy with vectors re-scores the candidates faster than
  ** reads of T_vectors: a copy this connection has is kept current and used. */
  bAlone = x && x->nList>0 && x->bRowids && x->nCode>0 && nProbe<x->nList && aMask==0
        && vec0CacheSkip(p);
  if( !bAlone ){
    rc = vec0CacheEnsure(p, vec0IvfCacheNeed(p));
    if( rc!=SQLITE_OK ) return rc;
    if( x==0 || !vec0IvfUsable(p) ) return vec0Search(p, q, k, aMask, pRange, pTop);
  }
  if( nProbe>=x->nList ){
    /* Every list: the exact scan is the same answer, certain and no slower. */
    return vec0Search(p, q, k, aMask, pRange, pTop);
  }
  if( aMask ){
    /* A selective filter: when fewer rows pass it than VEC0_IVF_FILTER_EXACT times the
    ** rows nprobe lists hold, scoring exactly the rows that pass costs about as much as
    ** the probe, and finds the nearest of them for certain (probing stops in the first
    ** lists that hold k passing rows, which need not hold the nearest). */
    sqlite3_int64 i, nPass = 0, nSlot = p->pView->nSlot;
    double rProbed = (double)nProbe*(double)p->pView->nLive/(double)p->pIvf->nList;
    for(i=0; i<nSlot; i++) nPass += aMask[i]!=0;
    if( (double)nPass<=VEC0_IVF_FILTER_EXACT*rProbed ){
      return vec0Search(p, q, k, aMask, pRange, pTop);
    }
  }
  p->nScanThreads = 1;
  rc = vec0IvfScan(p, bAlone ? 0 : p->pView, q, k, nProbe, aMask, pTop);
  if( rc==SQLITE_OK && bAlone ) p->pIvf->nNoCopy++;
  if( rc!=SQLITE_OK ) vec0IvfDrop(p);   /* a list may be read in part: read again next */
  return rc;
}

/* ---- reports ----------------------------------------------------------------------------- */

int vec0IvfLists(Vec0Table *p){
  return p->pIvf ? p->pIvf->nList : 0;
}

int vec0IvfProbeValue(sqlite3_value *pVal){
  sqlite3_int64 n = sqlite3_value_int64(pVal);
  if( sqlite3_value_numeric_type(pVal)!=SQLITE_INTEGER || n<1 || n>VEC0_IVF_MAX_LISTS ) return 0;
  return (int)n;
}

/* The rows of each list into aSize (nList): the lists' own counts when every one is read,
** else counted in T_ivf_assign by its index on list, each list's slots checked. And into
** *pnUncoded the rows whose code is not in the file: NULL in T_ivf_assign (written since
** the last training; their list's read codes their vectors), or every listed row of coded
** lists that do not keep their codes; into *pnPacked those whose code is in their list's
** pack. Counting the NULL codes reads T_ivf_assign whole. */
static int vec0IvfSizes(Vec0Table *p, int *aSize, sqlite3_int64 *pnUncoded,
                        sqlite3_int64 *pnPacked){
  const Vec0Ivf *x = p->pIvf;
  sqlite3_stmt *pStmt = 0;
  sqlite3_int64 nSlot = 0, nListed = 0;
  int i, rc, bAll = 1;
  *pnUncoded = 0;
  *pnPacked = 0;
  for(i=0; i<x->nList; i++){
    aSize[i] = x->aList[i].n;
    nListed += x->aList[i].n;
    if( x->aList[i].bUnread ) bAll = 0;
  }
  if( bAll && !x->bCodes ){
    if( x->nCode ) *pnUncoded = nListed;
    return SQLITE_OK;
  }
  memset(aSize, 0, sizeof(int)*(size_t)x->nList);
  rc = vec0NextSlot(p, &nSlot);
  if( rc==SQLITE_OK ){
    rc = vec0Stmt(p, x->bCodes ? VEC0_STMT_IVF_LIST_SIZES_CODED : VEC0_STMT_IVF_LIST_SIZES,
                  &pStmt);
  }
  while( rc==SQLITE_OK && sqlite3_step(pStmt)==SQLITE_ROW ){
    sqlite3_int64 iList = sqlite3_column_int64(pStmt, 0);
    sqlite3_int64 n = sqlite3_column_int64(pStmt, 1);
    if( sqlite3_column_type(pStmt, 0)!=SQLITE_INTEGER || iList<0 || iList>=x->nList
     || sqlite3_column_int64(pStmt, 2)<0 || sqlite3_column_int64(pStmt, 3)>=nSlot
     || sqlite3_column_int64(pStmt, 4)!=0 ){
      rc = vec0IvfCorrupt(p, "a row of T_ivf_assign names no slot, no list or no rowid");
      break;
    }
    aSize[iList] = (int)n;
    *pnUncoded += x->bCodes ? sqlite3_column_int64(pStmt, 5) : x->nCode ? n : 0;
    if( x->bCodes ) *pnPacked += sqlite3_column_int64(pStmt, 6);
  }
  if( pStmt ){
    int rc2 = sqlite3_reset(pStmt);
    if( rc==SQLITE_OK ) rc = rc2;
  }
  return rc;
}

int vec0IvfInfo(Vec0Table *p, char **pzOut){
  const Vec0Ivf *x = p->pIvf;
  sqlite3_int64 nListed = 0, nRow = 0, nUncoded = 0, nPacked = 0, nPackBytes = 0, nStale;
  double rMean, rTrainedImbalance;
  int nMin = 0, nMax = 0, nRead = 0, i, bRetrain, rc;
  int *aSize;
  sqlite3_str *pStr;
  *pzOut = 0;
  if( x==0 ) return SQLITE_NOMEM;
  aSize = sqlite3_malloc64(sizeof(int)*(sqlite3_uint64)x->nList + 1);
  if( aSize==0 ) return SQLITE_NOMEM;
  rc = vec0IvfRowCount(p, &nRow);
  if( rc==SQLITE_OK ) rc = vec0IvfSizes(p, aSize, &nUncoded, &nPacked);
  if( rc==SQLITE_OK && x->bCodes && x->bPacks ){
    sqlite3_stmt *pStmt = 0;
    rc = vec0Stmt(p, VEC0_STMT_IVF_PACK_BYTES, &pStmt);
    if( rc==SQLITE_OK ){
      if( sqlite3_step(pStmt)==SQLITE_ROW ) nPackBytes = sqlite3_column_int64(pStmt, 0);
      rc = sqlite3_reset(pStmt);
    }
  }
  for(i=0; rc==SQLITE_OK && i<x->nList; i++){
    int n = aSize[i];
    nListed += n;
    nRead += !x->aList[i].bUnread;
    if( i==0 || n<nMin ) nMin = n;
    if( i==0 || n>nMax ) nMax = n;
  }
  sqlite3_free(aSize);
  if( rc!=SQLITE_OK ) return rc;
  /* Codes in the packs that no row names any more. */
  nStale = nPackBytes/vec0QuantRecordBytes(&x->cfgCode) - nPacked;
  rMean = x->nList>0 ? (double)nListed/x->nList : 0.0;
  /* Drift: how far the table moved from the one the centroids were trained on (rows now
  ** over rows then), and how uneven the lists became (largest over mean). Retraining is
  ** suggested when the table doubled or shrank to under 40%, or a list holds over 4 times
  ** the mean and more than twice the largest list at the training: data whose clusters
  ** differ in size leave lists that uneven after any training, which a retrain would not
  ** change (a file from before ivf_trained_max: over 4 times the mean alone). */
  rTrainedImbalance = x->nTrained>0 ? (double)x->nTrainedMax*x->nList/(double)x->nTrained : 0.0;
  bRetrain = x->nList>0 && (nRow>2*x->nTrained || 5*nRow<2*x->nTrained
                            || (rMean>0 && nMax>4*rMean && nMax>64
                                && nMax>2*x->nTrainedMax));
  pStr = sqlite3_str_new(0);
  sqlite3_str_appendf(pStr, "{\"index\":\"ivf\",\"trained\":%s,\"rows\":%lld,\"lists\":%d,"
                      "\"lists_in_memory\":%d,\"list_bytes\":%lld,\"lists_given_back\":%lld,"
                      "\"listed_rows\":%lld,\"list_min\":%d,\"list_max\":%d,"
                      "\"list_mean\":%.1f,\"nprobe\":%d,\"trained_rows\":%lld,"
                      "\"growth\":%.3f,\"imbalance\":%.3f,\"trained_imbalance\":%.3f,"
                      "\"retrain_suggested\":%s,"
                      "\"rowids_in_lists\":%s,\"queries_without_copy\":%lld,"
                      "\"codes_stored\":%s,\"rows_without_codes\":%lld,"
                      "\"codes_in_packs\":%lld,\"pack_bytes\":%lld,\"stale_pack_codes\":%lld}",
                      x->nList>0 ? "true" : "false", nRow, x->nList, nRead,
                      vec0IvfListsBytes(x), x->nGivenBack, nListed, nMin,
                      nMax, rMean, p->cfg.nIvfProbe, x->nTrained,
                      x->nTrained>0 ? (double)nRow/x->nTrained : 0.0,
                      rMean>0 ? nMax/rMean : 0.0, rTrainedImbalance, bRetrain ? "true" : "false",
                      x->bRowids ? "true" : "false", x->nNoCopy,
                      x->bCodes ? "true" : "false", nUncoded, nPacked, nPackBytes,
                      nStale>0 ? nStale : 0);
  *pzOut = sqlite3_str_finish(pStr);
  return *pzOut ? SQLITE_OK : SQLITE_NOMEM;
}

int vec0IvfRecall(Vec0Table *p, sqlite3_int64 nQuery, sqlite3_int64 k, int nProbe,
                  double *prRecall){
  sqlite3_int64 nRow = 0, i, nFound = 0, nWant = 0;
  Vec0IvfRow *aRow = 0;
  VsTopK exact, approx;
  float *q = 0;
  int rc, a, b;
  memset(&exact, 0, sizeof(exact));
  memset(&approx, 0, sizeof(approx));
  *prRecall = -1;
  rc = vec0IvfRows(p, &aRow, &nRow);
  if( rc==SQLITE_OK ){
    q = sqlite3_malloc64(sizeof(float)*(sqlite3_uint64)p->cfg.nWord);
    if( q==0 ) rc = SQLITE_NOMEM;
  }
  if( nQuery>nRow ) nQuery = nRow;
  for(i=0; i<nQuery && rc==SQLITE_OK; i++){
    rc = vec0ReadVector(p, aRow[(i*nRow)/nQuery].iSlot, q);
    /* The index's search may drop a copy made under a larger memory budget. */
    if( rc==SQLITE_OK && p->pView==0 ) rc = vec0CacheEnsure(p, VEC0_NEED_COPY);
    if( rc==SQLITE_OK ) rc = vec0Search(p, q, k, 0, 0, &exact);
    if( rc==SQLITE_OK ) rc = vec0IvfSearch(p, q, k, nProbe, 0, 0, &approx);
    if( rc!=SQLITE_OK ) break;
    nWant += exact.n;
    for(a=0; a<exact.n; a++){
      for(b=0; b<approx.n; b++){
        if( approx.a[b].iRowid==exact.a[a].iRowid ){ nFound++; break; }
      }
    }
    vsTopKFree(&exact);
    vsTopKFree(&approx);
  }
  vsTopKFree(&exact);
  vsTopKFree(&approx);
  sqlite3_free(aRow);
  sqlite3_free(q);
  if( rc==SQLITE_OK && nWant>0 ) *prRecall = (double)nFound/(double)nWant;
  return rc;
}
