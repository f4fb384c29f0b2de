/*
** libsql_index_parse.c: what a libSQL index's CREATE INDEX says: libsql_vector_idx()'s
** options, the column's declared type (F32_BLOB(n) and libSQL's other vector types), the
** WHERE of a partial index, and a WITHOUT ROWID table's one key column.
**
** Usage (internal; libsql_index.c, _build.c and _topk.c call these):
**
**   LibsqlIndex def;
**   rc = libsqlIndexLookup(db, "aux.docs_idx", &def, &zErr);   -- errors are libSQL's
**   ... def.zTable, def.zColumn, def.nDim, def.eMetric, def.bIvf, def.zWhere, def.zKey ...
**   libsqlIndexClear(&def);
**
** How it works: SQLite keeps the index's text in sqlite_schema. A small tokenizer (blanks
** and comments, quoted names, parenthesised groups) finds the libsql_vector_idx( call in it
** and reads its column and options, and what follows the expression list; the column's
** declared type comes from pragma_table_info and the key from pragma_index_list.
*/
#include "vecsync_int.h"
SQLITE_EXTENSION_INIT3

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
void libsqlIndexClear(LibsqlIndex *p){
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

/* The options of libsql_vector_idx(), by their place in libsqlIndexOption's table. */
enum {
  LIBSQL_OPT_TYPE = 0,          /* type=diskann (libSQL's, searched exactly here) | ivf */
  LIBSQL_OPT_METRIC,            /* metric=cosine | l2 */
  LIBSQL_OPT_COMPRESS,          /* compress_neighbors=float1bit | ... (libSQL's) */
  LIBSQL_OPT_ALPHA,             /* alpha=R (libSQL's, DiskANN: checked, ignored) */
  LIBSQL_OPT_SEARCH_L,          /* search_l=N (likewise) */
  LIBSQL_OPT_INSERT_L,          /* insert_l=N (likewise) */
  LIBSQL_OPT_MAX_NEIGHBORS,     /* max_neighbors=N (likewise) */
  LIBSQL_OPT_NLIST,             /* nlist=N: lists of a type=ivf index (ours) */
  LIBSQL_OPT_NPROBE             /* nprobe=N: lists a type=ivf search scans (ours) */
};

/*
** Check one 'key=value' option of libsql_vector_idx(), as libSQL does (with its messages),
** and note it in pDef. Our own options, type=ivf, nlist and nprobe, are checked strictly
** (digits only); libSQL's integers are read as libSQL reads them (atoi).
*/
int libsqlIndexOption(const char *zOpt, LibsqlIndex *pDef, char **pzErr){
  static const struct {
    const char *zKey;       /* Option name */
    int eKind;              /* 0: one of azValue, 1: positive integer, 2: real number,
                            ** 3: an integer from 1 to VEC0_IVF_MAX_LISTS */
    const char *azValue[6]; /* Accepted values of kind 0 */
  } aOpt[] = {
    /* In LIBSQL_OPT_* order. */
    { "type",               0, { "diskann", "ivf" } },
    { "metric",             0, { "cosine", "l2" } },
    { "compress_neighbors", 0, { "float1bit", "float8", "float16", "floatb16", "float32" } },
    { "alpha",              2, { 0 } },
    { "search_l",           1, { 0 } },
    { "insert_l",           1, { 0 } },
    { "max_neighbors",      1, { 0 } },
    { "nlist",              3, { 0 } },
    { "nprobe",             3, { 0 } },
  };
  const char *zEq = strchr(zOpt, '=');
  const char *zVal, *zWhy = "invalid parameter";
  char *zFree = 0;
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
    if( aOpt[i].eKind==3 ){
      sqlite3_int64 v = 0;
      for(j=0; zVal[j]>='0' && zVal[j]<='9' && v<=VEC0_IVF_MAX_LISTS; j++) v = v*10 + (zVal[j]-'0');
      if( j==0 || zVal[j] || v<1 || v>VEC0_IVF_MAX_LISTS ){
        zWhy = zFree = sqlite3_mprintf("%s must be an integer from 1 to %d",
                                       aOpt[i].zKey, VEC0_IVF_MAX_LISTS);
        if( zFree==0 ) return SQLITE_NOMEM;
        goto refused;
      }
      if( i==LIBSQL_OPT_NLIST ) pDef->nIvfList = (int)v;
      else pDef->nIvfProbe = (int)v;
      return SQLITE_OK;
    }
    for(j=0; j<6 && aOpt[i].azValue[j]; j++){
      /* libSQL compares the value with each name over the value's length: "cos" is cosine. */
      if( zVal[0] && sqlite3_strnicmp(aOpt[i].azValue[j], zVal, (int)strlen(zVal))==0
       && strlen(zVal)<=strlen(aOpt[i].azValue[j]) ){
        if( i==LIBSQL_OPT_TYPE ) pDef->bIvf = j==1;
        if( i==LIBSQL_OPT_METRIC ) pDef->eMetric = j==0 ? VS_METRIC_COSINE : VS_METRIC_L2;
        if( i==LIBSQL_OPT_COMPRESS ) pDef->bOneBit = j==0;
        return SQLITE_OK;
      }
    }
  }
refused:
  *pzErr = sqlite3_mprintf("vector index: invalid vector index parameter '%s': %s", zOpt, zWhy);
  sqlite3_free(zFree);
  return SQLITE_ERROR;
}

/*
** The options of one libsql_vector_idx(), all read (libsqlIndexOption), checked together:
** 1-bit compression only with cosine, as libSQL has it; nlist and nprobe only with
** type=ivf, and nprobe at most nlist.
*/
int libsqlIndexOptionsCheck(const LibsqlIndex *pDef, char **pzErr){
  if( pDef->bOneBit && pDef->eMetric==VS_METRIC_L2 ){
    *pzErr = sqlite3_mprintf("vector index: unable to initialize diskann: "
                             "1-bit compression available only for cosine metric");
    return SQLITE_ERROR;
  }
  if( !pDef->bIvf && (pDef->nIvfList || pDef->nIvfProbe) ){
    *pzErr = sqlite3_mprintf("vector index: %s is an option of an approximate index: "
                             "add 'type=ivf'", pDef->nIvfList ? "nlist" : "nprobe");
    return SQLITE_ERROR;
  }
  if( pDef->nIvfList && pDef->nIvfProbe>pDef->nIvfList ){
    *pzErr = sqlite3_mprintf("vector index: nprobe (%d) must not exceed nlist (%d)",
                             pDef->nIvfProbe, pDef->nIvfList);
    return SQLITE_ERROR;
  }
  return SQLITE_OK;
}

/*
** Read a declared column type as libSQL does: FLOAT32(n) or F32_BLOB(n) and the other
** vector types, n > 0. On error *pzWhy is libSQL's reason (static text).
*/
static int libsqlColumnType(const char *zType, int *peType, int *pnDim, const char **pzWhy){
  static const struct { const char *zName; int eType; } aType[] = {
    { "FLOAT32", VS_LIBSQL_F32 },     { "F32_BLOB", VS_LIBSQL_F32 },
    { "FLOAT64", VS_LIBSQL_F64 },     { "F64_BLOB", VS_LIBSQL_F64 },
    { "FLOAT1BIT", VS_LIBSQL_1BIT }, { "F1BIT_BLOB", VS_LIBSQL_1BIT },
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
static int libsqlSkipBlanks(const char *z, int i){
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
static int libsqlSkipGroup(const char *z, int i){
  char c = z[i];
  if( c=='(' ){
    int nDepth = 0;
    while( z[i] ){
      if( z[i]=='\'' || z[i]=='"' || z[i]=='`' || z[i]=='[' ){ i = libsqlSkipGroup(z, i); continue; }
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
static char *libsqlReadToken(const char *z, int *pi, int *pbString){
  int i = libsqlSkipBlanks(z, *pi);
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
** (each checked and noted in pDef) and the WHERE condition of a partial index. Errors are
** libSQL's.
*/
static int libsqlIndexParseSql(const char *z, LibsqlIndex *pDef, char **pzErr){
  static const char zKey[] = "libsql_vector_idx";
  int i, iOpen = -1, iCall = -1, bString = 0;
  /* The '(' of the indexed expressions: the first '(' outside quotes, after ON. */
  for(i=0; z[i]; ){
    if( z[i]=='\'' || z[i]=='"' || z[i]=='`' || z[i]=='[' ){ i = libsqlSkipGroup(z, i); continue; }
    if( z[i]=='(' ){ iOpen = i; break; }
    i++;
  }
  if( iOpen>=0 ){
    i = libsqlSkipBlanks(z, iOpen+1);
    if( sqlite3_strnicmp(&z[i], zKey, (int)sizeof(zKey)-1)==0 ) iCall = i;
  }
  if( iCall<0 ){
    *pzErr = sqlite3_mprintf("vector index: must contain exactly one column wrapped into "
                             "the libsql_vector_idx function");
    return SQLITE_ERROR;
  }
  i = libsqlSkipBlanks(z, iCall + (int)sizeof(zKey)-1);
  if( z[i]!='(' ){
    *pzErr = sqlite3_mprintf("vector index: libsql_vector_idx must contain at least one argument");
    return SQLITE_ERROR;
  }
  i++;
  pDef->zColumn = libsqlReadToken(z, &i, &bString);
  i = libsqlSkipBlanks(z, i);
  if( pDef->zColumn==0 || bString || (z[i]!=',' && z[i]!=')') ){
    *pzErr = sqlite3_mprintf("vector index: libsql_vector_idx first argument must be a column token");
    return SQLITE_ERROR;
  }
  pDef->eMetric = VS_METRIC_COSINE;
  while( z[i]==',' ){
    char *zOpt;
    int rc;
    i++;
    zOpt = libsqlReadToken(z, &i, &bString);
    if( zOpt==0 || !bString ){
      sqlite3_free(zOpt);
      *pzErr = sqlite3_mprintf("vector index: all arguments after first must be strings");
      return SQLITE_ERROR;
    }
    rc = libsqlIndexOption(zOpt, pDef, pzErr);
    sqlite3_free(zOpt);
    if( rc!=SQLITE_OK ) return rc;
    i = libsqlSkipBlanks(z, i);
  }
  if( z[i]!=')' ){
    *pzErr = sqlite3_mprintf("vector index: all arguments after first must be strings");
    return SQLITE_ERROR;
  }
  i = libsqlSkipBlanks(z, i+1);
  if( sqlite3_strnicmp(&z[i], "collate", 7)==0 && !isalnum((unsigned char)z[i+7]) ){
    *pzErr = sqlite3_mprintf("vector index: collation in expression is forbidden");
    return SQLITE_ERROR;
  }
  if( z[i]!=')' ){
    *pzErr = sqlite3_mprintf("vector index: must contain exactly one column wrapped into "
                             "the libsql_vector_idx function");
    return SQLITE_ERROR;
  }
  i = libsqlSkipBlanks(z, i+1);
  if( sqlite3_strnicmp(&z[i], "where", 5)==0 && !isalnum((unsigned char)z[i+5]) && z[i+5]!='_' ){
    int n;
    i = libsqlSkipBlanks(z, i+5);
    n = (int)strlen(&z[i]);
    while( n>0 && (isspace((unsigned char)z[i+n-1]) || z[i+n-1]==';') ) n--;
    pDef->zWhere = sqlite3_mprintf("%.*s", n, &z[i]);
    if( pDef->zWhere==0 ) return SQLITE_NOMEM;
  }
  return SQLITE_OK;
}

/* Split "schema.index" (an attached database's index) into its parts. */
static int libsqlIndexName(const char *zName, char **pzSchema, char **pzIndex){
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
int libsqlIndexLookup(sqlite3 *db, const char *zName, LibsqlIndex *pDef, char **pzErr){
  sqlite3_stmt *pStmt = 0;
  char *zSql = 0, *zSchema = 0, *zIndex = 0;
  const char *zWhy = 0;
  int rc;

  memset(pDef, 0, sizeof(*pDef));
  rc = libsqlIndexName(zName, &zSchema, &zIndex);
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
        rc = libsqlIndexParseSql(zText, pDef, pzErr);
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
  rc = libsqlIndexOptionsCheck(pDef, pzErr);
  if( rc!=SQLITE_OK ) goto cleanup;

  /* The column's declared type gives the element type and the dimensions. */
  zSql = sqlite3_mprintf("SELECT type FROM pragma_table_info(%Q, %Q) WHERE name=%Q COLLATE NOCASE",
                         pDef->zTable, pDef->zSchema, pDef->zColumn);
  if( zSql==0 ){ rc = SQLITE_NOMEM; goto cleanup; }
  rc = sqlite3_prepare_v2(db, zSql, -1, &pStmt, 0);
  if( rc!=SQLITE_OK ) goto cleanup;
  if( sqlite3_step(pStmt)==SQLITE_ROW ){
    const char *zType = (const char*)sqlite3_column_text(pStmt, 0);
    if( libsqlColumnType(zType, &pDef->eColType, &pDef->nDim, &zWhy)!=SQLITE_OK ){
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
  if( rc!=SQLITE_OK ) libsqlIndexClear(pDef);
  return rc;
}

/* Whether a CREATE statement is running on db (its CREATE INDEX fills the index, calling
** libsql_vector_idx, before it changes the schema cookie). */
int libsqlCreateRunning(sqlite3 *db){
  sqlite3_stmt *p;
  for(p=sqlite3_next_stmt(db, 0); p; p=sqlite3_next_stmt(db, p)){
    const char *z = sqlite3_sql(p);
    if( z && sqlite3_stmt_busy(p) ){
      int i = libsqlSkipBlanks(z, 0);
      if( sqlite3_strnicmp(&z[i], "create", 6)==0 ) return 1;
    }
  }
  return 0;
}
