/*
** vector_index.c: libSQL's vector index on stock SQLite: libsql_vector_idx() and
** vector_top_k().
**
** Usage (libSQL's SQL, unchanged):
**
**   create table messages(id text primary key, kind int, content text, embedding F32_BLOB(4));
**   create index messages_embedding_idx on messages(libsql_vector_idx(embedding));
**   create index messages_notes_idx on messages(libsql_vector_idx(embedding)) where kind = 0;
**   create table notes(title text primary key, e F32_BLOB(4)) without rowid;
**   create index notes_idx on notes(libsql_vector_idx(e));
**   select id from vector_top_k('notes_idx', vector32('[1,0,0,0]'), 5);    -- id: the title
**   insert into messages values ('m1', 0, 'hello', vector32('[1,0,0,0]'));
**   select m.id, v.distance
**     from vector_top_k('messages_embedding_idx', vector32('[1,0,0,0]'), 5) as v
**     join messages m on m.rowid = v.id;
**   select id from vector_top_k('aux.docs_idx', vector32('[1,0,0,0]'), 5);  -- attached
**   select vecsync_rebuild('messages_embedding_idx');      -- drop nothing, rebuild all
**   drop index messages_notes_idx;       -- its search data goes at the next search
**
** libsql_vector_idx(col, 'metric=cosine' | 'metric=l2', ...) accepts libSQL's options,
** with libSQL's checks and messages; its ANN tuning options (type, max_neighbors, alpha,
** search_l, insert_l, compress_neighbors) are checked and otherwise ignored, because the
** search here is exact. The column must be declared with one of libSQL's vector types,
** FLOAT32(n) / F32_BLOB(n), FLOAT64, FLOAT16, FLOATB16, FLOAT8 or FLOAT1BIT, n > 0 (the
** search data holds them as float32); a WHERE clause makes a partial index, which holds
** only the rows it matches.
**
** How it works. The CREATE INDEX is an ordinary expression index: it names the table,
** the column, the options and the WHERE clause, and SQLite keeps it (it stores no vectors:
** libsql_vector_idx() returns NULL, after checking the options, every vector index's
** declaration and that the vector has a size some vector-indexed column declares; SQLite
** calls it for the rows a partial index matches only). The search data of index I lives
** in tables of I's schema:
**
**   vecsync_idx_I           vec0: each indexed row's vector under the row's rowid
**   vecsync_idx_I_log       rowids whose entry must be recomputed from the table
**   vecsync_idx_I_pending   rows an INSERT/UPDATE OR REPLACE may delete (noted before it)
**   vecsync_idx_I_keys      a WITHOUT ROWID table's keys, each with the id its vector is
**                           stored under in vecsync_idx_I (the log and pending tables then
**                           hold keys, not rowids)
**
** Triggers on the table (vecsync_idx_I_bi, _bu, _ai, _au, _ad) log every written rowid
** and refuse a vector of the wrong size for I (RAISE, while I exists). They use core SQL
** only, so a client without the extension can still write the table once the index is
** dropped (while it exists SQLite itself needs libsql_vector_idx() to write it). A TEMP
** trigger, made by each connection with the extension when it searches, applies each log
** entry to the vec0 table at once; entries logged by other connections are applied by the
** next search that can write, and a connection that cannot write answers exactly from the
** table itself. The search data is built from the table the first time the index is
** searched (or by vecsync_rebuild), and can be rebuilt at any time with nothing lost; the
** search data of an index that was dropped is removed by the next search or rebuild.
**
** vector_top_k(index, query, k) returns the k nearest rows' rowids (column id, and the
** rowid of each result row), nearest first, ties by ascending rowid, and a hidden column
** distance. Of a WITHOUT ROWID table (one key column, as libSQL requires) id is the key,
** and the rowid the key when it is rowid-like (INTEGER affinity, BINARY collation), else
** the hit's position from 0, as libSQL gives them; ties come in the order the rows were
** indexed (a build indexes in key order). On a FLOAT1BIT column the query is taken as its
** signs and distance is the number of differing bits (libSQL's vector_distance_cos of
** 1-bit vectors). It reuses vec0's block scan.
*/
#include "vecsync_int.h"
SQLITE_EXTENSION_INIT3

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The version of the triggers that keep an index's search data current; an index built
** with another version is rebuilt at its next search. 2: REPLACE handled with T_pending.
** 3: core-SQL triggers writing T_log, applied by a TEMP trigger; partial indexes. */
#define VS_INDEX_TRIGGERS 3

/* Column types of libSQL vectors: the numbers are libSQL's (its trailing type bytes). */
#define VS_LIBSQL_F32    1
#define VS_LIBSQL_F64    2
#define VS_LIBSQL_F1BIT  3   /* VS_LIBSQL_F8, _F16 and _FB16 are in vecsync_int.h */

/* What the CREATE INDEX statement of a vector index says. */
typedef struct VsIndexDef VsIndexDef;
struct VsIndexDef {
  char *zSchema;        /* Schema of the index and its table: "main" or an attached name */
  char *zIndex;         /* Index name */
  char *zTable;         /* Indexed table */
  char *zColumn;        /* Indexed column */
  char *zWhere;         /* A partial index's WHERE condition, or NULL */
  int eColType;         /* VS_LIBSQL_* of the column's declared type */
  int nDim;             /* From the column's declared type, F32_BLOB(n) */
  int eMetric;          /* VS_METRIC_COSINE (libSQL's default) or VS_METRIC_L2 */
  char *zKey;           /* A WITHOUT ROWID table's primary key column, or NULL (rowid) */
  char *zKeyColl;       /* That key's collation ("BINARY", "NOCASE", ...) */
  int bKeyRowidLike;    /* That key has INTEGER affinity and BINARY collation */
  char *zK;             /* SQL naming the row's key in the table: rowid or "key" */
  char *zNewK;          /* The same in a trigger: new.rowid or new."key" */
  char *zOldK;          /* old.rowid or old."key" */
};

static void vsIndexDefClear(VsIndexDef *p){
  if( p==0 ) return;
  sqlite3_free(p->zSchema);
  sqlite3_free(p->zIndex);
  sqlite3_free(p->zTable);
  sqlite3_free(p->zColumn);
  sqlite3_free(p->zWhere);
  sqlite3_free(p->zKey);
  sqlite3_free(p->zKeyColl);
  sqlite3_free(p->zK);
  sqlite3_free(p->zNewK);
  sqlite3_free(p->zOldK);
  memset(p, 0, sizeof(*p));
}

/* ---- libsql_vector_idx()'s options and the column type ---------------------------------- */

/*
** Check one 'key=value' option of libsql_vector_idx(), as libSQL does (with its messages);
** set *peMetric for metric= and *pbOneBit for compress_neighbors=float1bit.
*/
static int vsIndexOption(const char *zOpt, int *peMetric, int *pbOneBit, char **pzErr){
  static const struct {
    const char *zKey;       /* Option name */
    int eKind;              /* 0: one of azValue, 1: positive integer, 2: real number */
    const char *azValue[6]; /* Accepted values of kind 0 */
  } aOpt[] = {
    { "type",               0, { "diskann" } },
    { "metric",             0, { "cosine", "l2" } },
    { "compress_neighbors", 0, { "float1bit", "float8", "float16", "floatb16", "float32" } },
    { "alpha",              2, { 0 } },
    { "search_l",           1, { 0 } },
    { "insert_l",           1, { 0 } },
    { "max_neighbors",      1, { 0 } },
  };
  const char *zEq = strchr(zOpt, '=');
  const char *zVal, *zWhy = "invalid parameter";
  size_t nKey, i, j;
  if( zEq==0 ){
    zWhy = "unexpected parameter format";
    goto refused;
  }
  nKey = (size_t)(zEq - zOpt);
  zVal = zEq+1;
  for(i=0; i<sizeof(aOpt)/sizeof(aOpt[0]); i++){
    if( strlen(aOpt[i].zKey)!=nKey || sqlite3_strnicmp(zOpt, aOpt[i].zKey, (int)nKey)!=0 ){
      continue;
    }
    if( aOpt[i].eKind==1 ){
      int v = atoi(zVal);
      if( v==0 ){ zWhy = "invalid representation of integer vector index parameter"; goto refused; }
      if( v<0 ){ zWhy = "integer vector index parameter must be positive"; goto refused; }
      return SQLITE_OK;
    }
    if( aOpt[i].eKind==2 ){
      char *zEnd = 0;
      (void)strtod(zVal, &zEnd);
      if( zEnd==zVal ){
        zWhy = "invalid representation of floating point vector index parameter";
        goto refused;
      }
      return SQLITE_OK;
    }
    for(j=0; j<6 && aOpt[i].azValue[j]; j++){
      /* libSQL compares the value with each name over the value's length: "cos" is cosine. */
      if( zVal[0] && sqlite3_strnicmp(aOpt[i].azValue[j], zVal, (int)strlen(zVal))==0
       && strlen(zVal)<=strlen(aOpt[i].azValue[j]) ){
        if( i==1 ) *peMetric = j==0 ? VS_METRIC_COSINE : VS_METRIC_L2;
        if( i==2 ) *pbOneBit = j==0;
        return SQLITE_OK;
      }
    }
  }
refused:
  *pzErr = sqlite3_mprintf("vector index: invalid vector index parameter '%s': %s", zOpt, zWhy);
  return SQLITE_ERROR;
}

/*
** Read a declared column type as libSQL does: FLOAT32(n) or F32_BLOB(n) and the other
** vector types, n > 0. On error *pzWhy is libSQL's reason (static text).
*/
static int vsColumnType(const char *zType, int *peType, int *pnDim, const char **pzWhy){
  static const struct { const char *zName; int eType; } aType[] = {
    { "FLOAT32", VS_LIBSQL_F32 },     { "F32_BLOB", VS_LIBSQL_F32 },
    { "FLOAT64", VS_LIBSQL_F64 },     { "F64_BLOB", VS_LIBSQL_F64 },
    { "FLOAT1BIT", VS_LIBSQL_F1BIT }, { "F1BIT_BLOB", VS_LIBSQL_F1BIT },
    { "FLOAT8", VS_LIBSQL_F8 },       { "F8_BLOB", VS_LIBSQL_F8 },
    { "FLOAT16", VS_LIBSQL_F16 },     { "F16_BLOB", VS_LIBSQL_F16 },
    { "FLOATB16", VS_LIBSQL_FB16 },   { "FB16_BLOB", VS_LIBSQL_FB16 },
  };
  size_t i;
  const char *z = zType ? zType : "";
  while( isspace((unsigned char)*z) ) z++;
  for(i=0; i<sizeof(aType)/sizeof(aType[0]); i++){
    size_t n = strlen(aType[i].zName);
    int nDim = 0;
    const char *p = z + n;
    if( sqlite3_strnicmp(z, aType[i].zName, (int)n)!=0 ) continue;
    while( isspace((unsigned char)*p) ) p++;
    if( *p!='(' ) break;
    p++;
    while( isspace((unsigned char)*p) ) p++;
    while( *p && *p!=')' && !isspace((unsigned char)*p) ){
      if( !isdigit((unsigned char)*p) ){ *pzWhy = "non digit symbol in vector column parameter"; return SQLITE_ERROR; }
      nDim = nDim*10 + (*p - '0');
      if( nDim>VS_MAX_DIMS ){ *pzWhy = "max vector dimension exceeded"; return SQLITE_ERROR; }
      p++;
    }
    while( isspace((unsigned char)*p) ) p++;
    if( *p!=')' ){ *pzWhy = "missed closing brace for vector column type"; return SQLITE_ERROR; }
    p++;
    while( isspace((unsigned char)*p) ) p++;
    if( *p ){ *pzWhy = "extra data after dimension parameter for vector column type"; return SQLITE_ERROR; }
    if( nDim<=0 ){ *pzWhy = "vector column must have non-zero dimension for index"; return SQLITE_ERROR; }
    *peType = aType[i].eType;
    *pnDim = nDim;
    return SQLITE_OK;
  }
  *pzWhy = "unexpected vector column type";
  return SQLITE_ERROR;
}

/* ---- reading a CREATE INDEX statement --------------------------------------------------- */

/* Skip blanks and SQL comments from z[i]. */
static int vsSkipBlanks(const char *z, int i){
  for(;;){
    while( z[i] && isspace((unsigned char)z[i]) ) i++;
    if( z[i]=='-' && z[i+1]=='-' ){
      while( z[i] && z[i]!='\n' ) i++;
    }else if( z[i]=='/' && z[i+1]=='*' ){
      i += 2;
      while( z[i] && !(z[i]=='*' && z[i+1]=='/') ) i++;
      if( z[i] ) i += 2;
    }else{
      return i;
    }
  }
}

/* The index of the character after the quoted token or parenthesised group at z[i]
** (z[i] is a quote or '('), or the end of z. */
static int vsSkipGroup(const char *z, int i){
  char c = z[i];
  if( c=='(' ){
    int nDepth = 0;
    while( z[i] ){
      if( z[i]=='\'' || z[i]=='"' || z[i]=='`' || z[i]=='[' ){ i = vsSkipGroup(z, i); continue; }
      if( z[i]=='(' ) nDepth++;
      if( z[i]==')' && --nDepth==0 ) return i+1;
      i++;
    }
    return i;
  }else{
    char cClose = c=='[' ? ']' : c;
    i++;
    while( z[i] ){
      if( z[i]==cClose ){
        if( cClose!=']' && z[i+1]==cClose ){ i += 2; continue; }
        return i+1;
      }
      i++;
    }
    return i;
  }
}

/* Read an identifier or quoted name at z[*pi]; a copy, unquoted. *pbString: it was a
** string literal ('...'). NULL (nothing read) when z[*pi] starts neither. */
static char *vsReadToken(const char *z, int *pi, int *pbString){
  int i = vsSkipBlanks(z, *pi);
  *pbString = z[i]=='\'';
  if( z[i]=='\'' || z[i]=='"' || z[i]=='`' || z[i]=='[' ){
    char cClose = z[i]=='[' ? ']' : z[i];
    sqlite3_str *pStr = sqlite3_str_new(0);
    char *zOut;
    i++;
    while( z[i] ){
      if( z[i]==cClose ){
        if( cClose!=']' && z[i+1]==cClose ){ sqlite3_str_appendchar(pStr, 1, cClose); i += 2; continue; }
        i++;
        break;
      }
      sqlite3_str_appendchar(pStr, 1, z[i++]);
    }
    *pi = i;
    zOut = sqlite3_str_finish(pStr);
    return zOut ? zOut : sqlite3_mprintf("");
  }else{
    int j = i;
    while( z[j] && (isalnum((unsigned char)z[j]) || z[j]=='_' || (unsigned char)z[j]>=0x80) ) j++;
    if( j==i ) return 0;
    *pi = j;
    return sqlite3_mprintf("%.*s", j-i, &z[i]);
  }
}

/*
** Read the libsql_vector_idx(...) part of CREATE INDEX text z: the column, the options
** (checked: *peMetric, *pbOneBit) and the WHERE condition of a partial index. Errors are
** libSQL's.
*/
static int vsIndexParseSql(const char *z, VsIndexDef *pDef, int *pbOneBit, char **pzErr){
  static const char zKey[] = "libsql_vector_idx";
  int i, iOpen = -1, iCall = -1, bString = 0;
  /* The '(' of the indexed expressions: the first '(' outside quotes, after ON. */
  for(i=0; z[i]; ){
    if( z[i]=='\'' || z[i]=='"' || z[i]=='`' || z[i]=='[' ){ i = vsSkipGroup(z, i); continue; }
    if( z[i]=='(' ){ iOpen = i; break; }
    i++;
  }
  if( iOpen>=0 ){
    i = vsSkipBlanks(z, iOpen+1);
    if( sqlite3_strnicmp(&z[i], zKey, (int)sizeof(zKey)-1)==0 ) iCall = i;
  }
  if( iCall<0 ){
    *pzErr = sqlite3_mprintf("vector index: must contain exactly one column wrapped into "
                             "the libsql_vector_idx function");
    return SQLITE_ERROR;
  }
  i = vsSkipBlanks(z, iCall + (int)sizeof(zKey)-1);
  if( z[i]!='(' ){
    *pzErr = sqlite3_mprintf("vector index: libsql_vector_idx must contain at least one argument");
    return SQLITE_ERROR;
  }
  i++;
  pDef->zColumn = vsReadToken(z, &i, &bString);
  i = vsSkipBlanks(z, i);
  if( pDef->zColumn==0 || bString || (z[i]!=',' && z[i]!=')') ){
    *pzErr = sqlite3_mprintf("vector index: libsql_vector_idx first argument must be a column token");
    return SQLITE_ERROR;
  }
  pDef->eMetric = VS_METRIC_COSINE;
  while( z[i]==',' ){
    char *zOpt;
    int rc;
    i++;
    zOpt = vsReadToken(z, &i, &bString);
    if( zOpt==0 || !bString ){
      sqlite3_free(zOpt);
      *pzErr = sqlite3_mprintf("vector index: all arguments after first must be strings");
      return SQLITE_ERROR;
    }
    rc = vsIndexOption(zOpt, &pDef->eMetric, pbOneBit, pzErr);
    sqlite3_free(zOpt);
    if( rc!=SQLITE_OK ) return rc;
    i = vsSkipBlanks(z, i);
  }
  if( z[i]!=')' ){
    *pzErr = sqlite3_mprintf("vector index: all arguments after first must be strings");
    return SQLITE_ERROR;
  }
  i = vsSkipBlanks(z, i+1);
  if( sqlite3_strnicmp(&z[i], "collate", 7)==0 && !isalnum((unsigned char)z[i+7]) ){
    *pzErr = sqlite3_mprintf("vector index: collation in expression is forbidden");
    return SQLITE_ERROR;
  }
  if( z[i]!=')' ){
    *pzErr = sqlite3_mprintf("vector index: must contain exactly one column wrapped into "
                             "the libsql_vector_idx function");
    return SQLITE_ERROR;
  }
  i = vsSkipBlanks(z, i+1);
  if( sqlite3_strnicmp(&z[i], "where", 5)==0 && !isalnum((unsigned char)z[i+5]) && z[i+5]!='_' ){
    int n;
    i = vsSkipBlanks(z, i+5);
    n = (int)strlen(&z[i]);
    while( n>0 && (isspace((unsigned char)z[i+n-1]) || z[i+n-1]==';') ) n--;
    pDef->zWhere = sqlite3_mprintf("%.*s", n, &z[i]);
    if( pDef->zWhere==0 ) return SQLITE_NOMEM;
  }
  return SQLITE_OK;
}

/* Split "schema.index" (an attached database's index) into its parts. */
static int vsIndexName(const char *zName, char **pzSchema, char **pzIndex){
  const char *zDot = strchr(zName, '.');
  *pzSchema = zDot ? sqlite3_mprintf("%.*s", (int)(zDot-zName), zName) : 0;
  *pzIndex = sqlite3_mprintf("%s", zDot ? zDot+1 : zName);
  return (*pzIndex==0 || (zDot && *pzSchema==0)) ? SQLITE_NOMEM : SQLITE_OK;
}

/*
** Look up index zIndex ("name" or "schema.name"; a bare name is searched in main, then in
** the attached databases) and read and check its definition: the options, the column's
** declared type, a table with a rowid. Both names match in any letter case, as SQL names
** do; pDef keeps them as the schema spells them (the names its store's tables and
** triggers are made from). Errors are libSQL's where libSQL has one.
*/
static int vsIndexLookup(sqlite3 *db, const char *zName, VsIndexDef *pDef, char **pzErr){
  sqlite3_stmt *pStmt = 0;
  char *zSql = 0, *zSchema = 0, *zIndex = 0;
  const char *zWhy = 0;
  int rc, bOneBit = 0;

  memset(pDef, 0, sizeof(*pDef));
  rc = vsIndexName(zName, &zSchema, &zIndex);
  if( rc!=SQLITE_OK ) goto cleanup;
  /* The schema that holds it: the one named, else main first, then the others. */
  rc = sqlite3_prepare_v2(db,
      "SELECT name FROM pragma_database_list"
      " WHERE (?1 IS NULL AND name<>'temp') OR name=?1 COLLATE NOCASE"
      " ORDER BY name<>'main', seq", -1, &pStmt, 0);
  if( rc!=SQLITE_OK ) goto cleanup;
  sqlite3_bind_text(pStmt, 1, zSchema, -1, SQLITE_STATIC);
  while( sqlite3_step(pStmt)==SQLITE_ROW && pDef->zTable==0 ){
    const char *zDb = (const char*)sqlite3_column_text(pStmt, 0);
    sqlite3_stmt *pFind = 0;
    zSql = sqlite3_mprintf(
        "SELECT tbl_name, sql, name FROM \"%w\".sqlite_schema"
        " WHERE type='index' AND name=?1 COLLATE NOCASE", zDb);
    if( zSql==0 ){ rc = SQLITE_NOMEM; break; }
    rc = sqlite3_prepare_v2(db, zSql, -1, &pFind, 0);
    sqlite3_free(zSql);
    zSql = 0;
    if( rc!=SQLITE_OK ) break;
    sqlite3_bind_text(pFind, 1, zIndex, -1, SQLITE_STATIC);
    if( sqlite3_step(pFind)==SQLITE_ROW ){
      const char *zText = (const char*)sqlite3_column_text(pFind, 1);
      pDef->zSchema = sqlite3_mprintf("%s", zDb);
      pDef->zTable = sqlite3_mprintf("%s", (const char*)sqlite3_column_text(pFind, 0));
      pDef->zIndex = sqlite3_mprintf("%s", (const char*)sqlite3_column_text(pFind, 2));
      if( pDef->zSchema==0 || pDef->zTable==0 || pDef->zIndex==0 ){
        sqlite3_finalize(pFind);
        rc = SQLITE_NOMEM;
        break;
      }
      if( zText==0 || sqlite3_strlike("%libsql_vector_idx%", zText, 0)!=0 ){
        *pzErr = sqlite3_mprintf("%s is not a vector index: create it as "
                                 "CREATE INDEX ... ON t(libsql_vector_idx(column))", zName);
        rc = SQLITE_ERROR;
      }else{
        rc = vsIndexParseSql(zText, pDef, &bOneBit, pzErr);
      }
    }
    sqlite3_finalize(pFind);
    if( rc!=SQLITE_OK ) break;
  }
  sqlite3_finalize(pStmt);
  pStmt = 0;
  if( rc!=SQLITE_OK ) goto cleanup;
  if( pDef->zTable==0 ){
    *pzErr = sqlite3_mprintf("no such index: %s", zName);
    rc = SQLITE_ERROR;
    goto cleanup;
  }
  if( bOneBit && pDef->eMetric==VS_METRIC_L2 ){
    *pzErr = sqlite3_mprintf("vector index: unable to initialize diskann: "
                             "1-bit compression available only for cosine metric");
    rc = SQLITE_ERROR;
    goto cleanup;
  }

  /* The column's declared type gives the element type and the dimensions. */
  zSql = sqlite3_mprintf("SELECT type FROM pragma_table_info(%Q, %Q) WHERE name=%Q COLLATE NOCASE",
                         pDef->zTable, pDef->zSchema, pDef->zColumn);
  if( zSql==0 ){ rc = SQLITE_NOMEM; goto cleanup; }
  rc = sqlite3_prepare_v2(db, zSql, -1, &pStmt, 0);
  if( rc!=SQLITE_OK ) goto cleanup;
  if( sqlite3_step(pStmt)==SQLITE_ROW ){
    const char *zType = (const char*)sqlite3_column_text(pStmt, 0);
    if( vsColumnType(zType, &pDef->eColType, &pDef->nDim, &zWhy)!=SQLITE_OK ){
      *pzErr = sqlite3_mprintf("vector index: %s: %s", zWhy, zType ? zType : "");
      rc = SQLITE_ERROR;
    }
  }else{
    *pzErr = sqlite3_mprintf("vector index %s: no column %s in table %s",
                             pDef->zIndex, pDef->zColumn, pDef->zTable);
    rc = SQLITE_ERROR;
  }
  sqlite3_finalize(pStmt);
  pStmt = 0;
  sqlite3_free(zSql);
  zSql = 0;
  if( rc!=SQLITE_OK ) goto cleanup;

  /* A WITHOUT ROWID table's rows are named by their primary key, which must be one
  ** column, as libSQL requires: its name, collation and whether it is rowid-like
  ** (INTEGER affinity, BINARY collation: libSQL then gives it as vector_top_k's rowid). */
  zSql = sqlite3_mprintf(
      "SELECT x.name, x.coll, (SELECT count(*) FROM pragma_index_xinfo(l.name, %Q) WHERE key),"
      "  (SELECT upper(type) LIKE '%%INT%%' FROM pragma_table_info(%Q, %Q) WHERE name=x.name)"
      " FROM pragma_index_list(%Q, %Q) AS l, pragma_index_xinfo(l.name, %Q) AS x"
      " WHERE l.origin='pk' AND x.key AND x.seqno=0"
      " AND NOT EXISTS (SELECT 1 FROM pragma_index_xinfo(l.name, %Q) WHERE cid=-1)",
      pDef->zSchema, pDef->zTable, pDef->zSchema, pDef->zTable, pDef->zSchema,
      pDef->zSchema, pDef->zSchema);
  if( zSql==0 ){ rc = SQLITE_NOMEM; goto cleanup; }
  rc = sqlite3_prepare_v2(db, zSql, -1, &pStmt, 0);
  if( rc!=SQLITE_OK ) goto cleanup;
  if( sqlite3_step(pStmt)==SQLITE_ROW ){
    const char *zColl = (const char*)sqlite3_column_text(pStmt, 1);
    if( sqlite3_column_int(pStmt, 2)!=1 ){
      *pzErr = sqlite3_mprintf(
          "vector index: unsupported for tables without ROWID and composite primary key");
      rc = SQLITE_ERROR;
      goto cleanup;
    }
    pDef->zKey = sqlite3_mprintf("%s", (const char*)sqlite3_column_text(pStmt, 0));
    pDef->zKeyColl = sqlite3_mprintf("%s", zColl ? zColl : "BINARY");
    pDef->bKeyRowidLike = sqlite3_column_int(pStmt, 3)
                       && sqlite3_stricmp(pDef->zKeyColl ? pDef->zKeyColl : "", "BINARY")==0;
    if( pDef->zKey==0 || pDef->zKeyColl==0 ){ rc = SQLITE_NOMEM; goto cleanup; }
  }
  sqlite3_finalize(pStmt);
  pStmt = 0;
  if( pDef->zKey ){
    pDef->zK = sqlite3_mprintf("\"%w\"", pDef->zKey);
    pDef->zNewK = sqlite3_mprintf("new.\"%w\"", pDef->zKey);
    pDef->zOldK = sqlite3_mprintf("old.\"%w\"", pDef->zKey);
  }else{
    pDef->zK = sqlite3_mprintf("rowid");
    pDef->zNewK = sqlite3_mprintf("new.rowid");
    pDef->zOldK = sqlite3_mprintf("old.rowid");
  }
  if( pDef->zK==0 || pDef->zNewK==0 || pDef->zOldK==0 ) rc = SQLITE_NOMEM;

cleanup:
  sqlite3_finalize(pStmt);
  sqlite3_free(zSql);
  sqlite3_free(zSchema);
  sqlite3_free(zIndex);
  if( rc!=SQLITE_OK ) vsIndexDefClear(pDef);
  return rc;
}

/* ---- libsql_vector_idx() ---------------------------------------------------------------- */

/* The vector indexes of a connection, read again whenever the schema changes (and while a
** CREATE INDEX runs, before it changes the schema cookie). libsql_vector_idx() is not told
** which index it computes, so a vector is refused when its size matches no vector-indexed
** column, and every call fails while some vector index's declaration is invalid. Each
** index's own size is enforced by its triggers. */
typedef struct VsIndexDims VsIndexDims;
struct VsIndexDims {
  int iSchemaVersion;   /* Sum of the schemas' schema_version at the last read, -1: never */
  int nDims;            /* Entries in aDims */
  int aDims[32];        /* Distinct dimensions of vector-indexed columns */
  char *zError;         /* The first invalid vector index's error, or NULL */
};

/* Whether a CREATE statement is running on db (its CREATE INDEX fills the index, calling
** libsql_vector_idx, before it changes the schema cookie). */
static int vsCreateRunning(sqlite3 *db){
  sqlite3_stmt *p;
  for(p=sqlite3_next_stmt(db, 0); p; p=sqlite3_next_stmt(db, p)){
    const char *z = sqlite3_sql(p);
    if( z && sqlite3_stmt_busy(p) ){
      int i = vsSkipBlanks(z, 0);
      if( sqlite3_strnicmp(&z[i], "create", 6)==0 ) return 1;
    }
  }
  return 0;
}

static int vsIndexDimsRefresh(sqlite3 *db, VsIndexDims *p, int bForce){
  sqlite3_stmt *pStmt = 0, *pList = 0;
  int rc, iVersion = 0;
  rc = sqlite3_prepare_v2(db, "SELECT name FROM pragma_database_list WHERE name<>'temp'",
                          -1, &pList, 0);
  while( rc==SQLITE_OK && sqlite3_step(pList)==SQLITE_ROW ){
    char *zSql = sqlite3_mprintf("PRAGMA \"%w\".schema_version",
                                 (const char*)sqlite3_column_text(pList, 0));
    if( zSql==0 ){ rc = SQLITE_NOMEM; break; }
    rc = sqlite3_prepare_v2(db, zSql, -1, &pStmt, 0);
    sqlite3_free(zSql);
    if( rc==SQLITE_OK && sqlite3_step(pStmt)==SQLITE_ROW ) iVersion += sqlite3_column_int(pStmt, 0);
    if( rc==SQLITE_OK ) rc = sqlite3_finalize(pStmt);
    pStmt = 0;
  }
  sqlite3_finalize(pList);
  if( rc!=SQLITE_OK ) return rc;
  if( iVersion==p->iSchemaVersion && !bForce ) return SQLITE_OK;
  p->nDims = 0;
  sqlite3_free(p->zError);
  p->zError = 0;
  {
    /* Every schema's vector indexes, named schema.index. */
    sqlite3_stmt *pDb = 0;
    rc = sqlite3_prepare_v2(db, "SELECT name FROM pragma_database_list WHERE name<>'temp'",
                            -1, &pDb, 0);
    while( rc==SQLITE_OK && sqlite3_step(pDb)==SQLITE_ROW ){
      char *zSql = sqlite3_mprintf(
          "SELECT %Q || '.' || name FROM \"%w\".sqlite_schema WHERE type='index'"
          " AND sql LIKE '%%libsql_vector_idx%%'",
          (const char*)sqlite3_column_text(pDb, 0), (const char*)sqlite3_column_text(pDb, 0));
      if( zSql==0 ){ rc = SQLITE_NOMEM; break; }
      rc = sqlite3_prepare_v2(db, zSql, -1, &pStmt, 0);
      sqlite3_free(zSql);
      while( rc==SQLITE_OK && sqlite3_step(pStmt)==SQLITE_ROW ){
        VsIndexDef def;
        char *zErr = 0;
        if( vsIndexLookup(db, (const char*)sqlite3_column_text(pStmt, 0), &def, &zErr)==SQLITE_OK ){
          int i;
          for(i=0; i<p->nDims && p->aDims[i]!=def.nDim; i++){}
          if( i==p->nDims && p->nDims<(int)(sizeof(p->aDims)/sizeof(p->aDims[0])) ){
            p->aDims[p->nDims++] = def.nDim;
          }
          vsIndexDefClear(&def);
        }else if( p->zError==0 ){
          p->zError = zErr;
          zErr = 0;
        }
        sqlite3_free(zErr);
      }
      sqlite3_finalize(pStmt);
      pStmt = 0;
    }
    sqlite3_finalize(pDb);
  }
  if( rc==SQLITE_OK ) p->iSchemaVersion = iVersion;
  return rc;
}

/* libsql_vector_idx(col, options...): checks the options, every vector index's
** declaration, and that the vector has the size of some vector-indexed column; indexes
** nothing itself (returns NULL), so SQLite's index stays small. */
static void vsVectorIdxFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  VsIndexDims *pDims = (VsIndexDims*)sqlite3_user_data(ctx);
  VsVector v;
  char *zErr = 0;
  int i, rc = SQLITE_OK, eMetric = VS_METRIC_COSINE, bOneBit = 0;
  memset(&v, 0, sizeof(v));
  for(i=1; i<argc && rc==SQLITE_OK; i++){
    const char *zOpt = (const char*)sqlite3_value_text(argv[i]);
    if( sqlite3_value_type(argv[i])!=SQLITE_TEXT || zOpt==0 ){
      zErr = sqlite3_mprintf("vector index: all arguments after first must be strings");
      rc = SQLITE_ERROR;
    }else{
      rc = vsIndexOption(zOpt, &eMetric, &bOneBit, &zErr);
    }
  }
  if( rc==SQLITE_OK && argc>0 && sqlite3_value_type(argv[0])!=SQLITE_NULL ){
    rc = vsVectorFromValue(argv[0], 0, &v, &zErr);
  }
  if( rc==SQLITE_OK ){
    /* Read the schema again only when it may matter: the first call, while a CREATE runs,
    ** while an index is known to be invalid, or for a size no known index has (reading
    ** the schema cookies costs more than the rest of the call). */
    sqlite3 *db = sqlite3_context_db_handle(ctx);
    int bCreate = vsCreateRunning(db), bKnown = v.aData==0;
    for(i=0; !bKnown && i<pDims->nDims; i++) bKnown = pDims->aDims[i]==v.nDim;
    if( bCreate || pDims->iSchemaVersion<0 || pDims->zError || !bKnown ){
      rc = vsIndexDimsRefresh(db, pDims, bCreate);
    }
  }
  if( rc==SQLITE_OK && pDims->zError ){
    zErr = sqlite3_mprintf("%s", pDims->zError);
    rc = SQLITE_ERROR;
  }
  if( rc==SQLITE_OK && v.aData ){
    for(i=0; i<pDims->nDims && pDims->aDims[i]!=v.nDim; i++){}
    if( pDims->nDims>0 && i==pDims->nDims ){
      zErr = sqlite3_mprintf(
          "the vector has %d dimensions, the indexed column has %d%s",
          v.nDim, pDims->aDims[0], pDims->nDims>1 ? " (or another vector index's size)" : "");
      rc = SQLITE_ERROR;
    }
  }
  if( rc==SQLITE_NOMEM ){
    sqlite3_result_error_nomem(ctx);
  }else if( rc!=SQLITE_OK ){
    char *zMsg = zErr && strncmp(zErr, "vector index", 12)==0 ? sqlite3_mprintf("%s", zErr)
        : sqlite3_mprintf("libsql_vector_idx: %s",
                          zErr ? zErr : sqlite3_errmsg(sqlite3_context_db_handle(ctx)));
    sqlite3_result_error(ctx, zMsg ? zMsg : "libsql_vector_idx: error", -1);
    if( zErr==0 ) sqlite3_result_error_code(ctx, rc);
    sqlite3_free(zMsg);
  }else{
    sqlite3_result_null(ctx);
  }
  sqlite3_free(zErr);
  vsVectorFree(&v);
}

static void vsIndexDimsFree(void *p){
  if( p ) sqlite3_free(((VsIndexDims*)p)->zError);
  sqlite3_free(p);
}

/* ---- the search data: building, keeping, removing -------------------------------------- */

/* The WHERE clause matching rows that conflict with NEW on a UNIQUE index: rows an
** INSERT OR REPLACE would delete without firing DELETE triggers. */
static int vsUniqueConflicts(sqlite3 *db, const VsIndexDef *pDef, char **pzWhere){
  sqlite3_str *pStr = sqlite3_str_new(db);
  sqlite3_stmt *pList = 0;
  char *zSql = sqlite3_mprintf(
      "SELECT name FROM pragma_index_list(%Q, %Q) WHERE \"unique\" AND partial=0",
      pDef->zTable, pDef->zSchema);
  int rc;
  if( zSql==0 ){ sqlite3_free(sqlite3_str_finish(pStr)); return SQLITE_NOMEM; }
  rc = sqlite3_prepare_v2(db, zSql, -1, &pList, 0);
  sqlite3_free(zSql);
  sqlite3_str_appendf(pStr, "%s=%s", pDef->zK, pDef->zNewK);
  while( rc==SQLITE_OK && sqlite3_step(pList)==SQLITE_ROW ){
    const char *zIdx = (const char*)sqlite3_column_text(pList, 0);
    sqlite3_stmt *pCols = 0;
    int nCol = 0, bExpr = 0;
    sqlite3_str *pTerm = sqlite3_str_new(db);
    char *zTerm;
    zSql = sqlite3_mprintf("SELECT name FROM pragma_index_info(%Q, %Q)", zIdx, pDef->zSchema);
    if( zSql==0 ){ sqlite3_free(sqlite3_str_finish(pTerm)); rc = SQLITE_NOMEM; break; }
    rc = sqlite3_prepare_v2(db, zSql, -1, &pCols, 0);
    sqlite3_free(zSql);
    while( rc==SQLITE_OK && sqlite3_step(pCols)==SQLITE_ROW ){
      const char *zCol = (const char*)sqlite3_column_text(pCols, 0);
      if( zCol==0 ){ bExpr = 1; continue; }
      sqlite3_str_appendf(pTerm, "%s\"%w\"=new.\"%w\"", nCol ? " AND " : "", zCol, zCol);
      nCol++;
    }
    sqlite3_finalize(pCols);
    zTerm = sqlite3_str_finish(pTerm);
    if( !bExpr && nCol>0 && zTerm ) sqlite3_str_appendf(pStr, " OR (%s)", zTerm);
    sqlite3_free(zTerm);
  }
  sqlite3_finalize(pList);
  *pzWhere = sqlite3_str_finish(pStr);
  if( *pzWhere==0 ) return SQLITE_NOMEM;
  return rc;
}

/* A number that changes when the index's definition does (FNV-1a of what the search data
** depends on), kept in the store's T_info as 'definition'. */
static sqlite3_int64 vsIndexDefHash(const VsIndexDef *p){
  char *z = sqlite3_mprintf("%s|%s|%s|%d|%d|%d%s%s%s%s", p->zTable, p->zColumn,
                            p->zWhere ? p->zWhere : "", p->eColType, p->nDim, p->eMetric,
                            p->zKey ? "|" : "", p->zKey ? p->zKey : "",
                            p->zKey ? "|" : "", p->zKey ? p->zKeyColl : "");
  sqlite3_uint64 h = 1469598103934665603ULL;
  const unsigned char *u = (const unsigned char*)z;
  while( u && *u ){ h ^= *u++; h *= 1099511628211ULL; }
  sqlite3_free(z);
  return (sqlite3_int64)(h >> 1);
}

/* SQL true for a row (of the indexed table) whose column holds a vector of the wrong size
** for the index: blobs by their length and type byte (any of libSQL's layouts), text by its
** commas. Core SQL, so the triggers that test it need nothing from the extension. */
static char *vsDimsMismatchSql(const VsIndexDef *p){
  const char *c = p->zColumn;
  int n = p->nDim;
  int nBits = (n+7)/8, n1Bit = nBits + (nBits%2==0 ? 1 : 0) + 2, n8 = ((n+3)/4)*4 + 8 + 3;
  /* 1-bit and F8 blobs end with the count of unused bits or padding bytes, then the type. */
  int nUnusedBits = 8*(n1Bit-1) - n, nPad = ((n+3)/4)*4 - n;
  return sqlite3_mprintf(
      "(\"%w\" IS NOT NULL AND NOT (CASE typeof(\"%w\")"
      " WHEN 'blob' THEN length(\"%w\")=%d"
      "   OR (length(\"%w\"), substr(\"%w\",-1)) IN"
      "     (VALUES (%d, x'01'), (%d, x'02'), (%d, x'05'), (%d, x'06'))"
      "   OR (length(\"%w\"), hex(substr(\"%w\",-2))) IN (VALUES (%d, '%02X03'), (%d, '%02X04'))"
      " WHEN 'text' THEN length(\"%w\")-length(replace(\"%w\",',',''))=%d"
      " ELSE 1 END))",
      c, c, c, 4*n, c, c, 4*n+1, 8*n+1, 2*n+1, 2*n+1,
      c, c, n1Bit, nUnusedBits & 0xff, n8, nPad, c, c, n-1);
}

/*
** The statements that bring the search data of the rows whose key satisfies zKeys (the
** rest of a condition on the key: "=new.rowid", " IN (SELECT rowid FROM ...)") up to
** date with the table. zQ qualifies the index's own tables ("" or "\"aux\"."), zQT the
** indexed table. A WITHOUT ROWID table's rows are stored under the id T_keys gives their
** primary key: an id is kept while the row stays indexed, so ties keep their order, and
** its key is rewritten when an UPDATE changes it to an equal one under its collation.
*/
static char *vsIndexApplySql(const VsIndexDef *p, const char *zQ, const char *zQT,
                             const char *zKeys){
  const char *zI = p->zIndex, *zT = p->zTable, *zC = p->zColumn, *zK = p->zK;
  const char *zCond = p->zWhere ? p->zWhere : "1";
  if( p->zKey==0 ){
    return sqlite3_mprintf(
        "DELETE FROM %s\"vecsync_idx_%w\" WHERE rowid%s;"
        "INSERT INTO %s\"vecsync_idx_%w\"(rowid, embedding)"
        " SELECT rowid, \"%w\" FROM %s\"%w\" WHERE rowid%s AND \"%w\" IS NOT NULL AND (%s);",
        zQ, zI, zKeys, zQ, zI, zC, zQT, zT, zKeys, zC, zCond);
  }
  return sqlite3_mprintf(
      "DELETE FROM %s\"vecsync_idx_%w\" WHERE rowid IN"
      " (SELECT id FROM %s\"vecsync_idx_%w_keys\" WHERE pk%s);"
      "DELETE FROM %s\"vecsync_idx_%w_keys\" WHERE pk%s AND NOT EXISTS (SELECT 1 FROM %s\"%w\""
      " WHERE %s=%s\"vecsync_idx_%w_keys\".pk AND \"%w\" IS NOT NULL AND (%s));"
      "INSERT INTO %s\"vecsync_idx_%w_keys\"(pk)"
      " SELECT %s FROM %s\"%w\" WHERE %s%s AND \"%w\" IS NOT NULL AND (%s)"
      " ON CONFLICT(pk) DO UPDATE SET pk=excluded.pk;"
      "INSERT INTO %s\"vecsync_idx_%w\"(rowid, embedding)"
      " SELECT (SELECT id FROM %s\"vecsync_idx_%w_keys\" WHERE pk=\"%w\".%s), \"%w\""
      " FROM %s\"%w\" WHERE %s%s AND \"%w\" IS NOT NULL AND (%s);",
      zQ, zI, zQ, zI, zKeys,
      zQ, zI, zKeys, zQT, zT, zK, zQ, zI, zC, zCond,
      zQ, zI, zK, zQT, zT, zK, zKeys, zC, zCond,
      zQ, zI, zQ, zI, zT, zK, zC, zQT, zT, zK, zKeys, zC, zCond);
}

/* Make this connection's TEMP trigger that applies the index's log entries at once (kept
** when the one there already says the same). */
static int vsIndexApplyTrigger(sqlite3 *db, const VsIndexDef *p){
  sqlite3_stmt *pStmt = 0;
  char *zName = sqlite3_mprintf("vecsync_apply_%s_%s", p->zSchema, p->zIndex);
  /* A trigger's INSERT and DELETE name their tables unqualified, which a TEMP trigger
  ** resolves in temp, then main: attached databases' indexes have no TEMP trigger. It
  ** does nothing once the index is dropped. */
  char *zApply = vsIndexApplySql(p, "", "main.", "=new.rowid");
  char *zSql = zApply==0 ? 0 : sqlite3_mprintf(
      "CREATE TEMP TRIGGER \"%w\" AFTER INSERT ON main.\"vecsync_idx_%w_log\""
      " WHEN EXISTS (SELECT 1 FROM main.sqlite_schema WHERE type='index' AND name=%Q) BEGIN"
      " %s"
      " DELETE FROM \"vecsync_idx_%w_log\" WHERE rowid=new.rowid;"
      " END",
      zName, p->zIndex, p->zIndex, zApply, p->zIndex);
  int rc = SQLITE_OK, bSame = 0;
  sqlite3_free(zApply);
  if( zName==0 || zSql==0 ){ rc = SQLITE_NOMEM; goto cleanup; }
  if( sqlite3_stricmp(p->zSchema, "main")!=0 ) goto cleanup;
  rc = sqlite3_prepare_v2(db, "SELECT sql FROM sqlite_temp_schema WHERE type='trigger' AND name=?1",
                          -1, &pStmt, 0);
  if( rc!=SQLITE_OK ) goto cleanup;
  sqlite3_bind_text(pStmt, 1, zName, -1, SQLITE_STATIC);
  if( sqlite3_step(pStmt)==SQLITE_ROW ){
    const char *zOld = (const char*)sqlite3_column_text(pStmt, 0);
    bSame = zOld && strcmp(zOld, zSql)==0;
  }
  sqlite3_finalize(pStmt);
  pStmt = 0;
  if( !bSame ){
    char *zDrop = sqlite3_mprintf("DROP TRIGGER IF EXISTS temp.\"%w\"", zName);
    if( zDrop==0 ){ rc = SQLITE_NOMEM; goto cleanup; }
    rc = sqlite3_exec(db, zDrop, 0, 0, 0);
    sqlite3_free(zDrop);
    if( rc==SQLITE_OK ) rc = sqlite3_exec(db, zSql, 0, 0, 0);
  }

cleanup:
  sqlite3_finalize(pStmt);
  sqlite3_free(zName);
  sqlite3_free(zSql);
  return rc;
}

/* Apply the log entries other connections left (or all of them, on a connection without
** the TEMP trigger) to the search data. */
static int vsIndexSync(sqlite3 *db, const VsIndexDef *p, char **pzErr){
  sqlite3_stmt *pStmt = 0;
  char *zSql = sqlite3_mprintf("SELECT EXISTS (SELECT 1 FROM \"%w\".\"vecsync_idx_%w_log\")",
                               p->zSchema, p->zIndex);
  int rc, bAny = 0;
  if( zSql==0 ) return SQLITE_NOMEM;
  rc = sqlite3_prepare_v2(db, zSql, -1, &pStmt, 0);
  sqlite3_free(zSql);
  if( rc!=SQLITE_OK ) return rc;
  if( sqlite3_step(pStmt)==SQLITE_ROW ) bAny = sqlite3_column_int(pStmt, 0);
  rc = sqlite3_finalize(pStmt);
  if( rc!=SQLITE_OK || !bAny ) return rc;
  {
    char *zQ = sqlite3_mprintf("\"%w\".", p->zSchema);
    char *zKeys = sqlite3_mprintf(" IN (SELECT rowid FROM \"%w\".\"vecsync_idx_%w_log\")",
                                  p->zSchema, p->zIndex);
    char *zApply = zQ && zKeys ? vsIndexApplySql(p, zQ, zQ, zKeys) : 0;
    zSql = zApply==0 ? 0 : sqlite3_mprintf(
        "SAVEPOINT vecsync_sync;%sDELETE FROM \"%w\".\"vecsync_idx_%w_log\";RELEASE vecsync_sync;",
        zApply, p->zSchema, p->zIndex);
    sqlite3_free(zQ);
    sqlite3_free(zKeys);
    sqlite3_free(zApply);
  }
  if( zSql==0 ) return SQLITE_NOMEM;
  rc = sqlite3_exec(db, zSql, 0, 0, pzErr);
  sqlite3_free(zSql);
  if( rc!=SQLITE_OK ){
    sqlite3_exec(db, "ROLLBACK TO vecsync_sync; RELEASE vecsync_sync;", 0, 0, 0);
  }
  return rc;
}

/* Remove what vector indexes of schema zSchema that were dropped left: their triggers
** (writes need nothing from them, and log nothing more), then their tables when SQLite
** allows it. */
static int vsIndexDropOrphans(sqlite3 *db, const char *zSchema){
  sqlite3_stmt *pStmt = 0;
  sqlite3_str *pDrop = sqlite3_str_new(db), *pTables = sqlite3_str_new(db);
  char *zTables = 0;
  char *zSql = sqlite3_mprintf(
      "SELECT substr(s.name, 13) FROM \"%w\".sqlite_schema AS s"
      " WHERE s.type='table' AND s.name GLOB 'vecsync_idx_*_log'"
      " AND NOT EXISTS (SELECT 1 FROM \"%w\".sqlite_schema AS i WHERE i.type='index'"
      "   AND i.name=substr(s.name, 13, length(s.name)-16))",
      zSchema, zSchema);
  char *zDrop;
  int rc;
  if( zSql==0 ){
    sqlite3_free(sqlite3_str_finish(pDrop));
    sqlite3_free(sqlite3_str_finish(pTables));
    return SQLITE_NOMEM;
  }
  rc = sqlite3_prepare_v2(db, zSql, -1, &pStmt, 0);
  sqlite3_free(zSql);
  while( rc==SQLITE_OK && sqlite3_step(pStmt)==SQLITE_ROW ){
    const char *zLog = (const char*)sqlite3_column_text(pStmt, 0);   /* "<index>_log" */
    int n = zLog ? (int)strlen(zLog) - 4 : 0;
    const char *azSuffix[] = { "bi", "bu", "ai", "au", "ad" };
    size_t i;
    if( n<=0 ) continue;
    for(i=0; i<sizeof(azSuffix)/sizeof(azSuffix[0]); i++){
      sqlite3_str_appendf(pDrop, "DROP TRIGGER IF EXISTS \"%w\".\"vecsync_idx_%.*w_%s\";",
                          zSchema, n, zLog, azSuffix[i]);
    }
    sqlite3_str_appendf(pDrop, "DELETE FROM \"%w\".\"vecsync_idx_%w\";", zSchema, zLog);
    sqlite3_str_appendf(pTables,
        "DROP TABLE IF EXISTS \"%w\".\"vecsync_idx_%.*w\";"
        "DROP TABLE IF EXISTS \"%w\".\"vecsync_idx_%.*w_pending\";"
        "DROP TABLE IF EXISTS \"%w\".\"vecsync_idx_%.*w_keys\";"
        "DROP TABLE IF EXISTS \"%w\".\"vecsync_idx_%w\";",
        zSchema, n, zLog, zSchema, n, zLog, zSchema, n, zLog, zSchema, zLog);
  }
  sqlite3_finalize(pStmt);
  zDrop = sqlite3_str_finish(pDrop);
  zTables = sqlite3_str_finish(pTables);
  if( rc==SQLITE_OK && zDrop && zDrop[0] ) rc = sqlite3_exec(db, zDrop, 0, 0, 0);
  if( rc==SQLITE_OK && zTables && zTables[0] ){
    /* SQLite drops no table while another statement reads (SQLITE_LOCKED): the emptied
    ** tables then stay, and a later search tries again. */
    char *zSql = sqlite3_mprintf("SAVEPOINT vecsync_orphans;%sRELEASE vecsync_orphans;", zTables);
    if( zSql==0 ){
      rc = SQLITE_NOMEM;
    }else if( sqlite3_exec(db, zSql, 0, 0, 0)!=SQLITE_OK ){
      sqlite3_exec(db, "ROLLBACK TO vecsync_orphans; RELEASE vecsync_orphans;", 0, 0, 0);
    }
    sqlite3_free(zSql);
  }
  sqlite3_free(zDrop);
  sqlite3_free(zTables);
  return rc;
}

/* Create the vec0 store, its tables and its triggers if missing (or made for another
** version or definition), fill it from the table, and apply what the log holds. With
** bRebuild, empty and refill an existing store. *pnRow: rows indexed by a (re)build. */
static int vsIndexBuild(sqlite3 *db, const VsIndexDef *pDef, int bRebuild,
                        sqlite3_int64 *pnRow, char **pzErr){
  const char *zS = pDef->zSchema, *zI = pDef->zIndex, *zT = pDef->zTable, *zC = pDef->zColumn;
  const char *zK = pDef->zK;
  const char *zCond = pDef->zWhere ? pDef->zWhere : "1";
  sqlite3_stmt *pStmt = 0;
  char *zSql = 0, *zConflict = 0, *zMismatch = 0, *zMsg = 0, *zChanged = 0;
  sqlite3_int64 iHash = vsIndexDefHash(pDef);
  int rc, bStore = 0, nTrigger = 0;

  rc = vsIndexDropOrphans(db, zS);
  if( rc!=SQLITE_OK ) return rc;
  zSql = sqlite3_mprintf(
      "SELECT (SELECT count(*) FROM \"%w\".sqlite_schema WHERE type='table' AND name='vecsync_idx_%q'),"
      " (SELECT count(*) FROM \"%w\".sqlite_schema WHERE type='trigger' AND tbl_name=%Q"
      "   AND name GLOB 'vecsync_idx_%q_*')",
      zS, zI, zS, zT, zI);
  if( zSql==0 ) return SQLITE_NOMEM;
  rc = sqlite3_prepare_v2(db, zSql, -1, &pStmt, 0);
  sqlite3_free(zSql);
  zSql = 0;
  if( rc!=SQLITE_OK ) return rc;
  if( sqlite3_step(pStmt)==SQLITE_ROW ){
    bStore = sqlite3_column_int(pStmt, 0);
    nTrigger = sqlite3_column_int(pStmt, 1);
  }
  sqlite3_finalize(pStmt);
  pStmt = 0;
  if( bStore && nTrigger==5 && !bRebuild ){
    /* Complete only once its backfill finished with this version's triggers and this
    ** definition: a build that failed half way, one made with earlier triggers, or one for
    ** an index since re-created differently, is redone from scratch. */
    sqlite3_int64 iDone = 0, iDef = 0;
    zSql = sqlite3_mprintf(
        "SELECT (SELECT value FROM \"%w\".\"vecsync_idx_%w_info\" WHERE key='backfilled'),"
        " (SELECT value FROM \"%w\".\"vecsync_idx_%w_info\" WHERE key='definition')",
        zS, zI, zS, zI);
    if( zSql==0 ) return SQLITE_NOMEM;
    rc = sqlite3_prepare_v2(db, zSql, -1, &pStmt, 0);
    sqlite3_free(zSql);
    zSql = 0;
    if( rc!=SQLITE_OK ) return rc;
    if( sqlite3_step(pStmt)==SQLITE_ROW ){
      iDone = sqlite3_column_int64(pStmt, 0);
      iDef = sqlite3_column_int64(pStmt, 1);
    }
    rc = sqlite3_finalize(pStmt);
    pStmt = 0;
    if( rc!=SQLITE_OK ) return rc;
    if( iDone==VS_INDEX_TRIGGERS && iDef==iHash ){
      rc = vsIndexSync(db, pDef, pzErr);
      /* The TEMP trigger only saves later searches the work: a connection that cannot
      ** make one (query_only) applies the log when it searches, or scans the table. */
      if( rc==SQLITE_OK ) (void)vsIndexApplyTrigger(db, pDef);
      return rc;
    }
  }

  rc = vsUniqueConflicts(db, pDef, &zConflict);
  if( rc!=SQLITE_OK ) goto cleanup;
  zMismatch = vsDimsMismatchSql(pDef);
  zMsg = sqlite3_mprintf("vector index %s: the vector's size is not the %d dimensions of %s.%s",
                         zI, pDef->nDim, zT, zC);
  zChanged = pDef->zWhere ? sqlite3_mprintf("1")
      : sqlite3_mprintf("(%s IS NOT %s COLLATE BINARY OR old.\"%w\" IS NOT new.\"%w\")",
                        pDef->zOldK, pDef->zNewK, zC, zC);
  if( zMismatch==0 || zMsg==0 || zChanged==0 ){ rc = SQLITE_NOMEM; goto cleanup; }
  if( bStore ){
    zSql = sqlite3_mprintf(
        "DELETE FROM \"%w\".\"vecsync_idx_%w_info\" WHERE key IN ('backfilled', 'definition');"
        "DELETE FROM \"%w\".\"vecsync_idx_%w\"", zS, zI, zS, zI);
  }else{
    zSql = sqlite3_mprintf(
        "CREATE VIRTUAL TABLE \"%w\".\"vecsync_idx_%w\" USING vec0("
        "embedding float[%d] distance_metric=%s)",
        zS, zI, pDef->nDim, vec0MetricName(pDef->eMetric));
  }
  if( zSql==0 ){ rc = SQLITE_NOMEM; goto cleanup; }
  rc = sqlite3_exec(db, zSql, 0, 0, pzErr);
  sqlite3_free(zSql);
  zSql = 0;
  if( rc!=SQLITE_OK ) goto cleanup;

  /* The triggers log each written rowid in T_log (the TEMP trigger applies it at once);
  ** INSERT OR REPLACE and UPDATE OR REPLACE delete the rows they conflict with without
  ** firing DELETE triggers (unless recursive_triggers is on), so the BEFORE triggers note
  ** those rows in T_pending and the AFTER triggers log them. A vector of the wrong size
  ** for this index, in a row it covers, is refused while the index exists. */
  if( pDef->zKey ){
    /* A WITHOUT ROWID table's keys, with its key's collation; T_keys gives each indexed
    ** key the id the search data stores it under. */
    zSql = sqlite3_mprintf(
        "CREATE TABLE IF NOT EXISTS \"%w\".\"vecsync_idx_%w_pending\"(rowid PRIMARY KEY COLLATE \"%w\") WITHOUT ROWID;"
        "CREATE TABLE IF NOT EXISTS \"%w\".\"vecsync_idx_%w_log\"(rowid PRIMARY KEY COLLATE \"%w\") WITHOUT ROWID;"
        "CREATE TABLE IF NOT EXISTS \"%w\".\"vecsync_idx_%w_keys\"(id INTEGER PRIMARY KEY, pk UNIQUE COLLATE \"%w\");"
        "DELETE FROM \"%w\".\"vecsync_idx_%w_keys\";",
        zS, zI, pDef->zKeyColl, zS, zI, pDef->zKeyColl, zS, zI, pDef->zKeyColl, zS, zI);
  }else{
    zSql = sqlite3_mprintf(
        "CREATE TABLE IF NOT EXISTS \"%w\".\"vecsync_idx_%w_pending\"(rowid INTEGER PRIMARY KEY);"
        "CREATE TABLE IF NOT EXISTS \"%w\".\"vecsync_idx_%w_log\"(rowid INTEGER PRIMARY KEY);",
        zS, zI, zS, zI);
  }
  if( zSql==0 ){ rc = SQLITE_NOMEM; goto cleanup; }
  rc = sqlite3_exec(db, zSql, 0, 0, pzErr);
  sqlite3_free(zSql);
  zSql = 0;
  if( rc!=SQLITE_OK ) goto cleanup;
  zSql = sqlite3_mprintf(
      "DELETE FROM \"%w\".\"vecsync_idx_%w_pending\";"
      "DELETE FROM \"%w\".\"vecsync_idx_%w_log\";"
      "DROP TRIGGER IF EXISTS \"%w\".\"vecsync_idx_%w_bi\";"
      "DROP TRIGGER IF EXISTS \"%w\".\"vecsync_idx_%w_bu\";"
      "DROP TRIGGER IF EXISTS \"%w\".\"vecsync_idx_%w_ai\";"
      "DROP TRIGGER IF EXISTS \"%w\".\"vecsync_idx_%w_au\";"
      "DROP TRIGGER IF EXISTS \"%w\".\"vecsync_idx_%w_ad\";",
      zS, zI, zS, zI, zS, zI, zS, zI, zS, zI, zS, zI, zS, zI);
  if( zSql==0 ){ rc = SQLITE_NOMEM; goto cleanup; }
  rc = sqlite3_exec(db, zSql, 0, 0, pzErr);
  sqlite3_free(zSql);
  zSql = sqlite3_mprintf(
      "CREATE TRIGGER \"%w\".\"vecsync_idx_%w_bi\" BEFORE INSERT ON \"%w\" BEGIN"
      "  INSERT OR IGNORE INTO \"vecsync_idx_%w_pending\"(rowid)"
      "    SELECT %s FROM \"%w\" WHERE %s;"
      " END;"
      "CREATE TRIGGER \"%w\".\"vecsync_idx_%w_bu\" BEFORE UPDATE ON \"%w\" BEGIN"
      "  INSERT OR IGNORE INTO \"vecsync_idx_%w_pending\"(rowid)"
      "    SELECT %s FROM \"%w\" WHERE (%s) AND %s<>%s;"
      " END;"
      "CREATE TRIGGER \"%w\".\"vecsync_idx_%w_ai\" AFTER INSERT ON \"%w\" BEGIN"
      "  SELECT RAISE(ABORT, %Q) FROM \"%w\" WHERE %s=%s AND %s AND (%s)"
      "    AND EXISTS (SELECT 1 FROM sqlite_schema WHERE type='index' AND name=%Q);"
      "  INSERT OR REPLACE INTO \"vecsync_idx_%w_log\"(rowid) SELECT rowid FROM \"vecsync_idx_%w_pending\";"
      "  DELETE FROM \"vecsync_idx_%w_pending\";"
      "  INSERT OR REPLACE INTO \"vecsync_idx_%w_log\"(rowid) VALUES (%s);"
      " END;"
      "CREATE TRIGGER \"%w\".\"vecsync_idx_%w_au\" AFTER UPDATE ON \"%w\" BEGIN"
      "  SELECT RAISE(ABORT, %Q) FROM \"%w\" WHERE %s=%s AND %s AND (%s)"
      "    AND EXISTS (SELECT 1 FROM sqlite_schema WHERE type='index' AND name=%Q);"
      "  INSERT OR REPLACE INTO \"vecsync_idx_%w_log\"(rowid) SELECT rowid FROM \"vecsync_idx_%w_pending\";"
      "  DELETE FROM \"vecsync_idx_%w_pending\";"
      "  INSERT OR REPLACE INTO \"vecsync_idx_%w_log\"(rowid) SELECT %s WHERE %s;"
      "  INSERT OR REPLACE INTO \"vecsync_idx_%w_log\"(rowid) SELECT %s WHERE %s;"
      " END;"
      "CREATE TRIGGER \"%w\".\"vecsync_idx_%w_ad\" AFTER DELETE ON \"%w\" BEGIN"
      "  INSERT OR REPLACE INTO \"vecsync_idx_%w_log\"(rowid) VALUES (%s);"
      " END;",
      /* _bi */ zS, zI, zT, zI, zK, zT, zConflict,
      /* _bu */ zS, zI, zT, zI, zK, zT, zConflict, zK, pDef->zOldK,
      /* _ai */ zS, zI, zT, zMsg, zT, zK, pDef->zNewK, zMismatch, zCond, zI, zI, zI, zI, zI,
                pDef->zNewK,
      /* _au */ zS, zI, zT, zMsg, zT, zK, pDef->zNewK, zMismatch, zCond, zI, zI, zI, zI, zI,
                pDef->zOldK, zChanged, zI, pDef->zNewK, zChanged,
      /* _ad */ zS, zI, zT, zI, pDef->zOldK);
  if( zSql==0 ){ rc = SQLITE_NOMEM; goto cleanup; }
  if( rc==SQLITE_OK ) rc = sqlite3_exec(db, zSql, 0, 0, pzErr);
  sqlite3_free(zSql);
  zSql = 0;
  if( rc!=SQLITE_OK ) goto cleanup;

  {
    /* Every covered row: its key " IS NOT NULL" (a rowid, or a WITHOUT ROWID key, never is). */
    char *zQ = sqlite3_mprintf("\"%w\".", zS);
    zSql = zQ ? vsIndexApplySql(pDef, zQ, zQ, " IS NOT NULL") : 0;
    sqlite3_free(zQ);
  }
  if( zSql==0 ){ rc = SQLITE_NOMEM; goto cleanup; }
  rc = sqlite3_exec(db, zSql, 0, 0, pzErr);
  sqlite3_free(zSql);
  zSql = 0;
  if( rc==SQLITE_OK && pnRow ) *pnRow = sqlite3_changes64(db);
  if( rc==SQLITE_OK ){
    zSql = sqlite3_mprintf(
        "INSERT INTO \"%w\".\"vecsync_idx_%w_info\"(key, value)"
        " VALUES ('backfilled', %d), ('definition', %lld)",
        zS, zI, VS_INDEX_TRIGGERS, iHash);
    if( zSql==0 ){ rc = SQLITE_NOMEM; goto cleanup; }
    rc = sqlite3_exec(db, zSql, 0, 0, pzErr);
  }
  if( rc==SQLITE_OK ) (void)vsIndexApplyTrigger(db, pDef);

cleanup:
  sqlite3_free(zSql);
  sqlite3_free(zConflict);
  sqlite3_free(zMismatch);
  sqlite3_free(zMsg);
  sqlite3_free(zChanged);
  return rc;
}

/* vecsync_rebuild('index'): rebuild a vector index's search data from its table. */
static void vsRebuildFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  sqlite3 *db = sqlite3_context_db_handle(ctx);
  VsIndexDef def;
  char *zErr = 0;
  sqlite3_int64 nRow = 0;
  const char *zIndex = (const char*)sqlite3_value_text(argv[0]);
  int rc;
  (void)argc;
  memset(&def, 0, sizeof(def));
  if( zIndex==0 ){
    sqlite3_result_error(ctx, "vecsync_rebuild: the index name is NULL", -1);
    return;
  }
  rc = vsIndexLookup(db, zIndex, &def, &zErr);
  if( rc==SQLITE_OK ) rc = vsIndexBuild(db, &def, 1, &nRow, &zErr);
  if( rc==SQLITE_OK ){
    sqlite3_result_int64(ctx, nRow);
  }else{
    char *zMsg = sqlite3_mprintf("vecsync_rebuild: %s", zErr ? zErr : sqlite3_errmsg(db));
    sqlite3_result_error(ctx, zMsg ? zMsg : "vecsync_rebuild failed", -1);
    sqlite3_result_error_code(ctx, rc);
    sqlite3_free(zMsg);
  }
  sqlite3_free(zErr);
  vsIndexDefClear(&def);
}

/* Order hits by their position (iRowid) in a scan, for vsIndexScanKeys. */
static int vsHitByPosition(const void *a, const void *b){
  sqlite3_int64 x = (*(const VsHit* const*)a)->iRowid, y = (*(const VsHit* const*)b)->iRowid;
  return x<y ? -1 : x>y;
}

/* A WITHOUT ROWID table's scan named its hits by their position in pStmt's rows: read the
** rows again and keep each hit's primary key (the statement's first column) in apKey. */
static int vsIndexScanKeys(sqlite3_stmt *pStmt, const VsTopK *pTop, sqlite3_value **apKey){
  const VsHit **aBy = sqlite3_malloc64(sizeof(VsHit*) * (pTop->n>0 ? pTop->n : 1));
  sqlite3_int64 iPos = 0;
  int i, iNext = 0, rc = SQLITE_OK;
  if( aBy==0 ) return SQLITE_NOMEM;
  for(i=0; i<pTop->n; i++) aBy[i] = &pTop->a[i];
  qsort(aBy, (size_t)pTop->n, sizeof(aBy[0]), vsHitByPosition);
  sqlite3_reset(pStmt);
  while( iNext<pTop->n && sqlite3_step(pStmt)==SQLITE_ROW ){
    while( iNext<pTop->n && aBy[iNext]->iRowid==iPos ){
      sqlite3_value *pKey = sqlite3_value_dup(sqlite3_column_value(pStmt, 0));
      if( pKey==0 ){ rc = SQLITE_NOMEM; break; }
      apKey[aBy[iNext] - pTop->a] = pKey;
      iNext++;
    }
    if( rc!=SQLITE_OK ) break;
    iPos++;
  }
  if( rc==SQLITE_OK ) rc = sqlite3_reset(pStmt);
  if( rc==SQLITE_OK && iNext<pTop->n ) rc = SQLITE_ERROR;   /* the table changed under us */
  sqlite3_free(aBy);
  return rc;
}

/* Exact k nearest rows of the indexed table to query v, read straight from the table:
** the path of connections that cannot build or bring up to date the index's search data.
** A WITHOUT ROWID table's rows are read in key order, each hit named by its position
** there, and *papKey receives the hits' keys (else it is left NULL). */
static int vsIndexScanTable(sqlite3 *db, const VsIndexDef *pDef, const VsVector *pQuery,
                            sqlite3_int64 k, VsTopK *pTop, sqlite3_value ***papKey,
                            char **pzErr){
  sqlite3_stmt *pStmt = 0;
  char *zSql = sqlite3_mprintf(
      "SELECT %s, \"%w\" FROM \"%w\".\"%w\" WHERE \"%w\" IS NOT NULL AND (%s)%s%s",
      pDef->zK, pDef->zColumn, pDef->zSchema, pDef->zTable, pDef->zColumn,
      pDef->zWhere ? pDef->zWhere : "1", pDef->zKey ? " ORDER BY " : "",
      pDef->zKey ? pDef->zK : "");
  sqlite3_int64 nRow = 0;
  int rc;
  if( zSql==0 ) return SQLITE_NOMEM;
  rc = sqlite3_prepare_v2(db, zSql, -1, &pStmt, 0);
  sqlite3_free(zSql);
  if( rc!=SQLITE_OK ) return rc;
  {
    /* Room for min(k, rows) hits. */
    sqlite3_stmt *pCount = 0;
    sqlite3_int64 nAll = 0;
    zSql = sqlite3_mprintf("SELECT count(*) FROM \"%w\".\"%w\"", pDef->zSchema, pDef->zTable);
    if( zSql==0 ){ sqlite3_finalize(pStmt); return SQLITE_NOMEM; }
    rc = sqlite3_prepare_v2(db, zSql, -1, &pCount, 0);
    sqlite3_free(zSql);
    if( rc==SQLITE_OK && sqlite3_step(pCount)==SQLITE_ROW ) nAll = sqlite3_column_int64(pCount, 0);
    sqlite3_finalize(pCount);
    if( rc==SQLITE_OK ) rc = vsTopKInit(pTop, k, nAll);
  }
  while( rc==SQLITE_OK && sqlite3_step(pStmt)==SQLITE_ROW ){
    VsVector v;
    char *zErr = 0;
    sqlite3_int64 iRowid = pDef->zKey ? nRow : sqlite3_column_int64(pStmt, 0);
    rc = vsVectorFromValue(sqlite3_column_value(pStmt, 1), VS_F32, &v, &zErr);
    if( rc==SQLITE_OK && v.nDim!=pDef->nDim ){
      zErr = sqlite3_mprintf("the vector has %d dimensions, index %s has %d",
                             v.nDim, pDef->zIndex, pDef->nDim);
      rc = SQLITE_ERROR;
    }
    if( rc==SQLITE_OK ){
      double rDist = vsDistanceF32(pDef->eMetric, (const float*)pQuery->aData,
                                  (const float*)v.aData, pDef->nDim);
      if( rDist==rDist ) vsTopKPush(pTop, rDist, iRowid, nRow);   /* NaN: zero vector */
      nRow++;
    }else if( rc!=SQLITE_NOMEM ){
      if( pDef->zKey ){
        *pzErr = sqlite3_mprintf("row %s=%s: %s", pDef->zKey,
                                 (const char*)sqlite3_column_text(pStmt, 0),
                                 zErr ? zErr : "bad vector");
      }else{
        *pzErr = sqlite3_mprintf("row %lld: %s", iRowid, zErr ? zErr : "bad vector");
      }
    }
    sqlite3_free(zErr);
    vsVectorFree(&v);
  }
  if( rc==SQLITE_OK ) rc = sqlite3_reset(pStmt);
  if( rc==SQLITE_OK ) vsTopKSort(pTop);
  if( rc==SQLITE_OK && pDef->zKey ){
    *papKey = sqlite3_malloc64(sizeof(sqlite3_value*) * (pTop->n>0 ? pTop->n : 1));
    if( *papKey==0 ){
      rc = SQLITE_NOMEM;
    }else{
      memset(*papKey, 0, sizeof(sqlite3_value*) * (pTop->n>0 ? pTop->n : 1));
      rc = vsIndexScanKeys(pStmt, pTop, *papKey);
      if( rc==SQLITE_ERROR ){
        *pzErr = sqlite3_mprintf("table %s changed while it was read", pDef->zTable);
      }
    }
  }
  sqlite3_finalize(pStmt);
  return rc;
}

/* The primary keys of a WITHOUT ROWID index's hits, from the ids its search data gave. */
static int vsIndexHitKeys(sqlite3 *db, const VsIndexDef *pDef, const VsTopK *pTop,
                          sqlite3_value ***papKey, char **pzErr){
  sqlite3_stmt *pStmt = 0;
  char *zSql = sqlite3_mprintf("SELECT pk FROM \"%w\".\"vecsync_idx_%w_keys\" WHERE id=?1",
                               pDef->zSchema, pDef->zIndex);
  int i, rc;
  if( zSql==0 ) return SQLITE_NOMEM;
  rc = sqlite3_prepare_v2(db, zSql, -1, &pStmt, 0);
  sqlite3_free(zSql);
  if( rc!=SQLITE_OK ) return rc;
  *papKey = sqlite3_malloc64(sizeof(sqlite3_value*) * (pTop->n>0 ? pTop->n : 1));
  if( *papKey==0 ){ sqlite3_finalize(pStmt); return SQLITE_NOMEM; }
  memset(*papKey, 0, sizeof(sqlite3_value*) * (pTop->n>0 ? pTop->n : 1));
  for(i=0; i<pTop->n && rc==SQLITE_OK; i++){
    sqlite3_bind_int64(pStmt, 1, pTop->a[i].iRowid);
    if( sqlite3_step(pStmt)==SQLITE_ROW ){
      (*papKey)[i] = sqlite3_value_dup(sqlite3_column_value(pStmt, 0));
      if( (*papKey)[i]==0 ) rc = SQLITE_NOMEM;
    }else{
      rc = sqlite3_reset(pStmt);
      if( rc==SQLITE_OK ){
        *pzErr = sqlite3_mprintf("the search data of index %s names id %lld, which "
                                 "vecsync_idx_%s_keys lacks: run vecsync_rebuild('%s')",
                                 pDef->zIndex, pTop->a[i].iRowid, pDef->zIndex, pDef->zIndex);
        rc = SQLITE_CORRUPT;
      }
    }
    if( rc==SQLITE_OK ) rc = sqlite3_reset(pStmt);
  }
  sqlite3_finalize(pStmt);
  return rc;
}

/* A FLOAT1BIT column holds +1 and -1 elements: a query is taken as its signs (as libSQL's
** vector1bit makes them, x > 0 is +1), and a hit's cosine distance 1 - (n - 2h)/n becomes
** h, the number of differing bits, which is what libSQL reports for 1-bit vectors. */
static void vsIndexQueryAsBits(float *q, int nDim){
  int i;
  for(i=0; i<nDim; i++) q[i] = q[i]>0.0f ? 1.0f : -1.0f;
}
static void vsIndexHitsAsHamming(VsTopK *pTop, int nDim){
  int i;
  for(i=0; i<pTop->n; i++) pTop->a[i].rDist = (double)llround(pTop->a[i].rDist * nDim / 2.0);
}

/* ---- vector_top_k ------------------------------------------------------------------------ */

/* The arguments are the first hidden columns, in order; distance comes after them. */
#define VTK_COL_ID       0
#define VTK_COL_INDEX    1
#define VTK_COL_QUERY    2
#define VTK_COL_K        3
#define VTK_COL_DISTANCE 4

typedef struct VtkCursor VtkCursor;
struct VtkCursor {
  sqlite3_vtab_cursor base;   /* Base class: must be first */
  VsTopK top;                 /* Hits, nearest first */
  int iHit;                   /* Current hit */
  sqlite3_value **apKey;      /* WITHOUT ROWID: each hit's primary key (its id); else NULL */
  int bKeyIsRowid;            /* A hit's rowid is its key: a rowid, or a rowid-like key */
};

/* Forget the hits of the last search. */
static void vtkCursorReset(VtkCursor *pCur){
  int i;
  if( pCur->apKey ){
    for(i=0; i<pCur->top.n; i++) sqlite3_value_free(pCur->apKey[i]);
    sqlite3_free(pCur->apKey);
    pCur->apKey = 0;
  }
  vsTopKFree(&pCur->top);
  pCur->iHit = 0;
  pCur->bKeyIsRowid = 1;
}

typedef struct VtkTable VtkTable;
struct VtkTable {
  sqlite3_vtab base;          /* Base class: must be first */
  sqlite3 *db;                /* Connection */
  Vec0Registry *pReg;         /* Its vec0 tables */
};

static int vtkConnect(sqlite3 *db, void *pAux, int argc, const char *const *argv,
                      sqlite3_vtab **ppVtab, char **pzErr){
  VtkTable *p;
  int rc;
  (void)argc; (void)argv; (void)pzErr;
  rc = sqlite3_declare_vtab(db,
      "CREATE TABLE x(id INTEGER, index_name HIDDEN, query HIDDEN, k HIDDEN, distance REAL HIDDEN)");
  if( rc!=SQLITE_OK ) return rc;
  p = sqlite3_malloc(sizeof(*p));
  if( p==0 ) return SQLITE_NOMEM;
  memset(p, 0, sizeof(*p));
  p->db = db;
  p->pReg = (Vec0Registry*)pAux;
  *ppVtab = &p->base;
  return SQLITE_OK;
}

static int vtkDisconnect(sqlite3_vtab *pVtab){
  sqlite3_free(pVtab);
  return SQLITE_OK;
}

static int vtkBestIndex(sqlite3_vtab *pVtab, sqlite3_index_info *pInfo){
  int aIdx[3] = { -1, -1, -1 };
  int i;
  for(i=0; i<pInfo->nConstraint; i++){
    const struct sqlite3_index_constraint *pC = &pInfo->aConstraint[i];
    if( pC->op!=SQLITE_INDEX_CONSTRAINT_EQ || pC->iColumn<VTK_COL_INDEX
     || pC->iColumn>VTK_COL_K ) continue;
    if( !pC->usable ) return SQLITE_CONSTRAINT;
    aIdx[pC->iColumn-VTK_COL_INDEX] = i;
  }
  for(i=0; i<3; i++){
    if( aIdx[i]<0 ){
      sqlite3_free(pVtab->zErrMsg);
      pVtab->zErrMsg = sqlite3_mprintf("vector_top_k(index, query, k) needs all three arguments");
      return SQLITE_ERROR;
    }
    pInfo->aConstraintUsage[aIdx[i]].argvIndex = i+1;
    pInfo->aConstraintUsage[aIdx[i]].omit = 1;
  }
  pInfo->estimatedCost = 100.0;
  if( pInfo->nOrderBy==1 && pInfo->aOrderBy[0].iColumn==VTK_COL_DISTANCE
   && !pInfo->aOrderBy[0].desc ){
    pInfo->orderByConsumed = 1;
  }
  return SQLITE_OK;
}

static int vtkOpen(sqlite3_vtab *pVtab, sqlite3_vtab_cursor **ppCur){
  VtkCursor *pCur = sqlite3_malloc(sizeof(*pCur));
  (void)pVtab;
  if( pCur==0 ) return SQLITE_NOMEM;
  memset(pCur, 0, sizeof(*pCur));
  *ppCur = &pCur->base;
  return SQLITE_OK;
}

static int vtkClose(sqlite3_vtab_cursor *cur){
  vtkCursorReset((VtkCursor*)cur);
  sqlite3_free(cur);
  return SQLITE_OK;
}

static int vtkFilter(sqlite3_vtab_cursor *cur, int idxNum, const char *idxStr,
                     int argc, sqlite3_value **argv){
  VtkCursor *pCur = (VtkCursor*)cur;
  VtkTable *pTab = (VtkTable*)cur->pVtab;
  VsIndexDef def;
  Vec0Table *pStore = 0;
  VsVector v;
  float *q = 0;
  char *zErr = 0, *zStore = 0;
  const char *zIndex = (const char*)sqlite3_value_text(argv[0]);
  sqlite3_int64 k;
  int rc;
  (void)idxNum; (void)idxStr; (void)argc;

  memset(&def, 0, sizeof(def));
  memset(&v, 0, sizeof(v));
  vtkCursorReset(pCur);
  if( zIndex==0 ){
    zErr = sqlite3_mprintf("the index name is NULL");
    rc = SQLITE_ERROR;
    goto cleanup;
  }
  /* k is an integer, 0 or more (0: no row), as libSQL takes it; an integral REAL (5.0)
  ** is taken as that integer; text, a blob and NULL are refused, as libSQL refuses them. */
  if( sqlite3_value_type(argv[2])==SQLITE_FLOAT ){
    double r = sqlite3_value_double(argv[2]);
    k = (r>=0.0 && r<9.2e18 && r==(double)(sqlite3_int64)r) ? (sqlite3_int64)r : -1;
  }else{
    k = sqlite3_value_type(argv[2])==SQLITE_INTEGER ? sqlite3_value_int64(argv[2]) : -1;
  }
  if( k<0 ){
    zErr = sqlite3_mprintf("k must be a non-negative integer, got %s",
        sqlite3_value_type(argv[2])==SQLITE_NULL ? "NULL" : (const char*)sqlite3_value_text(argv[2]));
    rc = SQLITE_ERROR;
    goto cleanup;
  }
  rc = vsIndexLookup(pTab->db, zIndex, &def, &zErr);
  if( rc!=SQLITE_OK ) goto cleanup;
  pCur->bKeyIsRowid = def.zKey==0 || def.bKeyRowidLike;
  rc = vsVectorFromValue(argv[1], VS_F32, &v, &zErr);
  if( rc!=SQLITE_OK ) goto cleanup;
  if( v.nDim!=def.nDim ){
    zErr = sqlite3_mprintf("the query vector has %d dimensions, index %s has %d",
                           v.nDim, zIndex, def.nDim);
    rc = SQLITE_ERROR;
    goto cleanup;
  }
  if( k==0 ) goto cleanup;    /* no row, the arguments checked */
  rc = vsIndexBuild(pTab->db, &def, 0, 0, &zErr);
  if( (rc&0xff)==SQLITE_READONLY || (rc&0xff)==SQLITE_BUSY ){
    /* A connection that cannot write cannot build the search data or apply what other
    ** connections logged: it scans the table's rows itself, exactly, until a writable
    ** connection has done so. */
    sqlite3_free(zErr);
    zErr = 0;
    if( def.eColType==VS_LIBSQL_F1BIT ) vsIndexQueryAsBits((float*)v.aData, v.nDim);
    rc = vsIndexScanTable(pTab->db, &def, &v, k, &pCur->top, &pCur->apKey, &zErr);
    goto cleanup;
  }
  if( rc!=SQLITE_OK ) goto cleanup;
  zStore = sqlite3_mprintf("vecsync_idx_%s", def.zIndex);
  if( zStore==0 ){ rc = SQLITE_NOMEM; goto cleanup; }
  rc = vec0Find(pTab->db, pTab->pReg, def.zSchema, zStore, &pStore, &zErr);
  if( rc!=SQLITE_OK ) goto cleanup;
  rc = vec0VectorArg(pStore, argv[1], "query", &q, &zErr);
  if( rc!=SQLITE_OK ) goto cleanup;
  rc = vec0CacheEnsure(pStore);
  if( rc!=SQLITE_OK ){
    zErr = vec0TakeError(pStore);
    goto cleanup;
  }
  if( def.eColType==VS_LIBSQL_F1BIT ) vsIndexQueryAsBits(q, def.nDim);
  rc = vec0Search(pStore, q, k, 0, 0, &pCur->top);
  if( rc==SQLITE_OK && def.zKey ) rc = vsIndexHitKeys(pTab->db, &def, &pCur->top, &pCur->apKey, &zErr);

cleanup:
  if( rc==SQLITE_OK && def.eColType==VS_LIBSQL_F1BIT && def.eMetric==VS_METRIC_COSINE ){
    vsIndexHitsAsHamming(&pCur->top, def.nDim);
  }
  if( rc!=SQLITE_OK ){
    sqlite3_free(pTab->base.zErrMsg);
    pTab->base.zErrMsg = rc==SQLITE_NOMEM ? 0 : sqlite3_mprintf("vector_top_k: %s",
        zErr ? zErr : sqlite3_errmsg(pTab->db));
  }
  sqlite3_free(zErr);
  sqlite3_free(zStore);
  sqlite3_free(q);
  vsVectorFree(&v);
  vsIndexDefClear(&def);
  return rc;
}

static int vtkNext(sqlite3_vtab_cursor *cur){
  ((VtkCursor*)cur)->iHit++;
  return SQLITE_OK;
}

static int vtkEof(sqlite3_vtab_cursor *cur){
  VtkCursor *pCur = (VtkCursor*)cur;
  return pCur->iHit>=pCur->top.n;
}

static int vtkColumn(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int i){
  VtkCursor *pCur = (VtkCursor*)cur;
  const VsHit *pHit = &pCur->top.a[pCur->iHit];
  if( i==VTK_COL_ID ){
    if( pCur->apKey ) sqlite3_result_value(ctx, pCur->apKey[pCur->iHit]);
    else sqlite3_result_int64(ctx, pHit->iRowid);
  }else if( i==VTK_COL_DISTANCE ){
    sqlite3_result_double(ctx, pHit->rDist);
  }
  return SQLITE_OK;
}

/* A hit's rowid is the indexed row's rowid (its id), as libSQL's vector_top_k gives it, so
** "select rowid from vector_top_k(...)" and joins on it name the rows. Of a WITHOUT ROWID
** table it is, as in libSQL, the key when that is rowid-like (INTEGER affinity, BINARY
** collation), else the hit's position from 0. */
static int vtkRowid(sqlite3_vtab_cursor *cur, sqlite3_int64 *pRowid){
  VtkCursor *pCur = (VtkCursor*)cur;
  if( pCur->apKey==0 ) *pRowid = pCur->top.a[pCur->iHit].iRowid;
  else if( pCur->bKeyIsRowid ) *pRowid = sqlite3_value_int64(pCur->apKey[pCur->iHit]);
  else *pRowid = pCur->iHit;
  return SQLITE_OK;
}

static sqlite3_module vtkModule = {
  /* iVersion    */ 0,
  /* xCreate     */ 0,               /* eponymous only */
  /* xConnect    */ vtkConnect,
  /* xBestIndex  */ vtkBestIndex,
  /* xDisconnect */ vtkDisconnect,
  /* xDestroy    */ 0,
  /* xOpen       */ vtkOpen,
  /* xClose      */ vtkClose,
  /* xFilter     */ vtkFilter,
  /* xNext       */ vtkNext,
  /* xEof        */ vtkEof,
  /* xColumn     */ vtkColumn,
  /* xRowid      */ vtkRowid,
  0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
#if SQLITE_VERSION_NUMBER>=3044000
  0,
#endif
};

int vsRegisterVectorIndex(sqlite3 *db, Vec0Registry *pReg, char **pzErr){
  int rc;
  /* Deterministic, so SQLite accepts it in CREATE INDEX, and innocuous, so a schema
  ** using it works with trusted_schema=OFF. Both hold in the sense SQLite needs: its value
  ** is always NULL and it writes nothing. It does read the schema (the dimensions of the
  ** vector-indexed columns, to refuse a vector of the wrong size), so whether it raises an
  ** error depends on the schema as well as on its arguments. */
  VsIndexDims *pDims = sqlite3_malloc(sizeof(*pDims));
  if( pDims==0 ) return SQLITE_NOMEM;
  memset(pDims, 0, sizeof(*pDims));
  pDims->iSchemaVersion = -1;
  rc = sqlite3_create_function_v2(db, "libsql_vector_idx", -1,
                                  SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS,
                                  pDims, vsVectorIdxFunc, 0, 0, vsIndexDimsFree);
  /* vecsync_rebuild writes tables: DIRECTONLY keeps it out of triggers and views. */
  if( rc==SQLITE_OK ){
    rc = sqlite3_create_function(db, "vecsync_rebuild", 1, SQLITE_UTF8 | SQLITE_DIRECTONLY,
                                 0, vsRebuildFunc, 0, 0);
  }
  if( rc==SQLITE_OK ){
    pReg->nRef++;
    rc = sqlite3_create_module_v2(db, "vector_top_k", &vtkModule, pReg, vsRegistryRelease);
  }
  if( rc!=SQLITE_OK ){
    *pzErr = sqlite3_mprintf("vecsync: cannot register the vector index functions: %s",
                             sqlite3_errmsg(db));
  }
  return rc;
}
