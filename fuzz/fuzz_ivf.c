/*
** fuzz_ivf.c: a vec0 table with an ivf index, written, trained, searched, rolled back, and
** its index's shadow tables damaged, by a program decoded from the input.
**
** Each input gets a fresh :memory: connection and:
**
**   create virtual table v using vec0(e float[1..8] distance_metric=<l2|cosine>
**     indexed by ivf(nlist=<0..5>, nprobe=<1..5>, quantizer=<int8|binary|none>,
**     stored_codes=<0|1>), tag integer);
**
** then up to MAX_OPS operations: INSERT (OR REPLACE) with vectors from the input (NaN,
** zeros, wrong dimensions: refused as any vec0 refuses them), UPDATE of a vector or a
** rowid, DELETE, BEGIN / COMMIT / ROLLBACK and savepoints, vecsync_ivf_retrain() with or
** without an nlist, KNN with k, nprobe and a tag filter, vecsync_index_info() and
** vecsync_ivf_recall(), a memory budget set or lifted, and damage to T_ivf_centroids,
** T_ivf_assign, T_ivf_packs and T_info's ivf keys (blobs of other lengths, lists, slots,
** rowids, codes and places in a pack out of range or of another type, codes and packs
** cut, of non-finite or huge scales or another row's, rows and packs deleted or added),
** each
** followed by a bump of ivf_version so the next statement reads the index again.
**
** The oracle: whenever no damage has been done, a KNN query with k at least the rows
** returns every row that passes its filter (the lists are probed until k rows pass).
*/
#include "fuzz_common.h"

#define MAX_OPS 64

/* A vector of nDim floats from the input, as a blob, bound at parameter i (or, now and
** then, a form vec0 refuses). */
static void bindVector(FuzzIn *in, sqlite3_stmt *pStmt, int i, int nDim){
  float a[8];
  int j;
  if( fuzzU8(in)<16 ){
    fuzzBindVector(in, pStmt, i, nDim);
    return;
  }
  for(j=0; j<nDim; j++) a[j] = (float)((int)fuzzPick(in, 21) - 10)/2.0f;
  sqlite3_bind_blob(pStmt, i, a, (int)sizeof(float)*nDim, SQLITE_TRANSIENT);
}

/* Check the oracle: a KNN query with k at least the rows finds every row its filter
** passes. */
static void checkAll(sqlite3 *db, FuzzIn *in, int nDim, int bDamaged){
  sqlite3_stmt *pCount = fuzzPrepare(db, "SELECT count(*) FROM v WHERE tag = ?1");
  sqlite3_stmt *pKnn = fuzzPrepare(db, "SELECT count(*) FROM v WHERE e MATCH ?1 AND k = ?2 "
                                       "AND nprobe = ?3 AND tag = ?4");
  sqlite3_int64 nWant = -1, nGot = -1;
  int tag = (int)fuzzPick(in, 3);
  if( pCount && pKnn ){
    sqlite3_bind_int(pCount, 1, tag);
    if( sqlite3_step(pCount)==SQLITE_ROW ) nWant = sqlite3_column_int64(pCount, 0);
    bindVector(in, pKnn, 1, nDim);
    sqlite3_bind_int64(pKnn, 2, 1000);
    sqlite3_bind_int(pKnn, 3, 1 + (int)fuzzPick(in, 3));
    sqlite3_bind_int(pKnn, 4, tag);
    if( sqlite3_step(pKnn)==SQLITE_ROW ) nGot = sqlite3_column_int64(pKnn, 0);
    /* An all-zero query under cosine, or a refused one, fails: no answer to check. */
    if( !bDamaged && nWant>=0 && nGot>=0 && nGot!=nWant ){
      fprintf(stderr, "fuzz_ivf: a KNN query with k above the rows found %lld of %lld\n",
              nGot, nWant);
      abort();
    }
  }
  sqlite3_finalize(pCount);
  sqlite3_finalize(pKnn);
}

/* A damage to the index's shadow tables, then a new ivf_version so it is read again. */
static void damage(sqlite3 *db, FuzzIn *in){
  static const char *azSql[] = {
    "UPDATE v_ivf_centroids SET centroid = zeroblob(%d) WHERE list = %d",
    "UPDATE v_ivf_centroids SET list = %d + list * %d",
    "DELETE FROM v_ivf_centroids WHERE list = %d + 0 * %d",
    "UPDATE v_ivf_assign SET list = %d WHERE slot = %d",
    "INSERT OR REPLACE INTO v_ivf_assign(slot, list) VALUES (%d, %d)",
    "DELETE FROM v_ivf_assign WHERE slot >= %d + 0 * %d",
    "UPDATE v_info SET value = %d + 0 * %d WHERE key = 'ivf_lists'",
    "UPDATE v_info SET value = %d + 0 * %d WHERE key = 'ivf_trained_rows'",
    "INSERT OR REPLACE INTO v_info(key, value) VALUES ('ivf_trained_max', %d + 0 * %d)",
    "UPDATE v_ivf_centroids SET centroid = CAST('x' AS TEXT) || %d || %d",
    "UPDATE v_ivf_assign SET list = NULL WHERE slot = %d + 0 * %d",
    "UPDATE v_info SET value = %d + 0 * %d WHERE key = 'ivf_list_index'",
    "UPDATE OR REPLACE v_ivf_assign SET slot = %d WHERE slot = %d",
    "UPDATE v_ivf_assign SET rowid = %d WHERE slot = %d",
    "UPDATE v_ivf_assign SET rowid = 'r' || %d WHERE slot = %d",
    "INSERT OR REPLACE INTO v_ivf_assign(slot, list, rowid) VALUES (%d, %d, 1)",
    "UPDATE v_ivf_assign SET rowid = rowid + %d WHERE slot >= %d",
    "UPDATE v_ivf_assign SET code = zeroblob(%d) WHERE slot >= %d",
    "UPDATE v_ivf_assign SET code = NULL WHERE slot >= %d + 0 * %d",
    "UPDATE v_ivf_assign SET code = 'c' || %d WHERE slot = %d",
    "UPDATE v_ivf_assign SET code = substr(code, 1, %d) WHERE slot >= %d",
    "UPDATE v_ivf_assign SET code = substr(code, 1, length(code) - 8) || x'0000c07f0000807f'"
    " WHERE slot >= %d + 0 * %d",
    "UPDATE v_ivf_assign SET code = (SELECT code FROM v_ivf_assign WHERE slot = %d)"
    " WHERE slot = %d",
    "UPDATE v_ivf_assign SET code = %d WHERE slot >= %d",
    "UPDATE v_ivf_assign SET code = (%d << 32) + %d WHERE typeof(code) = 'integer'",
    "UPDATE v_ivf_packs SET codes = zeroblob(%d) WHERE list >= %d",
    "UPDATE v_ivf_packs SET codes = substr(codes, 1, %d) WHERE list >= %d",
    "DELETE FROM v_ivf_packs WHERE list >= %d + 0 * %d",
    "UPDATE v_ivf_packs SET part = %d WHERE list = %d",
    "UPDATE v_ivf_packs SET codes = CAST('p' AS TEXT) || %d || %d",
    "INSERT OR REPLACE INTO v_ivf_packs(list, part, codes) VALUES (%d, %d, x'00')",
    "UPDATE v_ivf_packs SET codes = x'7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f'"
    " || substr(codes, 25) WHERE list >= %d + 0 * %d",
    "UPDATE v_ivf_packs SET codes = x'0000c07f0000807f0000c07f0000807f0000c07f0000807f'"
    " || substr(codes, 25) WHERE list >= %d + 0 * %d",
  };
  static const int aX[] = { -1, 0, 1, 2, 3, 4, 5, 7, 8, 32, 65536, 100000, 2147483647 };
  int x = aX[fuzzPick(in, sizeof(aX)/sizeof(aX[0]))];
  int y = aX[fuzzPick(in, sizeof(aX)/sizeof(aX[0]))];
  fuzzExec(db, azSql[fuzzPick(in, sizeof(azSql)/sizeof(azSql[0]))], x, y);
  fuzzExec(db, "UPDATE v_info SET value = value + 1 WHERE key = 'ivf_version'");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size){
  static const char *azQuant[] = { "int8", "binary", "none" };
  FuzzBudget budget;
  FuzzIn in;
  sqlite3 *db;
  int nDim, nOp = 0, bDamaged = 0, nList, nProbe;
  if( size>16*1024 ) return 0;
  vecsync_memory_budget(0);            /* process-wide: each input starts without one */
  fuzzInInit(&in, data, size);
  nDim = 1 + (int)fuzzPick(&in, 8);
  nList = (int)fuzzPick(&in, 6);
  nProbe = 1 + (int)fuzzPick(&in, 5);
  if( nList>0 && nProbe>nList ) nProbe = nList;
  db = fuzzOpen(&budget);
  if( db==0 ) return 0;
  /* binary codes need whole bytes of dimensions: 8 when it is picked */
  {
    unsigned q = fuzzPick(&in, 3);
    unsigned u;
    if( q==1 ) nDim = 8;
    u = fuzzU8(&in);                   /* the metric, and whether the codes are stored */
    if( fuzzExec(db, "CREATE VIRTUAL TABLE v USING vec0(e float[%d] distance_metric=%s "
                     "indexed by ivf(nlist=%d, nprobe=%d, quantizer=%s, stored_codes=%d), "
                     "tag integer)",
                 nDim, u&1 ? "cosine" : "l2", nList, nProbe, azQuant[q], (u&2)==0)!=SQLITE_OK ){
      fuzzClose(db);
      return 0;
    }
  }
  while( !fuzzInDone(&in) && nOp++<MAX_OPS ){
    sqlite3_stmt *pStmt = 0;
    switch( fuzzPick(&in, 14) ){
      case 0: case 1: case 2: case 3:
        pStmt = fuzzPrepare(db, "INSERT%s INTO v(rowid, e, tag) VALUES (?1, ?2, ?3)",
                            fuzzU8(&in)<64 ? " OR REPLACE" : "");
        if( pStmt ){
          sqlite3_bind_int(pStmt, 1, 1 + (int)fuzzPick(&in, 48));
          bindVector(&in, pStmt, 2, nDim);
          sqlite3_bind_int(pStmt, 3, (int)fuzzPick(&in, 3));
        }
        break;
      case 4:
        pStmt = fuzzPrepare(db, "UPDATE v SET e = ?2 WHERE rowid = ?1");
        if( pStmt ){
          sqlite3_bind_int(pStmt, 1, 1 + (int)fuzzPick(&in, 48));
          bindVector(&in, pStmt, 2, nDim);
        }
        break;
      case 5:
        fuzzExec(db, "UPDATE v SET rowid = %d WHERE rowid = %d", 1 + (int)fuzzPick(&in, 64),
                 1 + (int)fuzzPick(&in, 48));
        break;
      case 6:
        fuzzExec(db, "DELETE FROM v WHERE rowid %s %d", fuzzU8(&in)&1 ? "=" : ">",
                 (int)fuzzPick(&in, 48));
        break;
      case 7: {
        static const char *azTxn[] = { "BEGIN", "COMMIT", "ROLLBACK", "SAVEPOINT s",
                                       "ROLLBACK TO s", "RELEASE s" };
        fuzzExec(db, "%s", azTxn[fuzzPick(&in, 6)]);
        break;
      }
      case 8:
        if( fuzzU8(&in)&1 ) fuzzExec(db, "SELECT vecsync_ivf_retrain('v')");
        else fuzzExec(db, "SELECT vecsync_ivf_retrain('v', %d)", (int)fuzzPick(&in, 70) - 2);
        break;
      case 9: case 10:
        pStmt = fuzzPrepare(db, "SELECT rowid, distance FROM v WHERE e MATCH ?1 AND k = ?2"
                                "%s%s", fuzzU8(&in)&1 ? " AND nprobe = ?3" : "",
                            fuzzU8(&in)&1 ? " AND tag = 1" : "");
        if( pStmt ){
          bindVector(&in, pStmt, 1, nDim);
          sqlite3_bind_int64(pStmt, 2, fuzzU8(&in)<240 ? (int)fuzzPick(&in, 20)
                                                        : fuzzInterestingInt(&in));
          if( sqlite3_bind_parameter_count(pStmt)>=3 ){
            sqlite3_bind_int64(pStmt, 3, (int)fuzzPick(&in, 8) - 1);
          }
        }
        break;
      case 11:
        fuzzExec(db, "SELECT vecsync_index_info('v'); SELECT vecsync_ivf_recall('v', %d, %d, %d)",
                 (int)fuzzPick(&in, 6), (int)fuzzPick(&in, 6), (int)fuzzPick(&in, 6));
        /* Over or under the memory budget: coded lists answer with the copy's vectors or
        ** read the candidates' from T_vectors. */
        if( fuzzU8(&in)&1 ) fuzzExec(db, "SELECT vecsync_memory_budget(%d)", (int)fuzzPick(&in, 4)*256);
        break;
      case 12:
        damage(db, &in);
        bDamaged = 1;
        break;
      default:
        checkAll(db, &in, nDim, bDamaged);
        break;
    }
    fuzzRun(pStmt);
  }
  fuzzClose(db);
  return 0;
}
