/*
** fuzz_vec0.c: the vec0 virtual table, driven by a small program decoded from the input.
**
** The input is not SQL text. Its first bytes declare a table:
**
**   create virtual table v using vec0(
**     [id text primary key | id integer primary key],     -- pk kind from the input
**     embedding float[1..16] | int8[1..40] | bit[8..64]
**       [distance_metric=cosine|l2|dot|l1|hamming|bogus]
**       [indexed by rescore(quantizer=int8|bit|bogus, oversample=0|1|2|8|1024)],
**     m0 <type>, +m1 <type>, ...                           -- 0..70 columns, past 64 too;
**                                                          -- a column's type byte of
**                                                          -- 120..127 makes m<i> a further
**                                                          -- vector column instead:
**                                                          -- float[3] l2|cosine|l1|dot,
**                                                          -- int8[5] l2|cosine, bit[16],
**                                                          -- float[2]
**     [chunk_size=8|16|...|65536|bad]);
**
** (a declaration vec0 refuses falls back to a plain one, so the operations still run),
** then each further group of bytes is one operation: INSERT [OR REPLACE|IGNORE|...] with
** vectors made from the bytes (NaN, inf, zero, wrong dimensions, F64 blobs, text), keys of
** every type; UPDATE and DELETE by key, rowid or metadata; BEGIN/COMMIT/ROLLBACK and
** savepoints; KNN with k or LIMIT (k from 0 and negatives to 2^63-1) and filters with
** every operator on metadata, the primary key and the rowid; KNN inside a scan and from a
** subquery; point lookups; full scans; vecsync_knn_batch; rename; drop and recreate.
** With further vector columns, a KNN query takes its MATCH on one of them (or on two, which
** is refused) by one more input byte, and their values are vectors of their own type.
** An operation may arm an interrupt: the progress handler calls sqlite3_interrupt after
** an input-chosen number of steps.
**
** The KNN scans run on 1 to 4 threads (the connection's worker-thread limit, from the
** input's length; fuzz.sh builds with VEC0_PARALLEL_MIN_ROWS=1, so that a table of two
** chunks is cut into parts): the oracle checks the answer of several threads.
**
** Bounds: at most 96 operations, 64 rows copied per INSERT ... SELECT, the connection's
** step budget and heap limit (fuzz_common.h).
*/
#include "fuzz_common.h"

#define MAX_OPS   96
#define MAX_COLS  72

typedef struct Col Col;
struct Col {
  int bAux;             /* "+name": auxiliary, not filterable */
  int eType;            /* Index into azType */
  int eVec;             /* 0: not a vector; 1..8: a further vector column (aVecType) */
};

/* The further vector columns a declaration can have: type, dimensions, metric. */
typedef struct VecType VecType;
struct VecType {
  int eElem;            /* 0: float, 1: int8, 2: bit */
  int nDim;
  const char *zMetric;  /* NULL: none given */
};
static const VecType aVecType[] = {
  { 0, 3, "l2" }, { 0, 3, "cosine" }, { 0, 3, "l1" }, { 0, 3, "dot" },
  { 1, 5, "l2" }, { 1, 5, "cosine" }, { 2, 16, 0 }, { 0, 2, 0 },
};

typedef struct Model Model;
struct Model {
  int ePk;              /* 0: none (rowid), 1: text, 2: integer */
  int nDim;             /* Dimensions of the vector column */
  int eElem;            /* 0: float[N], 1: int8[N], 2: bit[N] */
  int bRaw;             /* int8/bit: vectors bound as they are, not through vec_int8/vec_bit
                        ** (so the column's type checks refuse them) */
  int nCol;             /* Metadata and auxiliary columns m0.. */
  int nVecCol;          /* How many of them are further vector columns */
  int eMetric;          /* The vector column's metric: an ORACLE_* value */
  int bQuant;           /* "indexed by rescore(...)": coarse candidates, then exact */
  Col aCol[MAX_COLS];
  char *zDecl;          /* The CREATE VIRTUAL TABLE that worked */
};

static const char *azType[] = {
  "text", "integer", "int", "float", "real", "double", "boolean", "bool", "blob", "",
};
#define TYPE_TEXT(t)  ((t)==0)
#define TYPE_INT(t)   ((t)==1 || (t)==2)
#define TYPE_REAL(t)  ((t)>=3 && (t)<=5)
#define TYPE_BOOL(t)  ((t)==6 || (t)==7)

/* Metrics, as the oracle computes them. */
#define ORACLE_UNKNOWN 0
#define ORACLE_L2      1
#define ORACLE_COSINE  2
#define ORACLE_DOT     3
#define ORACLE_L1      4
#define ORACLE_HAMMING 5

static const char *azMetric[] = { "cosine", "l2", "dot", "L2", "manhattan", "l1", "hamming" };
static const int aChunk[] = { 8, 16, 24, 64, 1024, 65536, 0, 7, 12, 65544, -8 };

/* ---- values -------------------------------------------------------------------------- */

/* A key for the primary key or rowid: mostly small values that collide. */
static void bindKey(FuzzIn *in, sqlite3_stmt *pStmt, int i, const Model *m){
  unsigned c = fuzzU8(in);
  char z[16];
  if( pStmt==0 ) return;
  switch( c % 8 ){
    case 0: case 1: case 2: case 3:
      if( m->ePk==1 ){
        snprintf(z, sizeof(z), "k%u", (c>>3) & 15);
        sqlite3_bind_text(pStmt, i, z, -1, SQLITE_TRANSIENT);
      }else{
        sqlite3_bind_int64(pStmt, i, (c>>3) & 31);
      }
      break;
    case 4: sqlite3_bind_int64(pStmt, i, fuzzInterestingInt(in)); break;
    case 5: sqlite3_bind_null(pStmt, i); break;
    case 6:
      snprintf(z, sizeof(z), "%u", (c>>3) & 15);       /* a number as text */
      sqlite3_bind_text(pStmt, i, z, -1, SQLITE_TRANSIENT);
      break;
    default: fuzzBindScalar(in, pStmt, i); break;
  }
}

static void bindVecOf(FuzzIn *in, sqlite3_stmt *pStmt, int i, int eElem, int nDim);

/* A value for column m<iCol>: mostly of its type from a small domain, so filters match; a
** further vector column's, mostly a vector of its type. */
static void bindColValue(FuzzIn *in, sqlite3_stmt *pStmt, int i, const Model *m, int iCol){
  unsigned c = fuzzU8(in);
  int t = (iCol>=0 && iCol<m->nCol) ? m->aCol[iCol].eType : 9;
  if( iCol>=0 && iCol<m->nCol && m->aCol[iCol].eVec ){
    const VecType *v = &aVecType[m->aCol[iCol].eVec-1];
    if( c<240 ){ bindVecOf(in, pStmt, i, v->eElem, v->nDim); return; }
  }
  if( pStmt==0 ) return;
  if( c>=224 ){ fuzzBindScalar(in, pStmt, i); return; }
  if( c>=208 ){ sqlite3_bind_null(pStmt, i); return; }
  if( TYPE_TEXT(t) ){
    char z[8];
    snprintf(z, sizeof(z), "a%u", c & 3);
    sqlite3_bind_text(pStmt, i, z, -1, SQLITE_TRANSIENT);
  }else if( TYPE_INT(t) ){
    sqlite3_bind_int64(pStmt, i, (int)(c % 16) - 3);
  }else if( TYPE_REAL(t) ){
    sqlite3_bind_double(pStmt, i, ((int)(c % 16) - 3) / 2.0);
  }else if( TYPE_BOOL(t) ){
    sqlite3_bind_int(pStmt, i, c & 1);
  }else{
    fuzzBindScalar(in, pStmt, i);
  }
}

/* A vector for a vector column: float forms (fuzzBindVector) for a float column; for an
** int8 or bit column mostly its bytes (of the right length, or off by a few), sometimes a
** float form. The SQL wraps the parameter with vecParam() or colParam(). */
static void bindVecOf(FuzzIn *in, sqlite3_stmt *pStmt, int i, int eElem, int nDim){
  unsigned c;
  int nByte, j;
  unsigned char a[80];
  if( eElem==0 ){ fuzzBindVector(in, pStmt, i, nDim); return; }
  c = fuzzU8(in);
  if( c>=0xF0 ){ fuzzBindVector(in, pStmt, i, nDim); return; }
  nByte = eElem==1 ? nDim : nDim/8;
  if( c>=0xE0 ) nByte += (int)(c & 7) - 4;
  if( nByte<0 ) nByte = 0;
  if( nByte>(int)sizeof(a) ) nByte = (int)sizeof(a);
  for(j=0; j<nByte; j++) a[j] = (c & 0x40) ? 0 : (unsigned char)fuzzU8(in);   /* or zeros */
  if( pStmt ) sqlite3_bind_blob(pStmt, i, a, nByte, SQLITE_TRANSIENT);
}

static void bindVec(FuzzIn *in, sqlite3_stmt *pStmt, int i, const Model *m){
  bindVecOf(in, pStmt, i, m->eElem, m->nDim);
}

/* The SQL of vector parameter zParam ("?" or "?N"): wrapped in vec_int8() or vec_bit() for
** a typed column (which takes nothing else), else as it is. */
static void vecParam(sqlite3_str *s, const Model *m, const char *zParam){
  if( m->eElem==0 || m->bRaw ) sqlite3_str_appendall(s, zParam);
  else sqlite3_str_appendf(s, "%s(%s)", m->eElem==1 ? "vec_int8" : "vec_bit", zParam);
}

/* The SQL of a parameter for column m<iCol>: wrapped as vecParam() does for a further
** int8 or bit vector column. */
static void colParam(sqlite3_str *s, const Model *m, int iCol, const char *zParam){
  int e = (iCol>=0 && iCol<m->nCol && m->aCol[iCol].eVec) ? aVecType[m->aCol[iCol].eVec-1].eElem : 0;
  if( e==0 || m->bRaw ) sqlite3_str_appendall(s, zParam);
  else sqlite3_str_appendf(s, "%s(%s)", e==1 ? "vec_int8" : "vec_bit", zParam);
}

/* ---- the declaration ------------------------------------------------------------------ */

static char *declare(FuzzIn *in, Model *m){
  sqlite3_str *s = sqlite3_str_new(0);
  unsigned flags = fuzzU8(in);
  int nPart = 0, i;
  int iPkPos, iChunkPos;
  int nChunkPick = fuzzPick(in, 16);

  memset(m, 0, sizeof(*m));
  m->ePk = fuzzPick(in, 3);
  m->eElem = (flags>>6)==2 ? 1 : (flags>>6)==3 ? 2 : 0;
  {
    unsigned d = fuzzU8(in);
    m->bRaw = m->eElem && (d & 0x80);
    d &= 0x7f;
    m->nDim = m->eElem==1 ? 1 + (int)(d % 40) : m->eElem==2 ? 8*(1 + (int)(d % 8))
            : 1 + (int)(d % 16);
  }
  m->nCol = fuzzU8(in) % 71;
  if( m->nCol>MAX_COLS ) m->nCol = MAX_COLS;
  for(i=0; i<m->nCol; i++){
    unsigned c = fuzzU8(in);
    m->aCol[i].bAux = (c & 0x80)!=0;
    m->aCol[i].eType = (c & 0x7f) % 10;
    if( (c & 0x7f)>=120 ){
      m->aCol[i].eVec = 1 + (int)((c & 0x7f) - 120);
      m->nVecCol++;
    }
  }
  iPkPos = flags & 1;           /* primary key before or after the vector column */
  iChunkPos = (flags>>1) & 1;   /* chunk_size first or last */

  sqlite3_str_appendall(s, "CREATE VIRTUAL TABLE v USING vec0(");
  if( nChunkPick<(int)(sizeof(aChunk)/sizeof(aChunk[0])) && iChunkPos==0 ){
    sqlite3_str_appendf(s, "chunk_size=%d", aChunk[nChunkPick]);
    nPart++;
  }
  if( m->ePk && iPkPos==0 ){
    sqlite3_str_appendf(s, "%sid %s primary key", nPart++ ? ", " : "",
                        m->ePk==1 ? "text" : "integer");
  }
  sqlite3_str_appendf(s, "%sembedding %s[%d]", nPart++ ? ", " : "",
                      m->eElem==1 ? "int8" : m->eElem==2 ? "bit" : "float", m->nDim);
  m->eMetric = m->eElem==2 ? ORACLE_HAMMING : ORACLE_L2;
  if( flags & 4 ){
    static const int aOracle[] = { ORACLE_COSINE, ORACLE_L2, ORACLE_DOT, ORACLE_L2,
                                   ORACLE_UNKNOWN, ORACLE_L1, ORACLE_HAMMING };
    unsigned iMetric = fuzzPick(in, 7);
    sqlite3_str_appendf(s, " distance_metric=%s", azMetric[iMetric]);
    m->eMetric = aOracle[iMetric];
  }
  if( flags & 32 ){
    /* A quantized copy: codes scanned, candidates re-scored from the stored vectors. */
    static const char *azQuant[] = { "int8", "bit", "int4" };
    static const int aOver[] = { 1, 2, 8, 1024, 0 };
    sqlite3_str_appendf(s, " indexed by rescore(quantizer=%s, oversample=%d)",
                        azQuant[fuzzPick(in, 3)], aOver[fuzzPick(in, 5)]);
    m->bQuant = 1;
  }
  if( m->ePk && iPkPos==1 ){
    sqlite3_str_appendf(s, ", id %s primary key", m->ePk==1 ? "text" : "integer");
  }
  for(i=0; i<m->nCol; i++){
    if( m->aCol[i].eVec ){
      const VecType *v = &aVecType[m->aCol[i].eVec-1];
      /* "+m<i> float[3]" is refused: a declaration that falls back. */
      sqlite3_str_appendf(s, ", %sm%d %s[%d]", m->aCol[i].bAux ? "+" : "", i,
                          v->eElem==1 ? "int8" : v->eElem==2 ? "bit" : "float", v->nDim);
      if( v->zMetric ) sqlite3_str_appendf(s, " distance_metric=%s", v->zMetric);
      continue;
    }
    sqlite3_str_appendf(s, ", %sm%d %s", m->aCol[i].bAux ? "+" : "", i,
                        azType[m->aCol[i].eType]);
  }
  if( flags & 8 ) sqlite3_str_appendall(s, ", distance text");      /* reserved name */
  if( flags & 16 ) sqlite3_str_appendall(s, ", M0 integer");        /* duplicate name */
  if( nChunkPick<(int)(sizeof(aChunk)/sizeof(aChunk[0])) && iChunkPos==1 ){
    sqlite3_str_appendf(s, ", chunk_size=%d", aChunk[nChunkPick]);
  }
  sqlite3_str_appendall(s, ")");
  return sqlite3_str_finish(s);
}

/* Create the table the input declares, or a plain one when vec0 refuses it. */
static int createTable(sqlite3 *db, FuzzIn *in, Model *m){
  char *zDecl = declare(in, m);
  if( zDecl && fuzzExec(db, "%s", zDecl)==SQLITE_OK ){
    m->zDecl = zDecl;
    return 1;
  }
  sqlite3_free(zDecl);
  m->ePk = 1;
  m->eElem = 0;
  m->bRaw = 0;
  m->eMetric = ORACLE_L2;
  m->bQuant = 0;
  if( m->nDim>16 ) m->nDim = 16;
  m->nCol = 2;
  m->nVecCol = 0;
  m->aCol[0].bAux = 0; m->aCol[0].eType = 0; m->aCol[0].eVec = 0;
  m->aCol[1].bAux = 0; m->aCol[1].eType = 1; m->aCol[1].eVec = 0;
  m->zDecl = sqlite3_mprintf(
      "CREATE VIRTUAL TABLE v USING vec0(id text primary key, embedding float[%d], "
      "m0 text, m1 integer, chunk_size=8)", m->nDim);
  return m->zDecl && fuzzExec(db, "%s", m->zDecl)==SQLITE_OK;
}

/* ---- operations ------------------------------------------------------------------------ */

static const char *azConflict[] = {
  "", " OR REPLACE", " OR IGNORE", " OR FAIL", " OR ABORT", " OR ROLLBACK",
};

/* Name of the column a filter or assignment targets: the key, rowid or m<i>. */
static int pickColumn(FuzzIn *in, const Model *m, char *zOut, size_t nOut){
  unsigned c = fuzzU8(in);
  if( c<40 && m->ePk ){ snprintf(zOut, nOut, "id"); return -1; }
  if( c<64 || m->nCol==0 ){ snprintf(zOut, nOut, "rowid"); return -1; }
  snprintf(zOut, nOut, "m%d", (int)(c % (unsigned)m->nCol));
  return (int)(c % (unsigned)m->nCol);
}

/* Append a WHERE term on a key or column with a random operator; *pnParam counts the
** parameters it adds. Records which column each parameter is for in aParamCol. */
static void appendFilter(FuzzIn *in, const Model *m, sqlite3_str *s, int *pnParam,
                         int *aParamCol, int nParamMax){
  static const char *azOp[] = {
    "=", "<>", "!=", "<", "<=", ">", ">=", "IS", "IS NOT", "==",
  };
  char zCol[16];
  int iCol = pickColumn(in, m, zCol, sizeof(zCol));
  unsigned op = fuzzPick(in, 18);
  int j, nIn;
  if( op<10 ){
    if( *pnParam<nParamMax ){
      sqlite3_str_appendf(s, "%s %s ?%d", zCol, azOp[op], *pnParam+1);
      aParamCol[(*pnParam)++] = iCol;
    }else{
      sqlite3_str_appendf(s, "%s %s NULL", zCol, azOp[op]);
    }
  }else if( op==10 ){
    sqlite3_str_appendf(s, "%s IS NULL", zCol);
  }else if( op==11 ){
    sqlite3_str_appendf(s, "%s IS NOT NULL", zCol);
  }else if( op<=14 ){
    nIn = 1 + fuzzPick(in, 5);
    sqlite3_str_appendf(s, "%s %sIN (", zCol, op==14 ? "NOT " : "");
    for(j=0; j<nIn; j++){
      if( *pnParam<nParamMax ){
        sqlite3_str_appendf(s, "%s?%d", j ? "," : "", *pnParam+1);
        aParamCol[(*pnParam)++] = iCol;
      }else{
        sqlite3_str_appendf(s, "%sNULL", j ? "," : "");
      }
    }
    sqlite3_str_appendall(s, ")");
  }else if( op==15 ){
    sqlite3_str_appendf(s, "%s IN (SELECT %s FROM v WHERE rowid < 8)", zCol, zCol);
  }else if( op==16 ){
    sqlite3_str_appendf(s, "%s BETWEEN 0 AND 5", zCol);
  }else{
    /* Bounds on distance, pushed into the search: every operator, literal or bound. */
    static const char *azDist[] = { "<", "<=", ">", ">=" };
    unsigned c = fuzzU8(in);
    if( (c & 1) && *pnParam<nParamMax ){
      sqlite3_str_appendf(s, "distance %s ?%d", azDist[(c>>1)&3], *pnParam+1);
      aParamCol[(*pnParam)++] = -2;         /* a distance: bound as a number mostly */
    }else{
      sqlite3_str_appendf(s, "distance %s %d.%d", azDist[(c>>1)&3], (int)fuzzPick(in, 4),
                          (int)fuzzPick(in, 10));
    }
  }
}

/* Bind parameters 1..nParam of a filter list. */
static void bindFilters(FuzzIn *in, sqlite3_stmt *pStmt, const Model *m, int iFirst,
                        int nParam, const int *aParamCol){
  int j;
  for(j=0; j<nParam; j++){
    if( aParamCol[j]==-2 ){
      if( fuzzU8(in)<200 ) sqlite3_bind_double(pStmt, iFirst+j, fuzzDouble(in));
      else fuzzBindScalar(in, pStmt, iFirst+j);
    }else if( aParamCol[j]<0 ) bindKey(in, pStmt, iFirst+j, m);
    else bindColValue(in, pStmt, iFirst+j, m, aParamCol[j]);
  }
}

#define MAX_PARAM 24

static void opInsert(sqlite3 *db, FuzzIn *in, const Model *m){
  sqlite3_str *s = sqlite3_str_new(0);
  unsigned flags = fuzzU8(in);
  int aUse[MAX_COLS];
  int nParam = 0, i, j, bKey, iParam = 0;
  sqlite3_stmt *pStmt;

  bKey = m->ePk ? (flags & 3)!=0 : (flags & 1);
  sqlite3_str_appendf(s, "INSERT%s INTO v(", azConflict[fuzzPick(in, 6)]);
  if( bKey ){
    sqlite3_str_appendall(s, m->ePk ? "id, " : "rowid, ");
    nParam++;
  }
  sqlite3_str_appendall(s, "embedding");
  nParam++;
  for(i=0; i<m->nCol; i++){
    aUse[i] = (flags & 4) ? 1 : (fuzzU8(in) & 1);
    if( aUse[i] ){ sqlite3_str_appendf(s, ", m%d", i); nParam++; }
  }
  sqlite3_str_appendall(s, ") VALUES(");
  for(i=0, j=0; i<nParam; i++){
    if( i ) sqlite3_str_appendall(s, ", ");
    if( i==bKey ){
      vecParam(s, m, "?");
    }else if( i>bKey ){
      while( j<m->nCol && !aUse[j] ) j++;
      colParam(s, m, j++, "?");
    }else{
      sqlite3_str_appendall(s, "?");
    }
  }
  sqlite3_str_appendall(s, ")");
  pStmt = fuzzPrepareStr(db, s);
  if( pStmt==0 ) return;
  if( bKey ) bindKey(in, pStmt, ++iParam, m);
  bindVec(in, pStmt, ++iParam, m);
  for(i=0; i<m->nCol; i++){
    if( aUse[i] ) bindColValue(in, pStmt, ++iParam, m, i);
  }
  fuzzRun(pStmt);
}

/* INSERT ... SELECT from the table itself: new keys, the same vectors. */
static void opInsertSelect(sqlite3 *db, FuzzIn *in, const Model *m){
  const char *zConflict = azConflict[fuzzPick(in, 6)];
  int nLimit = 1 + fuzzPick(in, 64);
  switch( m->ePk ){
    case 1:
      fuzzExec(db, "INSERT%s INTO v(id, embedding) SELECT id || 'c', embedding FROM v "
                   "ORDER BY rowid LIMIT %d", zConflict, nLimit);
      break;
    case 2:
      fuzzExec(db, "INSERT%s INTO v(id, embedding) SELECT id + %d, embedding FROM v "
                   "ORDER BY rowid LIMIT %d", zConflict, (int)fuzzPick(in, 40) - 4, nLimit);
      break;
    default:
      fuzzExec(db, "INSERT%s INTO v(embedding) SELECT embedding FROM v LIMIT %d",
               zConflict, nLimit);
      break;
  }
}

/* " WHERE " and nTerm filters joined by zJoin (" AND ", " OR "); their parameters' columns
** are noted in aParamCol (MAX_PARAM of them), *pnParam counting. */
static void appendWhere(FuzzIn *in, const Model *m, sqlite3_str *s, int nTerm,
                        const char *zJoin, int *pnParam, int *aParamCol){
  int j;
  sqlite3_str_appendall(s, " WHERE ");
  for(j=0; j<nTerm; j++){
    if( j ) sqlite3_str_appendall(s, zJoin);
    appendFilter(in, m, s, pnParam, aParamCol, MAX_PARAM);
  }
}

static void opUpdate(sqlite3 *db, FuzzIn *in, const Model *m){
  sqlite3_str *s = sqlite3_str_new(0);
  unsigned flags = fuzzU8(in);
  int aParamCol[MAX_PARAM], nParam = 0, nSet = 0, j;
  int bVec = flags & 1, bKey = (flags>>1) & 1;
  int nColSet = m->nCol ? (int)((flags>>2) & 3) : 0;
  int aSetCol[3];
  char zParam[8];
  sqlite3_stmt *pStmt;

  sqlite3_str_appendf(s, "UPDATE%s v SET ", azConflict[fuzzPick(in, 6)]);
  if( bVec || (!bKey && nColSet==0) ){
    bVec = 1;
    sqlite3_str_appendall(s, "embedding = ");
    vecParam(s, m, "?1");
    ++nParam;
    nSet++;
  }
  if( bKey ){
    sqlite3_str_appendf(s, "%s%s = ?%d", nSet++ ? ", " : "", m->ePk ? "id" : "rowid", ++nParam);
  }
  for(j=0; j<nColSet; j++){
    aSetCol[j] = (int)(fuzzU8(in) % (unsigned)m->nCol);
    snprintf(zParam, sizeof(zParam), "?%d", ++nParam);
    sqlite3_str_appendf(s, "%sm%d = ", nSet++ ? ", " : "", aSetCol[j]);
    colParam(s, m, aSetCol[j], zParam);
  }
  if( (flags & 0x30)!=0x30 ){
    appendWhere(in, m, s, 1 + ((flags>>6) & 1), " AND ", &nParam, aParamCol);
  }
  pStmt = fuzzPrepareStr(db, s);
  if( pStmt==0 ) return;
  {
    int iParam = 0;
    if( bVec ) bindVec(in, pStmt, ++iParam, m);
    if( bKey ) bindKey(in, pStmt, ++iParam, m);
    for(j=0; j<nColSet; j++) bindColValue(in, pStmt, ++iParam, m, aSetCol[j]);
    bindFilters(in, pStmt, m, iParam+1, nParam-iParam, aParamCol + iParam);
  }
  fuzzRun(pStmt);
}

static void opDelete(sqlite3 *db, FuzzIn *in, const Model *m){
  sqlite3_str *s = sqlite3_str_new(0);
  unsigned flags = fuzzU8(in);
  int aParamCol[MAX_PARAM], nParam = 0;
  sqlite3_stmt *pStmt;
  sqlite3_str_appendall(s, "DELETE FROM v");
  if( (flags & 7)!=7 ){
    appendWhere(in, m, s, 1 + ((flags>>3) & 1), (flags & 0x10) ? " OR " : " AND ", &nParam,
                aParamCol);
  }
  pStmt = fuzzPrepareStr(db, s);
  if( pStmt==0 ) return;
  bindFilters(in, pStmt, m, 1, nParam, aParamCol);
  fuzzRun(pStmt);
}

static void opTxn(sqlite3 *db, FuzzIn *in){
  static const char *azTxn[] = {
    "BEGIN", "COMMIT", "ROLLBACK", "SAVEPOINT s1", "SAVEPOINT s2", "RELEASE s1",
    "ROLLBACK TO s1", "ROLLBACK TO s2", "RELEASE s2", "BEGIN IMMEDIATE", "END",
  };
  fuzzExec(db, "%s", azTxn[fuzzPick(in, sizeof(azTxn)/sizeof(azTxn[0]))]);
}

static void opKnn(sqlite3 *db, FuzzIn *in, const Model *m, FuzzBudget *b){
  static const char *azProj[] = {
    "rowid, distance", "*", "rowid, embedding, distance", "count(*)",
    "rowid, vec_to_json(embedding)", "k, distance", "max(distance)",
  };
  sqlite3_str *s = sqlite3_str_new(0);
  unsigned flags = fuzzU8(in);
  unsigned form = flags & 3;              /* 0: k, 1: LIMIT, 2: both, 3: neither */
  int aParamCol[MAX_PARAM], nParam = 3, nFilter, j;
  int iMatchCol = -1;                     /* a further vector column MATCH is on */
  sqlite3_stmt *pStmt;

  /* ?1 the query, ?2 k, ?3 LIMIT, ?4.. the filters' values. */
  sqlite3_str_appendf(s, "SELECT %s FROM v WHERE ",
                      m->ePk && fuzzU8(in)<32 ? "id, distance" : azProj[fuzzPick(in, 7)]);
  if( m->nVecCol>0 ){
    /* MATCH on the first vector column, a further one, or (refused) both. */
    unsigned c = fuzzU8(in);
    if( c>=96 ){
      int n = (int)(c % (unsigned)m->nVecCol);
      for(iMatchCol=0; iMatchCol<m->nCol; iMatchCol++){
        if( m->aCol[iMatchCol].eVec && n--==0 ) break;
      }
      sqlite3_str_appendf(s, "m%d MATCH ", iMatchCol);
      colParam(s, m, iMatchCol, "?1");
      if( c>=240 ) sqlite3_str_appendall(s, " AND embedding MATCH ?1");
    }
  }
  if( iMatchCol<0 ){
    sqlite3_str_appendall(s, "embedding MATCH ");
    vecParam(s, m, "?1");
  }
  if( form==0 || form==2 ) sqlite3_str_appendall(s, " AND k = ?2");
  nFilter = (int)((flags>>2) & 7);
  if( nFilter>4 ) nFilter = 0;
  for(j=0; j<nFilter; j++){
    sqlite3_str_appendall(s, (flags & 0x80) && j==nFilter-1 ? " OR " : " AND ");
    appendFilter(in, m, s, &nParam, aParamCol, MAX_PARAM);
  }
  if( !(flags & 0x20) ){
    sqlite3_str_appendall(s, (flags & 0x40) ? " ORDER BY distance DESC" : " ORDER BY distance");
  }
  if( form==1 || form==2 ) sqlite3_str_appendall(s, " LIMIT ?3");
  pStmt = fuzzPrepareStr(db, s);
  if( pStmt==0 ) return;
  if( iMatchCol>=0 ) bindColValue(in, pStmt, 1, m, iMatchCol);
  else bindVec(in, pStmt, 1, m);
  /* k and LIMIT: mostly small, else 0, negatives, 2^63-1, text, NULL, reals. */
  for(j=2; j<=3; j++){
    unsigned c;
    if( j==2 && !(form==0 || form==2) ) continue;
    if( j==3 && !(form==1 || form==2) ) continue;
    c = fuzzU8(in);
    if( c<128 ) sqlite3_bind_int64(pStmt, j, 1 + (c % 12));
    else if( c<224 ) sqlite3_bind_int64(pStmt, j, fuzzInterestingInt(in));
    else fuzzBindScalar(in, pStmt, j);
  }
  bindFilters(in, pStmt, m, 4, nParam-3, aParamCol + 3);
  {
    unsigned c = fuzzU8(in);
    if( c & 1 ) fuzzInterruptAfter(b, 1 + (long)(fuzzU16(in) % 512));
  }
  fuzzRun(pStmt);
  fuzzInterruptAfter(b, 0);
}

/* KNN queries nested in other statements: from a subquery, inside a scan of the same
** table (two cursors at once), joined with itself, and feeding a write. */
static void opKnnNested(sqlite3 *db, FuzzIn *in, const Model *m){
  /* Each takes ?1 (a rowid), ?2 (k) and ?3 (a vector, wrapped in %s, the last only). */
  static const char *azSql[] = {
    "SELECT rowid, distance FROM v WHERE embedding MATCH "
    "(SELECT embedding FROM v WHERE rowid = ?1) AND k = ?2",
    "SELECT a.rowid, (SELECT count(*) FROM v b WHERE b.embedding "
    "MATCH a.embedding AND b.k = ?2) FROM v a WHERE a.rowid > ?1",
    "SELECT a.rowid, b.rowid, b.distance FROM v a, v b WHERE "
    "a.rowid <= ?1 AND b.embedding MATCH a.embedding AND b.k = ?2",
    "DELETE FROM v WHERE rowid IN (SELECT rowid FROM v WHERE "
    "embedding MATCH (SELECT embedding FROM v WHERE rowid = ?1) AND k = ?2)",
    "UPDATE v SET embedding = (SELECT embedding FROM v WHERE "
    "rowid = ?1) WHERE rowid IN (SELECT rowid FROM v WHERE "
    "embedding MATCH (SELECT embedding FROM v LIMIT 1) AND k = ?2)",
    "SELECT rowid FROM v WHERE embedding MATCH %s(?3) AND k = ?2 "
    "AND rowid IN (SELECT rowid FROM v WHERE rowid >= ?1)",
  };
  const char *zWrap = m->eElem==0 || m->bRaw ? "" : m->eElem==1 ? "vec_int8" : "vec_bit";
  sqlite3_stmt *pStmt = fuzzPrepare(db, azSql[fuzzPick(in, 6)], zWrap);
  if( pStmt==0 ) return;
  sqlite3_bind_int64(pStmt, 1, (int)fuzzPick(in, 20) - 2);
  sqlite3_bind_int64(pStmt, 2, fuzzU8(in)<200 ? 1 + fuzzPick(in, 8) : fuzzInterestingInt(in));
  bindVec(in, pStmt, 3, m);
  fuzzRun(pStmt);
}

/* ---- the oracle: a KNN answer against brute force ------------------------------------- */

/*
** A KNN query with k and bounds on distance (>, >=, <, <=, often a distance some row has,
** so rows tie with the bound), on a table of small vectors that tie and repeat, checked
** row for row against every row read back by a plain scan: the rows whose reported figure
** is within the bounds, ordered by exact distance (float32 columns: in double; int8 and bit
** columns: the figure itself), ties by ascending rowid, the first k, with the figures
** sqlite-vec reports. Computed here, apart from the extension. A quantized table
** (rescore) is checked when its candidates hold every row. A difference aborts.
*/
#define ORACLE_MAX_ROWS 2048

typedef struct OracleRow OracleRow;
struct OracleRow {
  sqlite3_int64 iRowid;
  double rKey;          /* What the answer is ordered by */
  double rFigure;       /* What it reports (NaN: NULL) */
};

/* The exact distance of a float32 column's row: double sums, in order. */
static double oracleExactF32(int eMetric, const float *q, const float *v, int n){
  double dot = 0, qq = 0, vv = 0, s = 0, r;
  int i;
  switch( eMetric ){
    case ORACLE_COSINE:
      for(i=0; i<n; i++){ dot += (double)q[i]*v[i]; qq += (double)q[i]*q[i]; vv += (double)v[i]*v[i]; }
      r = 1.0 - dot/sqrt(qq*vv);
      return r<0.0 ? 0.0 : (r>2.0 ? 2.0 : r);
    case ORACLE_DOT:
      for(i=0; i<n; i++) dot += (double)q[i]*v[i];
      return -dot;
    case ORACLE_L1:
      for(i=0; i<n; i++) s += fabs((double)q[i]-(double)v[i]);
      return s;
  }
  for(i=0; i<n; i++){ double d = (double)q[i]-v[i]; s += d*d; }
  return sqrt(s);
}

/* The figure sqlite-vec reports for a float32 row: float32 sums in order (l2, cosine),
** the exact l1 rounded to float32, the exact dot. */
static double oracleFigureF32(int eMetric, const float *q, const float *v, int n, double rExact){
  float s = 0, aa = 0, bb = 0;
  int i;
  if( eMetric==ORACLE_L1 ) return (float)rExact;
  if( eMetric==ORACLE_DOT ) return rExact;
  if( eMetric==ORACLE_COSINE ){
    for(i=0; i<n; i++){
      float pd = q[i]*v[i], pa = q[i]*q[i], pb = v[i]*v[i];
      s += pd;
      aa += pa;
      bb += pb;
    }
    if( aa==0 || bb==0 ) return NAN;
    return (float)(1.0 - (double)s/(sqrt((double)aa)*sqrt((double)bb)));
  }
  for(i=0; i<n; i++){
    float d = q[i] - v[i];
    float p = d*d;
    s += p;
  }
  return (float)sqrt((double)s);
}

/* The figure of an int8 or bit row, as sqlite-vec's vec_distance_* computes it. */
static double oracleFigureTyped(int eElem, int eMetric, const unsigned char *q,
                                const unsigned char *v, int nDim){
  const signed char *x = (const signed char*)q, *y = (const signed char*)v;
  int i;
  if( eElem==2 ){
    sqlite3_int64 h = 0;
    for(i=0; i<nDim/8; i++) h += __builtin_popcount((unsigned)(q[i]^v[i]));
    return (double)h;
  }
  if( eMetric==ORACLE_L1 ){
    sqlite3_int64 l1 = 0;
    for(i=0; i<nDim; i++) l1 += abs((int)x[i]-(int)y[i]);
    return (double)l1;
  }
  if( eMetric==ORACLE_COSINE ){
    float dot = 0, aa = 0, bb = 0;
    for(i=0; i<nDim; i++){
      dot += (float)x[i]*(float)y[i];
      aa += (float)x[i]*(float)x[i];
      bb += (float)y[i]*(float)y[i];
    }
    if( aa==0 || bb==0 ) return NAN;
    return (float)(1.0 - (double)dot/(sqrt((double)aa)*sqrt((double)bb)));
  }
  {
    float s = 0;
    for(i=0; i<nDim; i++){
      float d = (float)((int)x[i]-(int)y[i]);
      s += d*d;
    }
    return (float)sqrt((double)s);
  }
}

/* Ordered by key, ties by rowid; rows with no figure (NaN) last. */
static int oracleCompare(const void *a, const void *b){
  const OracleRow *x = a, *y = b;
  int nx = x->rKey!=x->rKey, ny = y->rKey!=y->rKey;
  if( nx!=ny ) return nx - ny;
  if( !nx && x->rKey!=y->rKey ) return x->rKey<y->rKey ? -1 : 1;
  return x->iRowid<y->iRowid ? -1 : x->iRowid>y->iRowid;
}

static int oracleInRange(double d, int nBound, const int *aOp, const double *aVal){
  int i;
  if( d!=d ) return nBound==0;
  for(i=0; i<nBound; i++){
    switch( aOp[i] ){
      case 0: if( !(d<aVal[i]) ) return 0; break;
      case 1: if( !(d<=aVal[i]) ) return 0; break;
      case 2: if( !(d>aVal[i]) ) return 0; break;
      default: if( !(d>=aVal[i]) ) return 0; break;
    }
  }
  return 1;
}

static void opKnnOracle(sqlite3 *db, FuzzIn *in, const Model *m){
  static const char *azDist[] = { "<", "<=", ">", ">=" };
  int nByte = m->eElem==0 ? 4*m->nDim : m->eElem==1 ? m->nDim : m->nDim/8;
  unsigned char aQuery[4*16];
  OracleRow *aRow = 0;
  sqlite3_stmt *pStmt = 0;
  sqlite3_str *s = 0;
  char *zSql = 0;
  int nRow = 0, nBound, aOp[2], i, k, rc, nGot = 0, nWant = 0;
  double aVal[2];
  unsigned c;

  if( m->bRaw || m->eMetric==ORACLE_UNKNOWN || nByte>(int)sizeof(aQuery) ) return;
  if( (m->eElem==2)!=(m->eMetric==ORACLE_HAMMING) ) return;
  if( m->eElem==1 && m->eMetric==ORACLE_DOT ) return;

  /* The query: a stored row's vector (a duplicate at distance 0), or one of small values. */
  c = fuzzU8(in);
  memset(aQuery, 0, sizeof(aQuery));
  pStmt = (c & 1) ? fuzzPrepare(db, "SELECT embedding FROM v WHERE rowid >= %d ORDER BY rowid "
                                    "LIMIT 1", (int)(c>>1) % 40) : 0;
  if( pStmt && sqlite3_step(pStmt)==SQLITE_ROW && sqlite3_column_bytes(pStmt, 0)==nByte ){
    memcpy(aQuery, sqlite3_column_blob(pStmt, 0), (size_t)nByte);
  }else if( m->eElem==0 ){
    float *q = (float*)aQuery;
    for(i=0; i<m->nDim; i++) q[i] = (float)((int)fuzzPick(in, 9) - 4)/2.0f;
  }else{
    for(i=0; i<nByte; i++) aQuery[i] = (unsigned char)(m->eElem==1 ? (int)fuzzPick(in, 9) - 4
                                                                    : (int)fuzzU8(in));
  }
  sqlite3_finalize(pStmt);
  pStmt = 0;

  /* Every row, read back by a plain scan, and its distances. */
  aRow = malloc(sizeof(OracleRow)*ORACLE_MAX_ROWS);
  pStmt = fuzzPrepare(db, "SELECT rowid, embedding FROM v");
  if( aRow==0 || pStmt==0 ) goto cleanup;
  while( (rc = sqlite3_step(pStmt))==SQLITE_ROW ){
    const unsigned char *v = sqlite3_column_blob(pStmt, 1);
    OracleRow *r = &aRow[nRow];
    if( nRow>=ORACLE_MAX_ROWS || sqlite3_column_bytes(pStmt, 1)!=nByte || v==0 ) goto cleanup;
    r->iRowid = sqlite3_column_int64(pStmt, 0);
    if( m->eElem==0 ){
      float a[16];
      memcpy(a, v, (size_t)nByte);
      r->rKey = oracleExactF32(m->eMetric, (const float*)aQuery, a, m->nDim);
      r->rFigure = oracleFigureF32(m->eMetric, (const float*)aQuery, a, m->nDim, r->rKey);
      /* NaN: no direction under cosine (all zeros): stored, its distance NULL. */
    }else{
      r->rFigure = r->rKey = oracleFigureTyped(m->eElem, m->eMetric, aQuery, v, m->nDim);
    }
    nRow++;
  }
  if( rc!=SQLITE_DONE ) goto cleanup;
  sqlite3_finalize(pStmt);
  pStmt = 0;

  /* k, and bounds: often a distance a row has. */
  c = fuzzU8(in);
  k = c<224 ? 1 + (int)(c % 12) : 100 + (int)(c % 900);
  if( m->bQuant && nRow>k+16 ) goto cleanup;      /* coarse candidates: not every row */
  nBound = (int)fuzzPick(in, 3);
  for(i=0; i<nBound; i++){
    c = fuzzU8(in);
    aOp[i] = (int)(c & 3);
    aVal[i] = (c & 4) && nRow>0 ? aRow[fuzzPick(in, 255) % (unsigned)nRow].rFigure
                                : (double)(int8_t)fuzzU8(in)/8.0;
    if( aVal[i]!=aVal[i] ) aVal[i] = 0.0;
  }

  s = sqlite3_str_new(0);
  sqlite3_str_appendall(s, "SELECT rowid, distance FROM v WHERE embedding MATCH ");
  vecParam(s, m, "?1");
  sqlite3_str_appendall(s, " AND k = ?2");
  for(i=0; i<nBound; i++) sqlite3_str_appendf(s, " AND distance %s ?%d", azDist[aOp[i]], 3+i);
  zSql = sqlite3_str_finish(s);
  if( zSql==0 ) goto cleanup;
  pStmt = fuzzPrepare(db, "%s", zSql);
  if( pStmt==0 ) goto cleanup;
  sqlite3_bind_blob(pStmt, 1, aQuery, nByte, SQLITE_STATIC);
  sqlite3_bind_int(pStmt, 2, k);
  for(i=0; i<nBound; i++) sqlite3_bind_double(pStmt, 3+i, aVal[i]);

  /* The expected rows first in aRow (the rest sorted after them). */
  for(i=0; i<nRow; i++){
    if( oracleInRange(aRow[i].rFigure, nBound, aOp, aVal) ) aRow[nWant++] = aRow[i];
  }
  qsort(aRow, (size_t)nWant, sizeof(OracleRow), oracleCompare);
  if( nWant>k ) nWant = k;
  /* k takes the rows without a distance last; they come back first, as ORDER BY distance
  ** sorts NULL. */
  {
    int nNull = 0;
    while( nNull<nWant && aRow[nWant-1-nNull].rKey!=aRow[nWant-1-nNull].rKey ) nNull++;
    if( nNull>0 && nNull<nWant ){
      OracleRow *aTmp = malloc(sizeof(OracleRow)*(size_t)nNull);
      if( aTmp==0 ) goto cleanup;
      memcpy(aTmp, &aRow[nWant-nNull], sizeof(OracleRow)*(size_t)nNull);
      memmove(&aRow[nNull], &aRow[0], sizeof(OracleRow)*(size_t)(nWant-nNull));
      memcpy(&aRow[0], aTmp, sizeof(OracleRow)*(size_t)nNull);
      free(aTmp);
    }
  }

  while( (rc = sqlite3_step(pStmt))==SQLITE_ROW ){
    sqlite3_int64 iRowid = sqlite3_column_int64(pStmt, 0);
    int bNull = sqlite3_column_type(pStmt, 1)==SQLITE_NULL;
    double d = sqlite3_column_double(pStmt, 1);
    const OracleRow *w = nGot<nWant ? &aRow[nGot] : 0;
    if( w==0 || w->iRowid!=iRowid || bNull!=(w->rFigure!=w->rFigure)
     || (!bNull && d!=w->rFigure) ){
      fprintf(stderr, "oracle: %s\n  row %d: got rowid %lld distance %.17g, expected ", zSql,
              nGot, (long long)iRowid, bNull ? NAN : d);
      if( w ) fprintf(stderr, "rowid %lld distance %.17g\n", (long long)w->iRowid, w->rFigure);
      else fprintf(stderr, "no more rows (%d)\n", nWant);
      abort();
    }
    nGot++;
  }
  if( rc==SQLITE_DONE && nGot!=nWant ){
    fprintf(stderr, "oracle: %s\n  %d rows, expected %d (next: rowid %lld distance %.17g)\n",
            zSql, nGot, nWant, (long long)aRow[nGot].iRowid, aRow[nGot].rFigure);
    abort();
  }

cleanup:
  sqlite3_finalize(pStmt);
  sqlite3_free(zSql);
  free(aRow);
}

static void opPoint(sqlite3 *db, FuzzIn *in, const Model *m){
  static const char *azSql[] = {
    "SELECT * FROM v WHERE rowid = ?1",
    "SELECT * FROM v WHERE id = ?1",
    "SELECT rowid, embedding FROM v WHERE id = ?1",
    "SELECT * FROM v WHERE id IN (?1, ?2)",
    "SELECT * FROM v WHERE rowid = ?1 OR rowid = ?2",
    "SELECT vec_to_json(embedding) FROM v WHERE rowid IN (?1, ?2)",
  };
  sqlite3_stmt *pStmt = fuzzPrepare(db, "%s", azSql[fuzzPick(in, 6)]);
  if( pStmt==0 ) return;
  bindKey(in, pStmt, 1, m);
  bindKey(in, pStmt, 2, m);
  fuzzRun(pStmt);
}

static void opScan(sqlite3 *db, FuzzIn *in){
  static const char *azSql[] = {
    "SELECT * FROM v",
    "SELECT rowid, embedding FROM v ORDER BY rowid",
    "SELECT count(*) FROM v",
    "SELECT vec_to_json(embedding), vec_length(embedding) FROM v",
    "SELECT * FROM v ORDER BY rowid DESC",
    "SELECT * FROM v WHERE m0 IS NOT NULL",
    "SELECT a.rowid FROM v a JOIN v b ON a.rowid = b.rowid",
    "SELECT * FROM v_info",
  };
  fuzzExec(db, "%s", azSql[fuzzPick(in, 8)]);
}

static void opBatch(sqlite3 *db, FuzzIn *in, const Model *m){
  float a[8*16];
  int nQuery = fuzzPick(in, 9), nFloat, j, nByteAdjust;
  sqlite3_stmt *pStmt = fuzzPrepare(db,
      "SELECT query_index, id, distance FROM vecsync_knn_batch(?1, ?2, ?3)");
  if( pStmt==0 ) return;
  nFloat = nQuery*(m->nDim>16 ? 16 : m->nDim);    /* int8 and bit columns: refused anyway */
  for(j=0; j<nFloat; j++){
    unsigned c = fuzzU8(in);
    a[j] = c<240 ? (float)((int8_t)c)/16.0f : (float)fuzzDouble(in);
  }
  nByteAdjust = fuzzU8(in)<224 ? 0 : (int)fuzzPick(in, 7) - 3;    /* ragged blobs */
  sqlite3_bind_text(pStmt, 1, fuzzU8(in)<240 ? "v" : "v_rows", -1, SQLITE_STATIC);
  if( nFloat*4+nByteAdjust>=0 ){
    sqlite3_bind_blob(pStmt, 2, a, nFloat*4+nByteAdjust, SQLITE_TRANSIENT);
  }
  if( fuzzU8(in)<200 ) sqlite3_bind_int64(pStmt, 3, 1 + fuzzPick(in, 10));
  else fuzzBindScalar(in, pStmt, 3);
  fuzzRun(pStmt);
}

/* A second table whose declaration asks for large blocks (up to float[65536] with
** chunk_size=65536, 16 GiB): refused at CREATE past VEC0_MAX_BLOCK_BYTES, else one row
** and one query, then dropped. fuzz.sh's -malloc_limit_mb and -rss_limit_mb turn an
** allocation past the limit into a finding. */
static void opBigTable(sqlite3 *db, FuzzIn *in){
  static const int aDim[] = { 1024, 4096, 16384, 65536 };
  static const int aBigChunk[] = { 8, 1024, 8192, 65536 };
  static const char *azElem[] = { "float", "int8", "bit" };
  static const char *azWrap[] = { "", "vec_int8", "vec_bit" };
  unsigned c = fuzzU8(in), cRow = fuzzU8(in);
  int nDim = aDim[c & 3], nChunk = aBigChunk[(c>>2) & 3], eElem = (int)((c>>4) & 3) % 3;
  int nByte = eElem==0 ? 4*nDim : eElem==1 ? nDim : nDim/8;
  int64_t nBlock = (int64_t)nChunk*4*((nByte + 3)/4);
  if( fuzzExec(db, "CREATE VIRTUAL TABLE big USING vec0(e %s[%d]%s, chunk_size=%d)",
               azElem[eElem], nDim, (c & 0x40) && eElem==0
               ? " indexed by rescore(quantizer=int8)" : "", nChunk)!=SQLITE_OK ){
    return;
  }
  /* A legal block past 32 MiB (up to the documented 256 MiB) takes its row one time in
  ** eight: filling it is slow under ASan. Past 256 MiB the CREATE above must have failed;
  ** if it did not, the row always goes in, and the memory limits catch it. */
  if( nBlock<=32*1024*1024 || nBlock>256*1024*1024 || (cRow & 7)==0 ){
    fuzzExec(db, "INSERT INTO big(rowid, e) VALUES (1, %s(zeroblob(%d)))", azWrap[eElem], nByte);
    fuzzExec(db, "SELECT rowid, distance FROM big WHERE e MATCH %s(zeroblob(%d)) AND k = 1",
             azWrap[eElem], nByte);
  }
  fuzzExec(db, "DROP TABLE big");
}

static void opSchema(sqlite3 *db, FuzzIn *in, const Model *m){
  switch( fuzzPick(in, 5) ){
    case 0:
      fuzzExec(db, "ALTER TABLE v RENAME TO w");
      fuzzExec(db, "SELECT count(*) FROM w");
      fuzzExec(db, "ALTER TABLE w RENAME TO v");
      break;
    case 1:
      fuzzExec(db, "DROP TABLE v");
      if( m->zDecl ) fuzzExec(db, "%s", m->zDecl);
      break;
    case 2:
      /* A trigger that writes the table from inside another write. */
      fuzzExec(db, "CREATE TEMP TRIGGER IF NOT EXISTS tr AFTER INSERT ON aux_log BEGIN "
                   "DELETE FROM v WHERE rowid = new.x; END");
      fuzzExec(db, "CREATE TABLE IF NOT EXISTS aux_log(x)");
      fuzzExec(db, "INSERT INTO aux_log VALUES(%d)", (int)fuzzPick(in, 20));
      break;
    case 3:
      /* Over or under the memory budget: searches stream from T_vectors or scan memory. */
      if( fuzzU8(in)&1 ) fuzzExec(db, "SELECT vecsync_memory_budget(%d)", (int)fuzzPick(in, 4)*256);
      else fuzzExec(db, "SELECT vecsync_debug()");
      break;
    default:
      opBigTable(db, in);
      break;
  }
}

#ifdef FUZZ_VEC0_SHARED
/* fuzz_vec0_shared.c: the same programs on a WAL database file with two connections, each
** operation on one of them chosen by the input, so the copy shared by the process, its
** change log and each connection's snapshot are fuzzed too. */
#include <unistd.h>
static void fuzzRemoveDb(const char *zPath){
  static const char *azSuffix[] = { "", "-wal", "-shm", "-journal" };
  char zName[512];
  int i;
  for(i=0; i<4; i++){
    snprintf(zName, sizeof(zName), "%s%s", zPath, azSuffix[i]);
    unlink(zName);
  }
}
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size){
  FuzzBudget budget, budget2;
  FuzzIn in;
  Model m;
  sqlite3 *db, *db2 = 0, *aDb[2];
  int nOp = 0;
#ifdef FUZZ_VEC0_SHARED
  static char zPath[256];
  if( zPath[0]==0 ){
    const char *zDir = access("/dev/shm", W_OK)==0 ? "/dev/shm" : "/tmp";
    snprintf(zPath, sizeof(zPath), "%s/vecsync-fuzz-%d.db", zDir, (int)getpid());
  }
  fuzzRemoveDb(zPath);
#endif

  if( size>64*1024 ) return 0;
  vecsync_memory_budget(0);            /* process-wide: each input starts without one */
  fuzzInInit(&in, data, size);
#ifdef FUZZ_VEC0_SHARED
  db = fuzzOpenPath(&budget, zPath);
  if( db==0 ) return 0;
  fuzzExec(db, "PRAGMA journal_mode=WAL");
  db2 = fuzzOpenPath(&budget2, zPath);
  if( db2==0 ){ fuzzClose(db); return 0; }
#else
  (void)budget2;
  db = fuzzOpen(&budget);
  if( db==0 ) return 0;
#endif
  /* 0 to 3 helper threads for the KNN scan (the build cuts even small tables into parts),
  ** chosen by the input's length so that the bytes decode as they always did: the oracle
  ** checks the answers of several threads too. */
  sqlite3_limit(db, SQLITE_LIMIT_WORKER_THREADS, (int)(size%4));
  if( db2 ) sqlite3_limit(db2, SQLITE_LIMIT_WORKER_THREADS, (int)((size/4)%4));
  aDb[0] = db;
  aDb[1] = db2 ? db2 : db;
  if( !createTable(db, &in, &m) ) goto done;
  while( !fuzzInDone(&in) && nOp++<MAX_OPS ){
    unsigned op = fuzzPick(&in, 16);
    sqlite3 *dbOp = aDb[db2 ? fuzzU8(&in)&1 : 0];
    FuzzBudget *bOp = dbOp==db ? &budget : &budget2;
    switch( op ){
      case 0: case 1: case 2: case 3: opInsert(dbOp, &in, &m); break;
      case 4:  opInsertSelect(dbOp, &in, &m); break;
      case 5:  opUpdate(dbOp, &in, &m); break;
      case 6:  opDelete(dbOp, &in, &m); break;
      case 7:  opTxn(dbOp, &in); break;
      case 8: case 9: opKnn(dbOp, &in, &m, bOp); break;
      case 10: opKnnOracle(dbOp, &in, &m); break;
      case 11: opKnnNested(dbOp, &in, &m); break;
      case 12: opPoint(dbOp, &in, &m); break;
      case 13: opScan(dbOp, &in); break;
      case 14: opBatch(dbOp, &in, &m); break;
      default: opSchema(dbOp, &in, &m); break;
    }
  }
  /* Whatever state the program left: one more KNN, then commit or roll back. */
  fuzzExec(db, "SELECT rowid, distance FROM v WHERE embedding MATCH "
               "(SELECT embedding FROM v LIMIT 1) AND k = 3");
  for(nOp=0; nOp<m.nCol; nOp++){
    if( !m.aCol[nOp].eVec ) continue;
    fuzzExec(db, "SELECT rowid, distance FROM v WHERE m%d MATCH "
                 "(SELECT m%d FROM v LIMIT 1) AND k = 3", nOp, nOp);
    break;
  }
  fuzzExec(db, (size & 1) ? "COMMIT" : "ROLLBACK");
  if( db2 ){
    fuzzExec(db2, "SELECT rowid, distance FROM v WHERE embedding MATCH "
                  "(SELECT embedding FROM v LIMIT 1) AND k = 3");
    fuzzExec(db2, "COMMIT");
  }
done:
  sqlite3_free(m.zDecl);
  fuzzClose(db);
  fuzzClose(db2);
  return 0;
}
