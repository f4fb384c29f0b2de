/*
** vec0_export.c: a vec0 table written back in sqlite-vec 0.1.9's format, so that code
** using sqlite-vec reads the file again, with the same rows, ids and answers.
**
** Usage:
**
**   select vecsync_export_sqlite_vec('vec_items');   -- 'vec_items: 20000 rows exported'
**   -- from here on, .load vec0 (sqlite-vec) reads vec_items; this extension reads it too
**   -- (from a copy), and select vecsync_migrate_sqlite_vec('vec_items') takes it back
**
** The table's declaration stays as it is; only its shadow tables change, as in
** vec0_migrate.c, whose header describes sqlite-vec's layout. Refused, with the reason,
** for a declaration sqlite-vec 0.1.9 cannot read (distance_metric=dot, indexed by rescore or ivf,
** metadata of a type it lacks, more columns of a kind than it takes) and for a row it
** cannot hold (a NULL metadata value).
**
** How it works. Inside one savepoint: sqlite-vec's tables are created (their statements
** as sqlite-vec 0.1.9 writes them), every row is read through the table itself (SELECT
** rowid, columns ... ORDER BY partition keys, rowid) and laid into chunks of chunk_size
** slots, each partition's rows in chunks of their own, as sqlite-vec lays them; then this
** extension's shadow tables are dropped and sqlite-vec's T_info written (the one name both
** use). Any failure rolls all of it back and the file is as it was. The connection then
** reads the table as any sqlite-vec file: from a copy (vec0_migrate.c).
*/
#include "vecsync_int.h"
SQLITE_EXTENSION_INIT3

#include <stdarg.h>
#include <string.h>

/* sqlite-vec 0.1.9's limits on a table's columns of each kind. */
#define EXPORT_MAX_VECTOR    16
#define EXPORT_MAX_METADATA  16
#define EXPORT_MAX_AUXILIARY 16
#define EXPORT_MAX_PARTITION 4
#define EXPORT_MAX_DIMENSIONS 8192

typedef struct Export Export;
struct Export {
  Vec0Table *p;
  sqlite3 *db;
  int nChunk;                 /* Slots a chunk: the declared chunk_size */
  int aNN[VEC0_MAX_COLUMNS];  /* User column i: its number among its kind (sqlite-vec's NN) */
  int nVec, nMeta, nAux, nPart;
  /* The chunk being filled */
  sqlite3_int64 iChunk;       /* Its chunk_id (1, 2, ...), 0 before the first */
  int nUsed;                  /* Slots taken */
  unsigned char *aValid;      /* nChunk/8 bytes: slot i is live */
  unsigned char *aRowid;      /* nChunk*8 bytes: slot i's rowid, little-endian */
  unsigned char *apBuf[VEC0_MAX_COLUMNS];  /* Vector and metadata column i's chunk blob */
  int anBuf[VEC0_MAX_COLUMNS];
  sqlite3_value *apPart[VEC0_MAX_COLUMNS]; /* The chunk's partition values (column i's) */
  /* Statements writing sqlite-vec's tables */
  sqlite3_stmt *pChunk, *pRowid, *pAux;
  sqlite3_stmt *apBlob[VEC0_MAX_COLUMNS];  /* T_vector_chunksNN / T_metadatachunksNN */
  sqlite3_stmt *apText[VEC0_MAX_COLUMNS];  /* T_metadatatextNN */
  char *zErr;                 /* What went wrong, sqlite3_malloc'ed */
};

static int exportError(Export *x, int rc, const char *zFmt, ...){
  va_list ap;
  if( x->zErr==0 ){
    va_start(ap, zFmt);
    x->zErr = sqlite3_vmprintf(zFmt, ap);
    va_end(ap);
  }
  return rc;
}

/* Run (ppStmt NULL) or prepare into *ppStmt the SQL zFmt makes; a failure is x's error. */
static int exportSqlV(Export *x, sqlite3_stmt **ppStmt, const char *zFmt, va_list ap){
  char *zSql = sqlite3_vmprintf(zFmt, ap);
  int rc;
  if( zSql==0 ) return SQLITE_NOMEM;
  rc = ppStmt ? sqlite3_prepare_v2(x->db, zSql, -1, ppStmt, 0) : sqlite3_exec(x->db, zSql, 0, 0, 0);
  if( rc!=SQLITE_OK ) exportError(x, rc, "%s", sqlite3_errmsg(x->db));
  sqlite3_free(zSql);
  return rc;
}

static int exportExec(Export *x, const char *zFmt, ...){
  va_list ap;
  int rc;
  va_start(ap, zFmt);
  rc = exportSqlV(x, 0, zFmt, ap);
  va_end(ap);
  return rc;
}

static int exportPrepare(Export *x, sqlite3_stmt **ppStmt, const char *zFmt, ...){
  va_list ap;
  int rc;
  va_start(ap, zFmt);
  rc = exportSqlV(x, ppStmt, zFmt, ap);
  va_end(ap);
  return rc;
}

/* Whether sqlite-vec 0.1.9 can read the declaration; numbers the columns of each kind. */
static int exportCheck(Export *x){
  const Vec0Config *pCfg = &x->p->cfg;
  int i;
  if( pCfg->eQuant!=VEC0_QUANT_NONE ){
    return exportError(x, SQLITE_ERROR, "sqlite-vec 0.1.9 has no \"indexed by rescore\"");
  }
  if( pCfg->bIvf ){
    return exportError(x, SQLITE_ERROR, "sqlite-vec 0.1.9 has no \"indexed by ivf\"");
  }
  for(i=0; i<pCfg->nCol; i++){
    const Vec0Column *pCol = &pCfg->aCol[i];
    if( pCol->eKind==VEC0_VECTOR ){
      if( pCol->eMetric==VS_METRIC_DOT ){
        return exportError(x, SQLITE_ERROR, "column \"%s\": sqlite-vec 0.1.9 has no "
                           "distance_metric=dot", pCol->zName);
      }
      if( pCol->nDim>EXPORT_MAX_DIMENSIONS ){
        return exportError(x, SQLITE_ERROR, "column \"%s\": sqlite-vec 0.1.9 takes at most "
                           "%d dimensions", pCol->zName, EXPORT_MAX_DIMENSIONS);
      }
      x->aNN[i] = x->nVec++;
    }else if( pCol->eKind==VEC0_AUX ){
      x->aNN[i] = x->nAux++;
    }else if( pCol->eKind==VEC0_META && pCol->bPartition ){
      x->aNN[i] = x->nPart++;
    }else if( pCol->eKind==VEC0_META ){
      if( pCol->eType!=VEC0_TYPE_BOOLEAN && pCol->eType!=VEC0_TYPE_INTEGER
       && pCol->eType!=VEC0_TYPE_FLOAT && pCol->eType!=VEC0_TYPE_TEXT ){
        return exportError(x, SQLITE_ERROR, "metadata column \"%s\": sqlite-vec 0.1.9 takes "
                           "only boolean, integer, float and text", pCol->zName);
      }
      x->aNN[i] = x->nMeta++;
    }
  }
  if( x->nVec>EXPORT_MAX_VECTOR || x->nMeta>EXPORT_MAX_METADATA
   || x->nAux>EXPORT_MAX_AUXILIARY || x->nPart>EXPORT_MAX_PARTITION ){
    return exportError(x, SQLITE_ERROR, "sqlite-vec 0.1.9 takes at most %d vector, %d "
                       "metadata, %d auxiliary and %d partition key columns",
                       EXPORT_MAX_VECTOR, EXPORT_MAX_METADATA, EXPORT_MAX_AUXILIARY,
                       EXPORT_MAX_PARTITION);
  }
  return SQLITE_OK;
}

/* The bytes column i's chunk blob takes: nChunk values of its layout. */
static int exportBlobBytes(const Export *x, const Vec0Column *pCol){
  if( pCol->eKind==VEC0_VECTOR ) return x->nChunk*pCol->nVecByte;
  switch( pCol->eType ){
    case VEC0_TYPE_BOOLEAN: return x->nChunk/8;
    case VEC0_TYPE_TEXT:    return x->nChunk*16;
  }
  return x->nChunk*8;         /* integer: int64; float: double */
}

/* sqlite-vec's tables for the table, but T_info (ours until the rows are out), and the
** statements that fill them. */
static int exportCreate(Export *x){
  Vec0Table *p = x->p;
  const Vec0Config *pCfg = &p->cfg;
  const char *zS = p->zSchema, *zT = p->zName;
  sqlite3_str *pChunks = sqlite3_str_new(x->db);
  sqlite3_str *pAux = sqlite3_str_new(x->db);
  char *zChunks, *zAux;
  int i, rc = SQLITE_OK;

  /* T_chunks: partition keys put sequence_id and partitionNN before validity. */
  sqlite3_str_appendf(pChunks, "CREATE TABLE \"%w\".\"%w_chunks\"(chunk_id INTEGER PRIMARY KEY "
                      "AUTOINCREMENT,size INTEGER NOT NULL,", zS, zT);
  if( x->nPart>0 ){
    sqlite3_str_appendall(pChunks, "sequence_id integer,");
    for(i=0; i<x->nPart; i++) sqlite3_str_appendf(pChunks, "partition%02d,", i);
    sqlite3_str_appendall(pChunks, "validity BLOB NOT NULL, rowids BLOB NOT NULL)");
  }else{
    sqlite3_str_appendall(pChunks, "validity BLOB NOT NULL,rowids BLOB NOT NULL)");
  }
  zChunks = sqlite3_str_finish(pChunks);
  sqlite3_str_appendf(pAux, "CREATE TABLE \"%w\".\"%w_auxiliary\"( rowid integer PRIMARY KEY ",
                      zS, zT);
  for(i=0; i<x->nAux; i++) sqlite3_str_appendf(pAux, ", value%02d", i);
  sqlite3_str_appendall(pAux, ")");
  zAux = sqlite3_str_finish(pAux);
  if( zChunks==0 || zAux==0 ) rc = SQLITE_NOMEM;

  if( rc==SQLITE_OK ) rc = exportExec(x, "%s", zChunks);
  if( rc==SQLITE_OK ){
    rc = exportExec(x, "CREATE TABLE \"%w\".\"%w_rowids\"(rowid INTEGER PRIMARY KEY "
                    "AUTOINCREMENT,%s,chunk_id INTEGER,chunk_offset INTEGER)", zS, zT,
                    vec0HasTextPk(p) ? "id TEXT UNIQUE NOT NULL" : "id");
  }
  if( rc==SQLITE_OK && x->nAux>0 ) rc = exportExec(x, "%s", zAux);
  for(i=0; rc==SQLITE_OK && i<pCfg->nCol; i++){
    const Vec0Column *pCol = &pCfg->aCol[i];
    if( pCol->eKind==VEC0_VECTOR ){
      rc = exportExec(x, "CREATE TABLE \"%w\".\"%w_vector_chunks%02d\"(rowid PRIMARY KEY,"
                      "vectors BLOB NOT NULL)", zS, zT, x->aNN[i]);
      if( rc==SQLITE_OK ){
        rc = exportPrepare(x, &x->apBlob[i], "INSERT INTO \"%w\".\"%w_vector_chunks%02d\""
                           "(rowid, vectors) VALUES (?1, ?2)", zS, zT, x->aNN[i]);
      }
    }else if( pCol->eKind==VEC0_META && !pCol->bPartition ){
      rc = exportExec(x, "CREATE TABLE \"%w\".\"%w_metadatachunks%02d\"(rowid PRIMARY KEY, "
                      "data BLOB NOT NULL)", zS, zT, x->aNN[i]);
      if( rc==SQLITE_OK ){
        rc = exportPrepare(x, &x->apBlob[i], "INSERT INTO \"%w\".\"%w_metadatachunks%02d\""
                           "(rowid, data) VALUES (?1, ?2)", zS, zT, x->aNN[i]);
      }
      if( rc==SQLITE_OK && pCol->eType==VEC0_TYPE_TEXT ){
        rc = exportExec(x, "CREATE TABLE \"%w\".\"%w_metadatatext%02d\"(rowid PRIMARY KEY, "
                        "data TEXT)", zS, zT, x->aNN[i]);
        if( rc==SQLITE_OK ){
          rc = exportPrepare(x, &x->apText[i], "INSERT INTO \"%w\".\"%w_metadatatext%02d\""
                             "(rowid, data) VALUES (?1, ?2)", zS, zT, x->aNN[i]);
        }
      }
    }
    if( rc==SQLITE_OK && (pCol->eKind==VEC0_VECTOR
                          || (pCol->eKind==VEC0_META && !pCol->bPartition)) ){
      x->anBuf[i] = exportBlobBytes(x, pCol);
      x->apBuf[i] = sqlite3_malloc64((size_t)x->anBuf[i]);
      if( x->apBuf[i]==0 ) rc = SQLITE_NOMEM;
    }
  }
  if( rc==SQLITE_OK ){
    sqlite3_str *pIns = sqlite3_str_new(x->db);
    char *zIns;
    sqlite3_str_appendf(pIns, "INSERT INTO \"%w\".\"%w_chunks\"(chunk_id, size, validity, "
                        "rowids", zS, zT);
    for(i=0; i<x->nPart; i++) sqlite3_str_appendf(pIns, ", partition%02d", i);
    sqlite3_str_appendall(pIns, ") VALUES (?1, ?2, ?3, ?4");
    for(i=0; i<x->nPart; i++) sqlite3_str_appendf(pIns, ", ?%d", 5+i);
    sqlite3_str_appendall(pIns, ")");
    zIns = sqlite3_str_finish(pIns);
    rc = zIns ? exportPrepare(x, &x->pChunk, "%s", zIns) : SQLITE_NOMEM;
    sqlite3_free(zIns);
  }
  if( rc==SQLITE_OK ){
    rc = exportPrepare(x, &x->pRowid, "INSERT INTO \"%w\".\"%w_rowids\"(rowid, id, chunk_id, "
                       "chunk_offset) VALUES (?1, ?2, ?3, ?4)", zS, zT);
  }
  if( rc==SQLITE_OK && x->nAux>0 ){
    sqlite3_str *pIns = sqlite3_str_new(x->db);
    char *zIns;
    sqlite3_str_appendf(pIns, "INSERT INTO \"%w\".\"%w_auxiliary\" VALUES (?1", zS, zT);
    for(i=0; i<x->nAux; i++) sqlite3_str_appendf(pIns, ", ?%d", 2+i);
    sqlite3_str_appendall(pIns, ")");
    zIns = sqlite3_str_finish(pIns);
    rc = zIns ? exportPrepare(x, &x->pAux, "%s", zIns) : SQLITE_NOMEM;
    sqlite3_free(zIns);
  }
  x->aValid = sqlite3_malloc64((size_t)x->nChunk/8);
  x->aRowid = sqlite3_malloc64((size_t)x->nChunk*8);
  if( rc==SQLITE_OK && (x->aValid==0 || x->aRowid==0) ) rc = SQLITE_NOMEM;
  sqlite3_free(zChunks);
  sqlite3_free(zAux);
  return rc;
}

/* Run a prepared insert once, then reset it. */
static int exportStep(Export *x, sqlite3_stmt *pStmt){
  int rc = sqlite3_step(pStmt);
  if( rc==SQLITE_DONE ) rc = SQLITE_OK;
  if( rc!=SQLITE_OK ){
    rc = sqlite3_reset(pStmt);
    if( rc==SQLITE_OK ) rc = SQLITE_ERROR;
    return exportError(x, rc, "%s", sqlite3_errmsg(x->db));
  }
  return sqlite3_reset(pStmt);
}

/* Write the chunk being filled (if any) to T_chunks and the column blobs. */
static int exportFlush(Export *x){
  const Vec0Config *pCfg = &x->p->cfg;
  int i, rc;
  if( x->iChunk==0 ) return SQLITE_OK;
  sqlite3_bind_int64(x->pChunk, 1, x->iChunk);
  sqlite3_bind_int(x->pChunk, 2, x->nChunk);
  sqlite3_bind_blob(x->pChunk, 3, x->aValid, x->nChunk/8, SQLITE_STATIC);
  sqlite3_bind_blob(x->pChunk, 4, x->aRowid, x->nChunk*8, SQLITE_STATIC);
  for(i=0; i<pCfg->nCol; i++){
    if( pCfg->aCol[i].eKind==VEC0_META && pCfg->aCol[i].bPartition ){
      sqlite3_bind_value(x->pChunk, 5+x->aNN[i], x->apPart[i]);
    }
  }
  rc = exportStep(x, x->pChunk);
  for(i=0; rc==SQLITE_OK && i<pCfg->nCol; i++){
    if( x->apBlob[i]==0 ) continue;
    sqlite3_bind_int64(x->apBlob[i], 1, x->iChunk);
    sqlite3_bind_blob(x->apBlob[i], 2, x->apBuf[i], x->anBuf[i], SQLITE_STATIC);
    rc = exportStep(x, x->apBlob[i]);
  }
  return rc;
}

/* Whether two partition values are the same key. */
static int exportSameKey(sqlite3_value *a, sqlite3_value *b){
  int e = sqlite3_value_type(a);
  if( e!=sqlite3_value_type(b) ) return 0;
  switch( e ){
    case SQLITE_NULL:    return 1;
    case SQLITE_INTEGER: return sqlite3_value_int64(a)==sqlite3_value_int64(b);
    case SQLITE_FLOAT:   return sqlite3_value_double(a)==sqlite3_value_double(b);
  }
  return sqlite3_value_bytes(a)==sqlite3_value_bytes(b)
      && memcmp(sqlite3_value_blob(a), sqlite3_value_blob(b),
                (size_t)sqlite3_value_bytes(a))==0;
}

/* Start a new chunk, for the partition values of row pRow (columns 1.. are the user
** columns). */
static int exportStart(Export *x, sqlite3_stmt *pRow){
  const Vec0Config *pCfg = &x->p->cfg;
  int i, rc = exportFlush(x);
  if( rc!=SQLITE_OK ) return rc;
  x->iChunk++;
  x->nUsed = 0;
  memset(x->aValid, 0, (size_t)x->nChunk/8);
  memset(x->aRowid, 0, (size_t)x->nChunk*8);
  for(i=0; i<pCfg->nCol; i++){
    if( x->apBuf[i] ) memset(x->apBuf[i], 0, (size_t)x->anBuf[i]);
    if( pCfg->aCol[i].eKind==VEC0_META && pCfg->aCol[i].bPartition ){
      sqlite3_value_free(x->apPart[i]);
      x->apPart[i] = sqlite3_value_dup(sqlite3_column_value(pRow, 1+i));
      if( x->apPart[i]==0 ) return SQLITE_NOMEM;
    }
  }
  return SQLITE_OK;
}

static void exportPut64(unsigned char *a, sqlite3_uint64 u){
  int i;
  for(i=0; i<8; i++){ a[i] = (unsigned char)(u & 0xff); u >>= 8; }
}

/* Lay metadata column i's value of row iRowid into slot iSlot of its chunk blob. */
static int exportMeta(Export *x, int i, sqlite3_value *pVal, sqlite3_int64 iRowid, int iSlot){
  const Vec0Column *pCol = &x->p->cfg.aCol[i];
  unsigned char *a = x->apBuf[i];
  int e = sqlite3_value_type(pVal), rc = SQLITE_OK;
  if( e==SQLITE_NULL ){
    return exportError(x, SQLITE_ERROR, "row %lld: metadata column \"%s\" is NULL, which "
                       "sqlite-vec 0.1.9 cannot store", iRowid, pCol->zName);
  }
  switch( pCol->eType ){
    case VEC0_TYPE_BOOLEAN:
      if( sqlite3_value_int64(pVal) ) a[iSlot/8] |= (unsigned char)(1 << (iSlot%8));
      break;
    case VEC0_TYPE_INTEGER:
      exportPut64(a + (size_t)iSlot*8, (sqlite3_uint64)sqlite3_value_int64(pVal));
      break;
    case VEC0_TYPE_FLOAT: {
      double r = sqlite3_value_double(pVal);
      sqlite3_uint64 u;
      memcpy(&u, &r, 8);
      exportPut64(a + (size_t)iSlot*8, u);
      break;
    }
    default: {                /* text: int32 length, then its first 12 bytes */
      const unsigned char *z = sqlite3_value_text(pVal);
      int n = sqlite3_value_bytes(pVal);
      unsigned char *pSlot = a + (size_t)iSlot*16;
      if( z==0 ) return SQLITE_NOMEM;
      pSlot[0] = (unsigned char)(n & 0xff);
      pSlot[1] = (unsigned char)((n>>8) & 0xff);
      pSlot[2] = (unsigned char)((n>>16) & 0xff);
      pSlot[3] = (unsigned char)((n>>24) & 0xff);
      memcpy(pSlot+4, z, (size_t)(n<12 ? n : 12));
      if( n>12 ){
        /* The whole text, by the row's rowid. */
        sqlite3_bind_int64(x->apText[i], 1, iRowid);
        sqlite3_bind_text(x->apText[i], 2, (const char*)z, n, SQLITE_TRANSIENT);
        rc = exportStep(x, x->apText[i]);
      }
      break;
    }
  }
  return rc;
}

/* Lay one row of the scan (rowid, then the user columns) into the chunk being filled. */
static int exportRow(Export *x, sqlite3_stmt *pRow){
  const Vec0Config *pCfg = &x->p->cfg;
  sqlite3_int64 iRowid = sqlite3_column_int64(pRow, 0);
  int i, iSlot, iAux = 2, rc = SQLITE_OK;
  int bNew = x->iChunk==0 || x->nUsed==x->nChunk;
  for(i=0; !bNew && i<pCfg->nCol; i++){
    if( pCfg->aCol[i].eKind==VEC0_META && pCfg->aCol[i].bPartition ){
      bNew = !exportSameKey(x->apPart[i], sqlite3_column_value(pRow, 1+i));
    }
  }
  if( bNew ) rc = exportStart(x, pRow);
  if( rc!=SQLITE_OK ) return rc;
  iSlot = x->nUsed++;
  x->aValid[iSlot/8] |= (unsigned char)(1 << (iSlot%8));
  exportPut64(x->aRowid + (size_t)iSlot*8, (sqlite3_uint64)iRowid);
  if( x->pAux ) sqlite3_bind_int64(x->pAux, 1, iRowid);
  for(i=0; rc==SQLITE_OK && i<pCfg->nCol; i++){
    const Vec0Column *pCol = &pCfg->aCol[i];
    sqlite3_value *pVal = sqlite3_column_value(pRow, 1+i);
    if( pCol->eKind==VEC0_VECTOR ){
      if( sqlite3_value_type(pVal)!=SQLITE_BLOB || sqlite3_value_bytes(pVal)!=pCol->nVecByte ){
        rc = exportError(x, SQLITE_CORRUPT_VTAB, "row %lld: column \"%s\" does not read back "
                         "as %d bytes", iRowid, pCol->zName, pCol->nVecByte);
      }else{
        memcpy(x->apBuf[i] + (size_t)iSlot*pCol->nVecByte, sqlite3_value_blob(pVal),
               (size_t)pCol->nVecByte);
      }
    }else if( pCol->eKind==VEC0_AUX ){
      sqlite3_bind_value(x->pAux, iAux + x->aNN[i], pVal);
    }else if( pCol->eKind==VEC0_META && !pCol->bPartition ){
      rc = exportMeta(x, i, pVal, iRowid, iSlot);
    }
  }
  if( rc==SQLITE_OK ){
    sqlite3_bind_int64(x->pRowid, 1, iRowid);
    if( vec0HasTextPk(x->p) ){
      sqlite3_bind_value(x->pRowid, 2, sqlite3_column_value(pRow, 1+pCfg->iPk));
    }else{
      sqlite3_bind_null(x->pRowid, 2);
    }
    sqlite3_bind_int64(x->pRowid, 3, x->iChunk);
    sqlite3_bind_int(x->pRowid, 4, iSlot);
    rc = exportStep(x, x->pRowid);
  }
  if( rc==SQLITE_OK && x->pAux ) rc = exportStep(x, x->pAux);
  return rc;
}

/* Every row of the table, read through it, into sqlite-vec's tables; *pnRow counts them. */
static int exportRows(Export *x, sqlite3_int64 *pnRow){
  Vec0Table *p = x->p;
  const Vec0Config *pCfg = &p->cfg;
  sqlite3_str *pSql = sqlite3_str_new(x->db);
  sqlite3_stmt *pRow = 0;
  char *zSql;
  int i, rc;
  sqlite3_str_appendall(pSql, "SELECT rowid");
  for(i=0; i<pCfg->nCol; i++) sqlite3_str_appendf(pSql, ", \"%w\"", pCfg->aCol[i].zName);
  sqlite3_str_appendf(pSql, " FROM \"%w\".\"%w\" ORDER BY ", p->zSchema, p->zName);
  for(i=0; i<pCfg->nCol; i++){
    if( pCfg->aCol[i].eKind==VEC0_META && pCfg->aCol[i].bPartition ){
      sqlite3_str_appendf(pSql, "\"%w\", ", pCfg->aCol[i].zName);
    }
  }
  sqlite3_str_appendall(pSql, "rowid");
  zSql = sqlite3_str_finish(pSql);
  rc = zSql ? exportPrepare(x, &pRow, "%s", zSql) : SQLITE_NOMEM;
  sqlite3_free(zSql);
  while( rc==SQLITE_OK ){
    int e = sqlite3_step(pRow);
    if( e==SQLITE_DONE ) break;
    if( e!=SQLITE_ROW ){
      rc = sqlite3_reset(pRow);
      if( rc==SQLITE_OK ) rc = SQLITE_ERROR;
      exportError(x, rc, "%s", sqlite3_errmsg(x->db));
      break;
    }
    rc = exportRow(x, pRow);
    if( rc==SQLITE_OK ) (*pnRow)++;
  }
  sqlite3_finalize(pRow);       /* the scan ends before any table is dropped */
  if( rc==SQLITE_OK ) rc = exportFlush(x);
  return rc;
}

static void exportEnd(Export *x){
  int i;
  sqlite3_finalize(x->pChunk);
  sqlite3_finalize(x->pRowid);
  sqlite3_finalize(x->pAux);
  for(i=0; i<VEC0_MAX_COLUMNS; i++){
    sqlite3_finalize(x->apBlob[i]);
    sqlite3_finalize(x->apText[i]);
    sqlite3_free(x->apBuf[i]);
    sqlite3_value_free(x->apPart[i]);
  }
  sqlite3_free(x->aValid);
  sqlite3_free(x->aRowid);
  sqlite3_free(x->zErr);
  memset(x, 0, sizeof(*x));
}

/* The export inside the caller's savepoint. */
static int exportInPlace(Export *x, sqlite3_int64 *pnRow){
  Vec0Table *p = x->p;
  int bOurs = 0, bTheirs = 0;
  int rc = vec0ShadowPresent(p, &bOurs, &bTheirs);
  if( rc!=SQLITE_OK ) return exportError(x, rc, "%s", sqlite3_errmsg(x->db));
  if( bTheirs ){
    return exportError(x, SQLITE_ERROR, "\"%s\" is in sqlite-vec's format already", p->zName);
  }
  if( !bOurs ) return exportError(x, SQLITE_ERROR, "\"%s\" has no storage", p->zName);
  rc = exportCheck(x);
  if( rc==SQLITE_OK ) rc = exportCreate(x);
  if( rc==SQLITE_OK ) rc = exportRows(x, pnRow);
  if( rc==SQLITE_OK ){
    vec0CacheClear(p);
    vec0StorageForget(p);
    rc = vec0ShadowDropOwn(p);
    if( rc!=SQLITE_OK ) exportError(x, rc, "%s", sqlite3_errmsg(x->db));
  }
  if( rc==SQLITE_OK ){
    rc = exportExec(x, "CREATE TABLE \"%w\".\"%w_info\" (key text primary key, value any);"
                    "INSERT INTO \"%w\".\"%w_info\"(key, value) VALUES ('CREATE_VERSION', "
                    "'v%s'), ('CREATE_VERSION_MAJOR', 0), ('CREATE_VERSION_MINOR', 1), "
                    "('CREATE_VERSION_PATCH', 9)", p->zSchema, p->zName, p->zSchema, p->zName,
                    VS_SQLITE_VEC_VERSION);
  }
  return rc;
}

/* ---- vecsync_export_sqlite_vec(table) ---------------------------------------------------- */

static int exportBody(void *pCtx, sqlite3_int64 *pnRow){
  return exportInPlace((Export*)pCtx, pnRow);
}

/* The export for vec0RewriteFunc, in a savepoint of its own. */
static int exportRewrite(Vec0Table *p, sqlite3_int64 *pnRow, char **pzErr){
  Export x;
  char *zErr = 0;
  int rc;
  memset(&x, 0, sizeof(x));
  vec0CopyClose(p);
  x.p = p;
  x.db = p->db;
  x.nChunk = p->cfg.nChunk;
  rc = vec0InSavepoint(p, "vecsync_export", exportBody, &x, pnRow, &zErr);
  if( rc!=SQLITE_OK ){
    *pzErr = x.zErr ? x.zErr : zErr;
    if( *pzErr==x.zErr ) x.zErr = 0; else zErr = 0;
  }
  sqlite3_free(zErr);
  exportEnd(&x);
  return rc;
}

static void exportFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  (void)argc;
  vec0RewriteFunc(ctx, argv[0], "vecsync_export_sqlite_vec", "exported", exportRewrite);
}

int vsRegisterVec0Export(sqlite3 *db, Vec0Registry *pReg, char **pzErr){
  int rc = sqlite3_create_function(db, "vecsync_export_sqlite_vec", 1, SQLITE_UTF8, pReg,
                                   exportFunc, 0, 0);
  if( rc!=SQLITE_OK ) *pzErr = sqlite3_mprintf("vecsync_export_sqlite_vec: %s",
                                               sqlite3_errmsg(db));
  return rc;
}
