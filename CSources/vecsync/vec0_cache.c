/*
** vec0_cache.c: the in-memory copy of a vec0 table's vectors that searches scan, one per
** process and table, kept current incrementally; and the owner of every write to the
** table's vectors.
**
** Usage (internal):
**
**   vec0StorageReady(p);     // (vec0_migrate.c) the storage a statement reads, then
**   vec0CacheEnsure(p, eNeed); // before a search: p->pView is this connection's snapshot
**   vec0WriteBegin(p);       // first write of a transaction: the view becomes private
**   vec0WriteNewSlot(p, &iSlot); vec0WriteVector(p, iSlot, iRowid, a);
**                            // the shadow tables (vec0_store.c), then the view, in step
**   vec0CacheCommit(p);      // xCommit: the private copy becomes the shared snapshot
**
** How it works. A snapshot (Vec0Snapshot) is the table's vectors as of one generation
** (one committed write transaction): an array of chunks, each nChunk slots of vectors
** with their norms, rowids and liveness. Chunks are reference-counted and never change
** once another connection can see them, so a snapshot built from an older one shares
** every chunk it did not change, and a connection reading an older snapshot in WAL mode
** keeps reading exactly it.
**
** Every connection to the same database file and table in this process finds the same
** snapshots in one list (Vec0Shared, keyed by file name and the table's T_info 'uid'): a
** search reads the generation its read transaction sees and takes the snapshot of that
** generation from the list. When there is none, it takes the newest older snapshot and
** replays T_changes (the slots each write transaction changed; vec0_store.c) from there,
** reading only those slots' vectors: time proportional to the rows changed. A connection
** too far behind (older than T_changes keeps, or a bulk import marked "reload") loads
** the table whole. The new snapshot is published for the other connections.
**
** The first search of a table in a process does not wait for a whole load: its snapshot
** is streamed (rowids and liveness only; the search reads T_vectors a blob at a time, as
** a table over the memory budget does) and provisional; the next search loads the
** vectors and publishes that snapshot (vec0FirstLoad). The batch function asks for the
** vectors at once (VEC0_NEED_COPY).
**
** A write transaction works on a private snapshot: the view it had (if current) is
** taken over, by copying each chunk it writes that another snapshot also holds
** (copy-on-write), or in place when no other connection holds it. Its own uncommitted
** rows are therefore seen by its own searches; ROLLBACK or ROLLBACK TO drops the private
** snapshot (the next search rebuilds it from the shared one plus the log, which the
** rollback trimmed too); COMMIT publishes it as the snapshot of the new generation.
**
** Memory: 4·D + 13 bytes a row (int8 codes: D + 17, bits: D/8 + 13; over the budget: 9),
** once per process (not per connection), plus the chunks a newer generation changed while
** an older snapshot is still read.
*/
#define _GNU_SOURCE 1
#include "vecsync_int.h"
SQLITE_EXTENSION_INIT3

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* Snapshots of one table the process-wide list keeps at most. */
#define VEC0_SHARED_SNAPSHOTS 4

/* ---- chunks ---------------------------------------------------------------------------- */

/* One mapping holding the vectors (or codes) of the chunks a whole load creates. Loading
** 1.5 GB a 4 KiB page fault at a time costs more than reading it; in one mapping, advised
** for 2 MiB pages where the system has them, the faults are 512 times fewer. A chunk
** leaving it (replaced by a private copy, freed) gives its pages back; the last one
** unmaps it. */
struct Vec0Slab {
  int nRef;                   /* Chunks in it (atomic) */
  void *pMap;                 /* The mapping */
  size_t nMap;
  unsigned char *pFirst;      /* 2 MiB-aligned start of the chunks' memory in it */
  size_t nPer;                /* Bytes of one chunk's vectors or codes in it */
};

#define VEC0_SLAB_ALIGN ((size_t)2*1024*1024)
#define VEC0_SLAB_MIN_CHUNKS 4      /* fewer new chunks are allocated one by one */

/* A slab for nChunk chunks of nPer bytes each. */
static Vec0Slab *vec0SlabNew(size_t nPer, int nChunk){
  size_t nByte = nPer*(size_t)nChunk;
  Vec0Slab *pSlab = sqlite3_malloc(sizeof(*pSlab));
  size_t nMap = nByte + VEC0_SLAB_ALIGN;
  void *pMap;
  if( pSlab==0 ) return 0;
  pMap = mmap(0, nMap, PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_ANONYMOUS, -1, 0);
  if( pMap==MAP_FAILED ){
    sqlite3_free(pSlab);
    return 0;
  }
  pSlab->nRef = 0;
  pSlab->pMap = pMap;
  pSlab->nMap = nMap;
  pSlab->nPer = nPer;
  pSlab->pFirst = (unsigned char*)(((uintptr_t)pMap + VEC0_SLAB_ALIGN - 1)
                                   & ~(uintptr_t)(VEC0_SLAB_ALIGN - 1));
#ifdef MADV_HUGEPAGE
  madvise(pSlab->pFirst, nByte, MADV_HUGEPAGE);
#endif
  return pSlab;
}

/* A chunk's memory pMem in pSlab is no longer used: unmap the slab if it was the last,
** else return the whole pages inside the chunk's memory to the system. */
static void vec0SlabRelease(Vec0Slab *pSlab, void *pMem){
  size_t n = pSlab->nPer;
  if( __atomic_sub_fetch(&pSlab->nRef, 1, __ATOMIC_ACQ_REL)==0 ){
    munmap(pSlab->pMap, pSlab->nMap);
    sqlite3_free(pSlab);
  }else{
    uintptr_t iPage = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t a = ((uintptr_t)pMem + iPage - 1) & ~(iPage - 1);
    uintptr_t b = ((uintptr_t)pMem + n) & ~(iPage - 1);
    if( b>a ) madvise((void*)a, b - a, MADV_DONTNEED);
  }
}

/* Bytes of one chunk's vectors, or codes for a quantized table. */
static size_t vec0ChunkVecBytes(Vec0Table *p){
  int nCode = vec0QuantCodeBytes(&p->cfg);
  if( nCode ) return (size_t)p->cfg.nChunk*(size_t)nCode;
  return sizeof(float)*(size_t)p->cfg.nChunk*(size_t)p->cfg.nWord;
}

static void vec0ChunkFree(Vec0Chunk *c){
  if( c==0 ) return;
  if( c->pSlab ){
    vec0SlabRelease(c->pSlab, c->aVec ? (void*)c->aVec : (void*)c->aCode);
  }else{
    free(c->aVec);
    free(c->aCode);
  }
  sqlite3_free(c->aScale);
  sqlite3_free(c->aNorm);
  sqlite3_free(c->aRowid);
  sqlite3_free(c->aLive);
  sqlite3_free(c);
}

static void vec0ChunkUnref(Vec0Chunk *c){
  if( c && __atomic_sub_fetch(&c->nRef, 1, __ATOMIC_ACQ_REL)==0 ) vec0ChunkFree(c);
}

/* A new empty chunk of table p (all slots free): with room for vectors (or, for a quantized
** table, their codes) and norms unless bNoVectors (a streamed snapshot's); that room is
** pMem in pSlab when pSlab is given (zeroed by the mapping). */
static Vec0Chunk *vec0ChunkAlloc(Vec0Table *p, int bNoVectors, Vec0Slab *pSlab,
                                 unsigned char *pMem){
  int n = p->cfg.nChunk;
  size_t nVec = vec0ChunkVecBytes(p);
  int bCode = p->cfg.eQuant!=VEC0_QUANT_NONE;
  Vec0Chunk *c = sqlite3_malloc(sizeof(*c));
  void *pVec = 0;
  int bNoMem = 0;
  if( c==0 ) return 0;
  memset(c, 0, sizeof(*c));
  c->nRef = 1;
  if( !bNoVectors ){
    if( pSlab ){
      pVec = pMem;
      c->pSlab = pSlab;
      __atomic_add_fetch(&pSlab->nRef, 1, __ATOMIC_RELAXED);
    }else{
      if( posix_memalign(&pVec, 64, nVec) ) pVec = 0;
      if( pVec ) memset(pVec, 0, nVec);
    }
    if( bCode ) c->aCode = pVec; else c->aVec = pVec;
    bNoMem = pVec==0;
    if( p->cfg.eQuant==VEC0_QUANT_INT8 ){
      c->aScale = sqlite3_malloc64(sizeof(float)*(size_t)n);
      bNoMem = bNoMem || c->aScale==0;
    }
    c->aNorm = sqlite3_malloc64(sizeof(float)*(size_t)n);
    bNoMem = bNoMem || c->aNorm==0;
  }
  c->aRowid = sqlite3_malloc64(sizeof(sqlite3_int64)*(size_t)n);
  c->aLive = sqlite3_malloc64((size_t)n);
  if( bNoMem || c->aRowid==0 || c->aLive==0 ){
    vec0ChunkFree(c);
    return 0;
  }
  if( c->aScale ) memset(c->aScale, 0, sizeof(float)*(size_t)n);
  if( c->aNorm ) memset(c->aNorm, 0, sizeof(float)*(size_t)n);
  memset(c->aRowid, 0, sizeof(sqlite3_int64)*(size_t)n);
  memset(c->aLive, 0, (size_t)n);
  return c;
}

/* A private copy of chunk pFrom (for a write to a chunk other snapshots hold). */
static Vec0Chunk *vec0ChunkCopy(Vec0Table *p, const Vec0Chunk *pFrom){
  int n = p->cfg.nChunk;
  size_t nVec = vec0ChunkVecBytes(p);
  Vec0Chunk *c = vec0ChunkAlloc(p, pFrom->aNorm==0, 0, 0);
  if( c==0 ) return 0;
  if( c->aVec ) memcpy(c->aVec, pFrom->aVec, nVec);
  if( c->aCode ) memcpy(c->aCode, pFrom->aCode, nVec);
  if( c->aScale ) memcpy(c->aScale, pFrom->aScale, sizeof(float)*(size_t)n);
  if( c->aNorm ) memcpy(c->aNorm, pFrom->aNorm, sizeof(float)*(size_t)n);
  memcpy(c->aRowid, pFrom->aRowid, sizeof(sqlite3_int64)*(size_t)n);
  memcpy(c->aLive, pFrom->aLive, (size_t)n);
  return c;
}

/* Keep vector a (nWord words) in slot i of chunk c: the vector or its code, and its norm
** (a streamed chunk keeps neither; an int8 or bit vector has no float norm: 0). */
static void vec0ChunkPut(Vec0Table *p, Vec0Chunk *c, int i, const float *a){
  int nWord = p->cfg.nWord;
  if( c->aVec ) memcpy(c->aVec + (size_t)i*nWord, a, sizeof(float)*(size_t)nWord);
  if( c->aCode ){
    float rScale;
    vec0QuantEncode(&p->cfg, a, c->aCode + (size_t)i*vec0QuantCodeBytes(&p->cfg), &rScale);
    if( c->aScale ) c->aScale[i] = rScale;
  }
  if( c->aNorm ) c->aNorm[i] = p->cfg.eElem==VS_F32 ? vsNormF32(a, nWord) : 0.0f;
}

/* ---- snapshots ------------------------------------------------------------------------- */

static void vec0SnapRef(Vec0Snapshot *s){
  __atomic_add_fetch(&s->nRef, 1, __ATOMIC_RELAXED);
}

static void vec0SnapUnref(Vec0Snapshot *s){
  int i;
  if( s==0 || __atomic_sub_fetch(&s->nRef, 1, __ATOMIC_ACQ_REL)!=0 ) return;
  for(i=0; i<s->nChunkAlloc; i++) vec0ChunkUnref(s->apChunk[i]);
  sqlite3_free(s->apChunk);
  sqlite3_free(s);
}

/* A new snapshot: empty, or sharing every chunk of pFrom. */
static Vec0Snapshot *vec0SnapNew(const Vec0Snapshot *pFrom){
  Vec0Snapshot *s = sqlite3_malloc(sizeof(*s));
  int i;
  if( s==0 ) return 0;
  memset(s, 0, sizeof(*s));
  s->nRef = 1;
  if( pFrom && pFrom->nChunkAlloc>0 ){
    s->apChunk = sqlite3_malloc64(sizeof(Vec0Chunk*)*(size_t)pFrom->nChunkAlloc);
    if( s->apChunk==0 ){ sqlite3_free(s); return 0; }
    for(i=0; i<pFrom->nChunkAlloc; i++){
      s->apChunk[i] = pFrom->apChunk[i];
      __atomic_add_fetch(&s->apChunk[i]->nRef, 1, __ATOMIC_RELAXED);
    }
    s->nChunkAlloc = pFrom->nChunkAlloc;
  }
  if( pFrom ){
    s->iGeneration = pFrom->iGeneration;
    s->nSlot = pFrom->nSlot;
    s->nLive = pFrom->nLive;
    s->bStreamed = pFrom->bStreamed;
  }
  return s;
}

/* Cover nSlot slots (the snapshot must be private). */
static int vec0SnapGrow(Vec0Table *p, Vec0Snapshot *s, sqlite3_int64 nSlot){
  sqlite3_int64 nChunk = (nSlot + p->cfg.nChunk - 1)/p->cfg.nChunk;
  Vec0Slab *pSlab = 0;
  if( nChunk>s->nChunkAlloc ){
    Vec0Chunk **ap;
    if( nChunk>0x7fffffff ) return SQLITE_NOMEM;
    ap = sqlite3_realloc64(s->apChunk, sizeof(Vec0Chunk*)*(size_t)nChunk);
    if( ap==0 ) return SQLITE_NOMEM;
    s->apChunk = ap;
    if( !s->bStreamed && nChunk - s->nChunkAlloc>=VEC0_SLAB_MIN_CHUNKS ){
      /* Many chunks at once (a load): their vectors in one slab. */
      size_t nPer = (vec0ChunkVecBytes(p) + 63) & ~(size_t)63;
      int nNew = (int)(nChunk - s->nChunkAlloc), i;
      pSlab = vec0SlabNew(nPer, nNew);
      for(i=0; pSlab && i<nNew; i++){
        Vec0Chunk *c = vec0ChunkAlloc(p, 0, pSlab, pSlab->pFirst + (size_t)i*nPer);
        if( c==0 ) break;
        s->apChunk[s->nChunkAlloc++] = c;
      }
      if( pSlab && pSlab->nRef==0 ){         /* not one chunk took it */
        munmap(pSlab->pMap, pSlab->nMap);
        sqlite3_free(pSlab);
      }
    }
    while( s->nChunkAlloc<nChunk ){
      Vec0Chunk *c = vec0ChunkAlloc(p, s->bStreamed, 0, 0);
      if( c==0 ) return SQLITE_NOMEM;
      s->apChunk[s->nChunkAlloc++] = c;
    }
  }
  if( nSlot>s->nSlot ) s->nSlot = nSlot;
  return SQLITE_OK;
}

/* The chunk holding slot iSlot, copied first if another snapshot holds it too. */
static Vec0Chunk *vec0SnapChunkW(Vec0Table *p, Vec0Snapshot *s, sqlite3_int64 iSlot){
  int i = (int)(iSlot/p->cfg.nChunk);
  Vec0Chunk *c = s->apChunk[i];
  if( __atomic_load_n(&c->nRef, __ATOMIC_ACQUIRE)>1 ){
    Vec0Chunk *pCopy = vec0ChunkCopy(p, c);
    if( pCopy==0 ) return 0;
    vec0ChunkUnref(c);
    s->apChunk[i] = c = pCopy;
  }
  return c;
}

/* Slot iSlot of private snapshot s now holds row iRowid with vector a (NULL: keep the
** vector), or nothing (!bLive). */
static int vec0SnapSet(Vec0Table *p, Vec0Snapshot *s, sqlite3_int64 iSlot, int bLive,
                       sqlite3_int64 iRowid, const float *a){
  Vec0Chunk *c = vec0SnapChunkW(p, s, iSlot);
  int i = (int)(iSlot%p->cfg.nChunk);
  if( c==0 ) return SQLITE_NOMEM;
  if( bLive ){
    if( a ) vec0ChunkPut(p, c, i, a);
    if( !c->aLive[i] ) s->nLive++;
    c->aLive[i] = 1;
    c->aRowid[i] = iRowid;
  }else{
    if( c->aLive[i] ) s->nLive--;
    c->aLive[i] = 0;
    c->aRowid[i] = 0;
  }
  return SQLITE_OK;
}

const float *vec0CacheVector(Vec0Table *p, sqlite3_int64 iSlot){
  const Vec0Chunk *c;
  if( p->pView==0 || iSlot<0 || iSlot>=p->pView->nSlot ) return 0;
  c = p->pView->apChunk[iSlot/p->cfg.nChunk];
  if( c==0 || c->aVec==0 ) return 0;
  return c->aVec + (size_t)(iSlot%p->cfg.nChunk)*(size_t)p->cfg.nWord;
}

/* ---- the memory budget ------------------------------------------------------------------ */

static sqlite3_int64 vec0Budget = 0;

sqlite3_int64 vec0MemoryBudget(sqlite3_int64 iNew){
  if( iNew>=0 ) __atomic_store_n(&vec0Budget, iNew, __ATOMIC_RELAXED);
  return __atomic_load_n(&vec0Budget, __ATOMIC_RELAXED);
}

void vec0MemoryBudgetFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  if( argc>0 ){
    if( sqlite3_value_numeric_type(argv[0])!=SQLITE_INTEGER || sqlite3_value_int64(argv[0])<0 ){
      sqlite3_result_error(ctx, "vecsync_memory_budget: the budget is a number of bytes, "
                                "0 for none", -1);
      return;
    }
    vec0MemoryBudget(sqlite3_value_int64(argv[0]));
  }
  sqlite3_result_int64(ctx, vec0MemoryBudget(-1));
}

/* Bytes the copy keeps per slot: rowid, norm and liveness (13), plus the vector (4 bytes
** an element) or its code (and int8's scale); streamed, only the rowid and liveness. */
static sqlite3_int64 vec0CopyBytesPerSlot(Vec0Table *p, int bStreamed){
  int nCode = vec0QuantCodeBytes(&p->cfg);
  if( bStreamed ) return 9;
  if( p->cfg.eQuant==VEC0_QUANT_INT8 ) return 13 + nCode + 4;
  return 13 + (nCode ? nCode : (sqlite3_int64)p->cfg.nWord*4);
}

/* Whether a copy of nSlot slots would exceed the budget with its vectors (or codes):
** then it holds neither. */
static int vec0OverBudget(Vec0Table *p, sqlite3_int64 nSlot){
  sqlite3_int64 nBudget = vec0MemoryBudget(-1);
  return nBudget>0 && nSlot*(vec0CopyBytesPerSlot(p, 0) - 13) > nBudget;
}

/* ---- the process-wide list ------------------------------------------------------------ */

struct Vec0Shared {
  char *zFile;                /* Database file name */
  sqlite3_int64 iUid;         /* T_info 'uid' of the table */
  int nRef;                   /* Connected tables using this entry */
  int bSearched;              /* A snapshot was built for a search before: the next whole
                              ** load keeps the vectors (vec0ViewBuild) */
  Vec0Snapshot *apSnap[VEC0_SHARED_SNAPSHOTS];  /* Newest first; NULL past the last */
  Vec0Shared *pNext;          /* Next table of the process */
};

static pthread_mutex_t sharedMutex = PTHREAD_MUTEX_INITIALIZER;
static Vec0Shared *pAllShared = 0;

int vec0CacheAttach(Vec0Table *p){
  const char *zFile = sqlite3_db_filename(p->dbStore, p->zStoreSchema);
  Vec0Shared *s;
  int rc = SQLITE_OK;
  if( p->pShared && p->pShared->iUid==p->iUid ) return SQLITE_OK;
  if( p->pShared ) vec0CacheClear(p);
  /* In-memory and temporary databases, and tables made before 'uid', are not shared. */
  if( p->iUid==0 || zFile==0 || zFile[0]==0 ) return SQLITE_OK;
  pthread_mutex_lock(&sharedMutex);
  for(s=pAllShared; s; s=s->pNext){
    if( s->iUid==p->iUid && strcmp(s->zFile, zFile)==0 ) break;
  }
  if( s==0 ){
    s = sqlite3_malloc(sizeof(*s));
    if( s ){
      memset(s, 0, sizeof(*s));
      s->zFile = sqlite3_mprintf("%s", zFile);
      s->iUid = p->iUid;
      if( s->zFile==0 ){ sqlite3_free(s); s = 0; }
    }
    if( s ){
      s->pNext = pAllShared;
      pAllShared = s;
    }else{
      rc = SQLITE_NOMEM;
    }
  }
  if( s ){
    s->nRef++;
    p->pShared = s;
  }
  pthread_mutex_unlock(&sharedMutex);
  return rc;
}

static void vec0SharedDetach(Vec0Table *p){
  Vec0Shared *s = p->pShared, **pp;
  int i, bFree = 0;
  if( s==0 ) return;
  p->pShared = 0;
  pthread_mutex_lock(&sharedMutex);
  if( --s->nRef<=0 ){
    for(pp=&pAllShared; *pp; pp=&(*pp)->pNext){
      if( *pp==s ){ *pp = s->pNext; break; }
    }
    bFree = 1;
  }
  pthread_mutex_unlock(&sharedMutex);
  if( bFree ){
    for(i=0; i<VEC0_SHARED_SNAPSHOTS; i++) vec0SnapUnref(s->apSnap[i]);
    sqlite3_free(s->zFile);
    sqlite3_free(s);
  }
}

/* The snapshot of generation iGen (bExact), or the newest not newer than iGen; NULL if
** none. The caller owns a reference. */
static Vec0Snapshot *vec0SharedGet(Vec0Shared *s, sqlite3_int64 iGen, int bExact){
  Vec0Snapshot *pBest = 0;
  int i;
  if( s==0 ) return 0;
  pthread_mutex_lock(&sharedMutex);
  for(i=0; i<VEC0_SHARED_SNAPSHOTS && s->apSnap[i]; i++){
    Vec0Snapshot *x = s->apSnap[i];
    if( x->iGeneration==iGen || (!bExact && x->iGeneration<iGen
                                 && (pBest==0 || x->iGeneration>pBest->iGeneration)) ){
      pBest = x;
      if( x->iGeneration==iGen ) break;
    }
  }
  if( pBest ) vec0SnapRef(pBest);
  pthread_mutex_unlock(&sharedMutex);
  return pBest;
}

/* Publish snapshot x (committed). Snapshots no connection holds any more are dropped,
** but for the newest; so are the oldest past VEC0_SHARED_SNAPSHOTS. */
static void vec0SharedPut(Vec0Shared *s, Vec0Snapshot *x){
  Vec0Snapshot *aKeep[VEC0_SHARED_SNAPSHOTS+1], *aDrop[VEC0_SHARED_SNAPSHOTS+1];
  int nKeep = 0, nDrop = 0, i, j;
  if( s==0 ) return;
  vec0SnapRef(x);
  pthread_mutex_lock(&sharedMutex);
  aKeep[nKeep++] = x;
  for(i=0; i<VEC0_SHARED_SNAPSHOTS && s->apSnap[i]; i++){
    Vec0Snapshot *y = s->apSnap[i];
    if( y->iGeneration==x->iGeneration || __atomic_load_n(&y->nRef, __ATOMIC_ACQUIRE)==1 ){
      aDrop[nDrop++] = y;
    }else{
      aKeep[nKeep++] = y;
    }
  }
  /* Newest first. */
  for(i=1; i<nKeep; i++){
    for(j=i; j>0 && aKeep[j]->iGeneration>aKeep[j-1]->iGeneration; j--){
      Vec0Snapshot *t = aKeep[j]; aKeep[j] = aKeep[j-1]; aKeep[j-1] = t;
    }
  }
  while( nKeep>VEC0_SHARED_SNAPSHOTS ) aDrop[nDrop++] = aKeep[--nKeep];
  for(i=0; i<VEC0_SHARED_SNAPSHOTS; i++) s->apSnap[i] = i<nKeep ? aKeep[i] : 0;
  pthread_mutex_unlock(&sharedMutex);
  for(i=0; i<nDrop; i++) vec0SnapUnref(aDrop[i]);
}

/* Take snapshot x out of the list when the list and the caller are its only holders: the
** caller may then change it in place. */
static int vec0SharedTake(Vec0Shared *s, Vec0Snapshot *x){
  int i, bTaken = 0;
  if( s==0 ) return 0;
  pthread_mutex_lock(&sharedMutex);
  for(i=0; i<VEC0_SHARED_SNAPSHOTS && s->apSnap[i]; i++){
    if( s->apSnap[i]==x && __atomic_load_n(&x->nRef, __ATOMIC_ACQUIRE)==2 ){
      for(; i<VEC0_SHARED_SNAPSHOTS-1; i++) s->apSnap[i] = s->apSnap[i+1];
      s->apSnap[VEC0_SHARED_SNAPSHOTS-1] = 0;
      bTaken = 1;
      break;
    }
  }
  pthread_mutex_unlock(&sharedMutex);
  if( bTaken ) vec0SnapUnref(x);     /* the list's reference; the caller's remains */
  return bTaken;
}

/* ---- building a snapshot --------------------------------------------------------------- */

/* Fill the codes and norms of quantized snapshot s (grown to next_slot) from T_codes, a
** blob (a chunk's records) at a time: a load of a quantized table reads its codes, not its
** vectors. Every chunk in use has its blob of codes. */
static int vec0LoadCodes(Vec0Table *p, Vec0Snapshot *s){
  sqlite3_stmt *pStmt = 0;
  sqlite3_blob *pBlob = 0;
  int nRec = vec0QuantRecordBytes(&p->cfg), nCode = vec0QuantCodeBytes(&p->cfg);
  int nBlobBytes = nRec*p->cfg.nChunk;
  sqlite3_int64 nBlob = 0, nExpect = (s->nSlot + p->cfg.nChunk - 1)/p->cfg.nChunk;
  unsigned char *aBuf = sqlite3_malloc(nBlobBytes);
  int rc = aBuf ? vec0Stmt(p, VEC0_STMT_CODES_IDS, &pStmt) : SQLITE_NOMEM;
  while( rc==SQLITE_OK && sqlite3_step(pStmt)==SQLITE_ROW ){
    sqlite3_int64 iBlob = sqlite3_column_int64(pStmt, 0);
    Vec0Chunk *c;
    int j;
    if( iBlob<0 || iBlob>=nExpect ){
      vec0SetError(p, "vec0 \"%s\": storage is damaged: code blob %lld of %s_codes",
                   p->zName, iBlob, p->zName);
      rc = SQLITE_CORRUPT_VTAB;
      break;
    }
    if( pBlob ){
      rc = sqlite3_blob_reopen(pBlob, iBlob);
      if( rc==SQLITE_OK && sqlite3_blob_bytes(pBlob)!=nBlobBytes ) rc = SQLITE_ERROR;
      if( rc!=SQLITE_OK ){
        sqlite3_blob_close(pBlob);
        pBlob = 0;
      }
    }
    if( pBlob==0 ) rc = vec0CodesOpen(p, iBlob, 0, &pBlob);
    if( rc==SQLITE_OK ) rc = sqlite3_blob_read(pBlob, aBuf, nBlobBytes, 0);
    if( rc!=SQLITE_OK ) break;
    c = s->apChunk[iBlob];
    for(j=0; j<p->cfg.nChunk; j++){
      float rScale;
      vec0QuantRecordRead(&p->cfg, aBuf + (size_t)j*nRec, c->aCode + (size_t)j*nCode,
                          &c->aNorm[j], &rScale);
      if( c->aScale ) c->aScale[j] = rScale;
    }
    nBlob++;
  }
  if( pStmt ){
    if( rc==SQLITE_OK ) rc = sqlite3_reset(pStmt); else sqlite3_reset(pStmt);
  }
  if( rc==SQLITE_OK && nBlob!=nExpect ){
    vec0SetError(p, "vec0 \"%s\": storage is damaged: %s_codes has %lld blobs, %s_vectors "
                    "needs %lld", p->zName, p->zName, nBlob, p->zName, nExpect);
    rc = SQLITE_CORRUPT_VTAB;
  }
  sqlite3_blob_close(pBlob);
  sqlite3_free(aBuf);
  return rc;
}

/* Fill empty snapshot s with every vector and row of the table. Vectors go straight from
** the file's pages into the copy (a quantized copy codes them through one blob-sized
** buffer); a streamed copy reads no vector at all. */
static int vec0LoadAll(Vec0Table *p, Vec0Snapshot *s){
  sqlite3_stmt *pStmt = 0;
  Vec0Reader r;
  float *aTmp = 0;
  sqlite3_int64 nSlot = 0, nSeen = 0;
  int nWord = p->cfg.nWord;
  int rc = vec0NextSlot(p, &nSlot);
  memset(&r, 0, sizeof(r));
  if( rc==SQLITE_OK ) rc = vec0BlobsCheck(p, nSlot);
  if( rc==SQLITE_OK ) rc = vec0SnapGrow(p, s, nSlot);
  if( rc==SQLITE_OK && !s->bStreamed && p->bCodes ){
    rc = vec0LoadCodes(p, s);
  }else if( rc==SQLITE_OK && !s->bStreamed ){
    rc = vec0Stmt(p, VEC0_STMT_BLOB_IDS, &pStmt);
  }
  while( rc==SQLITE_OK && pStmt && sqlite3_step(pStmt)==SQLITE_ROW ){
    sqlite3_int64 iBlob = sqlite3_column_int64(pStmt, 0);
    sqlite3_int64 iFirst;                         /* first slot the blob holds */
    Vec0Chunk *c;
    int j, i0, nIn = 0;
    if( iBlob!=nSeen++ ){
      vec0SetError(p, "vec0 \"%s\": storage is damaged: vector blob %lld of %s_vectors is "
                      "missing", p->zName, nSeen-1, p->zName);
      rc = SQLITE_CORRUPT_VTAB;
      break;
    }
    if( iBlob<0 || iBlob>=vec0BlobOf(p, (sqlite3_int64)s->nChunkAlloc*p->cfg.nChunk, 0) ){
      vec0SetError(p, "vec0 \"%s\": storage is damaged: vector blob %lld of %s_vectors",
                   p->zName, iBlob, p->zName);
      rc = SQLITE_CORRUPT_VTAB;
      break;
    }
    iFirst = vec0BlobFirst(p, iBlob, &nIn);
    c = s->apChunk[iFirst/p->cfg.nChunk];
    i0 = (int)(iFirst%p->cfg.nChunk);
    if( c->aVec ){
      rc = vec0ReaderBlob(p, &r, iBlob, c->aVec + (size_t)i0*nWord);
      continue;
    }
    if( aTmp==0 ){
      aTmp = sqlite3_malloc64(sizeof(float)*(size_t)p->nPerBlob*(size_t)nWord);
      if( aTmp==0 ){ rc = SQLITE_NOMEM; break; }
    }
    rc = vec0ReaderBlob(p, &r, iBlob, aTmp);
    for(j=0; rc==SQLITE_OK && j<nIn; j++){
      vec0ChunkPut(p, c, i0+j, aTmp + (size_t)j*nWord);
    }
  }
  vec0ReaderClose(&r);
  sqlite3_free(aTmp);
  if( pStmt ){
    if( rc==SQLITE_OK ) rc = sqlite3_reset(pStmt); else sqlite3_reset(pStmt);
  }
  if( rc==SQLITE_OK ) rc = vec0Stmt(p, VEC0_STMT_SLOT_ALL, &pStmt);
  if( rc!=SQLITE_OK ) return rc;
  while( sqlite3_step(pStmt)==SQLITE_ROW ){
    sqlite3_int64 iRowid = sqlite3_column_int64(pStmt, 0);
    sqlite3_int64 iSlot = sqlite3_column_int64(pStmt, 1);
    Vec0Chunk *c;
    int i;
    if( iSlot<0 || iSlot>=nSlot
     || s->apChunk[iSlot/p->cfg.nChunk]->aLive[iSlot%p->cfg.nChunk] ){
      vec0SetError(p, "vec0 \"%s\": storage is damaged: row %lld has slot %lld",
                   p->zName, iRowid, iSlot);
      rc = SQLITE_CORRUPT_VTAB;
      break;
    }
    c = s->apChunk[iSlot/p->cfg.nChunk];
    i = (int)(iSlot%p->cfg.nChunk);
    c->aLive[i] = 1;
    c->aRowid[i] = iRowid;
    if( c->aVec && p->cfg.eElem==VS_F32 ){
      c->aNorm[i] = vsNormF32(c->aVec + (size_t)i*p->cfg.nDim, p->cfg.nDim);
    }
    s->nLive++;
  }
  if( rc==SQLITE_OK ) rc = sqlite3_reset(pStmt); else sqlite3_reset(pStmt);
  return rc;
}

/* Whether T_changes can bring a snapshot of generation iFrom to iTo: the range is kept,
** not marked "reload", and small enough that replaying beats a whole load. */
static int vec0LogUsable(Vec0Table *p, sqlite3_int64 iFrom, sqlite3_int64 iTo,
                         sqlite3_int64 nSlot, int *pbUsable){
  sqlite3_stmt *pStmt = 0;
  sqlite3_int64 iLogFrom = 0, nRow = 0, nReload = 0;
  int rc;
  *pbUsable = 0;
  if( !p->bChangeLog ) return SQLITE_OK;
  rc = vec0LogFrom(p, &iLogFrom);
  if( rc!=SQLITE_OK || iFrom<iLogFrom ) return rc;
  rc = vec0Stmt(p, VEC0_STMT_LOG_COUNT, &pStmt);
  if( rc!=SQLITE_OK ) return rc;
  sqlite3_bind_int64(pStmt, 1, iFrom);
  sqlite3_bind_int64(pStmt, 2, iTo);
  if( sqlite3_step(pStmt)==SQLITE_ROW ){
    nRow = sqlite3_column_int64(pStmt, 0);
    nReload = sqlite3_column_int64(pStmt, 1);
  }
  rc = sqlite3_reset(pStmt);
  *pbUsable = rc==SQLITE_OK && nReload==0 && nRow<=nSlot/4 + 64;
  return rc;
}

/* Private snapshot s, replayed to a next_slot below its own (the table's trailing slots were
** given back, vec0StorageTrim): it ends at nSlot, and drops the chunks past it. Each slot
** it loses must be free by now; a row still in one means next_slot went down by damage. */
static int vec0SnapShrink(Vec0Table *p, Vec0Snapshot *s, sqlite3_int64 nSlot){
  sqlite3_int64 nChunk = (nSlot + p->cfg.nChunk - 1)/p->cfg.nChunk, i;
  for(i=nSlot; i<s->nSlot; i++){
    const Vec0Chunk *c = s->apChunk[i/p->cfg.nChunk];
    if( c->aLive[i%p->cfg.nChunk] ){
      vec0SetError(p, "vec0 \"%s\": storage is damaged: next_slot went down to %lld below "
                      "row %lld in slot %lld", p->zName, nSlot, c->aRowid[i%p->cfg.nChunk], i);
      return SQLITE_CORRUPT_VTAB;
    }
  }
  while( s->nChunkAlloc>nChunk ) vec0ChunkUnref(s->apChunk[--s->nChunkAlloc]);
  s->nSlot = nSlot;
  return SQLITE_OK;
}

/* Bring private snapshot s from its generation to iTo by replaying T_changes. A slot at or
** past next_slot (given back since, with its blob) is free whatever the log said it held
** on the way, and is not read. */
static int vec0ApplyLog(Vec0Table *p, Vec0Snapshot *s, sqlite3_int64 iTo){
  sqlite3_stmt *pStmt = 0;
  sqlite3_int64 nSlot = 0;
  Vec0Reader r;               /* one blob handle, moved from blob to blob: opening one per
                              ** row cost more than the rest of the replay */
  float *a = sqlite3_malloc64(sizeof(float)*(size_t)p->cfg.nWord);
  int rc = a ? SQLITE_OK : SQLITE_NOMEM;
  memset(&r, 0, sizeof(r));
  if( rc==SQLITE_OK ) rc = vec0NextSlot(p, &nSlot);
  if( rc==SQLITE_OK ) rc = vec0BlobsCheck(p, nSlot);
  if( rc==SQLITE_OK ) rc = vec0SnapGrow(p, s, nSlot);
  if( rc==SQLITE_OK ) rc = vec0Stmt(p, VEC0_STMT_LOG_RANGE, &pStmt);
  if( rc==SQLITE_OK ){
    sqlite3_bind_int64(pStmt, 1, s->iGeneration);
    sqlite3_bind_int64(pStmt, 2, iTo);
    while( rc==SQLITE_OK && sqlite3_step(pStmt)==SQLITE_ROW ){
      sqlite3_int64 iSlot = sqlite3_column_int64(pStmt, 0);
      int bLive = sqlite3_column_type(pStmt, 1)!=SQLITE_NULL;
      sqlite3_int64 iRowid = sqlite3_column_int64(pStmt, 1);
      if( iSlot==VEC0_LOG_TRIMMED ) continue;
      if( iSlot<0 ){
        vec0SetError(p, "vec0 \"%s\": storage is damaged: %s_changes names slot %lld",
                     p->zName, p->zName, iSlot);
        rc = SQLITE_CORRUPT_VTAB;
        break;
      }
      if( iSlot>=nSlot ){
        if( iSlot<s->nSlot ) rc = vec0SnapSet(p, s, iSlot, 0, 0, 0);
        continue;
      }
      if( bLive ) rc = vec0ReaderRead(p, &r, iSlot, a);
      if( rc==SQLITE_OK ) rc = vec0SnapSet(p, s, iSlot, bLive, iRowid, bLive ? a : 0);
    }
    if( rc==SQLITE_OK ) rc = sqlite3_reset(pStmt); else sqlite3_reset(pStmt);
  }
  if( rc==SQLITE_OK && nSlot<s->nSlot ) rc = vec0SnapShrink(p, s, nSlot);
  vec0ReaderClose(&r);
  sqlite3_free(a);
  return rc;
}

/* Whether snapshot s no longer serves a statement needing eNeed: made under another
** budget, or provisional (vec0FirstLoad) for anything but a report. */
static int vec0ViewStale(Vec0Table *p, const Vec0Snapshot *s, int eNeed){
  if( s->bProvisional ) return eNeed!=VEC0_NEED_INFO;
  return s->bStreamed!=vec0OverBudget(p, s->nSlot);
}

/* Whether a whole load of a shared table is the first of the process (no base snapshot,
** no search built one before): it is streamed, as a table over the budget is. Its search
** reads each blob of T_vectors once into one small buffer, as sqlite-vec reads its chunks,
** instead of first copying them all into new memory: 100,000 x 384 float32, the first
** query of a new process took 200-550 ms with the copy against sqlite-vec's 125-180 ms,
** 90-170 ms streamed. A process (a CLI run, a request handler that opens a connection a
** request) that searches a table once never pays for the copy. Quantized tables load
** their codes at once. The next search finds a
** provisional snapshot (streamed where the budget holds vectors) and loads them; a report
** (vecsync_cache_info) shows it as it is. */
static int vec0FirstLoad(Vec0Table *p, int bPrivate, const Vec0Snapshot *pBase, int eNeed){
  int bFirst;
  if( eNeed!=VEC0_NEED_SEARCH || bPrivate || pBase || p->pShared==0 ) return 0;
  /* A quantized table's copy is its codes (T_codes, 4 to 32 times smaller than the
  ** vectors): loading them costs less than streaming the vectors. */
  if( p->cfg.eQuant!=VEC0_QUANT_NONE ) return 0;
  pthread_mutex_lock(&sharedMutex);
  bFirst = !p->pShared->bSearched;
  p->pShared->bSearched = 1;
  pthread_mutex_unlock(&sharedMutex);
  return bFirst;
}

int vec0CacheSkip(Vec0Table *p){
  sqlite3_int64 nSlot = 0;
  if( p->pView && p->bViewPrivate ) return 0;             /* this transaction's own */
  if( vec0MemoryBudget(-1)>0 ){
    if( vec0NextSlot(p, &nSlot)!=SQLITE_OK ) return 0;   /* vec0CacheEnsure says why */
    if( vec0OverBudget(p, nSlot) ){
      /* A view holding vectors was made under a larger budget: the next vec0CacheEnsure
      ** would make it again, streamed. A streamed one may be in use by the caller. */
      if( p->pView && !p->pView->bStreamed ) vec0CacheDrop(p);
      return 1;
    }
  }
  /* The first search would stream the copy: the next one loads it. */
  return p->pView==0 && vec0FirstLoad(p, 0, 0, VEC0_NEED_SEARCH);
}

/* A snapshot of generation iGen as this connection reads it, into *ppSnap. bPrivate: it
** includes this transaction's uncommitted writes (never published). */
static int vec0ViewBuild(Vec0Table *p, sqlite3_int64 iGen, int bPrivate, int eNeed,
                         Vec0Snapshot **ppSnap){
  Vec0Snapshot *pBase = 0, *s = 0;
  sqlite3_int64 nSlot = 0;
  int rc = SQLITE_OK, bUsable = 0, bStreamed = 0, bProvisional = 0;
  *ppSnap = 0;
  if( !bPrivate ){
    s = vec0SharedGet(p->pShared, iGen, 1);
    if( s && vec0ViewStale(p, s, eNeed) ){
      vec0SnapUnref(s);               /* made under another budget: build one for this */
      s = 0;
    }
    if( s ){
      p->aBuild[0]++;
      *ppSnap = s;
      return SQLITE_OK;
    }
  }
  /* A base to replay the log from: the newest older snapshot, ours or the process's. */
  pBase = vec0SharedGet(p->pShared, iGen, 0);
  if( p->pView && !p->bViewPrivate && p->pView->iGeneration<=iGen
   && (pBase==0 || p->pView->iGeneration>pBase->iGeneration) ){
    vec0SnapUnref(pBase);
    pBase = p->pView;
    vec0SnapRef(pBase);
  }
  rc = vec0NextSlot(p, &nSlot);
  if( rc==SQLITE_OK ){
    bStreamed = vec0OverBudget(p, nSlot);
    bProvisional = !bStreamed && vec0FirstLoad(p, bPrivate, pBase, eNeed);
    bStreamed = bStreamed || bProvisional;
  }
  if( rc==SQLITE_OK && pBase && pBase->bStreamed==bStreamed ){
    rc = vec0LogUsable(p, pBase->iGeneration, iGen, pBase->nSlot, &bUsable);
  }
  if( rc==SQLITE_OK ){
    s = vec0SnapNew(bUsable ? pBase : 0);
    if( s==0 ) rc = SQLITE_NOMEM;
    else if( !bUsable ){
      s->bStreamed = bStreamed;
      s->bProvisional = bProvisional;
    }
  }
  if( rc==SQLITE_OK ) rc = bUsable ? vec0ApplyLog(p, s, iGen) : vec0LoadAll(p, s);
  vec0SnapUnref(pBase);
  if( rc!=SQLITE_OK ){
    vec0SnapUnref(s);
    return rc;
  }
  s->iGeneration = iGen;
  p->aBuild[bUsable ? 1 : 2]++;
  if( !bPrivate ) vec0SharedPut(p->pShared, s);
  *ppSnap = s;
  return SQLITE_OK;
}

/* ---- the connection's view --------------------------------------------------------------- */

void vec0CacheDrop(Vec0Table *p){
  vec0SnapUnref(p->pView);
  p->pView = 0;
  p->bViewPrivate = 0;
}

void vec0CacheClear(Vec0Table *p){
  vec0CacheDrop(p);
  vec0SharedDetach(p);
}

int vec0CacheEnsure(Vec0Table *p, int eNeed){
  Vec0Snapshot *s = 0;
  sqlite3_int64 iGen = 0;
  unsigned int v;
  int rc = SQLITE_OK;
  if( p->pView && p->bViewPrivate ) return SQLITE_OK;   /* this transaction's own copy */
  if( p->pView && vec0ViewStale(p, p->pView, eNeed) ){
    vec0CacheDrop(p);                 /* the budget changed, or a second search: build again */
  }
  v = vec0DataVersion(p);
  if( p->pView && v==p->iDataVersion ) return SQLITE_OK;
  rc = vec0Generation(p, &iGen);
  if( rc==SQLITE_OK && p->pView && p->pView->iGeneration==iGen && !p->bWriteTx ){
    p->iDataVersion = v;
    return SQLITE_OK;
  }
  if( rc==SQLITE_OK ) rc = vec0ViewBuild(p, iGen, p->bWriteTx, eNeed, &s);
  if( rc==SQLITE_OK ){
    vec0CacheDrop(p);
    p->pView = s;
    p->bViewPrivate = p->bWriteTx;
    p->iDataVersion = v;
  }
  return vec0StorageExplain(p, rc);
}

/* First write of a transaction, generation iOld -> iOld+1: keep the view as a private
** copy when it is current, else drop it. */
static int vec0CacheBeginWrite(Vec0Table *p, sqlite3_int64 iOld){
  Vec0Snapshot *s = p->pView;
  if( s==0 ) return SQLITE_OK;
  if( p->bViewPrivate ){
    s->iGeneration = iOld+1;          /* bumped again after ROLLBACK TO or a failed statement */
    return SQLITE_OK;
  }
  if( p->bWriteTx || s->iGeneration!=iOld ){
    vec0CacheDrop(p);                 /* not the state this transaction starts from */
    return SQLITE_OK;
  }
  if( vec0SharedTake(p->pShared, s) || __atomic_load_n(&s->nRef, __ATOMIC_ACQUIRE)==1 ){
    /* No other connection holds it: change it in place (its chunks still copy on
    ** write where an older snapshot shares them). */
  }else{
    Vec0Snapshot *pCopy = vec0SnapNew(s);
    if( pCopy==0 ) return SQLITE_NOMEM;
    vec0SnapUnref(s);
    p->pView = s = pCopy;
  }
  s->iGeneration = iOld+1;
  p->bViewPrivate = 1;
  return SQLITE_OK;
}

void vec0CacheCommit(Vec0Table *p){
  if( p->pView && p->bViewPrivate ){
    p->bViewPrivate = 0;
    vec0SharedPut(p->pShared, p->pView);
  }
}

/* The private view writes apply to, or NULL (no view, or one that cannot be kept). */
static Vec0Snapshot *vec0WriteView(Vec0Table *p){
  if( p->pView && !p->bViewPrivate ) vec0CacheDrop(p);
  return p->pView;
}

/* Writes, applied to a private view (nothing happens without one). */
static int vec0CacheGrow(Vec0Table *p, sqlite3_int64 nSlot){
  Vec0Snapshot *s = vec0WriteView(p);
  int rc;
  if( s==0 ) return SQLITE_OK;
  if( s->nSlot!=nSlot-1 ){
    vec0CacheDrop(p);                 /* not a copy of this storage: rebuild it */
    return SQLITE_OK;
  }
  rc = vec0SnapGrow(p, s, nSlot);
  if( rc!=SQLITE_OK ) vec0CacheDrop(p);
  return rc;
}

/* Slot iSlot now holds row iRowid with vector a (NULL: keep it), or nothing (!bLive). */
static int vec0CacheSet(Vec0Table *p, sqlite3_int64 iSlot, int bLive, sqlite3_int64 iRowid,
                        const float *a){
  Vec0Snapshot *s = vec0WriteView(p);
  int rc;
  if( s==0 ) return SQLITE_OK;
  if( iSlot<0 || iSlot>=s->nSlot ){
    vec0CacheDrop(p);
    return SQLITE_OK;
  }
  rc = vec0SnapSet(p, s, iSlot, bLive, iRowid, a);
  if( rc!=SQLITE_OK ) vec0CacheDrop(p);
  return rc;
}

/* ---- vecsync_cache_info --------------------------------------------------------------- */

char *vec0CacheInfo(Vec0Table *p){
  int i, nShared = 0, nSnap = 0;
  for(i=0; i<p->pView->nChunkAlloc; i++){
    nShared += __atomic_load_n(&p->pView->apChunk[i]->nRef, __ATOMIC_ACQUIRE)>1;
  }
  if( p->pShared ){
    pthread_mutex_lock(&sharedMutex);
    for(i=0; i<VEC0_SHARED_SNAPSHOTS && p->pShared->apSnap[i]; i++) nSnap++;
    pthread_mutex_unlock(&sharedMutex);
  }
  return sqlite3_mprintf(
      "{\"generation\":%lld,\"rows\":%lld,\"slots\":%lld,\"chunks\":%d,"
      "\"chunks_shared\":%d,\"process_wide\":%s,\"snapshots_kept\":%d,"
      "\"private\":%s,\"change_log\":%s,\"streamed\":%s,\"budget\":%lld,"
      "\"taken\":%lld,\"replayed\":%lld,\"loaded\":%lld,\"quantizer\":\"%s\","
      "\"bytes_per_row\":%lld,\"scan_threads\":%d}",
      p->pView->iGeneration, p->pView->nLive, p->pView->nSlot, p->pView->nChunkAlloc,
      nShared, p->pShared ? "true" : "false", nSnap, p->bViewPrivate ? "true" : "false",
      p->bChangeLog ? "true" : "false", p->pView->bStreamed ? "true" : "false",
      vec0MemoryBudget(-1), p->aBuild[0], p->aBuild[1], p->aBuild[2],
      p->cfg.eQuant==VEC0_QUANT_INT8 ? "int8" : p->cfg.eQuant==VEC0_QUANT_BIT ? "bit" : "none",
      vec0CopyBytesPerSlot(p, p->pView->bStreamed), p->nScanThreads);
}

/* ---- writes: the storage, then the view -------------------------------------------------- */

/* A write is owned here: vec0_store.c writes the shadow tables and calls nothing back;
** these functions then apply the same change to the transaction's private view and log
** it for the other connections. */

/* Slot iSlot changed (now row iRowid with vector a, or freed when !bLive): keep the
** transaction's copy in step and log the slot for the other connections. */
static int vec0SlotChanged(Vec0Table *p, sqlite3_int64 iSlot, int bLive, sqlite3_int64 iRowid,
                           const float *a){
  int rc = vec0CacheSet(p, iSlot, bLive, iRowid, a);
  if( rc==SQLITE_OK ) rc = vec0LogSlot(p, iSlot, bLive, iRowid);
  return rc;
}

int vec0WriteBegin(Vec0Table *p){
  sqlite3_int64 iOld = 0;
  int rc;
  /* Once a transaction is enough: other connections only see it committed. */
  if( p->bGenerationBumped ) return SQLITE_OK;
  rc = vec0GenerationBump(p, &iOld);
  if( rc==SQLITE_OK ) rc = vec0CacheBeginWrite(p, iOld);
  if( rc==SQLITE_OK ) vec0WriteStart(p, iOld+1);
  return rc;
}

int vec0WriteNewSlot(Vec0Table *p, sqlite3_int64 *piSlot){
  sqlite3_int64 nGrown = 0;
  int rc = vec0SlotAlloc(p, piSlot, &nGrown);
  if( rc==SQLITE_OK && nGrown>0 ) rc = vec0CacheGrow(p, nGrown);
  return rc;
}

int vec0WriteVector(Vec0Table *p, sqlite3_int64 iSlot, sqlite3_int64 iRowid, const float *a){
  int rc = vec0VectorWrite(p, iSlot, a);
  if( rc==SQLITE_OK ) rc = vec0SlotChanged(p, iSlot, 1, iRowid, a);
  return rc;
}

int vec0WriteRowid(Vec0Table *p, sqlite3_int64 iSlot, sqlite3_int64 iRowid){
  return vec0SlotChanged(p, iSlot, 1, iRowid, 0);
}

/* The slot's storage freed, then given back when it ends the table: the copy is then
** rebuilt, since slots went away (the change log tells the other connections to reload). */
int vec0WriteFreeSlot(Vec0Table *p, sqlite3_int64 iSlot){
  int bTrimmed = 0;
  int rc = vec0SlotFree(p, iSlot);
  if( rc==SQLITE_OK ) rc = vec0SlotChanged(p, iSlot, 0, 0, 0);
  if( rc==SQLITE_OK ){
    rc = vec0StorageTrim(p, &bTrimmed);
    if( bTrimmed ) vec0CacheDrop(p);
  }
  return rc;
}

/* Read the vector in slot iSlot into a (nWord words), from the copy when it is current,
** else through r (or a reader of its own when r is NULL). */
int vec0ReadVectorWith(Vec0Table *p, Vec0Reader *r, sqlite3_int64 iSlot, float *a){
  int rc = vec0SlotCheck(p, iSlot, "a row");
  if( rc!=SQLITE_OK ) return rc;
  if( vec0ViewCurrent(p) && iSlot<p->pView->nSlot && vec0CacheVector(p, iSlot) ){
    memcpy(a, vec0CacheVector(p, iSlot), sizeof(float)*(size_t)p->cfg.nWord);
    return SQLITE_OK;
  }
  return r ? vec0ReaderRead(p, r, iSlot, a) : vec0StoredVector(p, iSlot, a);
}

int vec0ReadVector(Vec0Table *p, sqlite3_int64 iSlot, float *a){
  return vec0ReadVectorWith(p, 0, iSlot, a);
}
