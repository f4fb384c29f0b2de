/*
** vec0_search.c: the exact k-nearest search of a vec0 table.
**
** Usage (internal; vec0.c, vec0_batch.c and libsql_index_topk.c call these):
**
**   vec0VectorArg(p, argv[i], "query", &q, &zErr);     // decode + check, once for all
**   vec0CacheEnsure(p, VEC0_NEED_SEARCH);
**   vec0Search(p, q, k, aMask, pRange, &top);          // top.a[0..top.n) nearest first
**   vec0SearchBatch(p, Q, nQuery, k, aTop);            // many queries, one pass
**
** How it works: a query reads down these steps, in this order.
**   1. check   the query vector has the column's dimensions and is finite (vec0VectorArg
**              / vec0VectorCheck: one set of checks for MATCH, the batch function and
**              vector_top_k). An all-zero vector is taken: under cosine it has no
**              direction, its distance to anything is NULL, and such a row (or every row,
**              for such a query) ranks after every row that has one, by rowid, and is
**              outside any distance range (VS_NO_DIRECTION), as NULL is in SQL;
**   2. scan    each chunk of the in-memory copy is scored against the query by one block
**              product (vsScoreBlock: AVX2 or BLAS sgemv; sgemm for a batch), or under
**              distance_metric=l1 by the L1 distances themselves (vsL1Block); a filter's
**              slot mask skips rows, and a selective one scores its few rows one by one;
**   3. heap    scores become approximate distances (vsScoreDistance), each within a
**              proven error (vec0ScoreError) of the exact one; the k + VEC0_RERANK_EXTRA
**              with the lowest lower bounds are kept in a bounded heap (vector_topk.c);
**   4. re-rank those candidates get their distance computed in double precision
**              (vsDistanceF32), are sorted by (distance, rowid) and cut to k; when a row
**              left out of the heap may still be as near as the k-th, a second pass
**              computes the exact distance of every such row (vec0Certify): the answer
**              is exact, ties and duplicates included;
**   5. report  a KNN query on a vec0 table reports l2 and cosine distances as sqlite-vec
**              computes them (float32 sums), in the order of step 4
**              (vec0ReportDistances; vector_top_k and the batch function keep step 4's).
** Steps 2-3 over the in-memory copy (and each pass of vec0Certify) run on up to
** 1 + PRAGMA threads threads for a large table (vec0ScanRun, vec0_parallel.c): each thread
** scans a run of chunks into a heap of its own, the heaps are merged before step 4, and
** the answer is the one-thread answer (see Vec0ScanCtx). A streamed copy is scanned on the
** calling thread.
** A distance range ("distance > ?" for paging) bounds the figure step 5 reports; it is
** applied at step 3 from the error interval, computing the figure only of a row that
** straddles a bound (vec0RangeClass), so no row outside takes a candidate's place.
** A quantized table (vec0_quant.c) scans codes instead at step 2, keeps the best
** k*oversample by coarse distance at step 3 (bit codes: the best VEC0_BIT_WIDEN times more
** by Hamming distance, ranked again by the float query against their signs), and step 4
** reads those candidates' float32 vectors from T_vectors; its distance range applies at
** step 4, and when it leaves fewer than k the scan runs again without the rows it found
** outside (vec0SearchCoded).
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
  /* All zeros is taken, as sqlite-vec takes it: under cosine it has no direction, so its
  ** distance is NULL and it ranks after every row that has one (VS_NO_DIRECTION). */
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

/* ---- exactness: how far a float32 score may be from the distance ------------------------- */

/*
** The scan ranks rows by float32 scores (an sgemv, AVX2 or BLAS, summing in any order); the
** answer is ordered by the exact distance (vsDistanceF32), and a distance range applies to
** the figure step 5 reports. A float32 sum of n terms is within gamma(n) = n*u/(1-n*u)
** of the real sum times the sum of the terms' magnitudes, whatever the order of the
** additions (u = 2^-24). So each score gives an interval its row's exact distance lies in
** (vec0ScoreError, twice that bound, so a float32 norm and double rounding fit in too):
**   - a row whose interval is wholly outside the range is dropped, one wholly inside is
**     kept, and only one that straddles a bound gets its reported figure computed to
**     decide (vec0RangeClass): no row outside the range takes a candidate's place;
**   - the heap ranks candidates by the interval's low end (the lower bound); once the
**     candidates are re-ranked exactly, the k-th exact distance T is known, and when a
**     row was left out of the heap whose lower bound is not above T, a second pass
**     (bExact) computes the exact distance of every row whose lower bound is within T,
**     so ties and duplicates across the cut come back by ascending rowid (vec0Certify).
*/
#define VEC0_F32_U (1.0/16777216.0)

typedef struct Vec0Scan Vec0Scan;
struct Vec0Scan {
  Vec0Table *p;
  const float *q;             /* The query, nDim floats */
  float qNorm;                /* Its float32 norm, as the scores use it */
  const Vec0Range *pRange;    /* Bounds on the reported distance, or NULL */
  double rGamma;              /* 2*gamma(nDim + 4): a float32 sum's relative error, doubled */
  int bExact;                 /* 0: candidates by lower bound; 1: exact distances (pass 2) */
  double rTau;                /* Pass 2: the k-th exact distance pass 1 found */
  sqlite3_int64 nOffered;     /* Rows in range that passed the mask, offered to the heap */
  VsTopK *pTop;               /* The heap the rows go to */
};

static void vec0ScanInit(Vec0Scan *s, Vec0Table *p, const float *q, const Vec0Range *pRange,
                         VsTopK *pTop){
  double nu = (double)(p->cfg.nDim + 4)*VEC0_F32_U;
  memset(s, 0, sizeof(*s));
  s->p = p;
  s->q = q;
  s->qNorm = p->cfg.eElem==VS_F32 ? vsNormF32(q, p->cfg.nDim) : 0.0f;
  s->pRange = pRange;
  s->rGamma = 2.0*nu/(1.0 - nu);
  s->pTop = pTop;
}

/* A distance on the scale of the approximate ones (vsScoreDistance squares L2). */
static double vec0ApproxScale(int eMetric, double d){
  if( eMetric==VS_METRIC_L2 ) return d>0.0 ? d*d : 0.0;
  return d;
}

/* The model behind vec0ScoreError holds for norms in [VEC0_NORM_MIN, VEC0_NORM_MAX]: no
** float32 sum can overflow below the top, and below the bottom a cosine's norms lose their
** relative precision to underflow. Outside, a row has no bound: its exact distance decides. */
#define VEC0_NORM_MAX 1e18
#define VEC0_NORM_MIN 1e-15

/* What gradual underflow may add to a float32 sum of n terms: 2^-150 an operation. */
static double vec0Tiny(const Vec0Scan *s){
  return (double)(s->p->cfg.nDim + 4)*1e-44;
}

/* How far the approximate distance a (vsScoreDistance of a float32 score) of a row whose
** float32 norm is vNorm may be from its exact distance, on a's scale (+inf: no bound). */
static double vec0ScoreError(const Vec0Scan *s, double a, float vNorm){
  double g = s->rGamma, qn = s->qNorm, vn = vNorm;
  if( s->p->cfg.eMetric==VS_METRIC_COSINE && (qn==0.0 || vn==0.0) ){
    return 0.0;               /* no direction: vsScoreDistance's VS_NO_DIRECTION, exactly */
  }
  if( !(qn<=VEC0_NORM_MAX) || !(vn<=VEC0_NORM_MAX) ) return INFINITY;
  switch( s->p->cfg.eMetric ){
    case VS_METRIC_COSINE:
      return qn<VEC0_NORM_MIN || vn<VEC0_NORM_MIN ? INFINITY : 2.0*g;
    case VS_METRIC_DOT:
      return g*qn*vn*(1.0 + g) + vec0Tiny(s);
    case VS_METRIC_L1:
      return g*(a<0.0 ? -a : a)*(1.0 + g) + vec0Tiny(s);
  }
  return g*(qn + vn)*(qn + vn)*(1.0 + g) + vec0Tiny(s);
}

/* Whether an exact distance d is within the range. */
static int vec0InRange(const Vec0Range *r, double d){
  if( r==0 ) return 1;
  if( r->bLo && (r->bLoOpen ? !(d>r->rLo) : !(d>=r->rLo)) ) return 0;
  if( r->bHi && (r->bHiOpen ? !(d<r->rHi) : !(d<=r->rHi)) ) return 0;
  return 1;
}

/* Where a row whose approximate distance is a, within e, stands against the range, by the
** interval its reported figure lies in: -1 outside, 1 inside, 0 not known from a. */
static int vec0RangeClass(const Vec0Scan *s, double a, double e){
  const Vec0Range *r = s->pRange;
  double g = s->rGamma, lo, hi;
  int eMetric = s->p->cfg.eMetric;
  if( eMetric==VS_METRIC_L2 ){
    /* The figure is the square root of a float32 sum of squares: within g of the squared
    ** distance, relatively, and underflow's share absolutely. */
    double sLo = (a - e)*(1.0 - g) - vec0Tiny(s), sHi = (a + e)*(1.0 + g) + vec0Tiny(s);
    lo = sqrt(sLo>0.0 ? sLo : 0.0)*(1.0 - g);
    hi = sqrt(sHi>0.0 ? sHi : 0.0)*(1.0 + g);
  }else if( eMetric==VS_METRIC_COSINE ){
    lo = a - e - g;
    hi = a + e + g;
  }else if( eMetric==VS_METRIC_L1 ){
    lo = (a - e)*(1.0 - g);
    hi = (a + e)*(1.0 + g);
  }else{
    lo = a - e;
    hi = a + e;
  }
  if( r->bLo && (r->bLoOpen ? hi<=r->rLo : hi<r->rLo) ) return -1;
  if( r->bHi && (r->bHiOpen ? lo>=r->rHi : lo>r->rHi) ) return -1;
  if( r->bLo && !(r->bLoOpen ? lo>r->rLo : lo>=r->rLo) ) return 0;
  if( r->bHi && !(r->bHiOpen ? hi<r->rHi : hi<=r->rHi) ) return 0;
  return 1;
}

/* The distance step 5 reports for a vector whose exact distance is d. */
static double vec0ReportedDistance(int eMetric, const float *q, const float *v, int n, double d){
  if( eMetric==VS_METRIC_L2 ) return vsL2F32Seq(q, v, n);
  if( eMetric==VS_METRIC_COSINE ) return vsCosineF32Seq(q, v, n);
  if( eMetric==VS_METRIC_L1 ) return (float)d;  /* sqlite-vec sums in double, keeps a float */
  return d;
}

/* Offer one row to the scan: approximate distance a, float32 norm vNorm, vector v. Pass 1
** pushes its lower bound when it is in range; pass 2 pushes its exact distance when its
** lower bound is within the k-th exact distance known. */
static void vec0Offer(Vec0Scan *s, double a, float vNorm, const float *v,
                      sqlite3_int64 iRowid, sqlite3_int64 iSlot){
  int eMetric = s->p->cfg.eMetric, nDim = s->p->cfg.nDim;
  double e = vec0ScoreError(s, a, vNorm);
  double lb = a - e, d;
  if( lb!=lb ) lb = -INFINITY;  /* a float32 overflow: no bound, the exact distance decides */
  if( s->pRange && eMetric==VS_METRIC_COSINE && (s->qNorm==0.0f || vNorm==0.0f) ){
    return;                   /* no direction: a NULL distance, outside any range */
  }
  if( s->bExact ){
    double rTau = vsTopKBound(s->pTop);
    if( s->rTau<rTau ) rTau = s->rTau;
    if( lb > vec0ApproxScale(eMetric, rTau) ) return;
    d = vsDistanceF32(eMetric, s->q, v, nDim);
    if( d!=d ) d = VS_NO_DIRECTION;   /* all zeros under cosine: after every other row */
    if( s->pRange
     && !vec0InRange(s->pRange, vec0ReportedDistance(eMetric, s->q, v, nDim, d)) ) return;
    vsTopKPush(s->pTop, d, iRowid, iSlot);
    return;
  }
  if( s->pRange ){
    int eIn = vec0RangeClass(s, a, e);
    if( eIn<0 ) return;
    if( eIn==0 ){
      d = vsDistanceF32(eMetric, s->q, v, nDim);
      if( !vec0InRange(s->pRange, vec0ReportedDistance(eMetric, s->q, v, nDim, d)) ) return;
    }
  }
  s->nOffered++;
  if( lb<=vsTopKBound(s->pTop) ) vsTopKPush(s->pTop, lb, iRowid, iSlot);
}

/* The lower bound of the worst candidate a full heap keeps (every row left out has one at
** least as large), or +inf when the heap is not full. */
static double vec0HeapWorst(const VsTopK *pTop){
  return pTop->n>0 && pTop->n==pTop->nCap ? pTop->a[0].rDist : INFINITY;
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
** i), to the scan: live rows that pass aMask (when given). */
static void vec0PushScores(Vec0Scan *s, const Vec0Chunk *c, const float *aScore,
                           sqlite3_int64 iBase, int nRow, const unsigned char *aMask){
  int eMetric = s->p->cfg.eMetric, nDim = s->p->cfg.nDim, i;
  if( !s->bExact && s->pRange==0 ){
    /* The common case, kept lean: no range, pass 1 (vec0Offer's second half). */
    double rBound = vsTopKBound(s->pTop);
    for(i=0; i<nRow; i++){
      double a, lb;
      if( !c->aLive[i] || (aMask && !aMask[iBase+i]) ) continue;
      a = vsScoreDistance(eMetric, aScore[i], s->qNorm, c->aNorm[i]);
      lb = a - vec0ScoreError(s, a, c->aNorm[i]);
      if( lb!=lb ) lb = -INFINITY;
      s->nOffered++;
      if( lb<=rBound ){
        vsTopKPush(s->pTop, lb, c->aRowid[i], iBase+i);
        rBound = vsTopKBound(s->pTop);
      }
    }
    return;
  }
  for(i=0; i<nRow; i++){
    if( !c->aLive[i] || (aMask && !aMask[iBase+i]) ) continue;
    vec0Offer(s, vsScoreDistance(eMetric, aScore[i], s->qNorm, c->aNorm[i]), c->aNorm[i],
              c->aVec + (size_t)i*nDim, c->aRowid[i], iBase+i);
  }
}

/* ---- 4. re-rank ------------------------------------------------------------------------ */

static int vec0HitBySlot(const void *a, const void *b){
  sqlite3_int64 x = ((const VsHit*)a)->iSlot, y = ((const VsHit*)b)->iSlot;
  return x<y ? -1 : x>y;
}

/* Replace approximate distances by exact ones (vectors from the copy, or from T_vectors
** when the copy holds none: streamed or quantized), drop those outside the range (and
** clear their slots in aOut when it is given), sort, keep the best k. */
static int vec0Rerank(Vec0Table *p, const float *q, sqlite3_int64 k,
                      const Vec0Range *pRange, unsigned char *aOut, VsTopK *pTop){
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
    ** (step 5), so "distance > the last one seen" pages without skipping or repeating.
    ** No direction (all zeros under cosine) is a NULL distance: after every other row,
    ** outside any range. */
    if( d!=d ) d = pRange ? NAN : VS_NO_DIRECTION;
    if( pRange && (d!=d || !vec0InRange(pRange, vec0ReportedDistance(p->cfg.eMetric, q, v, p->cfg.nDim, d))) ){
      if( aOut ) aOut[pTop->a[i].iSlot] = 0;
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

/* A part's walk over its chunks of the copy, skipping those no row of which passes the
** mask: the chunk c, its first slot iBase, its rows nRow, and how many pass (nPass;
** without a mask, nRow). */
typedef struct Vec0ChunkWalk Vec0ChunkWalk;
struct Vec0ChunkWalk {
  Vec0Table *p;
  const unsigned char *aMask; /* The filter's slots, or NULL */
  int b, iEnd;                /* The next chunk, and the part's end */
  const Vec0Chunk *c;         /* The chunk now */
  sqlite3_int64 iBase;        /* Its first slot */
  int nRow, nPass;            /* Its rows, and those that pass */
};

static void vec0WalkInit(Vec0ChunkWalk *w, Vec0Table *p, const Vec0ScanPart *pPart,
                         const unsigned char *aMask){
  memset(w, 0, sizeof(*w));
  w->p = p;
  w->aMask = aMask;
  w->b = pPart->iFirst;
  w->iEnd = pPart->iEnd;
}

/* Move to the next chunk with a row that passes: 0 at the end of the part or the copy. */
static int vec0WalkNext(Vec0ChunkWalk *w){
  while( w->b<w->iEnd ){
    int b = w->b++;
    w->c = w->p->pView->apChunk[b];
    w->iBase = (sqlite3_int64)b*w->p->cfg.nChunk;
    w->nRow = vec0ChunkRows(w->p, b);
    if( w->nRow<=0 ) return 0;
    w->nPass = w->aMask ? vec0MaskPass(w->aMask, w->c, w->iBase, w->nRow) : w->nRow;
    if( w->nPass>0 ) return 1;
  }
  return 0;
}

/* Whether the chunk's rows are scored one by one: a selective filter leaves few of them
** (a broad one, or none, scores the chunk whole). */
static int vec0WalkFew(const Vec0ChunkWalk *w){
  return w->aMask && w->nPass*8 < w->nRow;
}

/* Whether row i of the chunk is live and passes the mask. */
static int vec0WalkRow(const Vec0ChunkWalk *w, int i){
  return w->c->aLive[i] && (w->aMask==0 || w->aMask[w->iBase+i]);
}

/*
** The scans of the in-memory copy run as a job of vec0ScanRun (vec0_parallel.c): the chunks
** are cut into parts, on helper threads when the table is large and PRAGMA threads allows.
** Each part scans with a copy of the scan (Vec0Scan: the query, its error bounds, the
** range, the pass) whose heap and count are the part's own; the parts' heaps are merged
** into the scan's and their counts added, on the calling thread, before the re-rank and
** vec0Certify read them. A heap keeps the best by (bound, rowid), a total order, so the
** merged heap, its worst bound and the count are those of one thread scanning every chunk:
** pass 1's candidates, the decision to run pass 2 and pass 2's answer do not depend on the
** number of threads. In pass 2 a part prunes by its own heap's bound, never smaller than
** the merged heap's: it keeps every row that one thread would.
*/
typedef struct Vec0ScanCtx Vec0ScanCtx;
struct Vec0ScanCtx {
  Vec0Table *p;
  const Vec0Scan *s;          /* float32, int8/bit columns: the scan each part copies */
  const unsigned char *aMask; /* Slots the filters pass, or NULL */
  const Vec0QuantQuery *pQQ;  /* Quantized tables: the query's code */
  float *aDist;               /* bit codes: every slot's Hamming distance (parts write theirs) */
  sqlite3_int64 *aCount;      /* bit codes: rows at each distance (parts' histograms added) */
  int nMax;                   /* bit codes: the largest distance */
  float *A;                   /* int8/bit columns, streamed: one chunk's vectors (bSerial) */
  Vec0Reader *pReader;        /* int8/bit columns, streamed: reads them (bSerial) */
  sqlite3_int64 nOffered;     /* Rows the parts offered (added up) */
};

static void vec0ScanCtxInit(Vec0ScanCtx *x, Vec0Table *p, const Vec0Scan *s,
                            const unsigned char *aMask){
  memset(x, 0, sizeof(*x));
  x->p = p;
  x->s = s;
  x->aMask = aMask;
}

/* After the parts, on the calling thread, in part order: their counts (and bit codes'
** histograms) added to the scan's. */
static void vec0ScanFold(const Vec0ScanJob *pJob, const Vec0ScanPart *pPart){
  Vec0ScanCtx *x = (Vec0ScanCtx*)pJob->pCtx;
  x->nOffered += pPart->nOffered;
  if( x->aCount ){
    const sqlite3_int64 *aPart = (const sqlite3_int64*)pPart->pScratch;
    int d;
    for(d=0; d<=x->nMax; d++) x->aCount[d] += aPart[d];
  }
}

/* The scan of a streamed copy (over the memory budget): each blob of T_vectors is read
** in turn, straight from the file's pages into one buffer, and scored; the copy gives
** liveness and rowids, the norms are computed from the vectors read. */
static int vec0ScanStreamed(Vec0Scan *s, const unsigned char *aMask){
  Vec0Table *p = s->p;
  const Vec0Snapshot *v = p->pView;
  int nDim = p->cfg.nDim, nPer = p->nPerBlob, eMetric = p->cfg.eMetric;
  float *A = 0, *aScore = 0;
  sqlite3_stmt *pStmt = 0;
  Vec0Reader r;
  sqlite3_int64 nSeen = 0;
  int rc = SQLITE_OK;
  memset(&r, 0, sizeof(r));
  A = sqlite3_malloc64(sizeof(float)*(size_t)nPer*(size_t)nDim);
  aScore = sqlite3_malloc64(sizeof(float)*(size_t)nPer);
  if( A==0 || aScore==0 ) rc = SQLITE_NOMEM;
  if( rc==SQLITE_OK ) rc = vec0Stmt(p, VEC0_STMT_BLOB_IDS, &pStmt);
  while( rc==SQLITE_OK && sqlite3_step(pStmt)==SQLITE_ROW ){
    sqlite3_int64 iBlob = sqlite3_column_int64(pStmt, 0);
    sqlite3_int64 iBase;
    const Vec0Chunk *c;
    int i, i0, nRow, nIn = 0, nLive = 0;
    if( iBlob!=nSeen++ ){
      vec0SetError(p, "vec0 \"%s\": storage is damaged: vector blob %lld of %s_vectors is "
                      "missing", p->zName, nSeen-1, p->zName);
      rc = SQLITE_CORRUPT_VTAB;
      break;
    }
    if( iBlob<0 || iBlob>vec0BlobOf(p, v->nSlot, 0) ){
      vec0SetError(p, "vec0 \"%s\": storage is damaged: vector blob %lld of %s_vectors",
                   p->zName, iBlob, p->zName);
      rc = SQLITE_CORRUPT_VTAB;
      break;
    }
    iBase = vec0BlobFirst(p, iBlob, &nIn);
    if( iBase>=v->nSlot ) continue;
    nRow = (int)(v->nSlot - iBase < nIn ? v->nSlot - iBase : nIn);
    c = v->apChunk[iBase/p->cfg.nChunk];
    i0 = (int)(iBase%p->cfg.nChunk);
    for(i=0; i<nRow; i++) nLive += c->aLive[i0+i] && (aMask==0 || aMask[iBase+i]);
    if( nLive==0 ) continue;                  /* nothing to read here */
    rc = vec0ReaderBlob(p, &r, iBlob, A);
    if( rc!=SQLITE_OK ) break;
    vec0ScoreRows(p, A, nRow, s->q, aScore);
    for(i=0; i<nRow; i++){
      const float *pRow = A + (size_t)i*nDim;
      float vNorm;
      if( !c->aLive[i0+i] || (aMask && !aMask[iBase+i]) ) continue;
      vNorm = vsNormF32(pRow, nDim);
      vec0Offer(s, vsScoreDistance(eMetric, aScore[i], s->qNorm, vNorm), vNorm, pRow,
                c->aRowid[i0+i], iBase+i);
    }
  }
  if( pStmt ){
    if( rc==SQLITE_OK ) rc = sqlite3_reset(pStmt); else sqlite3_reset(pStmt);
  }
  vec0ReaderClose(&r);
  sqlite3_free(A);
  sqlite3_free(aScore);
  return rc;
}

/* The scan of chunks iFirst..iEnd-1 of the in-memory copy (one part of vec0ScanCopy's):
** each chunk scored by one block product, or row by row where a selective filter leaves
** few rows of it. */
static int vec0ScanCopyPart(const Vec0ScanJob *pJob, Vec0ScanPart *pPart){
  const Vec0ScanCtx *x = (const Vec0ScanCtx*)pJob->pCtx;
  Vec0Table *p = x->p;
  int nDim = p->cfg.nDim, eMetric = p->cfg.eMetric;
  float *aScore = (float*)pPart->pScratch;
  Vec0Scan part = *x->s;      /* the scan, with the part's heap and count */
  Vec0Scan *s = &part;
  Vec0ChunkWalk w;
  part.pTop = pPart->pTop;
  part.nOffered = 0;
  vec0WalkInit(&w, p, pPart, x->aMask);
  while( vec0WalkNext(&w) ){
    const Vec0Chunk *c = w.c;
    int i;
    if( !vec0WalkFew(&w) ){
      vec0ScoreRows(p, c->aVec, w.nRow, s->q, aScore);
      vec0PushScores(s, c, aScore, w.iBase, w.nRow, x->aMask);
      continue;
    }
    for(i=0; i<w.nRow; i++){
      const float *pRow = c->aVec + (size_t)i*nDim;
      float dot;
      if( !vec0WalkRow(&w, i) ) continue;
      vec0ScoreRows(p, pRow, 1, s->q, &dot);
      vec0Offer(s, vsScoreDistance(eMetric, dot, s->qNorm, c->aNorm[i]), c->aNorm[i],
                pRow, c->aRowid[i], w.iBase+i);
    }
  }
  pPart->nOffered = part.nOffered;
  return SQLITE_OK;
}

/* The scan of the in-memory copy, on one thread or several (vec0ScanRun). */
static int vec0ScanCopy(Vec0Scan *s, const unsigned char *aMask){
  Vec0ScanCtx x;
  Vec0ScanJob job;
  int rc;
  vec0ScanCtxInit(&x, s->p, s, aMask);
  memset(&job, 0, sizeof(job));
  job.xPart = vec0ScanCopyPart;
  job.pCtx = &x;
  job.nScratch = sizeof(float)*(size_t)s->p->cfg.nChunk;   /* aScore */
  job.bBlas = s->p->cfg.eMetric!=VS_METRIC_L1;
  job.xFold = vec0ScanFold;
  rc = vec0ScanRun(s->p, &job, s->pTop);
  if( rc==SQLITE_OK ) s->nOffered += x.nOffered;
  return rc;
}

static int vec0ScanRows(Vec0Scan *s, const unsigned char *aMask){
  return s->p->pView->bStreamed ? vec0ScanStreamed(s, aMask) : vec0ScanCopy(s, aMask);
}

/* After the re-rank of pass 1 (pTop: at most k hits, exact, sorted; rWorst: the heap's
** worst lower bound before it), make the answer exact: when a row in range was left out
** of the heap and its lower bound may not be above the k-th exact distance, pass 2 scans
** again and computes the exact distance of every row whose lower bound is within it. */
static int vec0Certify(Vec0Scan *s, sqlite3_int64 k, double rWorst,
                       const unsigned char *aMask){
  VsTopK *pTop = s->pTop;
  double rTau;
  int rc;
  if( s->nOffered<=pTop->nCap ) return SQLITE_OK;         /* every candidate was kept */
  rTau = pTop->n>=k ? pTop->a[pTop->n-1].rDist : INFINITY;
  if( rWorst > vec0ApproxScale(s->p->cfg.eMetric, rTau) ) return SQLITE_OK;
  vsTopKFree(pTop);
  rc = vsTopKInit(pTop, k, s->p->pView->nLive);
  if( rc!=SQLITE_OK ) return rc;
  s->bExact = 1;
  s->rTau = rTau;
  rc = vec0ScanRows(s, aMask);
  s->bExact = 0;
  if( rc==SQLITE_OK ){
    vsTopKSort(pTop);
    if( pTop->n>k ) pTop->n = (int)k;
  }
  return rc;
}

/* The exact search of a float32 column, from the copy or streamed. */
static int vec0SearchF32(Vec0Table *p, const float *q, sqlite3_int64 k,
                         const unsigned char *aMask, const Vec0Range *pRange, VsTopK *pTop){
  Vec0Scan s;
  double rWorst;
  int rc;
  vec0ScanInit(&s, p, q, pRange, pTop);
  rc = vsTopKInit(pTop, vec0CandidateCap(k), p->pView->nLive);
  if( rc==SQLITE_OK ) rc = vec0ScanRows(&s, aMask);
  rWorst = vec0HeapWorst(pTop);
  if( rc==SQLITE_OK ) rc = vec0Rerank(p, q, k, pRange, 0, pTop);
  if( rc==SQLITE_OK ) rc = vec0Certify(&s, k, rWorst, aMask);
  if( rc!=SQLITE_OK ) vsTopKFree(pTop);
  return rc;
}

/* The bit scan of chunks iFirst..iEnd-1: each slot's Hamming distance into aDist (-1 for
** a row that is gone or filtered out), the distances counted in the part's histogram. */
static int vec0BitPart(const Vec0ScanJob *pJob, Vec0ScanPart *pPart){
  const Vec0ScanCtx *x = (const Vec0ScanCtx*)pJob->pCtx;
  Vec0Table *p = x->p;
  const Vec0Snapshot *v = p->pView;
  const unsigned char *aMask = x->aMask;
  sqlite3_int64 *aCount = (sqlite3_int64*)pPart->pScratch;
  float *aDist = x->aDist;
  int nChunk = p->cfg.nChunk, b;
  memset(aCount, 0, sizeof(sqlite3_int64)*((size_t)x->nMax + 1));
  for(b=pPart->iFirst; b<pPart->iEnd; b++){
    const Vec0Chunk *c = v->apChunk[b];
    sqlite3_int64 iBase = (sqlite3_int64)b*nChunk;
    int nRow = vec0ChunkRows(p, b), i;
    if( nRow<=0 ) break;
    vec0QuantScore(x->pQQ, c->aCode, 0, c->aNorm, nRow, aDist + iBase);
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

/* The bit scan: the Hamming distance of every live row that passes aMask (vec0BitPart, on
** one thread or several), then the rows nearer than the distance at which nWide rows are
** reached, and as many at that distance as fit, go into pWide. Distances are small
** integers: a histogram finds that distance in one pass, with no heap to keep while
** scanning. *pnOffered: the rows that passed. */
static int vec0BitCandidates(Vec0Table *p, const Vec0QuantQuery *pQ, const unsigned char *aMask,
                             sqlite3_int64 nWide, VsTopK *pWide, sqlite3_int64 *pnOffered){
  const Vec0Snapshot *v = p->pView;
  /* Distances go up to 8*nCode (a damaged file's codes may set the padding bits). */
  int nChunk = p->cfg.nChunk, nMax = 8*pQ->nCode;
  sqlite3_int64 *aCount = sqlite3_malloc64(sizeof(sqlite3_int64)*((size_t)nMax + 1));
  float *aDist = sqlite3_malloc64(sizeof(float)*(size_t)(v->nSlot ? v->nSlot : 1));
  sqlite3_int64 iSlot, nBelow = 0;
  Vec0ScanCtx x;
  Vec0ScanJob job;
  int b, rc, iEdge = nMax;
  if( aCount==0 || aDist==0 ){ rc = SQLITE_NOMEM; goto cleanup; }
  memset(aCount, 0, sizeof(sqlite3_int64)*((size_t)nMax + 1));
  vec0ScanCtxInit(&x, p, 0, aMask);
  x.pQQ = pQ;
  x.aDist = aDist;
  x.aCount = aCount;
  x.nMax = nMax;
  memset(&job, 0, sizeof(job));
  job.xPart = vec0BitPart;
  job.pCtx = &x;
  job.nScratch = sizeof(sqlite3_int64)*((size_t)nMax + 1);   /* the part's histogram */
  job.xFold = vec0ScanFold;
  rc = vec0ScanRun(p, &job, 0);
  if( rc!=SQLITE_OK ) goto cleanup;
  /* The edge: the smallest distance at which the count reaches nWide. */
  for(b=0; b<=nMax; b++){
    if( nBelow + aCount[b]>=nWide ){ iEdge = b; break; }
    nBelow += aCount[b];
  }
  /* Every row up to the edge is offered: pWide keeps nWide of them, those at the edge
  ** by ascending rowid, as the answer breaks ties. */
  for(iSlot=0; iSlot<v->nSlot; iSlot++){
    float d = aDist[iSlot];
    const Vec0Chunk *c;
    if( d<0.0f || d>(float)iEdge ) continue;
    c = v->apChunk[iSlot/nChunk];
    vsTopKPush(pWide, d, c->aRowid[iSlot%nChunk], iSlot);
  }
  *pnOffered = nBelow;
  for(; b<=nMax; b++) *pnOffered += aCount[b];

cleanup:
  sqlite3_free(aCount);
  sqlite3_free(aDist);
  return rc;
}

/* The int8-code scan of chunks iFirst..iEnd-1 into the part's heap, ranked by (coarse
** distance, rowid): a tie with the worst kept candidate goes to the heap, which keeps the
** smaller rowid, as the answer does, whatever part scans the rows. */
static int vec0CodedPart(const Vec0ScanJob *pJob, Vec0ScanPart *pPart){
  const Vec0ScanCtx *x = (const Vec0ScanCtx*)pJob->pCtx;
  const Vec0QuantQuery *pQ = x->pQQ;
  VsTopK *pScan = pPart->pTop;
  float *aDist = (float*)pPart->pScratch;
  int nCode = pQ->nCode;
  sqlite3_int64 nOffered = 0;
  Vec0ChunkWalk w;
  vec0WalkInit(&w, x->p, pPart, x->aMask);
  while( vec0WalkNext(&w) ){
    const Vec0Chunk *c = w.c;
    double rBound = vsTopKBound(pScan);
    int i, bFew = vec0WalkFew(&w);
    if( !bFew ) vec0QuantScore(pQ, c->aCode, c->aScale, c->aNorm, w.nRow, aDist);
    for(i=0; i<w.nRow; i++){
      if( !vec0WalkRow(&w, i) ) continue;
      nOffered++;
      if( bFew ){
        float d = vec0QuantScoreOne(pQ, c->aCode + (size_t)i*nCode,
                                    c->aScale ? c->aScale[i] : 0.0f, c->aNorm[i]);
        vsTopKPush(pScan, d, c->aRowid[i], w.iBase+i);
        continue;
      }
      /* Coarse distances tie often (duplicates have one code). */
      if( aDist[i]>rBound ) continue;
      vsTopKPush(pScan, aDist[i], c->aRowid[i], w.iBase+i);
      rBound = vsTopKBound(pScan);
    }
  }
  pPart->nOffered = nOffered;
  return SQLITE_OK;
}

/* The candidates of a quantized scan: every live row's code that passes aMask is scored
** against the query's, and the best nCand by that coarse distance (ties by rowid) go to
** pTop; *pnOffered counts the rows that passed. */
static int vec0CodedCandidates(Vec0Table *p, const Vec0QuantQuery *pQ, sqlite3_int64 nCand,
                               const unsigned char *aMask, VsTopK *pTop,
                               sqlite3_int64 *pnOffered){
  const Vec0Snapshot *v = p->pView;
  int nChunk = p->cfg.nChunk, nCode = pQ->nCode;
  VsTopK wide;                /* bit: the Hamming scan's candidates, refined into pTop */
  VsTopK *pScan = pTop;       /* the heap the scan fills */
  int rc;

  memset(&wide, 0, sizeof(wide));
  *pnOffered = 0;
  rc = vsTopKInit(pTop, nCand, v->nLive);
  if( rc==SQLITE_OK && p->cfg.eQuant==VEC0_QUANT_BIT ){
    sqlite3_int64 nWide = nCand > 0x7fffffffffffffffLL/VEC0_BIT_WIDEN ? nCand
                        : nCand*VEC0_BIT_WIDEN;
    rc = vsTopKInit(&wide, nWide, v->nLive);
    pScan = &wide;
  }
  if( rc==SQLITE_OK && pScan==&wide ){
    rc = vec0BitCandidates(p, pQ, aMask, wide.nCap, &wide, pnOffered);
  }else if( rc==SQLITE_OK ){
    Vec0ScanCtx x;
    Vec0ScanJob job;
    vec0ScanCtxInit(&x, p, 0, aMask);
    x.pQQ = pQ;
    memset(&job, 0, sizeof(job));
    job.xPart = vec0CodedPart;
    job.pCtx = &x;
    job.nScratch = sizeof(float)*(size_t)nChunk;   /* aDist */
    job.xFold = vec0ScanFold;
    rc = vec0ScanRun(p, &job, pTop);
    *pnOffered = x.nOffered;
  }
  if( rc==SQLITE_OK && pScan==&wide ){
    int i;
    for(i=0; i<wide.n; i++){
      const VsHit *h = &wide.a[i];
      const Vec0Chunk *c = v->apChunk[h->iSlot/nChunk];
      int iRow = (int)(h->iSlot%nChunk);
      vsTopKPush(pTop, vec0QuantRefineBits(pQ, c->aCode + (size_t)iRow*nCode, c->aNorm[iRow]),
                 h->iRowid, h->iSlot);
    }
  }
  vsTopKFree(&wide);
  return rc;
}

/* The scan of a quantized copy: the best k*oversample rows by coarse distance
** (vec0CodedCandidates) are re-scored from the stored vectors by vec0Rerank. A distance
** range applies to the exact figures: when fewer than k candidates are inside it while
** rows were left out, the scan runs again without the rows found outside, for twice as
** many candidates, until k are found or no row is left out. */
static int vec0SearchCoded(Vec0Table *p, const float *q, sqlite3_int64 k,
                           const unsigned char *aMask, const Vec0Range *pRange,
                           VsTopK *pTop){
  const Vec0Snapshot *v = p->pView;
  sqlite3_int64 nCand = k > 0x7fffffffffffffffLL/p->cfg.nOversample ? k : k*p->cfg.nOversample;
  sqlite3_int64 nOffered = 0;
  Vec0QuantQuery qq;
  unsigned char *aLeft = 0;   /* with a range: rows not yet found outside it */
  int rc;

  memset(&qq, 0, sizeof(qq));
  memset(pTop, 0, sizeof(*pTop));
  if( nCand<vec0CandidateCap(k) ) nCand = vec0CandidateCap(k);
  rc = vec0QuantQueryInit(&p->cfg, q, &qq);
  if( rc==SQLITE_OK && pRange ){
    aLeft = sqlite3_malloc64((size_t)(v->nSlot>0 ? v->nSlot : 1));
    if( aLeft==0 ){
      rc = SQLITE_NOMEM;
    }else if( aMask ){
      memcpy(aLeft, aMask, (size_t)v->nSlot);
    }else{
      memset(aLeft, 1, (size_t)v->nSlot);
    }
  }
  while( rc==SQLITE_OK ){
    rc = vec0CodedCandidates(p, &qq, nCand, aLeft ? aLeft : aMask, pTop, &nOffered);
    if( rc==SQLITE_OK ) rc = vec0Rerank(p, q, k, pRange, aLeft, pTop);
    if( rc!=SQLITE_OK || pRange==0 || pTop->n>=k || nOffered<=pTop->nCap ) break;
    vsTopKFree(pTop);
    if( nCand<=0x7fffffffffffffffLL/2 ) nCand *= 2;
  }
  vec0QuantQueryClear(&qq);
  sqlite3_free(aLeft);
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

/* The lowest figure (vec0TypedFigure) a row whose key (vec0TypedScore) is rKey may
** report: the key itself for L1 and Hamming (integers both); under L2 and cosine the
** figure comes from float32 sums of the exact integer terms, within rGamma of the key. */
static double vec0TypedLowest(const Vec0Scan *s, double rKey){
  const Vec0Config *pCfg = &s->p->cfg;
  if( pCfg->eElem==VS_BIT || pCfg->eMetric==VS_METRIC_L1 ) return rKey;
  if( pCfg->eMetric==VS_METRIC_COSINE ) return rKey - 2.0*s->rGamma;
  return sqrt(rKey>0.0 ? rKey : 0.0)*(1.0 - s->rGamma);
}

/* Offer one row of an int8 or bit column (key rKey, stored bytes v) to the scan: pass 1
** pushes its key when its figure is in range; pass 2 its figure (HUGE_VAL for none, a
** zero vector under cosine) when its lowest figure is within the k-th figure known. */
static void vec0TypedOffer(Vec0Scan *s, double rKey, const unsigned char *v,
                           sqlite3_int64 iRowid, sqlite3_int64 iSlot){
  const unsigned char *qb = (const unsigned char*)s->q;
  if( s->bExact ){
    double rTau = vsTopKBound(s->pTop), d;
    if( s->rTau<rTau ) rTau = s->rTau;
    if( vec0TypedLowest(s, rKey) > rTau ) return;
    d = vec0TypedFigure(&s->p->cfg, qb, v);
    if( d!=d ){
      if( s->pRange ) return;
      d = HUGE_VAL;
    }else if( !vec0InRange(s->pRange, d) ){
      return;
    }
    vsTopKPush(s->pTop, d, iRowid, iSlot);
    return;
  }
  if( !vec0TypedInRange(s->p, qb, v, s->pRange) ) return;
  s->nOffered++;
  if( rKey<=vsTopKBound(s->pTop) ) vsTopKPush(s->pTop, rKey, iRowid, iSlot);
}

/* The scan of an int8[N] or bit[N] column's chunks iFirst..iEnd-1 (one part of
** vec0ScanTyped's): every live row that passes aMask gets its exact key (vec0TypedScore:
** integer sums, AVX2 for int8, POPCNT for bits) from the copy, or from T_vectors a chunk
** at a time when the copy is streamed (then on the calling thread only). */
static int vec0ScanTypedPart(const Vec0ScanJob *pJob, Vec0ScanPart *pPart){
  const Vec0ScanCtx *x = (const Vec0ScanCtx*)pJob->pCtx;
  Vec0Table *p = x->p;
  const Vec0Snapshot *v = p->pView;
  const unsigned char *qb = (const unsigned char*)x->s->q;
  const unsigned char *aMask = x->aMask;
  int nChunk = p->cfg.nChunk, nWord = p->cfg.nWord, nStride = 4*p->cfg.nWord;
  int nPer = p->nPerBlob;
  double *aKey = (double*)pPart->pScratch;
  float *A = x->A;            /* streamed: one chunk's vectors, read from T_vectors */
  Vec0Scan part = *x->s;      /* the scan, with the part's heap and count */
  Vec0Scan *s = &part;
  int rc = SQLITE_OK, b, i;

  part.pTop = pPart->pTop;
  part.nOffered = 0;
  for(b=pPart->iFirst; rc==SQLITE_OK && b<pPart->iEnd; b++){
    const Vec0Chunk *c = v->apChunk[b];
    sqlite3_int64 iBase = (sqlite3_int64)b*nChunk;
    int nRow = vec0ChunkRows(p, b), nPass = nRow;
    const unsigned char *aRow;
    if( nRow<=0 ) break;
    if( aMask ){
      nPass = vec0MaskPass(aMask, c, iBase, nRow);
      if( nPass==0 ) continue;
    }else{
      for(nPass=0, i=0; i<nRow; i++) nPass += c->aLive[i];
      if( nPass==0 ) continue;
    }
    if( v->bStreamed ){
      sqlite3_int64 iBlob = vec0BlobOf(p, iBase, 0);
      int j;
      for(j=0; rc==SQLITE_OK && j*nPer<nRow; j++){
        rc = vec0ReaderBlob(p, x->pReader, iBlob + j, A + (size_t)j*nPer*nWord);
      }
      if( rc!=SQLITE_OK ) break;
      aRow = (const unsigned char*)A;
    }else{
      aRow = (const unsigned char*)c->aVec;
    }
    if( nPass*8 >= nRow ) vec0TypedScore(&p->cfg, qb, aRow, nStride, nRow, aKey);
    for(i=0; i<nRow; i++){
      if( !c->aLive[i] || (aMask && !aMask[iBase+i]) ) continue;
      if( nPass*8 < nRow ){
        /* A selective filter (or a chunk of few rows): its rows one by one. */
        vec0TypedScore(&p->cfg, qb, aRow + (size_t)i*nStride, nStride, 1, &aKey[i]);
      }
      vec0TypedOffer(s, aKey[i], aRow + (size_t)i*nStride, c->aRowid[i], iBase+i);
    }
  }
  pPart->nOffered = part.nOffered;
  return rc;
}

/* The scan of an int8[N] or bit[N] column, on one thread or several (vec0ScanRun; a
** streamed copy reads T_vectors, on the calling thread only). */
static int vec0ScanTyped(Vec0Scan *s, const unsigned char *aMask){
  Vec0Table *p = s->p;
  const Vec0Snapshot *v = p->pView;
  Vec0ScanCtx x;
  Vec0ScanJob job;
  Vec0Reader r;
  float *A = 0;
  int rc = SQLITE_OK;

  memset(&r, 0, sizeof(r));
  if( v->bStreamed ){
    A = sqlite3_malloc64(sizeof(float)*(size_t)p->cfg.nChunk*(size_t)p->cfg.nWord);
    if( A==0 ){ rc = SQLITE_NOMEM; goto cleanup; }
  }
  vec0ScanCtxInit(&x, p, s, aMask);
  x.A = A;
  x.pReader = &r;
  memset(&job, 0, sizeof(job));
  job.xPart = vec0ScanTypedPart;
  job.pCtx = &x;
  job.nScratch = sizeof(double)*(size_t)p->cfg.nChunk;   /* aKey */
  job.bSerial = v->bStreamed;
  job.xFold = vec0ScanFold;
  rc = vec0ScanRun(p, &job, s->pTop);
  if( rc==SQLITE_OK ) s->nOffered += x.nOffered;

cleanup:
  vec0ReaderClose(&r);
  sqlite3_free(A);
  return rc;
}

/* The search of an int8[N] or bit[N] column: the best k + VEC0_RERANK_EXTRA rows by key
** (vec0ScanTyped; with a distance range, only rows whose figure is inside it) get the
** figure sqlite-vec reports (vec0TypedFigure), are sorted by (figure, rowid) and cut to
** k; when a row was left out whose figure may be within the k-th, a second pass computes
** the figure of every row whose key allows it (vec0TypedLowest), so the answer is exact. */
static int vec0SearchTyped(Vec0Table *p, const float *q, sqlite3_int64 k,
                           const unsigned char *aMask, const Vec0Range *pRange,
                           VsTopK *pTop){
  const Vec0Snapshot *v = p->pView;
  const unsigned char *qb = (const unsigned char*)q;
  float *A = 0;               /* a vector read from T_vectors */
  Vec0Scan s;
  Vec0Reader r;
  double rWorst, rTau;
  int rc, i, n = 0;

  memset(&r, 0, sizeof(r));
  vec0ScanInit(&s, p, q, pRange, pTop);
  rc = vsTopKInit(pTop, vec0CandidateCap(k), v->nLive);
  if( rc==SQLITE_OK ) rc = vec0ScanTyped(&s, aMask);
  rWorst = vec0HeapWorst(pTop);

  /* The figures, from the copy or (streamed) T_vectors, in slot order. */
  if( rc==SQLITE_OK && v->bStreamed ){
    qsort(pTop->a, (size_t)pTop->n, sizeof(VsHit), vec0HitBySlot);
    A = sqlite3_malloc64(sizeof(float)*(size_t)p->cfg.nWord);
    if( A==0 ) rc = SQLITE_NOMEM;
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
    rTau = pTop->n>=k ? pTop->a[pTop->n-1].rDist : INFINITY;
    if( s.nOffered>pTop->nCap && !(vec0TypedLowest(&s, rWorst) > rTau) ){
      vsTopKFree(pTop);
      rc = vsTopKInit(pTop, k, v->nLive);
      s.bExact = 1;
      s.rTau = rTau;
      if( rc==SQLITE_OK ) rc = vec0ScanTyped(&s, aMask);
      if( rc==SQLITE_OK ){
        vsTopKSort(pTop);
        if( pTop->n>k ) pTop->n = (int)k;
      }
    }
  }
  if( rc==SQLITE_OK ){
    for(i=0; i<pTop->n; i++){
      if( pTop->a[i].rDist==HUGE_VAL ) pTop->a[i].rDist = NAN;
    }
  }
  sqlite3_free(A);
  if( rc!=SQLITE_OK ) vsTopKFree(pTop);
  return rc;
}

/* A float32 search's hits with no direction (ranked at VS_NO_DIRECTION) get the distance
** NaN: NULL, as sqlite-vec reports it. */
static void vec0NullNoDirection(const Vec0Table *p, VsTopK *pTop){
  int i;
  if( p->cfg.eMetric!=VS_METRIC_COSINE ) return;
  for(i=0; i<pTop->n; i++){
    if( pTop->a[i].rDist==VS_NO_DIRECTION ) pTop->a[i].rDist = NAN;
  }
}

int vec0Search(Vec0Table *p, const float *q, sqlite3_int64 k,
               const unsigned char *aMask, const Vec0Range *pRange, VsTopK *pTop){
  int rc;
  p->nScanThreads = 1;        /* until vec0ScanRun says otherwise */
  /* An int8 or bit query is nWord words of bytes: no float norm, its own scan. */
  if( p->cfg.eElem!=VS_F32 ) return vec0SearchTyped(p, q, k, aMask, pRange, pTop);
  if( !p->pView->bStreamed && p->cfg.eQuant!=VEC0_QUANT_NONE ){
    rc = vec0SearchCoded(p, q, k, aMask, pRange, pTop);
  }else{
    rc = vec0SearchF32(p, q, k, aMask, pRange, pTop);
  }
  if( rc==SQLITE_OK ) vec0NullNoDirection(p, pTop);
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
                         p->zStoreSchema, p->zName);
  if( aVec==0 || zSql==0 ){ rc = SQLITE_NOMEM; goto cleanup; }
  memset(aVec, 0, sizeof(float)*(size_t)pCfg->nWord);
  rc = sqlite3_prepare_v2(p->dbStore, zSql, -1, &pStmt, 0);
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
  float *aScore = 0;
  Vec0Scan *aScan = 0;        /* one scan a query */
  double *aWorst = 0;         /* each query's worst candidate, before its re-rank */
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
  aScan = sqlite3_malloc64(sizeof(Vec0Scan)*(size_t)(nQuery ? nQuery : 1));
  aWorst = sqlite3_malloc64(sizeof(double)*(size_t)(nQuery ? nQuery : 1));
  if( aScore==0 || aScan==0 || aWorst==0 ){ rc = SQLITE_NOMEM; goto cleanup; }
  for(j=0; j<nQuery && rc==SQLITE_OK; j++){
    vec0ScanInit(&aScan[j], p, Q + (size_t)j*nDim, 0, &aTop[j]);
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
        vec0PushScores(&aScan[j0+j], c, aScore + (size_t)j*nRow, iBase, nRow, 0);
      }
    }
  }
  for(j=0; j<nQuery && rc==SQLITE_OK; j++){
    aWorst[j] = vec0HeapWorst(&aTop[j]);
    rc = vec0Rerank(p, Q + (size_t)j*nDim, k, 0, 0, &aTop[j]);
    if( rc==SQLITE_OK ) rc = vec0Certify(&aScan[j], k, aWorst[j], 0);
    if( rc==SQLITE_OK ) vec0NullNoDirection(p, &aTop[j]);
  }

cleanup:
  sqlite3_free(aScore);
  sqlite3_free(aScan);
  sqlite3_free(aWorst);
  if( rc!=SQLITE_OK ){
    for(j=0; j<nQuery; j++) vsTopKFree(&aTop[j]);
  }
  return rc;
}
