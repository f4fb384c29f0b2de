/*
** fuzz_vector_parse.c: the vector codec behind every scalar function.
**
** Input: byte 0 picks options (bits 0-1, plus 3 when bit 5 is set: a libSQL type byte,
** 1 to 6, appended to the blob form; bit 2: also run the compositions), byte 1 where the
** rest splits into A and B; the
** rest is the vector. Each one-argument function (vector32, vector64, vector,
** vector_extract and sqlite-vec's vec_*, the int8 and bit constructors and the
** quantizers among them) gets the whole rest as TEXT and as BLOB, and A alone; each
** two-vector function (distances, vec_add, vec_sub) gets (A, B) in the four TEXT/BLOB
** combinations and (rest, rest). The typed compositions run every function on int8 and
** bit vectors made from the input, and vec_slice and vec_each on the input with bounds
** taken from byte 1.
*/
#include "fuzz_common.h"

static const char *azUnary[] = {
  "vector32", "vector64", "vector", "vector_extract", "vec_f32", "vec_length",
  "vec_to_json", "vec_normalize", "vec_int8", "vec_bit", "vec_type",
  "vec_quantize_binary", "vec_to_json(vec_int8", "vec_to_json(vec_bit",
  "vector8", "vector16", "vectorb16", "vector1bit", "vector_extract(vector8",
  "vector_extract(vector1bit", "vector_extract(vector16",
};
static const char *azBinary[] = {
  "vector_distance_cos", "vector_distance_l2", "vec_distance_cosine", "vec_distance_l2",
  "vec_distance_l1", "vec_distance_hamming", "vec_add", "vec_sub",
};
/* Functions applied to the result of another: the encoders' output decoded again. */
static const char *azCompose[] = {
  "vector_extract(vector32(?1))", "vector_extract(vector64(?1))",
  "vec_to_json(vec_normalize(?1))", "vector_distance_cos(vector64(?1), vector32(?1))",
  "vector_distance_l2(vector32(?1), vector64(?1))", "vec_length(vector64(?1))",
  "vector_extract(vec_normalize(vector64(?1)))", "vecsync_debug()", "vecsync_version()",
  /* sqlite-vec's typed vectors: every function on int8 and bit vectors of the input. */
  "vec_distance_l2(vec_int8(?1), vec_int8(?1))", "vec_distance_cosine(vec_int8(?1), vec_int8(?1))",
  "vec_distance_l1(vec_int8(?1), vec_int8(?1))", "vec_distance_hamming(vec_bit(?1), vec_bit(?1))",
  "vec_to_json(vec_add(vec_int8(?1), vec_int8(?1)))", "vec_sub(vec_bit(?1), vec_bit(?1))",
  "vec_quantize_binary(vec_int8(?1))", "vec_quantize_int8(?1, 'unit')",
  "vec_quantize_int8(vec_int8(?1), 'unit')", "vec_normalize(vec_bit(?1))",
  "vec_type(vec_quantize_binary(?1))", "vec_length(vec_bit(?1))",
  "vec_to_json(vec_slice(?1, ?2 % 9, ?3 % 17))", "vec_slice(vec_int8(?1), ?2, ?3)",
  "vec_slice(vec_bit(?1), ?2 * 8, ?3 * 8)", "vec_slice(vec_bit(?1), ?2, ?3)",
  "(SELECT group_concat(value) FROM vec_each(?1))",
  "(SELECT sum(value) FROM vec_each(vec_int8(?1)))",
  "(SELECT count(*) FROM vec_each(vec_bit(?1)))",
  /* libSQL's compact types: made, read back, compared. */
  "vector_distance_cos(vector1bit(?1), vector1bit(?1))", "vector_distance_l2(vector8(?1), vector8(?1))",
  "vector_distance_cos(vector16(?1), vectorb16(?1))", "vector64(vector8(?1))",
  "vector32(vectorb16(?1))", "vector_distance_l2(vector1bit(?1), vector1bit(?1))",
};

/* Bind z[0..n) at parameter i as TEXT (bText) or BLOB. */
static void bindAs(sqlite3_stmt *pStmt, int i, const uint8_t *z, size_t n, int bText){
  if( bText ) sqlite3_bind_text(pStmt, i, (const char*)z, (int)n, SQLITE_TRANSIENT);
  else sqlite3_bind_blob(pStmt, i, n ? (const void*)z : (const void*)"", (int)n, SQLITE_TRANSIENT);
}

/* The functions are pure, so one connection and its statements serve every input: the
** statements are prepared once (the harness runs about four times faster than with a fresh
** connection per input), and nothing an input does can change what the next one sees. */
static sqlite3 *db = 0;
static FuzzBudget budget;
static sqlite3_stmt *aUnary[sizeof(azUnary)/sizeof(azUnary[0])];
static sqlite3_stmt *aBinary[sizeof(azBinary)/sizeof(azBinary[0])];
static sqlite3_stmt *aCompose[sizeof(azCompose)/sizeof(azCompose[0])];

static void setUp(void){
  size_t i;
  db = fuzzOpen(&budget);
  if( db==0 ) abort();
  for(i=0; i<sizeof(azUnary)/sizeof(azUnary[0]); i++){
    /* "f(g" names a composition: SELECT f(g(?1)). */
    aUnary[i] = fuzzPrepare(db, strchr(azUnary[i], '(') ? "SELECT %s(?1))" : "SELECT %s(?1)",
                            azUnary[i]);
  }
  for(i=0; i<sizeof(azBinary)/sizeof(azBinary[0]); i++){
    aBinary[i] = fuzzPrepare(db, "SELECT %s(?1, ?2)", azBinary[i]);
  }
  for(i=0; i<sizeof(azCompose)/sizeof(azCompose[0]); i++){
    aCompose[i] = fuzzPrepare(db, "SELECT %s", azCompose[i]);
  }
}

/* Step a kept statement to the end, reading every column; then reset it. */
static void step(sqlite3_stmt *pStmt){
  int i, n;
  if( pStmt==0 ) return;
  while( sqlite3_step(pStmt)==SQLITE_ROW ){
    n = sqlite3_column_count(pStmt);
    for(i=0; i<n; i++){
      if( sqlite3_column_type(pStmt, i)==SQLITE_BLOB ) (void)sqlite3_column_blob(pStmt, i);
      else (void)sqlite3_column_text(pStmt, i);
      (void)sqlite3_column_bytes(pStmt, i);
    }
  }
  sqlite3_reset(pStmt);
  sqlite3_clear_bindings(pStmt);
}

static void runUnary(size_t iFunc, const uint8_t *z, size_t n, int bText){
  if( aUnary[iFunc]==0 ) return;
  bindAs(aUnary[iFunc], 1, z, n, bText);
  step(aUnary[iFunc]);
}

static void runBinary(size_t iFunc, const uint8_t *a, size_t na, int bTextA,
                      const uint8_t *b, size_t nb, int bTextB){
  if( aBinary[iFunc]==0 ) return;
  bindAs(aBinary[iFunc], 1, a, na, bTextA);
  bindAs(aBinary[iFunc], 2, b, nb, bTextB);
  step(aBinary[iFunc]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size){
  unsigned flags, split;
  const uint8_t *z;
  size_t n, nA, i, nType;
  uint8_t *blob;

  if( size<2 || size>64*1024 ) return 0;
  flags = data[0];
  split = data[1];
  z = data + 2;
  n = size - 2;
  nA = (n*split)/255;

  if( db==0 ) setUp();
  budget.nCall = 0;

  /* The blob form, with libSQL's trailing type byte appended when asked. */
  blob = malloc(n+1);
  if( blob==0 ) return 0;
  memcpy(blob, z, n);
  nType = (flags & 3) ? 1 : 0;
  if( nType ) blob[n] = (uint8_t)((flags & 3) + ((flags & 0x20) ? 3 : 0));

  for(i=0; i<sizeof(azUnary)/sizeof(azUnary[0]); i++){
    runUnary(i, z, n, 1);
    runUnary(i, blob, n + nType, 0);
    runUnary(i, z, nA, (flags>>3)&1);
  }
  for(i=0; i<sizeof(azBinary)/sizeof(azBinary[0]); i++){
    runBinary(i, z, nA, 1, z+nA, n-nA, 1);
    runBinary(i, z, nA, 0, z+nA, n-nA, 0);
    runBinary(i, z, nA, 1, z+nA, n-nA, 0);
    runBinary(i, z, nA, 0, z+nA, n-nA, 1);
    runBinary(i, z, n, 1, z, n, 1);
    runBinary(i, blob, n + nType, 0, z, n, 1);
  }
  if( flags & 4 ){
    for(i=0; i<sizeof(azCompose)/sizeof(azCompose[0]); i++){
      if( aCompose[i]==0 ) continue;
      bindAs(aCompose[i], 1, z, n, !((flags>>4)&1));
      /* Bounds for vec_slice: from byte 1, some negative, some beyond the vector. */
      sqlite3_bind_int(aCompose[i], 2, (int)(split % 24) - 4);
      sqlite3_bind_int(aCompose[i], 3, (int)(split / 8));
      step(aCompose[i]);
    }
  }
  free(blob);
  return 0;
}
