/*
** vec0_migrate.c: a vec0 table written by sqlite-vec, read as it is and migrated when the
** user asks. Reading never changes the file: a statement reads the table from a copy
** migrated into a private database, so the file stays sqlite-vec's and sqlite-vec can
** still open it. Writes are refused until the user migrates the table in place
** (vecsync_migrate_sqlite_vec), every row kept; vecsync_export_sqlite_vec
** (vec0_export.c) writes it back in sqlite-vec's format.
**
** Usage:
**
**   .load libvecsync                                   -- where .load vec0 was
**   select rowid, distance from vec_items where embedding match :q and k = 10;  -- a copy
**   select vecsync_migrate_sqlite_vec('vec_items');  -- in place: 'vec_items: 20000 rows migrated'
**
** Both extensions declare vec0 tables with the same statement, so the table's declaration
** stays as it is; only its shadow tables change. sqlite-vec 0.1.x keeps (for a table T):
**   T_rowids             rowid, id (a text primary key, else NULL), chunk_id, chunk_offset
**   T_chunks             chunk_id, size, validity, rowids, and partition key values
**                        (partitionNN) when the table has partition keys
**   T_vector_chunksNN    for the NNth vector column: rowid = chunk_id; vectors: chunk_size
**                        vectors end to end, each as its value's bytes: float[N] 4N
**                        (float32; float64[N] and float8[N] too), int8[N] N, bit[N] N/8
**   T_metadatachunksNN   rowid = chunk_id; data: per slot, by the NNth metadata column's type:
**                        boolean one bit (least significant first), integer an int64, float
**                        a double, text 16 bytes (int32 length, then the first 12 bytes)
**   T_metadatatextNN     rowid = the row's rowid: texts longer than 12 bytes, whole
**   T_auxiliary          rowid, valueNN for the NNth auxiliary column
**   T_info               sqlite-vec's version
** (all little-endian).
**
** How it works. Every row of T_rowids is read, its values bound to a SELECT that hands them
** over as the arguments of an INSERT, and written by vec0InsertRow (vec0_write.c): the
** table's own write path, so every value is checked as an INSERT checks it, into whichever
** storage the table writes (Vec0Table.dbStore).
**   A copy (vec0MigrateCopy, from vec0StorageReady, which every statement calls first): the
**   rows go into a private temporary database (in memory where no temporary file can be
**   made) that the table reads instead of its file, made again when the file's data
**   version moves.
**   In place (vecsync_migrate_sqlite_vec): inside one savepoint, sqlite-vec's T_info (its
**   version only) is dropped, this extension's shadow tables created, the rows copied,
**   sqlite-vec's tables dropped. Any failure rolls all of it back and the file is as it
**   was. It cannot happen on a table's first write instead: SQLite drops no table while
**   another statement of the connection (the write) is running.
**
** Each number read from sqlite-vec's tables (chunk ids, offsets, lengths) is checked
** against the blob it points into: a damaged file is an error naming what is damaged.
*/
#include "vecsync_int.h"
SQLITE_EXTENSION_INIT3

#include <stdarg.h>
#include <string.h>

/* A blob handle kept open on one sqlite-vec table and moved from row to row. */
typedef struct MigrateBlob MigrateBlob;
struct MigrateBlob {
  char *zTable;             /* sqlite-vec table it reads */
  const char *zColumn;      /* its blob column */
  sqlite3_blob *pBlob;      /* open on row iRow, or NULL */
  sqlite3_int64 iRow;
};

typedef struct Migrate Migrate;
struct Migrate {
  Vec0Table *p;
  sqlite3 *db;
  int nMeta;                /* metadata columns (sqlite-vec numbers them 00, 01, ...) */
  int nAux;                 /* auxiliary columns */
  int nPart;                /* partition key columns */
  int aSource[VEC0_MAX_COLUMNS];  /* user column i: its NN among its kind */
  int nVecByteMax;          /* the largest vector column's bytes */
  MigrateBlob aVec[VEC0_MAX_COLUMNS];   /* vector column i: T_vector_chunksNN */
  MigrateBlob aMeta[VEC0_MAX_COLUMNS];
  char *zErr;               /* what went wrong, sqlite3_malloc'ed */
};

static int migrateError(Migrate *m, int rc, const char *zFmt, ...){
  va_list ap;
  if( m->zErr==0 ){
    va_start(ap, zFmt);
    m->zErr = sqlite3_vmprintf(zFmt, ap);
    va_end(ap);
  }
  return rc;
}

/* Read nByte bytes at iOffset of row iRow of b into pOut, checking they are there. */
static int migrateRead(Migrate *m, MigrateBlob *b, sqlite3_int64 iRow, sqlite3_int64 iOffset,
                       int nByte, void *pOut){
  int rc = SQLITE_OK;
  if( b->pBlob && b->iRow!=iRow ){
    rc = sqlite3_blob_reopen(b->pBlob, iRow);
    if( rc!=SQLITE_OK ){
      sqlite3_blob_close(b->pBlob);
      b->pBlob = 0;
    }
  }
  if( b->pBlob==0 ){
    rc = sqlite3_blob_open(m->db, m->p->zSchema, b->zTable, b->zColumn, iRow, 0, &b->pBlob);
  }
  if( rc!=SQLITE_OK ){
    return migrateError(m, SQLITE_CORRUPT_VTAB, "%s has no row %lld", b->zTable, iRow);
  }
  b->iRow = iRow;
  if( iOffset<0 || iOffset+nByte>sqlite3_blob_bytes(b->pBlob) ){
    return migrateError(m, SQLITE_CORRUPT_VTAB, "%s row %lld is %d bytes, offset %lld is "
                        "past its end", b->zTable, iRow, sqlite3_blob_bytes(b->pBlob), iOffset);
  }
  return sqlite3_blob_read(b->pBlob, pOut, nByte, (int)iOffset);
}

static sqlite3_int64 migrateI64(const unsigned char *a){
  sqlite3_uint64 u = 0;
  int i;
  for(i=7; i>=0; i--) u = (u<<8) | a[i];
  return (sqlite3_int64)u;
}

/* Bind metadata column iCol of the row in (iChunk, iOffset) to parameter iParam. */
static int migrateMeta(Migrate *m, sqlite3_stmt *pIns, int iParam, int iCol,
                       sqlite3_int64 iRowid, sqlite3_int64 iChunk, sqlite3_int64 iOffset){
  const Vec0Column *pCol = &m->p->cfg.aCol[iCol];
  MigrateBlob *b = &m->aMeta[iCol];
  unsigned char a[16];
  int rc;
  switch( pCol->eType ){
    case VEC0_TYPE_BOOLEAN:
      rc = migrateRead(m, b, iChunk, iOffset/8, 1, a);
      if( rc==SQLITE_OK ) sqlite3_bind_int(pIns, iParam, (a[0]>>(iOffset%8)) & 1);
      return rc;
    case VEC0_TYPE_INTEGER:
      rc = migrateRead(m, b, iChunk, iOffset*8, 8, a);
      if( rc==SQLITE_OK ) sqlite3_bind_int64(pIns, iParam, migrateI64(a));
      return rc;
    case VEC0_TYPE_FLOAT: {
      sqlite3_int64 x;
      double r;
      rc = migrateRead(m, b, iChunk, iOffset*8, 8, a);
      x = migrateI64(a);
      memcpy(&r, &x, 8);
      if( rc==SQLITE_OK ) sqlite3_bind_double(pIns, iParam, r);
      return rc;
    }
    case VEC0_TYPE_TEXT: {
      int n;
      rc = migrateRead(m, b, iChunk, iOffset*16, 16, a);
      if( rc!=SQLITE_OK ) return rc;
      n = (int)((unsigned)a[0] | ((unsigned)a[1]<<8) | ((unsigned)a[2]<<16) | ((unsigned)a[3]<<24));
      if( n<0 ){
        return migrateError(m, SQLITE_CORRUPT_VTAB, "%s row %lld: text length %d",
                            b->zTable, iChunk, n);
      }
      if( n<=12 ) return sqlite3_bind_text(pIns, iParam, (const char*)a+4, n, SQLITE_TRANSIENT);
      {
        /* Longer texts live whole in T_metadatatextNN, by the row's rowid. */
        sqlite3_stmt *pStmt = 0;
        char *zSql = sqlite3_mprintf("SELECT data FROM \"%w\".\"%w_metadatatext%02d\" "
                                     "WHERE rowid=?1", m->p->zSchema, m->p->zName,
                                     m->aSource[iCol]);
        if( zSql==0 ) return SQLITE_NOMEM;
        rc = sqlite3_prepare_v2(m->db, zSql, -1, &pStmt, 0);
        sqlite3_free(zSql);
        if( rc!=SQLITE_OK ) return migrateError(m, rc, "%s", sqlite3_errmsg(m->db));
        sqlite3_bind_int64(pStmt, 1, iRowid);
        if( sqlite3_step(pStmt)==SQLITE_ROW && sqlite3_column_type(pStmt, 0)==SQLITE_TEXT ){
          rc = sqlite3_bind_value(pIns, iParam, sqlite3_column_value(pStmt, 0));
        }else{
          rc = migrateError(m, SQLITE_CORRUPT_VTAB, "%s_metadatatext%02d has no text for "
                            "row %lld", m->p->zName, m->aSource[iCol], iRowid);
        }
        sqlite3_finalize(pStmt);
        return rc;
      }
    }
  }
  return migrateError(m, SQLITE_ERROR, "column \"%s\": no sqlite-vec layout for its type",
                      pCol->zName);
}

/* The statement that carries one migrated row to vec0InsertRow: a SELECT whose columns are
** the arguments xUpdate receives for "INSERT INTO T(rowid, [key,] columns...) VALUES
** (?1, [?2,] ...)": the old rowid (NULL), the new rowid, the "rowid" column of a table
** without a key, every user column, then distance and k (NULL). */
static char *migrateCarrierSql(Migrate *m){
  Vec0Table *p = m->p;
  sqlite3_str *pStr = sqlite3_str_new(m->db);
  int i, n = 1;
  int bIntKey = p->cfg.iPk>=0 && !vec0HasTextPk(p);
  /* An integer key is the rowid: given as the key's column, as an INSERT names it. */
  sqlite3_str_appendf(pStr, "SELECT NULL, %s", bIntKey ? "NULL" : "?1");
  if( vec0ColumnOffset(p) ) sqlite3_str_appendall(pStr, ", ?1");
  if( vec0HasTextPk(p) ) n++;
  for(i=0; i<p->cfg.nCol; i++){
    const Vec0Column *pCol = &p->cfg.aCol[i];
    if( i==p->cfg.iPk ){
      sqlite3_str_appendf(pStr, ", ?%d", bIntKey ? 1 : 2);
    }else if( pCol->eKind==VEC0_VECTOR && pCol->eElem!=VS_F32 ){
      /* An int8 or bit column takes its bytes with their subtype, as any insert does. */
      sqlite3_str_appendf(pStr, ", %s(?%d)", pCol->eElem==VS_I8 ? "vec_int8" : "vec_bit", ++n);
    }else{
      sqlite3_str_appendf(pStr, ", ?%d", ++n);
    }
  }
  sqlite3_str_appendall(pStr, ", NULL, NULL");
  return sqlite3_str_finish(pStr);
}

/* Copy every row of sqlite-vec's tables (in p->db) into the table's storage (in
** p->dbStore, whose shadow tables are ours), each checked as an INSERT checks it. */
static int migrateRows(Migrate *m, sqlite3_int64 *pnRow){
  Vec0Table *p = m->p;
  sqlite3_stmt *pRows = 0, *pIns = 0, *pAux = 0, *pPart = 0;
  sqlite3_value *apArg[VEC0_MAX_COLUMNS + 5];
  /* A slot's bytes in T_vector_chunksNN: 4 an element for float[N], 1 for int8[N], N/8
  ** for bit[N] (sqlite-vec's layout, the same as its values'). */
  int nVecMax = m->nVecByteMax, rc, nArg = 0;
  float *a = sqlite3_malloc64((size_t)nVecMax);
  unsigned char *aRaw = sqlite3_malloc64((size_t)nVecMax);
  char *zSql = migrateCarrierSql(m);
  rc = (a && aRaw && zSql) ? SQLITE_OK : SQLITE_NOMEM;
  if( rc==SQLITE_OK ) rc = sqlite3_prepare_v2(m->db, zSql, -1, &pIns, 0);
  sqlite3_free(zSql);
  if( rc==SQLITE_OK ){
    nArg = sqlite3_column_count(pIns);
    zSql = sqlite3_mprintf("SELECT rowid, id, chunk_id, chunk_offset FROM \"%w\".\"%w_rowids\" "
                           "ORDER BY rowid", p->zSchema, p->zName);
    rc = zSql ? sqlite3_prepare_v2(m->db, zSql, -1, &pRows, 0) : SQLITE_NOMEM;
    sqlite3_free(zSql);
  }
  if( rc==SQLITE_OK && m->nAux>0 ){
    zSql = sqlite3_mprintf("SELECT * FROM \"%w\".\"%w_auxiliary\" WHERE rowid=?1",
                           p->zSchema, p->zName);
    rc = zSql ? sqlite3_prepare_v2(m->db, zSql, -1, &pAux, 0) : SQLITE_NOMEM;
    sqlite3_free(zSql);
  }
  if( rc==SQLITE_OK && m->nPart>0 ){
    zSql = sqlite3_mprintf("SELECT * FROM \"%w\".\"%w_chunks\" WHERE chunk_id=?1",
                           p->zSchema, p->zName);
    rc = zSql ? sqlite3_prepare_v2(m->db, zSql, -1, &pPart, 0) : SQLITE_NOMEM;
    sqlite3_free(zSql);
  }
  if( rc!=SQLITE_OK && m->zErr==0 && rc!=SQLITE_NOMEM ){
    migrateError(m, rc, "%s", sqlite3_errmsg(m->db));
  }
  if( rc==SQLITE_OK && nArg>(int)(sizeof(apArg)/sizeof(apArg[0])) ){
    rc = migrateError(m, SQLITE_ERROR, "%d columns are more than a row carries", nArg);
  }
  while( rc==SQLITE_OK && sqlite3_step(pRows)==SQLITE_ROW ){
    sqlite3_int64 iRowid = sqlite3_column_int64(pRows, 0);
    sqlite3_int64 iChunk = sqlite3_column_int64(pRows, 2);
    sqlite3_int64 iOffset = sqlite3_column_int64(pRows, 3);
    int i, iParam = 1, bAux = 0, bPart = 0;
    sqlite3_bind_int64(pIns, iParam, iRowid);
    if( vec0HasTextPk(p) ){
      rc = sqlite3_bind_value(pIns, ++iParam, sqlite3_column_value(pRows, 1));
    }
    if( rc==SQLITE_OK && (iOffset<0 || iOffset>0x7fffffff/(nVecMax + 16)) ){
      /* Past any blob: refused before any multiplication can overflow. */
      rc = migrateError(m, SQLITE_CORRUPT_VTAB, "%s_rowids row %lld: chunk_offset %lld",
                        p->zName, iRowid, iOffset);
    }
    if( rc==SQLITE_OK && pAux ){
      sqlite3_bind_int64(pAux, 1, iRowid);
      bAux = sqlite3_step(pAux)==SQLITE_ROW;
    }
    if( rc==SQLITE_OK && pPart ){
      sqlite3_bind_int64(pPart, 1, iChunk);
      bPart = sqlite3_step(pPart)==SQLITE_ROW;
    }
    for(i=0; rc==SQLITE_OK && i<p->cfg.nCol; i++){
      const Vec0Column *pCol = &p->cfg.aCol[i];
      if( i==p->cfg.iPk ) continue;
      iParam++;
      if( pCol->eKind==VEC0_VECTOR ){
        int nVec = pCol->nVecByte;
        rc = migrateRead(m, &m->aVec[i], iChunk, iOffset*nVec, nVec, aRaw);
        if( rc==SQLITE_OK && pCol->eElem!=VS_F32 ){
          rc = sqlite3_bind_blob(pIns, iParam, aRaw, nVec, SQLITE_TRANSIENT);
        }else if( rc==SQLITE_OK ){
          vsF32FromLE(aRaw, pCol->nDim, a);
          rc = sqlite3_bind_blob(pIns, iParam, a, nVec, SQLITE_TRANSIENT);
        }
      }else if( pCol->eKind==VEC0_AUX ){
        /* T_auxiliary: rowid, then value00, value01, ... */
        if( bAux && sqlite3_column_count(pAux)>1+m->aSource[i] ){
          rc = sqlite3_bind_value(pIns, iParam, sqlite3_column_value(pAux, 1+m->aSource[i]));
        }else{
          sqlite3_bind_null(pIns, iParam);
        }
      }else if( pCol->bPartition ){
        /* T_chunks: chunk_id, size, sequence_id, partition00, ... validity, rowids */
        if( bPart && sqlite3_column_count(pPart)>3+m->aSource[i] ){
          rc = sqlite3_bind_value(pIns, iParam, sqlite3_column_value(pPart, 3+m->aSource[i]));
        }else{
          rc = migrateError(m, SQLITE_CORRUPT_VTAB, "%s_chunks has no partition value for "
                            "chunk %lld", p->zName, iChunk);
        }
      }else{
        rc = migrateMeta(m, pIns, iParam, i, iRowid, iChunk, iOffset);
      }
    }
    if( pAux ) sqlite3_reset(pAux);
    if( pPart ) sqlite3_reset(pPart);
    if( rc==SQLITE_OK ){
      if( sqlite3_step(pIns)==SQLITE_ROW ){
        for(i=0; i<nArg; i++) apArg[i] = sqlite3_column_value(pIns, i);
        rc = vec0InsertRow(p, nArg, apArg);
        if( rc!=SQLITE_OK ){
          char *zWhy = vec0TakeError(p);
          migrateError(m, rc, "row %lld: %s", iRowid,
                       zWhy ? zWhy : sqlite3_errmsg(p->dbStore));
          sqlite3_free(zWhy);
        }
      }
      if( rc==SQLITE_OK ){
        rc = sqlite3_reset(pIns);
        if( rc!=SQLITE_OK ) migrateError(m, rc, "%s", sqlite3_errmsg(m->db));
      }else{
        sqlite3_reset(pIns);
      }
      if( rc==SQLITE_OK ) (*pnRow)++;
    }
  }
  if( rc==SQLITE_OK && pRows ){
    rc = sqlite3_reset(pRows);
    if( rc!=SQLITE_OK ) migrateError(m, rc, "%s", sqlite3_errmsg(m->db));
  }
  sqlite3_finalize(pRows);
  sqlite3_finalize(pIns);
  sqlite3_finalize(pAux);
  sqlite3_finalize(pPart);
  sqlite3_free(a);
  sqlite3_free(aRaw);
  return rc;
}

static int migrateExec(Migrate *m, sqlite3 *db, const char *zFmt, ...){
  va_list ap;
  char *zSql;
  int rc;
  va_start(ap, zFmt);
  zSql = sqlite3_vmprintf(zFmt, ap);
  va_end(ap);
  if( zSql==0 ) return SQLITE_NOMEM;
  rc = sqlite3_exec(db, zSql, 0, 0, 0);
  if( rc!=SQLITE_OK ) migrateError(m, rc, "%s", sqlite3_errmsg(db));
  sqlite3_free(zSql);
  return rc;
}

/* Name sqlite-vec's tables of the table's columns: vector column i reads
** T_vector_chunksNN, metadata column i T_metadatachunksNN (NN its number among its kind). */
static int migrateBegin(Migrate *m, Vec0Table *p){
  int i, nVecCol = 0;
  memset(m, 0, sizeof(*m));
  m->p = p;
  m->db = p->db;
  for(i=0; i<p->cfg.nCol; i++){
    const Vec0Column *pCol = &p->cfg.aCol[i];
    if( pCol->eKind==VEC0_VECTOR ){
      /* sqlite-vec numbers its vector columns in declared order, from 00. */
      m->aSource[i] = nVecCol;
      m->aVec[i].zTable = sqlite3_mprintf("%s_vector_chunks%02d", p->zName, nVecCol++);
      m->aVec[i].zColumn = "vectors";
      if( m->aVec[i].zTable==0 ) return SQLITE_NOMEM;
      if( pCol->nVecByte>m->nVecByteMax ) m->nVecByteMax = pCol->nVecByte;
    }
    else if( pCol->eKind==VEC0_AUX ) m->aSource[i] = m->nAux++;
    else if( pCol->bPartition ) m->aSource[i] = m->nPart++;
    else if( pCol->eKind==VEC0_META ){
      m->aSource[i] = m->nMeta;
      m->aMeta[i].zTable = sqlite3_mprintf("%s_metadatachunks%02d", p->zName, m->nMeta++);
      m->aMeta[i].zColumn = "data";
      if( m->aMeta[i].zTable==0 ) return SQLITE_NOMEM;
    }
  }
  return SQLITE_OK;
}

/* Close the blob handles on sqlite-vec's tables: an open one is a read in progress, and
** the tables cannot be dropped while one is. */
static void migrateCloseBlobs(Migrate *m){
  int i;
  for(i=0; i<VEC0_MAX_COLUMNS; i++){
    sqlite3_blob_close(m->aVec[i].pBlob);
    m->aVec[i].pBlob = 0;
    sqlite3_blob_close(m->aMeta[i].pBlob);
    m->aMeta[i].pBlob = 0;
  }
}

static void migrateEnd(Migrate *m){
  int i;
  migrateCloseBlobs(m);
  for(i=0; i<VEC0_MAX_COLUMNS; i++){
    sqlite3_free(m->aVec[i].zTable);
    sqlite3_free(m->aMeta[i].zTable);
  }
  sqlite3_free(m->zErr);
  memset(m, 0, sizeof(*m));
}

/* The rows were written outside any transaction of the table's own: what the writes left
** in the table's state (a generation bumped, a view of its own) goes. */
static void migrateSettle(Vec0Table *p){
  vec0WriteEnd(p);
  if( p->bViewPrivate ) vec0CacheDrop(p);
}

/* The migration in place, inside the caller's savepoint: sqlite-vec's T_info (its version
** only) makes room for ours, our shadow tables are made, every row is copied, sqlite-vec's
** tables are dropped. */
static int migrateInPlace(Migrate *m, sqlite3_int64 *pnRow){
  Vec0Table *p = m->p;
  int rc, bOurs = 0, bTheirs = 0;
  rc = vec0ShadowPresent(p, &bOurs, &bTheirs);
  if( rc!=SQLITE_OK ) return migrateError(m, rc, "%s", sqlite3_errmsg(m->db));
  if( bOurs ){
    return migrateError(m, SQLITE_ERROR, "\"%s\" is already in this extension's storage",
                        p->zName);
  }
  if( !bTheirs ){
    return migrateError(m, SQLITE_ERROR, "\"%s\" has no sqlite-vec storage to migrate",
                        p->zName);
  }
  rc = migrateExec(m, m->db, "DROP TABLE IF EXISTS \"%w\".\"%w_info\"", p->zSchema, p->zName);
  if( rc==SQLITE_OK ){
    rc = vec0ShadowCreate(p);
    if( rc==SQLITE_OK ) rc = vec0CacheAttach(p);
    if( rc!=SQLITE_OK ) migrateError(m, rc, "%s", sqlite3_errmsg(m->db));
  }
  if( rc==SQLITE_OK ) rc = migrateRows(m, pnRow);
  migrateCloseBlobs(m);
  migrateSettle(p);
  if( rc==SQLITE_OK ){
    rc = vec0ShadowDropForeign(p);
    if( rc!=SQLITE_OK ) migrateError(m, rc, "%s", sqlite3_errmsg(m->db));
  }
  return rc;
}

int vec0InSavepoint(Vec0Table *p, const char *zName,
                    int (*xBody)(void*, sqlite3_int64*), void *pCtx, sqlite3_int64 *pnRow,
                    char **pzErr){
  char *zSql = sqlite3_mprintf("SAVEPOINT %s", zName);
  int rc = zSql ? sqlite3_exec(p->db, zSql, 0, 0, 0) : SQLITE_NOMEM;
  sqlite3_free(zSql);
  if( rc!=SQLITE_OK ){
    if( rc!=SQLITE_NOMEM ) *pzErr = sqlite3_mprintf("%s", sqlite3_errmsg(p->db));
    return rc;
  }
  rc = xBody(pCtx, pnRow);
  if( rc==SQLITE_OK ){
    /* The outermost savepoint commits here: a failed commit (a lock) undoes it all. */
    zSql = sqlite3_mprintf("RELEASE %s", zName);
    rc = zSql ? sqlite3_exec(p->db, zSql, 0, 0, 0) : SQLITE_NOMEM;
    sqlite3_free(zSql);
    if( rc!=SQLITE_OK && rc!=SQLITE_NOMEM ) *pzErr = sqlite3_mprintf("%s", sqlite3_errmsg(p->db));
  }
  if( rc!=SQLITE_OK ){
    zSql = sqlite3_mprintf("ROLLBACK TO %s; RELEASE %s", zName, zName);
    if( zSql ) sqlite3_exec(p->db, zSql, 0, 0, 0);
    sqlite3_free(zSql);
  }
  /* Either way the storage may have changed under the table's state: read afresh. */
  vec0CacheClear(p);
  vec0StorageForget(p);
  return rc;
}

static int migrateBody(void *pCtx, sqlite3_int64 *pnRow){
  return migrateInPlace((Migrate*)pCtx, pnRow);
}

/* Migrate p in place in a savepoint; a failure rolls it all back (and *pzErr says why). */
static int migrateInSavepoint(Vec0Table *p, sqlite3_int64 *pnRow, char **pzErr){
  Migrate m;
  char *zErr = 0;
  int rc = migrateBegin(&m, p);
  if( rc==SQLITE_OK ) rc = vec0InSavepoint(p, "vecsync_migrate", migrateBody, &m, pnRow, &zErr);
  if( rc!=SQLITE_OK ){
    *pzErr = m.zErr ? m.zErr : zErr ? zErr : sqlite3_mprintf("%s", sqlite3_errstr(rc));
    if( *pzErr==m.zErr ) m.zErr = 0; else if( *pzErr==zErr ) zErr = 0;
  }
  sqlite3_free(zErr);
  migrateEnd(&m);
  return rc;
}

/* ---- the copy a connection reads until the table is migrated ---------------------------- */

static unsigned int migrateSourceVersion(Vec0Table *p){
  unsigned int v = 0;
  sqlite3_file_control(p->db, p->zSchema, SQLITE_FCNTL_DATA_VERSION, &v);
  return v;
}

void vec0CopyClose(Vec0Table *p){
  if( p->dbCopy==0 ) return;
  vec0CacheClear(p);
  vec0StorageForget(p);
  sqlite3_close_v2(p->dbCopy);
  p->dbCopy = 0;
  p->dbStore = p->db;
  p->zStoreSchema = p->zSchema;
}

/* Whether p reads no copy, or one made of the file as it is now. */
static int vec0CopyCurrent(Vec0Table *p){
  return p->dbCopy==0 || migrateSourceVersion(p)==p->iCopySource;
}

/* Migrate p into a new private database zFile ("": a temporary file, ":memory:"), which p
** then reads; on failure p reads its file again and m says why. */
static int migrateCopyInto(Migrate *m, Vec0Table *p, const char *zFile){
  sqlite3_int64 nRow = 0;
  int rc = sqlite3_open_v2(zFile, &p->dbCopy, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, 0);
  if( rc!=SQLITE_OK ) migrateError(m, rc, "cannot open a copy: %s", sqlite3_errstr(rc));
  if( rc==SQLITE_OK ){
    p->dbStore = p->dbCopy;
    p->zStoreSchema = "main";
    p->iCopySource = migrateSourceVersion(p);
    /* Nothing to recover: a copy that fails is thrown away. */
    rc = migrateExec(m, p->dbCopy, "PRAGMA journal_mode = OFF; BEGIN");
  }
  if( rc==SQLITE_OK ){
    rc = vec0ShadowCreate(p);
    if( rc==SQLITE_OK ) rc = vec0CacheAttach(p);
    if( rc!=SQLITE_OK ) migrateError(m, rc, "%s", sqlite3_errmsg(p->dbCopy));
  }
  if( rc==SQLITE_OK ) rc = migrateRows(m, &nRow);
  migrateCloseBlobs(m);
  migrateSettle(p);
  if( rc==SQLITE_OK ) rc = migrateExec(m, p->dbCopy, "COMMIT");
  if( rc!=SQLITE_OK ) vec0CopyClose(p);
  return rc;
}

int vec0MigrateCopy(Vec0Table *p){
  Migrate m;
  int rc = migrateBegin(&m, p);
  /* A temporary file SQLite deletes on close: the copy's pages live in the OS's cache
  ** (the process keeps only the in-memory copy a search needs), 7.0 s for 100,000 x 768
  ** and 313 MB resident where an in-memory database took 7.2 s and 637 MB. Where no
  ** temporary file can be made, in memory. */
  if( rc==SQLITE_OK ) rc = migrateCopyInto(&m, p, "");
  if( (rc&0xff)==SQLITE_CANTOPEN || (rc&0xff)==SQLITE_IOERR || (rc&0xff)==SQLITE_FULL ){
    sqlite3_free(m.zErr);
    m.zErr = 0;
    rc = migrateCopyInto(&m, p, ":memory:");
  }
  if( rc!=SQLITE_OK ){
    vec0SetError(p, "vec0 \"%s\" was written by sqlite-vec and cannot be read: %s",
                 p->zName, m.zErr ? m.zErr : sqlite3_errstr(rc));
    if( rc!=SQLITE_NOMEM ) rc = SQLITE_CORRUPT_VTAB;
  }
  migrateEnd(&m);
  return rc;
}

/* ---- the storage a statement reads ------------------------------------------------------ */

int vec0StorageReady(Vec0Table *p){
  int rc, bForeign = 0;
  if( p->bStorageChecked ){
    /* Checked: by an earlier statement, or again by vec0StorageExplain after a failure
    ** (which may have read another 'uid': the attachment follows it, at no cost when it
    ** is current). */
    if( vec0CopyCurrent(p) ) return vec0CacheAttach(p);
    /* The file changed under the copy of a sqlite-vec table: read it again. */
    vec0CopyClose(p);
  }
  rc = vec0StorageCheck(p, &bForeign);
  if( rc==SQLITE_OK && bForeign ) return vec0MigrateCopy(p);
  if( rc==SQLITE_OK ){
    rc = vec0CacheAttach(p);
    if( rc!=SQLITE_OK ) vec0SetError(p, "vec0 \"%s\": %s", p->zName, sqlite3_errstr(rc));
  }
  return rc;
}

/* ---- vecsync_migrate_sqlite_vec(table) -------------------------------------------------- */

/* The migration in place for vec0RewriteFunc: the copy this connection read is left for the
** file itself. */
static int migrateRewrite(Vec0Table *p, sqlite3_int64 *pnRow, char **pzErr){
  vec0CopyClose(p);
  return migrateInSavepoint(p, pnRow, pzErr);
}

static void migrateFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  (void)argc;
  vec0RewriteFunc(ctx, argv[0], "vecsync_migrate_sqlite_vec", "migrated", migrateRewrite);
}

void vec0RewriteFunc(sqlite3_context *ctx, sqlite3_value *pTable, const char *zFunc,
                     const char *zDone,
                     int (*xRewrite)(Vec0Table*, sqlite3_int64*, char**)){
  Vec0Registry *pReg = (Vec0Registry*)sqlite3_user_data(ctx);
  sqlite3 *db = sqlite3_context_db_handle(ctx);
  const char *zTable = (const char*)sqlite3_value_text(pTable);
  Vec0Table *p = 0;
  sqlite3_stmt *pHold = 0;
  sqlite3_int64 nRow = 0;
  char *zErr = 0, *zSql;
  int rc;
  if( zTable==0 ){
    char *zMsg = sqlite3_mprintf("%s: the table name is NULL", zFunc);
    sqlite3_result_error(ctx, zMsg ? zMsg : "the table name is NULL", -1);
    sqlite3_free(zMsg);
    return;
  }
  /* A statement that scans the table holds its connected instance: a failed rewrite's
  ** rollback makes SQLite read the schema again, which would disconnect (free) it. */
  zSql = sqlite3_mprintf("SELECT rowid FROM \"%w\"", zTable);
  rc = zSql ? sqlite3_prepare_v2(db, zSql, -1, &pHold, 0) : SQLITE_NOMEM;
  sqlite3_free(zSql);
  if( rc!=SQLITE_OK && rc!=SQLITE_NOMEM ){
    zErr = sqlite3_mprintf("no such vec0 table: %s (%s)", zTable, sqlite3_errmsg(db));
  }
  if( rc==SQLITE_OK ) rc = vec0Find(db, pReg, 0, zTable, &p, &zErr);
  if( rc==SQLITE_OK && sqlite3_db_readonly(db, p->zSchema) ){
    zErr = sqlite3_mprintf("the database \"%s\" is read-only", p->zSchema);
    rc = SQLITE_READONLY;
  }
  if( rc==SQLITE_OK ) rc = xRewrite(p, &nRow, &zErr);
  sqlite3_finalize(pHold);              /* p may be gone from here on */
  if( rc==SQLITE_OK ){
    char *zOut = sqlite3_mprintf("%s: %lld rows %s", zTable, nRow, zDone);
    if( zOut ) sqlite3_result_text(ctx, zOut, -1, sqlite3_free);
    else sqlite3_result_error_nomem(ctx);
  }else if( rc==SQLITE_NOMEM ){
    sqlite3_result_error_nomem(ctx);
  }else{
    char *zMsg = sqlite3_mprintf("%s: %s", zFunc, zErr ? zErr : sqlite3_errstr(rc));
    sqlite3_result_error(ctx, zMsg ? zMsg : "the rewrite failed", -1);
    sqlite3_result_error_code(ctx, rc);
    sqlite3_free(zMsg);
  }
  sqlite3_free(zErr);
}

int vsRegisterVec0Migrate(sqlite3 *db, Vec0Registry *pReg, char **pzErr){
  int rc = sqlite3_create_function(db, "vecsync_migrate_sqlite_vec", 1, SQLITE_UTF8, pReg,
                                   migrateFunc, 0, 0);
  if( rc!=SQLITE_OK ) *pzErr = sqlite3_mprintf("vecsync_migrate_sqlite_vec: %s",
                                               sqlite3_errmsg(db));
  return rc;
}
