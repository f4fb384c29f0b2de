/*
** vector_sql.c: the scalar vector functions, under libSQL's names and sqlite-vec's.
**
** Usage:
**
**   select vector32('[1, 2.5, -3e-2]');                 -- F32 blob, 4 bytes an element
**   select vector_extract(vector32('[1, 2.5, -3e-2]')); -- '[1,2.5,-0.03]'
**   select vector64('[1,2]');                            -- F64 blob (libSQL's layout)
**   select vector_extract(vector16('[1.5, -2]'));        -- '[1.5,-2]', from 2 bytes each
**   select vector_distance_cos(vector32('[1,0]'), vector32('[0,1]'));   -- 1.0
**   select vector_distance_l2('[0,0]', '[3,4]');          -- 5.0
**   select hex(vec_f32('[1, 2]'));                        -- 0000803F00000040, subtype float32
**
** libSQL names: vector32 (alias vector), vector64, vector8, vector16, vectorb16,
** vector1bit, vector_extract, vector_distance_cos, vector_distance_l2. sqlite-vec names: vec_f32, vec_version, vec_debug (its other vec_*
** functions, which also take int8 and bit vectors, are in vector_typed.c). Each function
** accepts a vector as JSON-like text or as a blob; a bad vector is an error whose text
** names the function and problem.
**
** It also holds what the extension's other SQL surfaces share: vsResultError, the error
** text every function gives, and the plumbing of the table-valued functions (vec_each,
** vecsync_knn_batch, vector_top_k): their table (VsTableFunction), a row-numbered cursor
** (VsCursor), the argument part of xBestIndex, and their method table
** (VS_TABLE_FUNCTION_MODULE).
*/
#include "vecsync_int.h"
SQLITE_EXTENSION_INIT3

#include <math.h>
#include <string.h>

void vsResultError(sqlite3_context *ctx, int rc, char *zErr){
  if( rc==SQLITE_NOMEM ){
    sqlite3_result_error_nomem(ctx);
  }else{
    char *zMsg = sqlite3_mprintf("%s: %s",
        (const char*)sqlite3_user_data(ctx), zErr ? zErr : "error");
    sqlite3_result_error(ctx, zMsg ? zMsg : "out of memory", -1);
    sqlite3_free(zMsg);
  }
  sqlite3_free(zErr);
}

int vsPragma(sqlite3 *db, const char *zSchema, const char *zName, sqlite3_int64 *piVal,
             int bSet){
  sqlite3_stmt *pStmt = 0;
  char *zSql = bSet ? sqlite3_mprintf("PRAGMA \"%w\".%s=%lld", zSchema, zName, *piVal)
                    : sqlite3_mprintf("PRAGMA \"%w\".%s", zSchema, zName);
  int rc = zSql ? sqlite3_prepare_v2(db, zSql, -1, &pStmt, 0) : SQLITE_NOMEM;
  sqlite3_free(zSql);
  if( rc!=SQLITE_OK ) return rc;
  if( sqlite3_step(pStmt)==SQLITE_ROW && !bSet ) *piVal = sqlite3_column_int64(pStmt, 0);
  return sqlite3_finalize(pStmt);
}

/* Read argument pVal of a function as a vector (eWant: vsVectorFromValue's) into *pV; on
** error the function's result is the error, and 0 is returned. */
static int vsVectorArg(sqlite3_context *ctx, sqlite3_value *pVal, int eWant, VsVector *pV){
  char *zErr = 0;
  int rc = vsVectorFromValue(pVal, eWant, pV, &zErr);
  if( rc!=SQLITE_OK ) vsResultError(ctx, rc, zErr);
  return rc==SQLITE_OK;
}

/* vector32(x), vector(x), vec_f32(x): x as an F32 blob. */
static void vsVector32Func(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  VsVector v;
  (void)argc;
  if( !vsVectorArg(ctx, argv[0], VS_F32, &v) ) return;
  if( v.nDim==0 && strncmp((const char*)sqlite3_user_data(ctx), "vec_", 4)==0 ){
    /* sqlite-vec's vec_f32 has no empty vector; libSQL's vector32 has one. */
    vsVectorFree(&v);
    vsResultError(ctx, SQLITE_ERROR, sqlite3_mprintf("zero-length vectors are not supported"));
    return;
  }
  vsResultF32(ctx, (const float*)v.aData, v.nDim);
  if( strncmp((const char*)sqlite3_user_data(ctx), "vec_", 4)==0 ){
    /* sqlite-vec marks its float32 vectors, as vector_typed.c reads them. */
    sqlite3_result_subtype(ctx, VS_SUBTYPE_F32);
  }
  vsVectorFree(&v);
}

/* vector64(x): x as an F64 blob. */
static void vsVector64Func(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  VsVector v;
  (void)argc;
  if( !vsVectorArg(ctx, argv[0], VS_F64, &v) ) return;
  vsResultF64(ctx, (const double*)v.aData, v.nDim);
  vsVectorFree(&v);
}

/* vector8(x), vector16(x), vectorb16(x), vector1bit(x): x in libSQL's compact layouts. */
static void vsVectorLibsqlFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  const char *zName = (const char*)sqlite3_user_data(ctx);
  int eType = strcmp(zName, "vector8")==0 ? VS_LIBSQL_F8
            : strcmp(zName, "vector16")==0 ? VS_LIBSQL_F16
            : strcmp(zName, "vectorb16")==0 ? VS_LIBSQL_FB16 : VS_LIBSQL_1BIT;
  VsVector v;
  (void)argc;
  if( !vsVectorArg(ctx, argv[0], VS_F32, &v) ) return;
  vsResultLibsql(ctx, eType, (const float*)v.aData, v.nDim);
  vsVectorFree(&v);
}

/* Render as '[a,b,c]' with printf format zFmt ("%g", as libSQL prints). */
static void vsResultText(sqlite3_context *ctx, const VsVector *v, const char *zFmt){
  sqlite3_str *pStr = sqlite3_str_new(sqlite3_context_db_handle(ctx));
  int i, rc;
  sqlite3_str_appendchar(pStr, 1, '[');
  for(i=0; i<v->nDim; i++){
    if( i ) sqlite3_str_appendchar(pStr, 1, ',');
    sqlite3_str_appendf(pStr, zFmt, vsVectorAt(v, i));
  }
  sqlite3_str_appendchar(pStr, 1, ']');
  rc = sqlite3_str_errcode(pStr);
  if( rc!=SQLITE_OK ){
    sqlite3_free(sqlite3_str_finish(pStr));
    sqlite3_result_error_code(ctx, rc);
    return;
  }
  {
    int n = sqlite3_str_length(pStr);
    sqlite3_result_text(ctx, sqlite3_str_finish(pStr), n, sqlite3_free);
  }
}

/* vector_extract(x): libSQL's text form, each element as %g. */
static void vsExtractFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  VsVector v;
  (void)argc;
  if( !vsVectorArg(ctx, argv[0], 0, &v) ) return;
  vsResultText(ctx, &v, "%g");
  vsVectorFree(&v);
}

/* Decode both arguments of a distance function and check they can be compared. */
static int vsDistanceArgs(sqlite3_value **argv, VsVector *pA, VsVector *pB, char **pzErr){
  static const char *azType[] = { "?", "FLOAT32", "FLOAT64", "FLOAT1BIT", "FLOAT8", "FLOAT16", "FLOATB16" };
  int tA = vsValueLibsqlType(argv[0]), tB = vsValueLibsqlType(argv[1]);
  int rc = vsVectorFromValue(argv[0], 0, pA, pzErr);
  if( rc==SQLITE_OK ) rc = vsVectorFromValue(argv[1], 0, pB, pzErr);
  if( rc==SQLITE_OK && (pA->eType!=pB->eType || tA!=tB) ){
    /* libSQL compares vectors of one type only: an F32 and an F64 vector are refused. */
    *pzErr = sqlite3_mprintf("vectors must have the same type: %s and %s",
        azType[tA>=1 && tA<=6 ? tA : 0], azType[tB>=1 && tB<=6 ? tB : 0]);
    rc = SQLITE_ERROR;
  }
  if( rc==SQLITE_OK && pA->nDim!=pB->nDim ){
    *pzErr = sqlite3_mprintf(
        "vectors have different dimensions: %d and %d", pA->nDim, pB->nDim);
    rc = SQLITE_ERROR;
  }
  if( rc==SQLITE_OK && pA->nDim==0 ){
    *pzErr = sqlite3_mprintf("the distance of empty vectors is undefined");
    rc = SQLITE_ERROR;
  }
  return rc;
}

/* vector_distance_cos's figure: 1 - cos(a, b), as libSQL computes it (float32 vectors in
** float32, FLOAT64 in double); NULL for a zero vector, whose direction is undefined. */
static void vsResultCosine(sqlite3_context *ctx, sqlite3_value *pA, const VsVector *a,
                           const VsVector *b){
  if( vsValueLibsqlType(pA)==VS_LIBSQL_1BIT ){
    /* libSQL's cosine distance of 1-bit vectors is their hamming distance: the elements
    ** are +1 and -1, so it is (n - a·b) / 2. */
    sqlite3_result_double(ctx, ((double)a->nDim - vsDotF64(a, b)) / 2.0);
  }else if( a->eType==VS_F32 ){
    /* libSQL's figure for float32 (and the compact types, read as float32): float32 sums,
    ** the result rounded to float32, not clamped; NULL for a zero vector. */
    double rDist = vsCosineLibsqlF32((const float*)a->aData, (const float*)b->aData, a->nDim);
    if( rDist!=rDist ) sqlite3_result_null(ctx); else sqlite3_result_double(ctx, rDist);
  }else{
    double rAA = vsDotF64(a, a), rBB = vsDotF64(b, b);
    if( rAA==0.0 || rBB==0.0 ){
      sqlite3_result_null(ctx);
    }else{
      /* FLOAT64: double sums, the result rounded to float32 as libSQL's returns it. */
      sqlite3_result_double(ctx, (float)(1.0 - vsDotF64(a, b)/sqrt(rAA*rBB)));
    }
  }
}

/* vector_distance_l2's figure: the Euclidean distance. */
static void vsResultL2(sqlite3_context *ctx, const VsVector *a, const VsVector *b){
  if( a->eType==VS_F32 ){
    /* libSQL's figure for float32: a float32 sum, the root rounded to float32. */
    sqlite3_result_double(ctx, vsL2F32Seq((const float*)a->aData, (const float*)b->aData, a->nDim));
  }else{
    /* FLOAT64: a double sum, the root rounded to float32 as libSQL returns it. */
    sqlite3_result_double(ctx, (float)sqrt(vsL2SqF64(a, b)));
  }
}

/* A distance function under eMetric (VS_METRIC_COSINE or VS_METRIC_L2): the two vectors
** read and checked, then the figure; libSQL has no l2 distance of 1-bit vectors. */
static void vsDistanceCall(sqlite3_context *ctx, sqlite3_value **argv, int eMetric){
  VsVector a, b;
  char *zErr = 0;
  int rc;
  memset(&b, 0, sizeof(b));
  rc = vsDistanceArgs(argv, &a, &b, &zErr);
  if( rc==SQLITE_OK && eMetric==VS_METRIC_L2 && vsValueLibsqlType(argv[0])==VS_LIBSQL_1BIT ){
    zErr = sqlite3_mprintf("l2 distance is not supported for float1bit vectors");
    rc = SQLITE_ERROR;
  }
  if( rc!=SQLITE_OK ){
    vsResultError(ctx, rc, zErr);
  }else if( eMetric==VS_METRIC_COSINE ){
    vsResultCosine(ctx, argv[0], &a, &b);
  }else{
    vsResultL2(ctx, &a, &b);
  }
  vsVectorFree(&a);
  vsVectorFree(&b);
}

/* vector_distance_cos(a, b) and vector_distance_l2(a, b). */
static void vsDistanceCosFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  (void)argc;
  vsDistanceCall(ctx, argv, VS_METRIC_COSINE);
}
static void vsDistanceL2Func(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  (void)argc;
  vsDistanceCall(ctx, argv, VS_METRIC_L2);
}

/* vecsync_version(): the extension's version. */
static void vsVersionFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  (void)argc; (void)argv;
  sqlite3_result_text(ctx, VECSYNC_VERSION, -1, SQLITE_STATIC);
}

/* vec_version(): the sqlite-vec version whose SQL this extension covers (VS_SQLITE_VEC_VERSION),
** as sqlite-vec spells its own, so that code checking it for a feature (metadata columns
** came in v0.1.6) finds them; vecsync_version() is ours. */
static void vsVecVersionFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  (void)argc; (void)argv;
  sqlite3_result_text(ctx, "v" VS_SQLITE_VEC_VERSION, -1, SQLITE_STATIC);
}

/* vecsync_debug(), vec_debug(): version, SQLite, BLAS and SIMD in use, one per line. */
static void vsDebugFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  char *z = sqlite3_mprintf(
      "vecsync %s\nsqlite %s\nblas: %s\nsimd: %s\nscan: %s\nint8 codes: %s\n"
      "max dimensions: %d",
      VECSYNC_VERSION, sqlite3_libversion(), vsBlasName(), vsSimdName(), vsScanName(),
      vsInt8KernelName(), VS_MAX_DIMS);
  (void)argc; (void)argv;
  if( z==0 ){ sqlite3_result_error_nomem(ctx); return; }
  sqlite3_result_text(ctx, z, -1, sqlite3_free);
}

/* ---- what the table-valued functions share (vec_each, vecsync_knn_batch, vector_top_k) --- */

int vsTableFunctionConnect(sqlite3 *db, void *pAux, const char *zDecl, size_t nCursor,
                           void (*xReset)(sqlite3_vtab_cursor*), sqlite3_vtab **ppVtab){
  VsTableFunction *p;
  int rc = sqlite3_declare_vtab(db, zDecl);
  if( rc!=SQLITE_OK ) return rc;
  p = sqlite3_malloc(sizeof(*p));
  if( p==0 ) return SQLITE_NOMEM;
  memset(p, 0, sizeof(*p));
  p->db = db;
  p->pAux = pAux;
  p->nCursor = nCursor;
  p->xReset = xReset;
  *ppVtab = &p->base;
  return SQLITE_OK;
}

int vsTableFunctionArgs(sqlite3_vtab *pVtab, sqlite3_index_info *pInfo, int iFirst, int nArg,
                        const char *zMissing){
  int aIdx[VS_MAX_TABLE_FUNCTION_ARGS];
  int i;
  for(i=0; i<nArg; i++) aIdx[i] = -1;
  for(i=0; i<pInfo->nConstraint; i++){
    const struct sqlite3_index_constraint *pC = &pInfo->aConstraint[i];
    if( pC->op!=SQLITE_INDEX_CONSTRAINT_EQ || pC->iColumn<iFirst
     || pC->iColumn>=iFirst+nArg ) continue;
    if( !pC->usable ) return SQLITE_CONSTRAINT;
    aIdx[pC->iColumn-iFirst] = i;
  }
  for(i=0; i<nArg; i++){
    if( aIdx[i]<0 ){
      sqlite3_free(pVtab->zErrMsg);
      pVtab->zErrMsg = sqlite3_mprintf("%s", zMissing);
      return SQLITE_ERROR;
    }
    pInfo->aConstraintUsage[aIdx[i]].argvIndex = i+1;
    pInfo->aConstraintUsage[aIdx[i]].omit = 1;
  }
  return SQLITE_OK;
}

int vsTableFunctionDisconnect(sqlite3_vtab *pVtab){
  sqlite3_free(pVtab);
  return SQLITE_OK;
}

int vsTableFunctionOpen(sqlite3_vtab *pVtab, sqlite3_vtab_cursor **ppCur){
  return vsCursorOpen(((VsTableFunction*)pVtab)->nCursor, ppCur);
}

int vsTableFunctionClose(sqlite3_vtab_cursor *cur){
  VsTableFunction *p = (VsTableFunction*)cur->pVtab;
  if( p->xReset ) p->xReset(cur);
  sqlite3_free(cur);
  return SQLITE_OK;
}

int vsCursorNext(sqlite3_vtab_cursor *cur){
  ((VsCursor*)cur)->iRow++;
  return SQLITE_OK;
}

int vsCursorEof(sqlite3_vtab_cursor *cur){
  const VsCursor *p = (const VsCursor*)cur;
  return p->iRow>=p->nRow;
}

int vsCursorRowid(sqlite3_vtab_cursor *cur, sqlite3_int64 *pRowid){
  *pRowid = ((const VsCursor*)cur)->iRow;
  return SQLITE_OK;
}

int vsCursorOpen(size_t nByte, sqlite3_vtab_cursor **ppCur){
  sqlite3_vtab_cursor *pCur = sqlite3_malloc64(nByte);
  if( pCur==0 ) return SQLITE_NOMEM;
  memset(pCur, 0, nByte);
  *ppCur = pCur;
  return SQLITE_OK;
}

/*
** Every function is pure: DETERMINISTIC lets SQLite use them in indexes and constant-fold
** them; INNOCUOUS lets them run in triggers and views of untrusted schemas, which is safe
** because they read nothing but their arguments. vecsync_debug() reads the process's
** state, so it is not deterministic.
*/
#define VS_PURE (SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS)

/* vec_f32 sets its result's subtype (SQLite 3.45 and later want to be told). */
#ifndef SQLITE_RESULT_SUBTYPE
# define SQLITE_RESULT_SUBTYPE 0x001000000
#endif
#define VS_SETS_SUBTYPE SQLITE_RESULT_SUBTYPE

int vsCreateFunctions(sqlite3 *db, const VsFunction *aFunc, int nFunc, void *pApp, char **pzErr){
  int rc = SQLITE_OK;
  int i;
  for(i=0; i<nFunc && rc==SQLITE_OK; i++){
    rc = sqlite3_create_function(db, aFunc[i].zName, aFunc[i].nArg, aFunc[i].flags,
                                 pApp ? pApp : (void*)aFunc[i].zName, aFunc[i].xFunc, 0, 0);
    if( rc!=SQLITE_OK ){
      *pzErr = sqlite3_mprintf("vecsync: cannot register function %s(): %s",
                               aFunc[i].zName, sqlite3_errmsg(db));
    }
  }
  return rc;
}

int vsRegisterScalarFunctions(sqlite3 *db, char **pzErr){
  static const VsFunction aFunc[] = {
    { "vector32",            1, VS_PURE, vsVector32Func },
    { "vector",              1, VS_PURE, vsVector32Func },
    { "vector64",            1, VS_PURE, vsVector64Func },
    { "vector8",             1, VS_PURE, vsVectorLibsqlFunc },
    { "vector16",            1, VS_PURE, vsVectorLibsqlFunc },
    { "vectorb16",           1, VS_PURE, vsVectorLibsqlFunc },
    { "vector1bit",          1, VS_PURE, vsVectorLibsqlFunc },
    { "vector_extract",      1, VS_PURE, vsExtractFunc },
    { "vector_distance_cos", 2, VS_PURE, vsDistanceCosFunc },
    { "vector_distance_l2",  2, VS_PURE, vsDistanceL2Func },
    { "vec_f32",             1, VS_PURE | VS_SETS_SUBTYPE, vsVector32Func },
    { "vecsync_version",     0, VS_PURE, vsVersionFunc },
    { "vecsync_debug",       0, SQLITE_UTF8 | SQLITE_INNOCUOUS, vsDebugFunc },
    { "vec_version",         0, VS_PURE, vsVecVersionFunc },
    { "vec_debug",           0, SQLITE_UTF8 | SQLITE_INNOCUOUS, vsDebugFunc },
  };
  return vsCreateFunctions(db, aFunc, (int)(sizeof(aFunc)/sizeof(aFunc[0])), 0, pzErr);
}
