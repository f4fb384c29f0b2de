/*
** vec0_write.c: one row of a vec0 table written: INSERT, UPDATE, DELETE, and a migrated
** row (vec0InsertRow).
**
** Usage (internal; vec0.c's xUpdate and vec0_migrate.c call these):
**
**   rc = vec0WriteBegin(p);                        -- once a transaction (vec0_cache.c)
**   rc = vec0UpdateWrite(p, argc, argv, &iRowid);  -- xUpdate's INSERT or UPDATE
**   rc = vec0UpdateDelete(p, argv[0]);             -- xUpdate's DELETE
**
** How it works: a write checks everything first (the vector, its types, the key and its
** conflicts under the statement's ON CONFLICT), then writes: T_rows through
** vec0_store.c's statements, the vector and its slot through vec0_cache.c, which owns
** the storage write and the copy's. Nothing here is kept between calls.
*/
#include "vecsync_int.h"
SQLITE_EXTENSION_INIT3

#include <stdlib.h>
#include <string.h>

/* ---- one row ---------------------------------------------------------------------------- */

/* Find the row holding primary key / rowid pKey: *pbFound, then its rowid and slot (the
** slot checked against the storage). */
static int vec0Lookup(Vec0Table *p, sqlite3_value *pKey, int bByRowid, int *pbFound,
                      sqlite3_int64 *piRowid, sqlite3_int64 *piSlot){
  sqlite3_stmt *pStmt = 0;
  int rc = vec0Stmt(p, bByRowid ? VEC0_STMT_SLOT_BY_ROWID : VEC0_STMT_SLOT_BY_ID, &pStmt);
  *pbFound = 0;
  *piRowid = 0;
  *piSlot = -1;
  if( rc!=SQLITE_OK ) return rc;
  sqlite3_bind_value(pStmt, 1, pKey);
  if( sqlite3_step(pStmt)==SQLITE_ROW ){
    *pbFound = 1;
    *piRowid = sqlite3_column_int64(pStmt, 0);
    *piSlot = sqlite3_column_int64(pStmt, 1);
  }
  rc = sqlite3_reset(pStmt);
  if( rc==SQLITE_OK && *pbFound ) rc = vec0SlotCheck(p, *piSlot, "a row");
  return rc;
}

static int vec0DeleteRow(Vec0Table *p, sqlite3_int64 iRowid, sqlite3_int64 iSlot){
  int rc = vec0StmtRun(p, VEC0_STMT_ROW_DELETE, iRowid);
  if( rc==SQLITE_OK ) rc = vec0IvfRemove(p, iSlot);
  if( rc==SQLITE_OK ) rc = vec0WriteFreeSlot(p, iSlot);
  return rc;
}

/* Write row values (id, metadata, auxiliary, extra vectors: apExtra[i] the bytes of
** column i) for rowid iRowid in slot iSlot. bInsert:
** INSERT a new T_rows row, else UPDATE the one at iOldRowid. */
static int vec0WriteRow(Vec0Table *p, int bInsert, sqlite3_int64 iOldRowid,
                        sqlite3_int64 iRowid, sqlite3_int64 iSlot, sqlite3_value *pId,
                        sqlite3_value **aVal, unsigned char **apExtra){
  sqlite3_stmt *pStmt = 0;
  int rc = vec0Stmt(p, bInsert ? VEC0_STMT_ROW_INSERT : VEC0_STMT_ROW_UPDATE, &pStmt);
  int i, nBind = 0;
  if( rc!=SQLITE_OK ) return rc;
  sqlite3_bind_int64(pStmt, ++nBind, iRowid);
  sqlite3_bind_int64(pStmt, ++nBind, iSlot);
  if( vec0HasTextPk(p) ) sqlite3_bind_value(pStmt, ++nBind, pId);
  for(i=0; i<p->cfg.nCol; i++){
    if( !vec0IsStored(&p->cfg, i) ) continue;
    if( vec0IsExtraVector(&p->cfg, i) ){
      sqlite3_bind_blob(pStmt, ++nBind, apExtra[i], p->cfg.aCol[i].nVecByte, SQLITE_STATIC);
    }else{
      sqlite3_bind_value(pStmt, ++nBind, aVal[i]);
    }
  }
  if( !bInsert ) sqlite3_bind_int64(pStmt, ++nBind, iOldRowid);
  sqlite3_step(pStmt);
  rc = sqlite3_reset(pStmt);
  sqlite3_clear_bindings(pStmt);
  return rc;
}

/* A duplicate key under conflict mode eConflict (not REPLACE or IGNORE, which are applied).
** A plain INSERT or UPDATE (ABORT) fails with an operational error, as in sqlite-vec; OR
** FAIL and OR ROLLBACK get SQLITE_CONSTRAINT, which SQLite needs to apply them. */
static int vec0Conflict(Vec0Table *p, int eConflict){
  const char *zCol = p->cfg.iPk>=0 ? p->cfg.aCol[p->cfg.iPk].zName : "rowid";
  vec0SetError(p, "UNIQUE constraint failed: %s.%s", p->zName, zCol);
  return eConflict==SQLITE_ABORT ? SQLITE_ERROR : SQLITE_CONSTRAINT;
}

/* The key of a row being written. */
typedef struct Vec0Key Vec0Key;
struct Vec0Key {
  sqlite3_value *pId;         /* Text primary key, or NULL */
  sqlite3_value *pRowidKey;   /* The value the rowid came from, or NULL */
  int bHasRowid;              /* iRowid was given (else one is assigned) */
  sqlite3_int64 iRowid;       /* The rowid, when bHasRowid */
};

/* Resolve the key of a row being written from the statement's rowid argument and the
** primary key column. Checks types; no write happens here. */
static int vec0NewKey(Vec0Table *p, sqlite3_value *pRowidArg, sqlite3_value **aVal,
                      Vec0Key *pKey){
  sqlite3_value *pVal;
  memset(pKey, 0, sizeof(*pKey));
  if( vec0HasTextPk(p) ){
    sqlite3_value *pId = aVal[p->cfg.iPk];
    if( sqlite3_value_type(pId)==SQLITE_NULL ){
      vec0SetError(p, "vec0 \"%s\": primary key \"%s\" must not be NULL",
                   p->zName, p->cfg.aCol[p->cfg.iPk].zName);
      return SQLITE_CONSTRAINT;
    }
    if( sqlite3_value_type(pId)!=SQLITE_TEXT ){
      vec0SetError(p, "The %s virtual table was declared with a TEXT primary key, but a "
                      "non-TEXT value was provided in an INSERT.", p->zName);
      return SQLITE_ERROR;
    }
    pKey->pId = pId;
    if( pRowidArg && sqlite3_value_type(pRowidArg)==SQLITE_INTEGER ){
      pKey->bHasRowid = 1;
      pKey->iRowid = sqlite3_value_int64(pRowidArg);
    }
    return SQLITE_OK;
  }
  pVal = p->cfg.iPk>=0 ? aVal[p->cfg.iPk] : pRowidArg;
  if( p->cfg.iPk>=0 && sqlite3_value_type(pVal)==SQLITE_NULL ) pVal = pRowidArg;
  if( pVal && sqlite3_value_type(pVal)!=SQLITE_NULL ){
    if( p->cfg.iPk>=0 && sqlite3_value_type(pVal)!=SQLITE_INTEGER ){
      vec0SetError(p, "Only integers are allows for primary key values on %s", p->zName);
      return SQLITE_ERROR;
    }
    if( sqlite3_value_numeric_type(pVal)!=SQLITE_INTEGER ){
      /* An operational error, as sqlite-vec's, not SQLITE_MISMATCH. */
      vec0SetError(p, "vec0 \"%s\": rowid must be an integer", p->zName);
      return SQLITE_ERROR;
    }
    pKey->pRowidKey = pVal;
    pKey->bHasRowid = 1;
    pKey->iRowid = sqlite3_value_int64(pVal);
  }
  return SQLITE_OK;
}

static const char *vec0ValueTypeName(int eType){
  switch( eType ){
    case SQLITE_INTEGER: return "INTEGER";
    case SQLITE_FLOAT:   return "FLOAT";
    case SQLITE_TEXT:    return "TEXT";
    case SQLITE_BLOB:    return "BLOB";
  }
  return "NULL";
}

static const char *vec0ColumnTypeName(int eType){
  switch( eType ){
    case VEC0_TYPE_TEXT:    return "TEXT";
    case VEC0_TYPE_INTEGER: return "INTEGER";
    case VEC0_TYPE_FLOAT:   return "FLOAT";
    case VEC0_TYPE_BOOLEAN: return "BOOLEAN";
    case VEC0_TYPE_BLOB:    return "BLOB";
  }
  return "ANY";
}

/* Whether value pVal may be stored in a column of type eType: text in TEXT, an integer in
** INTEGER, a float (or an integer, stored as a float) in FLOAT, 0 or 1 in BOOLEAN, a blob in
** BLOB; NULL anywhere. */
static int vec0TypeFits(int eType, sqlite3_value *pVal){
  int t = sqlite3_value_type(pVal);
  if( t==SQLITE_NULL || eType==VEC0_TYPE_ANY ) return 1;
  switch( eType ){
    case VEC0_TYPE_TEXT:    return t==SQLITE_TEXT;
    case VEC0_TYPE_INTEGER: return t==SQLITE_INTEGER;
    case VEC0_TYPE_FLOAT:   return t==SQLITE_FLOAT || t==SQLITE_INTEGER;
    case VEC0_TYPE_BOOLEAN:
      return t==SQLITE_INTEGER && (sqlite3_value_int64(pVal)==0 || sqlite3_value_int64(pVal)==1);
    case VEC0_TYPE_BLOB:    return t==SQLITE_BLOB;
  }
  return 0;
}

/* Check the metadata and auxiliary values of a row being written against their declared
** types, with sqlite-vec's messages (NULL is accepted, and an integer in a float column,
** which sqlite-vec refuses). */
static int vec0CheckTypes(Vec0Table *p, sqlite3_value **aVal){
  int i;
  for(i=0; i<p->cfg.nCol; i++){
    const Vec0Column *pCol = &p->cfg.aCol[i];
    sqlite3_value *pVal = aVal[i];
    if( (pCol->eKind!=VEC0_META && pCol->eKind!=VEC0_AUX) || sqlite3_value_nochange(pVal) ){
      continue;
    }
    if( vec0TypeFits(pCol->eType, pVal)
     && !(pCol->bNotNull && sqlite3_value_type(pVal)==SQLITE_NULL) ) continue;
    if( pCol->eKind==VEC0_AUX ){
      vec0SetError(p, "Auxiliary column type mismatch: The auxiliary column %s has type %s, "
                      "but %s was provided.", pCol->zName, vec0ColumnTypeName(pCol->eType),
                   vec0ValueTypeName(sqlite3_value_type(pVal)));
      return SQLITE_CONSTRAINT;
    }
    if( pCol->eType==VEC0_TYPE_BOOLEAN ){
      vec0SetError(p, "Expected 0 or 1 for BOOLEAN metadata column %s", pCol->zName);
    }else{
      vec0SetError(p, "Expected %s for %s metadata column %s, received %s",
                   pCol->eType==VEC0_TYPE_TEXT ? "text"
                   : pCol->eType==VEC0_TYPE_INTEGER ? "integer" : "float",
                   vec0ColumnTypeName(pCol->eType), pCol->zName,
                   vec0ValueTypeName(sqlite3_value_type(pVal)));
    }
    return SQLITE_ERROR;
  }
  return SQLITE_OK;
}

/* A rowid for a new row whose statement gave none. */
static int vec0NextRowid(Vec0Table *p, sqlite3_int64 *piRowid){
  sqlite3_stmt *pStmt = 0;
  int rc = vec0Stmt(p, VEC0_STMT_NEXT_ROWID, &pStmt);
  if( rc!=SQLITE_OK ) return rc;
  if( sqlite3_step(pStmt)==SQLITE_ROW ) *piRowid = sqlite3_column_int64(pStmt, 0);
  rc = sqlite3_reset(pStmt);
  if( rc==SQLITE_OK && *piRowid==(sqlite3_int64)0x8000000000000000ULL ){
    vec0SetError(p, "vec0 \"%s\": no rowid is left above the largest one", p->zName);
    rc = SQLITE_FULL;
  }
  return rc;
}

/* The bytes each extra vector column of a row being written stores, in apExtra[i]
** (sqlite3_malloc'ed): the value given, checked as the first column's is, or for an
** UPDATE that leaves the column alone, the one stored for row iOld (checked too). */
static int vec0ExtraValues(Vec0Table *p, sqlite3_value **aVal, int bInsert,
                           sqlite3_int64 iOld, unsigned char **apExtra){
  sqlite3_stmt *pRow = 0;
  char *zErr = 0;
  int i, rc = SQLITE_OK;
  for(i=0; i<p->cfg.nCol && rc==SQLITE_OK; i++){
    const Vec0Column *pCol = &p->cfg.aCol[i];
    float *a = 0;
    if( !vec0IsExtraVector(&p->cfg, i) ) continue;
    if( bInsert || !sqlite3_value_nochange(aVal[i]) ){
      rc = vec0ColumnVectorArg(p, i, aVal[i], "inserted", &a, &zErr);
      if( rc!=SQLITE_OK ){
        if( zErr ) vec0SetError(p, "%s", zErr);
        break;
      }
      if( pCol->eElem==VS_F32 ) vsF32ToLE(a, pCol->nDim, (unsigned char*)a);
      apExtra[i] = (unsigned char*)a;
      continue;
    }
    if( pRow==0 ){
      rc = vec0StmtBorrow(p, VEC0_STMT_READ_BY_ROWID, &pRow);
      if( rc!=SQLITE_OK ) break;
      sqlite3_bind_int64(pRow, 1, iOld);
      if( sqlite3_step(pRow)!=SQLITE_ROW ){
        rc = sqlite3_reset(pRow);
        if( rc==SQLITE_OK ){
          vec0SetError(p, "vec0 \"%s\": storage is damaged: the updated row is not in "
                          "%s_rows", p->zName, p->zName);
          rc = SQLITE_CORRUPT_VTAB;
        }
        break;
      }
    }
    rc = vec0ExtraCheck(p, i, iOld, sqlite3_column_value(pRow, VEC0_ROW_USER+i));
    if( rc!=SQLITE_OK ) break;
    apExtra[i] = sqlite3_malloc64((sqlite3_uint64)pCol->nVecByte + 1);
    if( apExtra[i]==0 ){ rc = SQLITE_NOMEM; break; }
    memcpy(apExtra[i], sqlite3_column_blob(pRow, VEC0_ROW_USER+i), (size_t)pCol->nVecByte);
  }
  vec0StmtGiveBack(p, VEC0_STMT_READ_BY_ROWID, pRow);
  sqlite3_free(zErr);
  return rc;
}

/* DELETE FROM T WHERE rowid = argv[0]. */
int vec0UpdateDelete(Vec0Table *p, sqlite3_value *pRowid){
  sqlite3_int64 iRowid, iSlot;
  int bFound = 0;
  int rc = vec0Lookup(p, pRowid, 1, &bFound, &iRowid, &iSlot);
  if( rc==SQLITE_OK && bFound ) rc = vec0DeleteRow(p, iRowid, iSlot);
  return rc;
}

/* INSERT (argv[0] NULL) or UPDATE (argv[0] the old rowid). */
int vec0UpdateWrite(Vec0Table *p, int argc, sqlite3_value **argv,
                    sqlite3_int64 *pRowid){
  int nOff = vec0ColumnOffset(p);
  sqlite3_value **aVal = &argv[2+nOff];       /* the user columns' values */
  sqlite3_value *pVec;
  sqlite3_value *pNewRowid = argv[1];         /* what the rowid becomes */
  int bInsert = sqlite3_value_type(argv[0])==SQLITE_NULL;
  int bKeepVector;
  int bOld = 0, bOther = 0;
  sqlite3_int64 iOldRowid = 0, iOldSlot = -1, iOther = 0, iOtherSlot = -1, iSlot = -1;
  float *aVec = 0;
  unsigned char *apExtra[VEC0_MAX_COLUMNS];  /* extra vector columns' bytes */
  char *zErr = 0;
  Vec0Key key;
  int i, rc = SQLITE_OK;

  memset(apExtra, 0, sizeof(apExtra));
  if( argc!=2+nOff+p->cfg.nCol+2+p->cfg.bIvf ){
    vec0SetError(p, "vec0 \"%s\": unexpected write of %d values", p->zName, argc);
    rc = SQLITE_ERROR;
    goto cleanup;
  }
  pVec = aVal[p->cfg.iVec];
  bKeepVector = !bInsert && sqlite3_value_nochange(pVec);
  if( nOff && sqlite3_value_type(argv[2])!=SQLITE_NULL ){
    /* The "rowid" column: it names the new rowid unless the statement changed the real
    ** one (through oid or _rowid_). */
    if( bInsert ? sqlite3_value_type(argv[1])==SQLITE_NULL
                : sqlite3_value_int64(argv[1])==sqlite3_value_int64(argv[0]) ){
      pNewRowid = argv[2];
    }
  }
  if( sqlite3_value_type(aVal[p->cfg.nCol])!=SQLITE_NULL
   || sqlite3_value_type(aVal[p->cfg.nCol+1])!=SQLITE_NULL
   || (p->cfg.bIvf && sqlite3_value_type(aVal[p->cfg.nCol+2])!=SQLITE_NULL) ){
    /* distance, k and nprobe are query columns: nothing stores them. */
    vec0SetError(p, "vec0 \"%s\": a value for the hidden column \"%s\" cannot be written",
                 p->zName, sqlite3_value_type(aVal[p->cfg.nCol])!=SQLITE_NULL ? "distance"
                 : sqlite3_value_type(aVal[p->cfg.nCol+1])!=SQLITE_NULL ? "k" : "nprobe");
    rc = SQLITE_ERROR;
    goto cleanup;
  }
  /* 1. Check everything before writing anything. */
  if( !bKeepVector ){
    rc = vec0VectorArg(p, pVec, "inserted", &aVec, &zErr);
    if( rc!=SQLITE_OK ){
      if( zErr ) vec0SetError(p, "%s", zErr);
      goto cleanup;
    }
  }
  rc = vec0CheckTypes(p, aVal);
  if( rc==SQLITE_OK && p->cfg.nExtraVec>0 ){
    rc = vec0ExtraValues(p, aVal, bInsert, bInsert ? 0 : sqlite3_value_int64(argv[0]), apExtra);
  }
  if( rc!=SQLITE_OK ) goto cleanup;
  rc = vec0NewKey(p, bInsert ? pNewRowid : 0, aVal, &key);
  if( rc!=SQLITE_OK ) goto cleanup;
  if( !bInsert ){
    rc = vec0Lookup(p, argv[0], 1, &bOld, &iOldRowid, &iOldSlot);
    if( rc!=SQLITE_OK ) goto cleanup;
    if( !bOld ){
      vec0SetError(p, "vec0 \"%s\": storage is damaged: the updated row is not in %s_rows",
                   p->zName, p->zName);
      rc = SQLITE_CORRUPT_VTAB;
      goto cleanup;
    }
    if( !key.bHasRowid ){
      key.bHasRowid = 1;
      key.iRowid = iOldRowid;
    }
    if( !vec0HasTextPk(p) && p->cfg.iPk<0 ){
      /* UPDATE ... SET rowid = ?: pNewRowid is the new rowid. */
      if( sqlite3_value_numeric_type(pNewRowid)!=SQLITE_INTEGER ){
        vec0SetError(p, "vec0 \"%s\": rowid must be an integer", p->zName);
        rc = SQLITE_ERROR;
        goto cleanup;
      }
      key.iRowid = sqlite3_value_int64(pNewRowid);
    }
  }
  /* 2. Primary key conflicts, resolved as the statement's ON CONFLICT says. */
  if( key.pId ){
    rc = vec0Lookup(p, key.pId, 0, &bOther, &iOther, &iOtherSlot);
  }else if( key.bHasRowid ){
    /* The integer key as given, or an UPDATE's new rowid. */
    rc = vec0Lookup(p, key.pRowidKey ? key.pRowidKey : pNewRowid, 1,
                    &bOther, &iOther, &iOtherSlot);
  }
  if( rc!=SQLITE_OK ) goto cleanup;
  if( bOld && p->cfg.iPk>=0
   && (key.pId ? !(bOther && iOther==iOldRowid) : key.iRowid!=iOldRowid) ){
    /* As sqlite-vec: a row's primary key is its identity (delete and insert instead). */
    vec0SetError(p, "UPDATEs on vec0 primary key values are not allowed.");
    rc = SQLITE_ERROR;
    goto cleanup;
  }
  if( bOther && bOld && iOther==iOldRowid ) bOther = 0;    /* the row itself */
  if( bOther ){
    /* A row the migration inserts has no statement's ON CONFLICT: a key met twice is an
    ** error (sqlite3_vtab_on_conflict is only defined inside xUpdate). */
    int eConflict = p->bNoConflict ? SQLITE_ABORT : sqlite3_vtab_on_conflict(p->db);
    if( eConflict==SQLITE_REPLACE ){
      rc = vec0DeleteRow(p, iOther, iOtherSlot);
      if( rc!=SQLITE_OK ) goto cleanup;
    }else if( eConflict==SQLITE_IGNORE ){
      goto cleanup;
    }else{
      rc = vec0Conflict(p, eConflict);
      goto cleanup;
    }
  }
  /* 3. Write. */
  if( bInsert ){
    if( !key.bHasRowid ){
      rc = vec0NextRowid(p, &key.iRowid);
      key.bHasRowid = 1;
    }
    if( rc==SQLITE_OK ) rc = vec0WriteNewSlot(p, &iSlot);
    if( rc==SQLITE_OK ) rc = vec0WriteVector(p, iSlot, key.iRowid, aVec);
    if( rc==SQLITE_OK ) rc = vec0WriteRow(p, 1, 0, key.iRowid, iSlot, key.pId, aVal, apExtra);
  }else{
    iSlot = iOldSlot;
    if( aVec ) rc = vec0WriteVector(p, iSlot, key.iRowid, aVec);
    if( rc==SQLITE_OK ) rc = vec0WriteRow(p, 0, iOldRowid, key.iRowid, iSlot, key.pId, aVal, apExtra);
    if( rc==SQLITE_OK && key.iRowid!=iOldRowid ) rc = vec0WriteRowid(p, iSlot, key.iRowid);
  }
  /* The ivf index: the row into its nearest list, after T_rows has it (an insert that
  ** trains the index reads every row there); a new rowid alone into its list. */
  if( rc==SQLITE_OK && (aVec || (!bInsert && key.iRowid!=iOldRowid)) ){
    rc = vec0IvfPut(p, iSlot, key.iRowid, aVec);
  }
  if( rc==SQLITE_OK ) *pRowid = key.iRowid;

cleanup:
  for(i=0; i<p->cfg.nCol; i++) sqlite3_free(apExtra[i]);
  sqlite3_free(aVec);
  sqlite3_free(zErr);
  return rc;
}

int vec0InsertRow(Vec0Table *p, int argc, sqlite3_value **argv){
  sqlite3_int64 iRowid = 0;
  int rc = vec0WriteBegin(p);
  p->bNoConflict = 1;
  if( rc==SQLITE_OK ) rc = vec0UpdateWrite(p, argc, argv, &iRowid);
  p->bNoConflict = 0;
  return rc;
}
