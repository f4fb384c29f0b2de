/*
** vec0_parallel.c: the block scan of a vec0 KNN query, split over several threads.
**
** Usage (SQL): the scan of a large table uses up to 1 + PRAGMA threads threads, as SQLite's
** sorter does (the pragma sets SQLITE_LIMIT_WORKER_THREADS: the helper threads a statement
** may start; 0 unless the host changes it):
**
**   PRAGMA threads = 1;                  -- one helper: two cores
**   select rowid, distance from t where embedding match :q and k = 10;
**   select json_extract(vecsync_cache_info('t'), '$.scan_threads');   -- 2
**
** Usage (internal; vec0_search.c):
**
**   Vec0ScanJob job = {xPart, pCtx, nScratch, bBlas, bSerial, xFold};
**   rc = vec0ScanRun(p, &job, pTop);     // pTop: the scan's heap, initialised, or NULL
**
** How it works: the chunks of the in-memory copy are cut into as many runs of consecutive
** chunks as there are threads, each of about the same number of rows. Each run is a part:
** its own heap (the scan heap's capacity), its own scratch memory, both allocated here
** before any thread starts. xPart scans one part's chunks into its heap; parts run on
** helper threads, the last on the calling thread, and every helper is joined before
** vec0ScanRun returns. Then, on the calling thread, each part's hits are offered to the
** scan's heap in turn (and xFold, when the job has one, folds each part's scratch into the
** job's state, in part order). A heap keeps the nCap smallest hits by (distance, rowid), a
** total order (rowids are unique), whatever order they are offered in: the merged heap
** holds exactly what one thread scanning every chunk would hold. So results do not depend
** on the number of threads, ties by ascending rowid included. (The float32 scan's heap ranks
** rows by the lower bound of their distance, vec0_search.c: the merged heap is still the
** one thread's, and so are the worst bound and the count of rows offered, which decide
** whether the exact second pass runs.)
**
** Threads: a part never allocates and never calls SQLite (the copy, the query and the mask
** are read only, SQLite's memory routines may be unsafe from threads in a host built with
** SQLITE_THREADSAFE=0); helpers are started per scan and joined before the statement's
** step returns, so nothing outlives a statement and connections share nothing here. A
** helper that cannot be started leaves its part to the calling thread. A scan that reads
** SQLite itself (a streamed copy) runs on the calling thread only (bSerial).
**
** How many: at most 1 + the connection's SQLITE_LIMIT_WORKER_THREADS, one per
** VEC0_PARALLEL_MIN_ROWS slots (below that a thread costs more than it saves), one per
** chunk. A block scorer that is already threaded (OpenBLAS's sgemv, where BLAS scores the
** blocks: vsScoreBlockThreads) keeps the scan on one thread, so the two never
** oversubscribe the cores.
*/
#include "vecsync_int.h"
SQLITE_EXTENSION_INIT3

#include <pthread.h>
#include <string.h>

/* Slots each thread of a scan must have at least: a thread is started and joined in tens
** of microseconds, and the fastest scan (1-bit codes) reads 16,384 rows in about as long.
** The fuzz build sets 1, so that its small tables are scanned in parts too. */
#ifndef VEC0_PARALLEL_MIN_ROWS
# define VEC0_PARALLEL_MIN_ROWS 16384
#endif

/* A part and the helper thread that runs it. */
typedef struct Vec0ScanWorker Vec0ScanWorker;
struct Vec0ScanWorker {
  Vec0ScanPart part;          /* What it scans */
  int rc;                     /* What xPart returned */
  int bThread;                /* A helper thread runs it (join it) */
  pthread_t thread;           /* That thread */
};

/* How many parts the scan of p's copy is cut into. */
static int vec0ScanParts(Vec0Table *p, const Vec0ScanJob *pJob){
  const Vec0Snapshot *v = p->pView;
  sqlite3_int64 n = 1 + (sqlite3_int64)sqlite3_limit(p->db, SQLITE_LIMIT_WORKER_THREADS, -1);
  sqlite3_int64 nByRows = v->nSlot / VEC0_PARALLEL_MIN_ROWS;
  if( pJob->bSerial ) return 1;
  if( n>nByRows ) n = nByRows;
  if( n>v->nChunkAlloc ) n = v->nChunkAlloc;
  if( n>1 && pJob->bBlas && vsScoreBlockThreads()>1 ) n = 1;
  return n<1 ? 1 : (int)n;
}

static void *vec0ScanThread(void *pArg){
  Vec0ScanWorker *w = (Vec0ScanWorker*)pArg;
  w->rc = w->part.pJob->xPart(w->part.pJob, &w->part);
  return 0;
}

int vec0ScanRun(Vec0Table *p, const Vec0ScanJob *pJob, VsTopK *pTop){
  const Vec0Snapshot *v = p->pView;
  int nPart = vec0ScanParts(p, pJob);
  int nChunk = v->nChunkAlloc, nThread = 0;
  Vec0ScanWorker *aWork = 0;
  int rc = SQLITE_OK, i, j;

  aWork = sqlite3_malloc64(sizeof(Vec0ScanWorker)*(size_t)nPart);
  if( aWork==0 ){ rc = SQLITE_NOMEM; goto cleanup; }
  memset(aWork, 0, sizeof(Vec0ScanWorker)*(size_t)nPart);
  for(i=0; i<nPart; i++){
    Vec0ScanPart *pPart = &aWork[i].part;
    pPart->pJob = pJob;
    pPart->iFirst = (int)((sqlite3_int64)nChunk*i/nPart);
    pPart->iEnd = (int)((sqlite3_int64)nChunk*(i+1)/nPart);
    if( pTop && nPart==1 ){
      pPart->pTop = pTop;
    }else if( pTop ){
      rc = vsTopKInit(&pPart->top, pTop->nCap, pTop->nCap);
      if( rc!=SQLITE_OK ) goto cleanup;
      pPart->pTop = &pPart->top;
    }
    pPart->pScratch = sqlite3_malloc64(pJob->nScratch>0 ? pJob->nScratch : 1);
    if( pPart->pScratch==0 ){ rc = SQLITE_NOMEM; goto cleanup; }
  }

  /* Parts 0..nPart-2 on helpers, the last here; a helper that does not start: here too.
  ** Every helper is joined before anything else happens. */
  for(i=0; i<nPart-1; i++){
    aWork[i].bThread = pthread_create(&aWork[i].thread, 0, vec0ScanThread, &aWork[i])==0;
    nThread += aWork[i].bThread;
  }
  for(i=0; i<nPart; i++){
    if( !aWork[i].bThread ) aWork[i].rc = pJob->xPart(pJob, &aWork[i].part);
  }
  for(i=0; i<nPart; i++){
    if( aWork[i].bThread ) pthread_join(aWork[i].thread, 0);
    aWork[i].bThread = 0;
  }
  p->nScanThreads = 1 + nThread;

  /* Merge, in part order: the hits of each part offered to the scan's heap, its scratch
  ** folded into the job's state. */
  for(i=0; i<nPart && rc==SQLITE_OK; i++) rc = aWork[i].rc;
  for(i=0; i<nPart && rc==SQLITE_OK; i++){
    const Vec0ScanPart *pPart = &aWork[i].part;
    if( pPart->pTop && pPart->pTop!=pTop ){
      for(j=0; j<pPart->pTop->n; j++){
        const VsHit *h = &pPart->pTop->a[j];
        vsTopKPush(pTop, h->rDist, h->iRowid, h->iSlot);
      }
    }
    if( pJob->xFold ) pJob->xFold(pJob, pPart);
  }

cleanup:
  if( aWork ){
    for(i=0; i<nPart; i++){
      vsTopKFree(&aWork[i].part.top);
      sqlite3_free(aWork[i].part.pScratch);
    }
  }
  sqlite3_free(aWork);
  return rc;
}
