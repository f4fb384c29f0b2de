/*
** vec0_search.c: the exact k-nearest search of a vec0 table.
**
** Usage (internal; vec0.c, vec0_batch.c and vector_index.c call these):
**
**   vec0VectorArg(p, argv[i], "query", &q, &zErr);     // decode + check, once for all
**   vec0CacheEnsure(p);
**   vec0Search(p, q, k, aMask, pRange, &top);          // top.a[0..top.n) nearest first
**   vec0SearchBatch(p, Q, nQuery, k, aTop);            // many queries, one pass
**
** How it works: a query reads down these steps, in this order.
**   1. check   the query vector has the column's dimensions, is finite, and is not all
**              zeros under cosine (vec0VectorArg / vec0VectorCheck: one set of checks for
**              MATCH, the batch function and vector_top_k);
**   2. scan    each chunk of the in-memory copy is scored against the query by one block
**              product (vsScoreBlock: AVX2 or BLAS sgemv; sgemm for a batch), or under
**              distance_metric=l1 by the L1 distances themselves (vsL1Block); a filter's
**              slot mask skips rows, and a selective one scores its few rows one by one;
**   3. heap    scores become approximate distances (vsScoreDistance) and the best
**              k + VEC0_RERANK_EXTRA are kept in a bounded heap (vector_topk.c);
**   4. re-rank those candidates get their distance computed in double precision
**              (vsDistanceF32), are sorted by (distance, rowid) and cut to k;
**   5. report  a KNN query on a vec0 table reports l2 and cosine distances as sqlite-vec
**              computes them (float32 sums), in the order of step 4
**              (vec0ReportDistances; vector_top_k and the batch function keep step 4's).
** A distance range ("distance > ?" for paging) is applied in both: loosely to the
** approximate distances of step 3 (a margin keeps the candidates at the boundary), then
** exactly at step 4.
** A quantized table (vec0_quant.c) scans codes instead at step 2, keeps the best
** k*oversample by coarse distance at step 3 (bit codes: the best VEC0_BIT_WIDEN times more
** by Hamming distance, ranked again by the float query against their signs), and step 4
** reads those candidates' float32 vectors from T_vectors; its distance range applies at
** step 4 only.
** vec0.c then reads each hit's row from T_rows.
*/
#include "vecsync_int.h"
SQLITE_EXTENSION_INIT3

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Extra candidates kept for the exact re-ranking of the best k. */
#define VEC0_RERANK_EXTRA 16

/* ---- 1. check ------------------------------------------------------------------------- */

static int vec0CheckF32(const Vec0Config *pCfg, const float *a, const char *zWhat,
                        char **pzErr){
  int i;
  for(i=0; i<pCfg->nDim; i++){
    if( a[i]!=a[i] || a[i]-a[i]!=0.0f ){
      *pzErr = sqlite3_mprintf(
          "the %s vector has a NaN or infinite element at index %d", zWhat, i);
      return SQLITE_ERROR;
    }
  }
  if( pCfg->eMetric==VS_METRIC_COSINE && vsNormF32(a, pCfg->nDim)==0.0f ){
    *pzErr = sqlite3_mprintf(
        "the %s vector is all zeros: cosine distance is undefined for it", zWhat);
    return SQLITE_ERROR;
  }
  return SQLITE_OK;
}

int vec0VectorCheck(Vec0Table *p, const float *a, const char *zWhat, char **pzErr){
  return vec0CheckF32(&p->cfg, a, zWhat, pzErr);
}

/* The type name sqlite-vec gives a value offered as a vector: by its subtype, else a blob or
** text is float32. */
static const char *vec0ValueVectorType(sqlite3_value *pVal){
  unsigned int eSub = sqlite3_value_subtype(pVal);
  if( sqlite3_value_type(pVal)==SQLITE_BLOB && eSub==VS_SUBTYPE_I8 ) return "int8";
  if( sqlite3_value_type(pVal)==SQLITE_BLOB && eSub==VS_SUBTYPE_BIT ) return "bit";
  return "float32";
}

/* An int8[N] or bit[N] column's vector: as sqlite-vec, only a blob that vec_int8() or
** vec_bit() (or vec_quantize_*) made, with its subtype, of the column's length. *paOut gets
** its bytes in nWord words (zero-padded). Messages are sqlite-vec's. */
static int vec0TypedArg(const Vec0Config *pCfg, sqlite3_value *pVal, const char *zWhat,
                        float **paOut, char **pzErr){
  const char *zCol = pCfg->aCol[pCfg->iVec].zName;
  const char *zWant = pCfg->eElem==VS_I8 ? "int8" : "bit";
  const char *zGot = vec0ValueVectorType(pVal);
  int eType = sqlite3_value_type(pVal);
  int bInsert = sqlite3_stricmp(zWhat, "inserted")==0;
  int nByte;
  if( eType!=SQLITE_BLOB && eType!=SQLITE_TEXT ){
    *pzErr = sqlite3_mprintf("%s vector for the \"%s\" column is invalid: Input must have "
                             "type BLOB (compact format) or TEXT (JSON), found %s",
                             bInsert ? "Inserted" : "Query", zCol,
                             eType==SQLITE_NULL ? "NULL" : eType==SQLITE_INTEGER ? "INTEGER"
                             : "FLOAT");
    return SQLITE_ERROR;
  }
  if( strcmp(zGot, zWant)!=0 ){
    *pzErr = sqlite3_mprintf("%s vector for the \"%s\" column is expected to be of type "
                             "%s, but a %s vector was provided.",
                             bInsert ? "Inserted" : "Query", zCol, zWant, zGot);
    return SQLITE_ERROR;
  }
  nByte = sqlite3_value_bytes(pVal);
  if( nByte!=pCfg->nVecByte ){
    *pzErr = sqlite3_mprintf("Dimension mismatch for %s vector for the \"%s\" column. "
                             "Expected %d dimensions but received %lld.",
                             bInsert ? "inserted" : "query", zCol, pCfg->nDim,
                             pCfg->eElem==VS_BIT ? (sqlite3_int64)nByte*8 : (sqlite3_int64)nByte);
    return SQLITE_ERROR;
  }
  *paOut = sqlite3_malloc64(sizeof(float)*(size_t)pCfg->nWord);
  if( *paOut==0 ) return SQLITE_NOMEM;
  memset(*paOut, 0, sizeof(float)*(size_t)pCfg->nWord);
  if( nByte>0 ) memcpy(*paOut, sqlite3_value_blob(pVal), (size_t)nByte);
  if( pCfg->eMetric==VS_METRIC_COSINE ){
    int i;
    const signed char *a = (const signed char*)*paOut;
    for(i=0; i<nByte && a[i]==0; i++){}
    if( i==nByte ){
      /* sqlite-vec stores it and reports NULL distances; refused here as for float32. */
      *pzErr = sqlite3_mprintf("the %s vector is all zeros: cosine distance is undefined "
                               "for it", zWhat);
      return SQLITE_ERROR;
    }
  }
  return SQLITE_OK;
}

int vec0VectorArg(Vec0Table *p, sqlite3_value *pVal, const char *zWhat,
                  float **paOut, char **pzErr){
  return vec0ColumnVectorArg(p, p->cfg.iVec, pVal, zWhat, paOut, pzErr);
}

int vec0ColumnVectorArg(Vec0Table *p, int iCol, sqlite3_value *pVal, const char *zWhat,
                        float **paOut, char **pzErr){
  VsVector v;
  char *zErr = 0;
  int rc = SQLITE_OK;
  Vec0Config *pCfg = &p->cfg;
  Vec0Config *pOwn = 0;       /* iCol's view of the declaration, when it is not iVec */
  memset(&v, 0, sizeof(v));
  *paOut = 0;
  if( iCol!=p->cfg.iVec ){
    pOwn = sqlite3_malloc64(sizeof(*pOwn));
    if( pOwn==0 ){ rc = SQLITE_NOMEM; goto cleanup; }
    vec0ColumnConfig(&p->cfg, iCol, pOwn);
    pCfg = pOwn;
  }
  if( pCfg->eElem!=VS_F32 ){
    rc = vec0TypedArg(pCfg, pVal, zWhat, paOut, &zErr);
    goto cleanup;
  }
  if( sqlite3_value_type(pVal)==SQLITE_NULL ){
    zErr = sqlite3_mprintf("the %s vector is NULL (column \"%s\")", zWhat,
                           pCfg->aCol[pCfg->iVec].zName);
    rc = SQLITE_ERROR;
    goto cleanup;
  }
  rc = vsVectorFromValue(pVal, VS_F32, &v, &zErr);
  if( rc==SQLITE_OK && v.nDim!=pCfg->nDim ){
    zErr = sqlite3_mprintf("the %s vector has %d dimensions, column \"%s\" has %d",
                           zWhat, v.nDim, pCfg->aCol[pCfg->iVec].zName, pCfg->nDim);
    rc = SQLITE_ERROR;
  }
  if( rc==SQLITE_OK ) rc = vsVectorToF32(&v, paOut, &zErr);
  if( rc==SQLITE_OK ) rc = vec0CheckF32(pCfg, *paOut, zWhat, &zErr);

cleanup:
  sqlite3_free(pOwn);
  vsVectorFree(&v);
  if( rc!=SQLITE_OK ){
    sqlite3_free(*paOut);
    *paOut = 0;
    if( rc!=SQLITE_NOMEM ){
      *pzErr = sqlite3_mprintf("vec0 \"%s\": %s", p->zName, zErr ? zErr : "bad vector");
    }
  }
  sqlite3_free(zErr);
  return rc;
}

/* ---- distance ranges ------------------------------------------------------------------- */

/* Whether an exact distance d is within the range. */
static int vec0InRange(const Vec0Range *r, double d){
  if( r==0 ) return 1;
  if( r->bLo && (r->bLoOpen ? !(d>r->rLo) : !(d>=r->rLo)) ) return 0;
  if( r->bHi && (r->bHiOpen ? !(d<r->rHi) : !(d<=r->rHi)) ) return 0;
  return 1;
}

/* Whether an approximate distance (vsScoreDistance: squared under L2) may be within the
** range: only what is clearly outside, by more than float32 scoring can err, is dropped. */
static int vec0MaybeInRange(const Vec0Range *r, int eMetric, double a){
  double lo, hi, eps;
  if( r==0 ) return 1;
  if( r->bLo ){
    lo = r->rLo;
    if( eMetric==VS_METRIC_L2 ) lo = lo>0.0 ? lo*lo : -1.0;
    eps = 1e-3*(1.0 + (lo<0 ? -lo : lo));
    if( a < lo - eps ) return 0;
  }
  if( r->bHi ){
    hi = r->rHi;
    if( eMetric==VS_METRIC_L2 ){
      if( hi<0.0 ) return 0;
      hi = hi*hi;
    }
    eps = 1e-3*(1.0 + (hi<0 ? -hi : hi));
    if( a > hi + eps ) return 0;
  }
  return 1;
}

/* ---- 2. scan: scores -------------------------------------------------------------------- */

/* Score nRow rows of a block against q: dot products (one sgemv), or under L1 the L1
** distances themselves (no dot product gives them). vsScoreDistance turns either into
** the approximate distance the heap ranks by. */
static void vec0ScoreRows(Vec0Table *p, const float *A, int nRow, const float *q,
                          float *aScore){
  if( p->cfg.eMetric==VS_METRIC_L1 ){
    vsL1Block(A, nRow, p->cfg.nDim, q, aScore);
  }else{
    vsScoreBlock(A, nRow, p->cfg.nDim, q, aScore);
  }
}

/* ---- 3. heap ----------------------------------------------------------------------------- */

/* Candidates the heap keeps for a query asking for k: k + VEC0_RERANK_EXTRA, without
** overflowing for any k (vsTopKInit caps it by the rows there are). */
static sqlite3_int64 vec0CandidateCap(sqlite3_int64 k){
  if( k > 0x7fffffffffffffffLL - VEC0_RERANK_EXTRA ) return k;
  return k + VEC0_RERANK_EXTRA;
}

/* Offer the rows of chunk c (its first slot iBase), scored by aScore (aScore[i] = q·row
** i), to the heap: live rows that pass aMask (when given), skipping those the heap would
** refuse. */
static void vec0PushScores(Vec0Table *p, const Vec0Chunk *c, const float *aScore,
                           sqlite3_int64 iBase, int nRow, float qNorm,
                           const unsigned char *aMask, const Vec0Range *pRange, VsTopK *pTop){
  double rBound = vsTopKBound(pTop);
  int i;
  for(i=0; i<nRow; i++){
    double d;
    if( !c->aLive[i] || (aMask && !aMask[iBase+i]) ) continue;
    d = vsScoreDistance(p->cfg.eMetric, aScore[i], qNorm, c->aNorm[i]);
    if( d<=rBound && vec0MaybeInRange(pRange, p->cfg.eMetric, d) ){
      vsTopKPush(pTop, d, c->aRowid[i], iBase+i);
      rBound = vsTopKBound(pTop);
    }
  }
}

/* ---- 4. re-rank ------------------------------------------------------------------------ */

/* The distance step 5 reports for a vector whose exact distance is d. */
static double vec0ReportedDistance(int eMetric, const float *q, const float *v, int n, double d){
  if( eMetric==VS_METRIC_L2 ) return vsL2F32Seq(q, v, n);
  if( eMetric==VS_METRIC_COSINE ) return vsCosineF32Seq(q, v, n);
  if( eMetric==VS_METRIC_L1 ) return (float)d;  /* sqlite-vec sums in double, keeps a float */
  return d;
}

static int vec0HitBySlot(const void *a, const void *b){
  sqlite3_int64 x = ((const VsHit*)a)->iSlot, y = ((const VsHit*)b)->iSlot;
  return x<y ? -1 : x>y;
}

/* Replace approximate distances by exact ones (vectors from the copy, or from T_vectors
** when the copy holds none: streamed or quantized), drop those outside the range, sort,
** keep the best k. */
static int vec0Rerank(Vec0Table *p, const float *q, sqlite3_int64 k,
                      const Vec0Range *pRange, VsTopK *pTop){
  Vec0Reader r;
  float *aTmp = 0;
  int i, n = 0, rc = SQLITE_OK;
  memset(&r, 0, sizeof(r));
  if( pTop->n>0 && vec0CacheVector(p, pTop->a[0].iSlot)==0 ){
    /* Read the file in slot order: one blob handle moves along it. */
    qsort(pTop->a, (size_t)pTop->n, sizeof(VsHit), vec0HitBySlot);
  }
  for(i=0; i<pTop->n && rc==SQLITE_OK; i++){
    const float *v = vec0CacheVector(p, pTop->a[i].iSlot);
    double d;
    if( v==0 ){
      if( aTmp==0 ){
        aTmp = sqlite3_malloc64(sizeof(float)*(size_t)p->cfg.nDim);
        if( aTmp==0 ){ rc = SQLITE_NOMEM; break; }
      }
      rc = vec0ReaderRead(p, &r, pTop->a[i].iSlot, aTmp);
      v = aTmp;
      if( rc!=SQLITE_OK ) break;
    }
    d = vsDistanceF32(p->cfg.eMetric, q, v, p->cfg.nDim);
    /* A range (only vec0 KNN queries have one) bounds the distance the query reports
    ** (step 5), so "distance > the last one seen" pages without skipping or repeating. */
    if( pRange && !vec0InRange(pRange, vec0ReportedDistance(p->cfg.eMetric, q, v, p->cfg.nDim, d)) ){
      continue;
    }
    pTop->a[n] = pTop->a[i];
    pTop->a[n++].rDist = d;
  }
  vec0ReaderClose(&r);
  sqlite3_free(aTmp);
  if( rc!=SQLITE_OK ) return rc;
  pTop->n = n;
  vsTopKSort(pTop);
  if( pTop->n>k ) pTop->n = (int)k;
  return SQLITE_OK;
}

/* ---- 2. scan ------------------------------------------------------------------------------ */

/* What every part of a block scan reads (vec0ScanRun runs the parts, on helper threads
** when the table is large): the query and its restrictions, never written while they run. */
typedef struct Vec0ScanQuery Vec0ScanQuery;
struct Vec0ScanQuery {
  Vec0Table *p;               /* The table: its declaration and copy */
  const float *q;             /* The query: float32, or an int8/bit column's bytes */
  float qNorm;                /* float32: its L2 norm */
  const unsigned char *aMask; /* Slots the filters pass, or NULL */
  const Vec0Range *pRange;    /* A distance range, or NULL */
  const Vec0QuantQuery *pQQ;  /* Quantized tables: the query's code */
  float *aDist;               /* bit codes: every slot's Hamming distance (parts write theirs) */
  sqlite3_int64 *aCount;      /* bit codes: how many rows at each distance (folded) */
  int nMax;                   /* bit codes: the largest distance */
  float *A;                   /* int8/bit columns, streamed: one chunk's vectors */
  Vec0Reader *pReader;        /* int8/bit columns, streamed: reads them (bSerial) */
};

static void vec0ScanQueryInit(Vec0ScanQuery *s, Vec0Table *p, const float *q,
                              const unsigned char *aMask, const Vec0Range *pRange){
  memset(s, 0, sizeof(*s));
  s->p = p;
  s->q = q;
  s->aMask = aMask;
  s->pRange = pRange;
}

/* Live rows of chunk c (its first slot iBase, nRow rows) that pass aMask. */
static int vec0MaskPass(const unsigned char *aMask, const Vec0Chunk *c, sqlite3_int64 iBase,
                        int nRow){
  int i, nPass = 0;
  for(i=0; i<nRow; i++) nPass += aMask[iBase+i] && c->aLive[i];
  return nPass;
}

/* Rows of chunk b that hold slots (the last chunk is partly used). */
static int vec0ChunkRows(Vec0Table *p, int b){
  sqlite3_int64 nLeft = p->pView->nSlot - (sqlite3_int64)b*p->cfg.nChunk;
  return (int)(nLeft < p->cfg.nChunk ? nLeft : p->cfg.nChunk);
}

/* The scan of a streamed copy (over the memory budget): each blob of T_vectors is read
** in turn, straight from the file's pages into one buffer, and scored; the copy gives
** liveness and rowids, the norms are computed from the vectors read. */
static int vec0SearchStreamed(Vec0Table *p, const float *q, sqlite3_int64 k,
                              const unsigned char *aMask, const Vec0Range *pRange,
                              VsTopK *pTop){
  const Vec0Snapshot *v = p->pView;
  int nDim = p->cfg.nDim, nPer = p->nPerBlob, eMetric = p->cfg.eMetric;
  float qNorm = vsNormF32(q, nDim);
  float *A = 0, *aScore = 0;
  sqlite3_stmt *pStmt = 0;
  Vec0Reader r;
  sqlite3_int64 nSeen = 0;
  int rc = vsTopKInit(pTop, vec0CandidateCap(k), v->nLive);
  memset(&r, 0, sizeof(r));
  if( rc==SQLITE_OK ){
    A = sqlite3_malloc64(sizeof(float)*(size_t)nPer*(size_t)nDim);
    aScore = sqlite3_malloc64(sizeof(float)*(size_t)nPer);
    if( A==0 || aScore==0 ) rc = SQLITE_NOMEM;
  }
  if( rc==SQLITE_OK ) rc = vec0Stmt(p, VEC0_STMT_BLOB_IDS, &pStmt);
  while( rc==SQLITE_OK && sqlite3_step(pStmt)==SQLITE_ROW ){
    sqlite3_int64 iBlob = sqlite3_column_int64(pStmt, 0);
    sqlite3_int64 iBase = iBlob*nPer;
    const Vec0Chunk *c;
    int i, i0, nRow, nLive = 0;
    if( iBlob!=nSeen++ ){
      vec0SetError(p, "vec0 \"%s\": storage is damaged: vector blob %lld of %s_vectors is "
                      "missing", p->zName, nSeen-1, p->zName);
      rc = SQLITE_CORRUPT_VTAB;
      break;
    }
    if( iBlob<0 || iBlob>v->nSlot/nPer ){
      vec0SetError(p, "vec0 \"%s\": storage is damaged: vector blob %lld of %s_vectors",
                   p->zName, iBlob, p->zName);
      rc = SQLITE_CORRUPT_VTAB;
      break;
    }
    if( iBase>=v->nSlot ) continue;
    nRow = (int)(v->nSlot - iBase < nPer ? v->nSlot - iBase : nPer);
    c = v->apChunk[iBase/p->cfg.nChunk];
    i0 = (int)(iBase%p->cfg.nChunk);
    for(i=0; i<nRow; i++) nLive += c->aLive[i0+i] && (aMask==0 || aMask[iBase+i]);
    if( nLive==0 ) continue;                  /* nothing to read here */
    rc = vec0ReaderBlob(p, &r, iBlob, A);
    if( rc!=SQLITE_OK ) break;
    vec0ScoreRows(p, A, nRow, q, aScore);
    for(i=0; i<nRow; i++){
      double d;
      if( !c->aLive[i0+i] || (aMask && !aMask[iBase+i]) ) continue;
      d = vsScoreDistance(eMetric, aScore[i], qNorm, vsNormF32(A + (size_t)i*nDim, nDim));
      if( d<=vsTopKBound(pTop) && vec0MaybeInRange(pRange, eMetric, d) ){
        vsTopKPush(pTop, d, c->aRowid[i0+i], iBase+i);
      }
    }
  }
  if( pStmt ){
    if( rc==SQLITE_OK ) rc = sqlite3_reset(pStmt); else sqlite3_reset(pStmt);
  }
  vec0ReaderClose(&r);
  if( rc==SQLITE_OK ) rc = vec0Rerank(p, q, k, pRange, pTop);
  sqlite3_free(A);
  sqlite3_free(aScore);
  if( rc!=SQLITE_OK ) vsTopKFree(pTop);
  return rc;
}

/* The bit scan of chunks iFirst..iEnd-1: each slot's Hamming distance into aDist (-1 for
** a row that is gone or filtered out), the distances counted in the part's histogram. */
static int vec0ScanBitPart(const Vec0ScanJob *pJob, Vec0ScanPart *pPart){
  const Vec0ScanQuery *s = (const Vec0ScanQuery*)pJob->pCtx;
  Vec0Table *p = s->p;
  const Vec0Snapshot *v = p->pView;
  const unsigned char *aMask = s->aMask;
  sqlite3_int64 *aCount = (sqlite3_int64*)pPart->pScratch;
  float *aDist = s->aDist;
  int nChunk = p->cfg.nChunk, b;
  memset(aCount, 0, sizeof(sqlite3_int64)*((size_t)s->nMax + 1));
  for(b=pPart->iFirst; b<pPart->iEnd; b++){
    const Vec0Chunk *c = v->apChunk[b];
    sqlite3_int64 iBase = (sqlite3_int64)b*nChunk;
    int nRow = vec0ChunkRows(p, b), i;
    if( nRow<=0 ) break;
    vec0QuantScore(s->pQQ, c->aCode, 0, c->aNorm, nRow, aDist + iBase);
    for(i=0; i<nRow; i++){
      if( !c->aLive[i] || (aMask && !aMask[iBase+i]) ){
        aDist[iBase+i] = -1.0f;
      }else{
        aCount[(int)aDist[iBase+i]]++;
      }
    }
  }
  return SQLITE_OK;
}

/* Add a part's histogram to the scan's. */
static void vec0FoldBitCounts(const Vec0ScanJob *pJob, const Vec0ScanPart *pPart){
  const Vec0ScanQuery *s = (const Vec0ScanQuery*)pJob->pCtx;
  const sqlite3_int64 *aPart = (const sqlite3_int64*)pPart->pScratch;
  int d;
  for(d=0; d<=s->nMax; d++) s->aCount[d] += aPart[d];
}

/* The bit scan: the Hamming distance of every live row that passes aMask, then the rows
** nearer than the distance at which nWide rows are reached, and as many at that distance
** as fit (the smallest rowids: pWide ranks by (distance, rowid)), go into pWide. Distances
** are small integers: a histogram finds that distance in one pass, with no heap to keep
** while scanning. */
static int vec0BitCandidates(Vec0Table *p, const Vec0QuantQuery *pQ, const unsigned char *aMask,
                             sqlite3_int64 nWide, VsTopK *pWide){
  const Vec0Snapshot *v = p->pView;
  /* Distances go up to 8*nCode (a damaged file's codes may set the padding bits). */
  int nChunk = p->cfg.nChunk, nMax = 8*pQ->nCode;
  Vec0ScanQuery s;
  Vec0ScanJob job;
  sqlite3_int64 iSlot, nBelow = 0;
  int b, rc, iEdge = nMax;

  vec0ScanQueryInit(&s, p, 0, aMask, 0);
  s.pQQ = pQ;
  s.nMax = nMax;
  s.aCount = sqlite3_malloc64(sizeof(sqlite3_int64)*((size_t)nMax + 1));
  s.aDist = sqlite3_malloc64(sizeof(float)*(size_t)(v->nSlot ? v->nSlot : 1));
  if( s.aCount==0 || s.aDist==0 ){ rc = SQLITE_NOMEM; goto cleanup; }
  memset(s.aCount, 0, sizeof(sqlite3_int64)*((size_t)nMax + 1));
  memset(&job, 0, sizeof(job));
  job.xPart = vec0ScanBitPart;
  job.pCtx = &s;
  job.nScratch = sizeof(sqlite3_int64)*((size_t)nMax + 1);   /* the part's histogram */
  job.xFold = vec0FoldBitCounts;
  rc = vec0ScanRun(p, &job, 0);
  if( rc!=SQLITE_OK ) goto cleanup;

  /* The edge: the smallest distance at which the count reaches nWide. */
  for(b=0; b<=nMax; b++){
    if( nBelow + s.aCount[b]>=nWide ){ iEdge = b; break; }
    nBelow += s.aCount[b];
  }
  for(iSlot=0; iSlot<v->nSlot; iSlot++){
    float d = s.aDist[iSlot];
    const Vec0Chunk *c;
    if( d<0.0f || d>(float)iEdge ) continue;
    c = v->apChunk[iSlot/nChunk];
    vsTopKPush(pWide, d, c->aRowid[iSlot%nChunk], iSlot);
  }

cleanup:
  sqlite3_free(s.aCount);
  sqlite3_free(s.aDist);
  return rc;
}

/* The int8-code scan of chunks iFirst..iEnd-1 into the part's heap. */
static int vec0ScanCodedPart(const Vec0ScanJob *pJob, Vec0ScanPart *pPart){
  const Vec0ScanQuery *s = (const Vec0ScanQuery*)pJob->pCtx;
  Vec0Table *p = s->p;
  const Vec0Snapshot *v = p->pView;
  const Vec0QuantQuery *pQQ = s->pQQ;
  const unsigned char *aMask = s->aMask;
  VsTopK *pScan = pPart->pTop;
  float *aDist = (float*)pPart->pScratch;
  int nChunk = p->cfg.nChunk, nCode = vec0QuantCodeBytes(&p->cfg);
  int b;
  for(b=pPart->iFirst; b<pPart->iEnd; b++){
    const Vec0Chunk *c = v->apChunk[b];
    sqlite3_int64 iBase = (sqlite3_int64)b*nChunk;
    int nRow = vec0ChunkRows(p, b);
    double rBound = vsTopKBound(pScan);
    int i;
    if( nRow<=0 ) break;
    if( aMask ){
      int nPass = vec0MaskPass(aMask, c, iBase, nRow);
      if( nPass==0 ) continue;
      if( nPass*8 < nRow ){
        for(i=0; i<nRow; i++){
          if( aMask[iBase+i] && c->aLive[i] ){
            float d = vec0QuantScoreOne(pQQ, c->aCode + (size_t)i*nCode,
                                        c->aScale ? c->aScale[i] : 0.0f, c->aNorm[i]);
            vsTopKPush(pScan, d, c->aRowid[i], iBase+i);
          }
        }
        continue;
      }
    }
    vec0QuantScore(pQQ, c->aCode, c->aScale, c->aNorm, nRow, aDist);
    for(i=0; i<nRow; i++){
      /* A tie with the worst kept candidate goes to the heap, which keeps the smaller
      ** rowid: the candidates are the best by (coarse distance, rowid) whatever order
      ** the chunks are scanned in, on one thread or several. */
      if( !c->aLive[i] || (aMask && !aMask[iBase+i]) || !(aDist[i]<=rBound) ) continue;
      vsTopKPush(pScan, aDist[i], c->aRowid[i], iBase+i);
      rBound = vsTopKBound(pScan);
    }
  }
  return SQLITE_OK;
}

/* The scan of a quantized copy: every live row's code is scored against the query's, the
** best k*oversample by that coarse distance are kept, and vec0Rerank re-scores them from
** the stored vectors. A distance range applies to the exact distances only. */
static int vec0SearchCoded(Vec0Table *p, const float *q, sqlite3_int64 k,
                           const unsigned char *aMask, const Vec0Range *pRange,
                           VsTopK *pTop){
  const Vec0Snapshot *v = p->pView;
  int nChunk = p->cfg.nChunk, nCode = vec0QuantCodeBytes(&p->cfg);
  sqlite3_int64 nCand = k > 0x7fffffffffffffffLL/p->cfg.nOversample ? k : k*p->cfg.nOversample;
  Vec0QuantQuery qq;
  VsTopK wide;                /* bit: the Hamming scan's candidates, refined into pTop */
  Vec0ScanQuery s;
  Vec0ScanJob job;
  int rc;

  memset(&qq, 0, sizeof(qq));
  memset(&wide, 0, sizeof(wide));
  if( nCand<vec0CandidateCap(k) ) nCand = vec0CandidateCap(k);
  rc = vsTopKInit(pTop, nCand, v->nLive);
  if( rc==SQLITE_OK ) rc = vec0QuantQueryInit(&p->cfg, q, &qq);
  if( rc==SQLITE_OK && p->cfg.eQuant==VEC0_QUANT_BIT ){
    sqlite3_int64 nWide = nCand > 0x7fffffffffffffffLL/VEC0_BIT_WIDEN ? nCand
                        : nCand*VEC0_BIT_WIDEN;
    int i;
    rc = vsTopKInit(&wide, nWide, v->nLive);
    if( rc==SQLITE_OK ) rc = vec0BitCandidates(p, &qq, aMask, wide.nCap, &wide);
    for(i=0; rc==SQLITE_OK && i<wide.n; i++){
      const VsHit *h = &wide.a[i];
      const Vec0Chunk *c = v->apChunk[h->iSlot/nChunk];
      int iRow = (int)(h->iSlot%nChunk);
      vsTopKPush(pTop, vec0QuantRefineBits(&qq, c->aCode + (size_t)iRow*nCode, c->aNorm[iRow]),
                 h->iRowid, h->iSlot);
    }
  }else if( rc==SQLITE_OK ){
    vec0ScanQueryInit(&s, p, q, aMask, pRange);
    s.pQQ = &qq;
    memset(&job, 0, sizeof(job));
    job.xPart = vec0ScanCodedPart;
    job.pCtx = &s;
    job.nScratch = sizeof(float)*(size_t)nChunk;   /* aDist */
    rc = vec0ScanRun(p, &job, pTop);
  }
  if( rc==SQLITE_OK ) rc = vec0Rerank(p, q, k, pRange, pTop);
  vsTopKFree(&wide);
  vec0QuantQueryClear(&qq);
  if( rc!=SQLITE_OK ) vsTopKFree(pTop);
  return rc;
}

/* Whether a row's reported distance is within the range (none: yes). Tested on the figure
** itself, during the scan: a row outside never takes a place among the candidates, so k
** rows in range come back whenever there are k. */
static int vec0TypedInRange(Vec0Table *p, const unsigned char *q, const unsigned char *v,
                            const Vec0Range *pRange){
  double d;
  if( pRange==0 ) return 1;
  d = vec0TypedFigure(&p->cfg, q, v);
  return d==d && vec0InRange(pRange, d);
}

/* The scan of an int8[N] or bit[N] column's chunks iFirst..iEnd-1 into the part's heap
** (streamed: read from T_vectors into s->A, on the calling thread only). */
static int vec0ScanTypedPart(const Vec0ScanJob *pJob, Vec0ScanPart *pPart){
  const Vec0ScanQuery *s = (const Vec0ScanQuery*)pJob->pCtx;
  Vec0Table *p = s->p;
  const Vec0Snapshot *v = p->pView;
  const unsigned char *qb = (const unsigned char*)s->q;
  const unsigned char *aMask = s->aMask;
  const Vec0Range *pRange = s->pRange;
  VsTopK *pTop = pPart->pTop;
  double *aKey = (double*)pPart->pScratch;
  int nChunk = p->cfg.nChunk, nWord = p->cfg.nWord, nStride = 4*p->cfg.nWord;
  int nPer = p->nPerBlob;
  int rc = SQLITE_OK, b, i;

  for(b=pPart->iFirst; rc==SQLITE_OK && b<pPart->iEnd; b++){
    const Vec0Chunk *c = v->apChunk[b];
    sqlite3_int64 iBase = (sqlite3_int64)b*nChunk;
    int nRow = vec0ChunkRows(p, b), nPass = nRow;
    const unsigned char *aRow;
    double rBound;
    if( nRow<=0 ) break;
    if( aMask ){
      nPass = vec0MaskPass(aMask, c, iBase, nRow);
      if( nPass==0 ) continue;
    }else{
      for(nPass=0, i=0; i<nRow; i++) nPass += c->aLive[i];
      if( nPass==0 ) continue;
    }
    if( v->bStreamed ){
      int j;
      for(j=0; rc==SQLITE_OK && j*nPer<nRow; j++){
        rc = vec0ReaderBlob(p, s->pReader, iBase/nPer + j, s->A + (size_t)j*nPer*nWord);
      }
      if( rc!=SQLITE_OK ) break;
      aRow = (const unsigned char*)s->A;
    }else{
      aRow = (const unsigned char*)c->aVec;
    }
    if( nPass*8 < nRow ){
      /* A selective filter (or a chunk of few rows): its rows one by one. */
      for(i=0; i<nRow; i++){
        if( !c->aLive[i] || (aMask && !aMask[iBase+i]) ) continue;
        if( !vec0TypedInRange(p, qb, aRow + (size_t)i*nStride, pRange) ) continue;
        vec0TypedScore(&p->cfg, qb, aRow + (size_t)i*nStride, nStride, 1, &aKey[i]);
        vsTopKPush(pTop, aKey[i], c->aRowid[i], iBase+i);
      }
      continue;
    }
    vec0TypedScore(&p->cfg, qb, aRow, nStride, nRow, aKey);
    rBound = vsTopKBound(pTop);
    for(i=0; i<nRow; i++){
      if( !c->aLive[i] || (aMask && !aMask[iBase+i]) || aKey[i]>rBound ) continue;
      if( !vec0TypedInRange(p, qb, aRow + (size_t)i*nStride, pRange) ) continue;
      vsTopKPush(pTop, aKey[i], c->aRowid[i], iBase+i);
      rBound = vsTopKBound(pTop);
    }
  }
  return rc;
}

/* The scan of an int8[N] or bit[N] column: every live row that passes aMask gets its exact
** key (vec0TypedScore: integer sums, AVX2 for int8, POPCNT for bits) from the copy, or
** from T_vectors a chunk at a time when the copy is streamed (with a distance range, only
** rows whose reported figure is inside it); the best k +
** VEC0_RERANK_EXTRA by key then get the figure sqlite-vec reports (vec0TypedFigure), the
** range is applied to it, and they are sorted by (figure, rowid) and cut to k. */
static int vec0SearchTyped(Vec0Table *p, const float *q, sqlite3_int64 k,
                           const unsigned char *aMask, const Vec0Range *pRange,
                           VsTopK *pTop){
  const Vec0Snapshot *v = p->pView;
  const unsigned char *qb = (const unsigned char*)q;
  int nChunk = p->cfg.nChunk, nWord = p->cfg.nWord;
  float *A = 0;               /* streamed: one chunk's vectors, read from T_vectors */
  Vec0Reader r;
  Vec0ScanQuery s;
  Vec0ScanJob job;
  int rc, i, n = 0;

  memset(&r, 0, sizeof(r));
  rc = vsTopKInit(pTop, vec0CandidateCap(k), v->nLive);
  if( rc==SQLITE_OK && v->bStreamed ){
    A = sqlite3_malloc64(sizeof(float)*(size_t)nChunk*(size_t)nWord);
    if( A==0 ) rc = SQLITE_NOMEM;
  }
  if( rc==SQLITE_OK ){
    vec0ScanQueryInit(&s, p, q, aMask, pRange);
    s.A = A;
    s.pReader = &r;
    memset(&job, 0, sizeof(job));
    job.xPart = vec0ScanTypedPart;
    job.pCtx = &s;
    job.nScratch = sizeof(double)*(size_t)nChunk;   /* aKey */
    job.bSerial = v->bStreamed;
    rc = vec0ScanRun(p, &job, pTop);
  }
  vec0ReaderClose(&r);

  /* The figures, from the copy or (streamed) T_vectors, in slot order. */
  if( rc==SQLITE_OK && v->bStreamed ){
    qsort(pTop->a, (size_t)pTop->n, sizeof(VsHit), vec0HitBySlot);
  }
  for(i=0; rc==SQLITE_OK && i<pTop->n; i++){
    const float *pVec = vec0CacheVector(p, pTop->a[i].iSlot);
    double d;
    if( pVec==0 ){
      rc = vec0ReaderRead(p, &r, pTop->a[i].iSlot, A);
      pVec = A;
      if( rc!=SQLITE_OK ) break;
    }
    d = vec0TypedFigure(&p->cfg, qb, (const unsigned char*)pVec);
    if( d!=d ){
      /* No direction (a zero vector under cosine): last, with a NULL distance, and
      ** outside any distance range, as NULL is in SQL. */
      if( pRange ) continue;
      d = HUGE_VAL;
    }else if( !vec0InRange(pRange, d) ){
      continue;
    }
    pTop->a[n] = pTop->a[i];
    pTop->a[n++].rDist = d;
  }
  vec0ReaderClose(&r);
  if( rc==SQLITE_OK ){
    pTop->n = n;
    vsTopKSort(pTop);
    if( pTop->n>k ) pTop->n = (int)k;
    for(i=0; i<pTop->n; i++){
      if( pTop->a[i].rDist==HUGE_VAL ) pTop->a[i].rDist = NAN;
    }
  }
  sqlite3_free(A);
  if( rc!=SQLITE_OK ) vsTopKFree(pTop);
  return rc;
}

/* The float32 scan of chunks iFirst..iEnd-1 (one part of vec0ScanRun's). */
static int vec0ScanF32Part(const Vec0ScanJob *pJob, Vec0ScanPart *pPart){
  const Vec0ScanQuery *s = (const Vec0ScanQuery*)pJob->pCtx;
  Vec0Table *p = s->p;
  const Vec0Snapshot *v = p->pView;
  const float *q = s->q;
  const unsigned char *aMask = s->aMask;
  const Vec0Range *pRange = s->pRange;
  VsTopK *pTop = pPart->pTop;
  float *aScore = (float*)pPart->pScratch;
  float qNorm = s->qNorm;
  int nChunk = p->cfg.nChunk, nDim = p->cfg.nDim, eMetric = p->cfg.eMetric;
  int b;

  for(b=pPart->iFirst; b<pPart->iEnd; b++){
    const Vec0Chunk *c = v->apChunk[b];
    sqlite3_int64 iBase = (sqlite3_int64)b*nChunk;
    int nRow = vec0ChunkRows(p, b);
    int i;
    if( nRow<=0 ) break;
    if( aMask ){
      /* A selective filter scores its few rows one by one; a broad one, the chunk. */
      int nPass = vec0MaskPass(aMask, c, iBase, nRow);
      if( nPass==0 ) continue;
      if( nPass*8 < nRow ){
        for(i=0; i<nRow; i++){
          if( aMask[iBase+i] && c->aLive[i] ){
            float dot;
            double d;
            vec0ScoreRows(p, c->aVec + (size_t)i*nDim, 1, q, &dot);
            d = vsScoreDistance(eMetric, dot, qNorm, c->aNorm[i]);
            if( vec0MaybeInRange(pRange, eMetric, d) ) vsTopKPush(pTop, d, c->aRowid[i], iBase+i);
          }
        }
        continue;
      }
    }
    vec0ScoreRows(p, c->aVec, nRow, q, aScore);
    vec0PushScores(p, c, aScore, iBase, nRow, qNorm, aMask, pRange, pTop);
  }
  return SQLITE_OK;
}

int vec0Search(Vec0Table *p, const float *q, sqlite3_int64 k,
               const unsigned char *aMask, const Vec0Range *pRange, VsTopK *pTop){
  const Vec0Snapshot *v = p->pView;
  Vec0ScanQuery s;
  Vec0ScanJob job;
  int rc;

  p->nScanThreads = 1;        /* until vec0ScanRun says otherwise */
  /* An int8 or bit query is nWord words of bytes: no float norm, its own scan. */
  if( p->cfg.eElem!=VS_F32 ) return vec0SearchTyped(p, q, k, aMask, pRange, pTop);
  if( v->bStreamed ) return vec0SearchStreamed(p, q, k, aMask, pRange, pTop);
  if( p->cfg.eQuant!=VEC0_QUANT_NONE ) return vec0SearchCoded(p, q, k, aMask, pRange, pTop);
  rc = vsTopKInit(pTop, vec0CandidateCap(k), v->nLive);
  if( rc!=SQLITE_OK ) goto cleanup;
  vec0ScanQueryInit(&s, p, q, aMask, pRange);
  s.qNorm = vsNormF32(q, p->cfg.nDim);
  memset(&job, 0, sizeof(job));
  job.xPart = vec0ScanF32Part;
  job.pCtx = &s;
  job.nScratch = sizeof(float)*(size_t)p->cfg.nChunk;   /* aScore */
  job.bBlas = p->cfg.eMetric!=VS_METRIC_L1;
  rc = vec0ScanRun(p, &job, pTop);
  if( rc==SQLITE_OK ) rc = vec0Rerank(p, q, k, pRange, pTop);

cleanup:
  if( rc!=SQLITE_OK ) vsTopKFree(pTop);
  return rc;
}

/* ---- 5. report ------------------------------------------------------------------------ */

/*
** The distance a vec0 KNN query reports for its hits, which step 4 has ordered by their
** exact (double) distance: for l2 and cosine, the figure sqlite-vec reports, its float32
** sums (vsL2F32Seq, vsCosineF32Seq, as vec_distance_l2 and vec_distance_cosine compute
** them), and for l1 the exact distance rounded to float32 as sqlite-vec stores it, so the
** same query gives the same numbers in both. The order is not changed: two hits whose
** float32 figures are equal stay ordered by exact distance, then rowid. dot (ours alone)
** keeps the exact distance. int8 and bit columns already have sqlite-vec's figures
** (vec0SearchTyped), and q is not a float vector there.
*/
int vec0ReportDistances(Vec0Table *p, const float *q, VsTopK *pTop){
  float *aTmp = 0;
  int i, rc = SQLITE_OK, nDim = p->cfg.nDim, eMetric = p->cfg.eMetric;
  if( p->cfg.eElem!=VS_F32 ) return SQLITE_OK;
  if( eMetric!=VS_METRIC_L2 && eMetric!=VS_METRIC_COSINE && eMetric!=VS_METRIC_L1 ) return SQLITE_OK;
  if( eMetric==VS_METRIC_L1 ){
    for(i=0; i<pTop->n; i++) pTop->a[i].rDist = (float)pTop->a[i].rDist;
    return SQLITE_OK;
  }
  for(i=0; i<pTop->n && rc==SQLITE_OK; i++){
    const float *v = vec0CacheVector(p, pTop->a[i].iSlot);
    if( v==0 ){
      if( aTmp==0 ){
        aTmp = sqlite3_malloc64(sizeof(float)*(size_t)nDim);
        if( aTmp==0 ){ rc = SQLITE_NOMEM; break; }
      }
      rc = vec0StoredVector(p, pTop->a[i].iSlot, aTmp);
      if( rc!=SQLITE_OK ) break;
      v = aTmp;
    }
    pTop->a[i].rDist = vec0ReportedDistance(eMetric, q, v, nDim, pTop->a[i].rDist);
  }
  sqlite3_free(aTmp);
  return rc;
}

/* ---- extra vector columns ---------------------------------------------------------------- */

/*
** A vector column after the first keeps its values in T_rows (column cN, the column's
** bytes) and has no in-memory copy: a KNN query on it reads every row's value from T_rows
** (step 2 over storage), computes the figure sqlite-vec reports for it (float32 l2 and
** cosine sums, l1 rounded to float32, dot exact; int8 and bit by vec0TypedFigure), and
** keeps the k nearest by (figure, rowid) in the same bounded heap. Filters, partition
** keys and distance ranges are the main column's: the slot mask (by the row's slot), the
** range applied to the figure itself.
*/

int vec0ExtraCheck(Vec0Table *p, int iCol, sqlite3_int64 iRowid, sqlite3_value *pVal){
  const Vec0Column *pCol = &p->cfg.aCol[iCol];
  if( sqlite3_value_type(pVal)==SQLITE_BLOB && sqlite3_value_bytes(pVal)==pCol->nVecByte ){
    return SQLITE_OK;
  }
  vec0SetError(p, "vec0 \"%s\": storage is damaged: column \"%s\" of row %lld in %s_rows "
                  "is not a vector of %d bytes", p->zName, pCol->zName, iRowid, p->zName,
               pCol->nVecByte);
  return SQLITE_CORRUPT_VTAB;
}

/* The figure a KNN query on a float32 extra column reports (as vec0ReportDistances does
** for the first column). */
static double vec0ExtraFigureF32(int eMetric, const float *q, const float *v, int n){
  if( eMetric==VS_METRIC_L2 ) return vsL2F32Seq(q, v, n);
  if( eMetric==VS_METRIC_COSINE ) return vsCosineF32Seq(q, v, n);
  if( eMetric==VS_METRIC_L1 ) return (float)vsDistanceF32(eMetric, q, v, n);
  return vsDistanceF32(eMetric, q, v, n);
}

int vec0SearchColumn(Vec0Table *p, int iCol, const float *q, sqlite3_int64 k,
                     const unsigned char *aMask, const Vec0Range *pRange, VsTopK *pTop){
  Vec0Config *pCfg = 0;       /* the declaration as column iCol sees it */
  sqlite3_stmt *pStmt = 0;
  float *aVec = 0;            /* one row's value, aligned */
  char *zSql = 0;
  sqlite3_int64 nSlot = p->pView ? p->pView->nSlot : 0;
  sqlite3_int64 nLive = p->pView ? p->pView->nLive : 0;
  int i, rc;

  p->nScanThreads = 1;        /* rows read from T_rows, on this thread */
  rc = vsTopKInit(pTop, k, nLive>0 ? nLive : 1);
  if( rc!=SQLITE_OK ) goto cleanup;
  pCfg = sqlite3_malloc64(sizeof(*pCfg));
  if( pCfg==0 ){ rc = SQLITE_NOMEM; goto cleanup; }
  vec0ColumnConfig(&p->cfg, iCol, pCfg);
  aVec = sqlite3_malloc64(sizeof(float)*(size_t)(pCfg->nWord>0 ? pCfg->nWord : 1));
  zSql = sqlite3_mprintf("SELECT rowid, slot, c%d FROM \"%w\".\"%w_rows\"", iCol,
                         p->zSchema, p->zName);
  if( aVec==0 || zSql==0 ){ rc = SQLITE_NOMEM; goto cleanup; }
  memset(aVec, 0, sizeof(float)*(size_t)pCfg->nWord);
  rc = sqlite3_prepare_v2(p->db, zSql, -1, &pStmt, 0);
  while( rc==SQLITE_OK && sqlite3_step(pStmt)==SQLITE_ROW ){
    sqlite3_int64 iRowid = sqlite3_column_int64(pStmt, 0);
    sqlite3_int64 iSlot = sqlite3_column_int64(pStmt, 1);
    double d;
    if( aMask ){
      if( iSlot<0 || iSlot>=nSlot ){
        rc = vec0SlotCheck(p, iSlot, "a row");
        if( rc==SQLITE_OK ){
          vec0SetError(p, "vec0 \"%s\": storage is damaged: slot %lld of row %lld is past "
                          "the copy's %lld slots", p->zName, iSlot, iRowid, nSlot);
          rc = SQLITE_CORRUPT_VTAB;
        }
        break;
      }
      if( !aMask[iSlot] ) continue;
    }
    rc = vec0ExtraCheck(p, iCol, iRowid, sqlite3_column_value(pStmt, 2));
    if( rc!=SQLITE_OK ) break;
    if( pCfg->eElem==VS_F32 ){
      vsF32FromLE((const unsigned char*)sqlite3_column_blob(pStmt, 2), pCfg->nDim, aVec);
      d = vec0ExtraFigureF32(pCfg->eMetric, q, aVec, pCfg->nDim);
    }else{
      memcpy(aVec, sqlite3_column_blob(pStmt, 2), (size_t)pCfg->nVecByte);
      d = vec0TypedFigure(pCfg, (const unsigned char*)q, (const unsigned char*)aVec);
    }
    if( d!=d ){
      /* No direction (a zero vector under cosine, stored by a damaged or migrated file):
      ** last, with a NULL distance, and outside any range, as NULL is in SQL. */
      if( pRange ) continue;
      d = HUGE_VAL;
    }else if( !vec0InRange(pRange, d) ){
      continue;
    }
    if( d<=vsTopKBound(pTop) ) vsTopKPush(pTop, d, iRowid, iSlot);
  }
  if( pStmt ){
    int rc2 = sqlite3_finalize(pStmt);
    pStmt = 0;
    if( rc==SQLITE_OK ) rc = rc2;
  }
  if( rc!=SQLITE_OK ) goto cleanup;
  vsTopKSort(pTop);
  if( pTop->n>k ) pTop->n = (int)k;
  for(i=0; i<pTop->n; i++){
    if( pTop->a[i].rDist==HUGE_VAL ) pTop->a[i].rDist = NAN;
  }

cleanup:
  sqlite3_finalize(pStmt);
  sqlite3_free(zSql);
  sqlite3_free(aVec);
  sqlite3_free(pCfg);
  if( rc!=SQLITE_OK ) vsTopKFree(pTop);
  return rc;
}

/* Queries scored against a chunk together, bounding the score matrix's size. */
#define VEC0_BATCH_GROUP 256

int vec0SearchBatch(Vec0Table *p, const float *Q, int nQuery, sqlite3_int64 k,
                    VsTopK *aTop){
  const Vec0Snapshot *v = p->pView;
  int nChunk = p->cfg.nChunk, nDim = p->cfg.nDim;
  float *aScore = 0, *aQNorm = 0;
  int rc = SQLITE_OK, j, b;

  memset(aTop, 0, sizeof(VsTopK)*(size_t)nQuery);
  if( v->bStreamed || p->cfg.eQuant!=VEC0_QUANT_NONE || p->cfg.eMetric==VS_METRIC_L1 ){
    /* Streamed: each query reads the blobs in turn (no copy to share the reads over);
    ** quantized: each query scores the codes, then re-scores its own candidates; L1: no
    ** matrix product gives its distances, each query scans the copy. */
    for(j=0; j<nQuery && rc==SQLITE_OK; j++){
      rc = vec0Search(p, Q + (size_t)j*nDim, k, 0, 0, &aTop[j]);
    }
    goto cleanup;
  }
  aScore = sqlite3_malloc64(sizeof(float)*(size_t)nChunk*VEC0_BATCH_GROUP);
  aQNorm = sqlite3_malloc64(sizeof(float)*(size_t)(nQuery ? nQuery : 1));
  if( aScore==0 || aQNorm==0 ){ rc = SQLITE_NOMEM; goto cleanup; }
  for(j=0; j<nQuery && rc==SQLITE_OK; j++){
    aQNorm[j] = vsNormF32(Q + (size_t)j*nDim, nDim);
    rc = vsTopKInit(&aTop[j], vec0CandidateCap(k), v->nLive);
  }
  if( rc!=SQLITE_OK ) goto cleanup;

  for(b=0; b<v->nChunkAlloc; b++){
    const Vec0Chunk *c = v->apChunk[b];
    sqlite3_int64 iBase = (sqlite3_int64)b*nChunk;
    int nRow = vec0ChunkRows(p, b);
    int j0;
    if( nRow<=0 ) break;
    for(j0=0; j0<nQuery; j0+=VEC0_BATCH_GROUP){
      int nGroup = nQuery-j0 < VEC0_BATCH_GROUP ? nQuery-j0 : VEC0_BATCH_GROUP;
      vsScoreBlockBatch(c->aVec, nRow, nDim, Q + (size_t)j0*nDim, nGroup, aScore);
      for(j=0; j<nGroup; j++){
        vec0PushScores(p, c, aScore + (size_t)j*nRow, iBase, nRow, aQNorm[j0+j], 0, 0, &aTop[j0+j]);
      }
    }
  }
  for(j=0; j<nQuery && rc==SQLITE_OK; j++) rc = vec0Rerank(p, Q + (size_t)j*nDim, k, 0, &aTop[j]);

cleanup:
  sqlite3_free(aScore);
  sqlite3_free(aQNorm);
  if( rc!=SQLITE_OK ){
    for(j=0; j<nQuery; j++) vsTopKFree(&aTop[j]);
  }
  return rc;
}
