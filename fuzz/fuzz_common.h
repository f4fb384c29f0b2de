/*
** fuzz_common.h: what every VecSync fuzz harness shares.
**
**   FuzzIn in; fuzzInInit(&in, data, size);
**   sqlite3 *db = fuzzOpen(&budget);        // fresh :memory: connection, limits set
**   fuzzExec(db, "create ...");             // run SQL, ignore SQL errors
**   fuzzClose(db);
**
** The harnesses are libFuzzer targets built with ASan and UBSan (see fuzz/README.md).
** An SQL error is a normal outcome; only a crash or a sanitizer report is a finding.
** Every input's work is bounded: a VM-step budget in a progress handler, a hard heap
** limit, SQLite length limits, and caps in the harnesses on what the bytes can ask for
** (dimensions, rows, operations), so that big-but-legitimate inputs neither time out
** nor run out of memory.
*/
#ifndef VECSYNC_FUZZ_COMMON_H
#define VECSYNC_FUZZ_COMMON_H

#include <sqlite3.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vecsync.h"

#if defined(__GNUC__) || defined(__clang__)
# define FUZZ_UNUSED __attribute__((unused))
#else
# define FUZZ_UNUSED
#endif

/* Bounds on one input's work. */
#ifndef FUZZ_HEAP_LIMIT
# define FUZZ_HEAP_LIMIT  (256*1024*1024)   /* sqlite3_hard_heap_limit64 */
#endif
#define FUZZ_STEP_BUDGET  100000            /* progress callbacks (x FUZZ_STEP_EVERY ops) */
#define FUZZ_STEP_EVERY   64                /* VM instructions between callbacks */
#define FUZZ_MAX_LENGTH   (1024*1024)       /* SQLITE_LIMIT_LENGTH */
#define FUZZ_MAX_SQL      (64*1024)         /* SQLITE_LIMIT_SQL_LENGTH */

/* ---- reading the input ---------------------------------------------------------------- */

typedef struct FuzzIn FuzzIn;
struct FuzzIn {
  const uint8_t *a;     /* The input */
  size_t n;             /* Its size */
  size_t i;             /* Bytes consumed */
};

FUZZ_UNUSED static void fuzzInInit(FuzzIn *p, const uint8_t *a, size_t n){
  p->a = a; p->n = n; p->i = 0;
}
FUZZ_UNUSED static int fuzzInDone(const FuzzIn *p){ return p->i>=p->n; }
FUZZ_UNUSED static size_t fuzzInLeft(const FuzzIn *p){ return p->i<p->n ? p->n-p->i : 0; }

/* One byte; 0 once the input is used up. */
FUZZ_UNUSED static unsigned fuzzU8(FuzzIn *p){ return p->i<p->n ? p->a[p->i++] : 0; }
FUZZ_UNUSED static unsigned fuzzU16(FuzzIn *p){ unsigned a = fuzzU8(p); return a | (fuzzU8(p)<<8); }
FUZZ_UNUSED static uint32_t fuzzU32(FuzzIn *p){
  uint32_t a = fuzzU16(p);
  return a | ((uint32_t)fuzzU16(p)<<16);
}
FUZZ_UNUSED static uint64_t fuzzU64(FuzzIn *p){
  uint64_t a = fuzzU32(p);
  return a | ((uint64_t)fuzzU32(p)<<32);
}
/* A choice among n (n>0). */
FUZZ_UNUSED static unsigned fuzzPick(FuzzIn *p, unsigned n){ return n ? fuzzU8(p)%n : 0; }

/* Up to nMax bytes of the input, borrowed: *pn gets how many. */
FUZZ_UNUSED static const uint8_t *fuzzBytes(FuzzIn *p, size_t nMax, size_t *pn){
  size_t n = fuzzInLeft(p);
  const uint8_t *z = p->a + p->i;
  if( n>nMax ) n = nMax;
  p->i += n;
  *pn = n;
  return z;
}

/* Integers that tend to break code: boundaries, negatives, slot-sized and huge ones. */
FUZZ_UNUSED static int64_t fuzzInterestingInt(FuzzIn *p){
  static const int64_t aVal[] = {
    0, 1, 2, 3, 7, 8, 9, 15, 16, 17, 63, 64, 65, 255, 256, 1023, 1024, 1025, 4096,
    65535, 65536, 65537, -1, -2, -5, -8, -1024, 2147483647, -2147483647-1, 4294967295LL,
    4294967296LL, 34359738368LL, 1099511627776LL, 9223372036854775807LL,
    -9223372036854775807LL-1, 9223372036854775806LL, 4611686018427387904LL,
  };
  unsigned c = fuzzU8(p);
  if( c<192 ) return aVal[c % (sizeof(aVal)/sizeof(aVal[0]))];
  if( c<224 ) return (int8_t)fuzzU8(p);
  if( c<240 ) return (int32_t)fuzzU32(p);
  return (int64_t)fuzzU64(p);
}

/* Doubles, with NaN, infinities, zeros, subnormals and float32 overflow. */
FUZZ_UNUSED static double fuzzDouble(FuzzIn *p){
  unsigned c = fuzzU8(p);
  switch( c % 16 ){
    case 0:  return 0.0;
    case 1:  return -0.0;
    case 2:  return NAN;
    case 3:  return INFINITY;
    case 4:  return -INFINITY;
    case 5:  return 1e39;            /* beyond FLT_MAX */
    case 6:  return 1e-45;           /* float32 subnormal */
    case 7:  return 3.4028234663852886e38;
    case 8:  { uint64_t u = fuzzU64(p); double d; memcpy(&d, &u, 8); return d; }
    case 9:  { uint32_t u = fuzzU32(p); float f; memcpy(&f, &u, 4); return f; }
    default: return (double)(int8_t)fuzzU8(p) / (double)(1 + (c>>4));
  }
}

/* ---- a bounded connection ------------------------------------------------------------- */

typedef struct FuzzBudget FuzzBudget;
struct FuzzBudget {
  sqlite3 *db;
  long nCall;           /* Progress callbacks so far */
  long nMax;            /* Stop (interrupt) after this many */
  long nInterruptAt;    /* When >0: call sqlite3_interrupt at this callback count */
};

FUZZ_UNUSED static int fuzzProgress(void *pArg){
  FuzzBudget *b = (FuzzBudget*)pArg;
  b->nCall++;
  if( b->nInterruptAt>0 && b->nCall>=b->nInterruptAt ){
    b->nInterruptAt = 0;
    sqlite3_interrupt(b->db);
  }
  return b->nCall>=b->nMax;
}

/* Arm an interrupt nSteps progress callbacks from now (0: none). */
FUZZ_UNUSED static void fuzzInterruptAfter(FuzzBudget *b, long nSteps){
  b->nInterruptAt = nSteps>0 ? b->nCall + nSteps : 0;
}

/* VECSYNC_FUZZ_TRACE=1 in the environment prints each statement and its error: to see
** what an input does when replayed (harness FILE). */
static int fuzzTraceOn = -1;
FUZZ_UNUSED static int fuzzTrace(unsigned eType, void *pCtx, void *pStmt, void *pX){
  (void)eType; (void)pCtx; (void)pX;
  {
    char *z = sqlite3_expanded_sql((sqlite3_stmt*)pStmt);
    fprintf(stderr, "SQL: %.300s\n", z ? z : sqlite3_sql((sqlite3_stmt*)pStmt));
    sqlite3_free(z);
  }
  return 0;
}

FUZZ_UNUSED static void fuzzGlobalInit(void){
  static int bDone = 0;
  if( bDone ) return;
  bDone = 1;
  sqlite3_auto_extension((void(*)(void))sqlite3_vecsync_init);
  sqlite3_hard_heap_limit64(FUZZ_HEAP_LIMIT);
}

/* A fresh connection to zPath with the extension, limits and the step budget. */
FUZZ_UNUSED static sqlite3 *fuzzOpenPath(FuzzBudget *b, const char *zPath){
  sqlite3 *db = 0;
  fuzzGlobalInit();
  if( sqlite3_open_v2(zPath, &db, SQLITE_OPEN_READWRITE|SQLITE_OPEN_CREATE, 0)!=SQLITE_OK ){
    sqlite3_close(db);
    return 0;
  }
  memset(b, 0, sizeof(*b));
  b->db = db;
  b->nMax = FUZZ_STEP_BUDGET;
  sqlite3_limit(db, SQLITE_LIMIT_LENGTH, FUZZ_MAX_LENGTH);
  sqlite3_limit(db, SQLITE_LIMIT_SQL_LENGTH, FUZZ_MAX_SQL);
  sqlite3_limit(db, SQLITE_LIMIT_COLUMN, 200);
  sqlite3_limit(db, SQLITE_LIMIT_VDBE_OP, 100000);
  sqlite3_limit(db, SQLITE_LIMIT_TRIGGER_DEPTH, 10);
  sqlite3_progress_handler(db, FUZZ_STEP_EVERY, fuzzProgress, b);
  if( fuzzTraceOn<0 ) fuzzTraceOn = getenv("VECSYNC_FUZZ_TRACE")!=0;
  if( fuzzTraceOn ) sqlite3_trace_v2(db, SQLITE_TRACE_STMT, fuzzTrace, 0);
  return db;
}

/* A fresh :memory: connection with the extension, limits and the step budget. */
FUZZ_UNUSED static sqlite3 *fuzzOpen(FuzzBudget *b){
  return fuzzOpenPath(b, ":memory:");
}

FUZZ_UNUSED static void fuzzClose(sqlite3 *db){
  if( db ) sqlite3_close_v2(db);
}

/* Step a prepared statement to the end (or an error), reading every column as a
** client would; then finalize it. Returns the finalize code. */
FUZZ_UNUSED static int fuzzRun(sqlite3_stmt *pStmt){
  int nRow = 0;
  if( pStmt==0 ) return SQLITE_OK;
  int rc;
  while( (rc = sqlite3_step(pStmt))==SQLITE_ROW && nRow++<100000 ){
    int i, n = sqlite3_column_count(pStmt);
    for(i=0; i<n; i++){
      switch( sqlite3_column_type(pStmt, i) ){
        case SQLITE_BLOB: (void)sqlite3_column_blob(pStmt, i); break;
        case SQLITE_TEXT: (void)sqlite3_column_text(pStmt, i); break;
        case SQLITE_FLOAT: (void)sqlite3_column_double(pStmt, i); break;
        default: (void)sqlite3_column_int64(pStmt, i); break;
      }
      (void)sqlite3_column_bytes(pStmt, i);
    }
  }
  if( fuzzTraceOn>0 ){
    if( rc==SQLITE_ROW || rc==SQLITE_DONE ) fprintf(stderr, "  -> %d rows\n", nRow);
    else fprintf(stderr, "  -> error %d: %s\n", rc, sqlite3_errmsg(sqlite3_db_handle(pStmt)));
  }
  return sqlite3_finalize(pStmt);
}

/* Run every statement of zSql (printf-style), ignoring SQL errors. */
FUZZ_UNUSED static int fuzzExec(sqlite3 *db, const char *zFmt, ...){
  va_list ap;
  char *zSql;
  const char *zTail;
  int rc = SQLITE_OK;
  va_start(ap, zFmt);
  zSql = sqlite3_vmprintf(zFmt, ap);
  va_end(ap);
  if( zSql==0 ) return SQLITE_NOMEM;
  zTail = zSql;
  while( zTail && zTail[0] ){
    sqlite3_stmt *pStmt = 0;
    const char *zNext = 0;
    rc = sqlite3_prepare_v2(db, zTail, -1, &pStmt, &zNext);
    if( rc!=SQLITE_OK ){
      if( fuzzTraceOn>0 ) fprintf(stderr, "SQL: %.300s\n  -> prepare error: %s\n", zTail, sqlite3_errmsg(db));
      break;
    }
    rc = fuzzRun(pStmt);
    if( zNext==zTail ) break;
    zTail = zNext;
  }
  sqlite3_free(zSql);
  return rc;
}

/* Prepare (printf-style); NULL on an SQL error. */
FUZZ_UNUSED static sqlite3_stmt *fuzzPrepare(sqlite3 *db, const char *zFmt, ...){
  va_list ap;
  char *zSql;
  sqlite3_stmt *pStmt = 0;
  va_start(ap, zFmt);
  zSql = sqlite3_vmprintf(zFmt, ap);
  va_end(ap);
  if( zSql==0 ) return 0;
  if( sqlite3_prepare_v2(db, zSql, -1, &pStmt, 0)!=SQLITE_OK ){
    if( fuzzTraceOn>0 ) fprintf(stderr, "SQL: %.300s\n  -> prepare error: %s\n", zSql, sqlite3_errmsg(db));
    sqlite3_finalize(pStmt);
    pStmt = 0;
  }
  sqlite3_free(zSql);
  return pStmt;
}

/* Finish the SQL built in s and prepare it; NULL when out of memory or on an SQL error. */
FUZZ_UNUSED static sqlite3_stmt *fuzzPrepareStr(sqlite3 *db, sqlite3_str *s){
  char *zSql = sqlite3_str_finish(s);
  sqlite3_stmt *pStmt = zSql ? fuzzPrepare(db, "%s", zSql) : 0;
  sqlite3_free(zSql);
  return pStmt;
}

/* ---- vectors from the input ----------------------------------------------------------- */

/* Bind a vector of about nDim dimensions at parameter i, in a form the input chooses:
** float32 blob, JSON text, float64 blob with libSQL's type byte, wrong dimensions,
** NaN/inf/zero elements, raw bytes, NULL or a number. */
FUZZ_UNUSED static void fuzzBindVector(FuzzIn *in, sqlite3_stmt *pStmt, int i, int nDim){
  unsigned eForm = fuzzU8(in);
  int n = nDim;
  unsigned eFill;
  int j;
  if( pStmt==0 ) return;
  if( (eForm & 0xC0)==0xC0 ){          /* wrong number of dimensions */
    int d = (int)(fuzzU8(in)%9) - 4;
    n = nDim + (d==0 ? 1 : d);
    if( n<0 ) n = 0;
  }
  eFill = fuzzU8(in) % 8;
  switch( eForm % 8 ){
    case 0: case 1: case 2: {           /* float32 blob */
      float a[64];
      if( n>64 ) n = 64;
      for(j=0; j<n; j++){
        switch( eFill ){
          case 0: a[j] = 0.0f; break;                     /* the zero vector */
          case 1: a[j] = (float)fuzzDouble(in); break;    /* NaN, inf, ... */
          case 2: a[j] = (float)(j==0); break;
          default: a[j] = (float)((int8_t)fuzzU8(in)) / 16.0f; break;
        }
      }
      sqlite3_bind_blob(pStmt, i, a, n*4, SQLITE_TRANSIENT);
      break;
    }
    case 3: case 4: {                   /* text */
      sqlite3_str *s = sqlite3_str_new(0);
      sqlite3_str_appendchar(s, 1, '[');
      for(j=0; j<n && j<64; j++){
        double d = eFill==0 ? 0.0 : eFill==1 ? fuzzDouble(in) : (double)(int8_t)fuzzU8(in)/8.0;
        if( j ) sqlite3_str_appendall(s, eFill==7 ? " ," : ",");
        if( isnan(d) ) sqlite3_str_appendall(s, "nan");
        else if( isinf(d) ) sqlite3_str_appendall(s, d>0 ? "inf" : "-inf");
        else sqlite3_str_appendf(s, "%.9g", d);
      }
      sqlite3_str_appendchar(s, 1, ']');
      {
        char *z = sqlite3_str_finish(s);
        if( z ) sqlite3_bind_text(pStmt, i, z, -1, sqlite3_free);
      }
      break;
    }
    case 5: {                           /* float64 blob with libSQL's trailing type byte */
      double a[64];
      unsigned char buf[64*8+1];
      if( n>64 ) n = 64;
      for(j=0; j<n; j++) a[j] = eFill<2 ? fuzzDouble(in) : (double)(int8_t)fuzzU8(in)/4.0;
      memcpy(buf, a, (size_t)n*8);
      buf[n*8] = (eFill&1) ? 2 : (unsigned char)fuzzU8(in);
      sqlite3_bind_blob(pStmt, i, buf, n*8+1, SQLITE_TRANSIENT);
      break;
    }
    case 6: {                           /* raw input bytes as a blob or text */
      size_t nb;
      const uint8_t *z = fuzzBytes(in, fuzzU8(in) % 80, &nb);
      if( eFill&1 ) sqlite3_bind_text(pStmt, i, (const char*)z, (int)nb, SQLITE_TRANSIENT);
      else sqlite3_bind_blob(pStmt, i, z, (int)nb, SQLITE_TRANSIENT);
      break;
    }
    default:                            /* not a vector at all */
      if( eFill<4 ) sqlite3_bind_null(pStmt, i);
      else if( eFill<6 ) sqlite3_bind_int64(pStmt, i, fuzzInterestingInt(in));
      else sqlite3_bind_double(pStmt, i, fuzzDouble(in));
      break;
  }
}

/* Bind a scalar value (metadata, keys, k): NULL, integer, real, text or blob. */
FUZZ_UNUSED static void fuzzBindScalar(FuzzIn *in, sqlite3_stmt *pStmt, int i){
  unsigned c = fuzzU8(in);
  if( pStmt==0 ) return;
  switch( c % 8 ){
    case 0: sqlite3_bind_null(pStmt, i); break;
    case 1: case 2: sqlite3_bind_int64(pStmt, i, fuzzInterestingInt(in)); break;
    case 3: sqlite3_bind_int64(pStmt, i, (int64_t)(c>>3)); break;   /* small keys collide */
    case 4: sqlite3_bind_double(pStmt, i, fuzzDouble(in)); break;
    case 5: {
      char z[8];
      snprintf(z, sizeof(z), "k%u", (c>>3) & 15);
      sqlite3_bind_text(pStmt, i, z, -1, SQLITE_TRANSIENT);
      break;
    }
    case 6: {
      size_t nb;
      const uint8_t *z = fuzzBytes(in, (c>>3) & 15, &nb);
      sqlite3_bind_text(pStmt, i, (const char*)z, (int)nb, SQLITE_TRANSIENT);
      break;
    }
    default: {
      size_t nb;
      const uint8_t *z = fuzzBytes(in, (c>>3) & 15, &nb);
      sqlite3_bind_blob(pStmt, i, z, (int)nb, SQLITE_TRANSIENT);
      break;
    }
  }
}

#endif /* VECSYNC_FUZZ_COMMON_H */
