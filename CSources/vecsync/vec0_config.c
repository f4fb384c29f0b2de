/*
** vec0_config.c: the column declarations of a vec0 table.
**
** Usage (sqlite-vec's syntax):
**
**   create virtual table vec_photos using vec0(
**     photo_id text primary key,                    -- or integer primary key, or none
**     embedding float[768] distance_metric=cosine,  -- cosine | l2 (default) | dot | l1
**                                                   -- or int8[N] (l2, cosine, l1), bit[N]
**       indexed by rescore(quantizer=int8, oversample=8),  -- optional: int8 | bit codes
**     album text,                                   -- metadata: filterable in KNN
**     taken_at integer,
**     +caption text,                                -- auxiliary: stored, returned
**     thumb float[64] distance_metric=l2,           -- further vector columns: stored
**                                                   -- per row, searched by exact scan
**     user_id integer partition key,                -- sqlite-vec's: a metadata column
**     chunk_size=1024                               -- vectors per storage block
**   );
**
** Names may be quoted as SQL allows ("a b", [a b], `a b`, 'a b'). Element types of the
** vector column: float / float32 / f32 (and float64 / float8, sqlite-vec's spellings that
** it stores as float32 too), int8 / i8 (one signed byte an element), bit (one
** bit an element, N a multiple of 8; its distance is the Hamming distance, and no
** distance_metric may be given). Metadata and auxiliary types: text, integer
** (int), float (real, double), boolean (bool), and blob for auxiliary columns.
*/
#include "vecsync_int.h"
SQLITE_EXTENSION_INIT3

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

typedef struct Vec0Scan Vec0Scan;
struct Vec0Scan {
  const char *z;        /* The declaration being read */
  int i;                /* Offset of the next character */
};

static void vec0SkipBlanks(Vec0Scan *s){
  while( s->z[s->i] && isspace((unsigned char)s->z[s->i]) ) s->i++;
}

/* Read an identifier or a keyword: a quoted name or a run of [A-Za-z0-9_$] and
** non-ASCII bytes. Returns a sqlite3_malloc'ed copy, unquoted, or NULL if none. */
static char *vec0Word(Vec0Scan *s){
  const char *z;
  int n = 0;
  vec0SkipBlanks(s);
  z = &s->z[s->i];
  if( z[0]=='"' || z[0]=='\'' || z[0]=='`' || z[0]=='[' ){
    char cClose = z[0]=='[' ? ']' : z[0];
    sqlite3_str *pStr = sqlite3_str_new(0);
    int j = 1;
    for(;;){
      if( z[j]==0 ){ sqlite3_free(sqlite3_str_finish(pStr)); return 0; }
      if( z[j]==cClose ){
        if( cClose!=']' && z[j+1]==cClose ){ sqlite3_str_appendchar(pStr, 1, cClose); j += 2; continue; }
        j++;
        break;
      }
      sqlite3_str_appendchar(pStr, 1, z[j]);
      j++;
    }
    s->i += j;
    {
      char *zOut = sqlite3_str_finish(pStr);
      return zOut ? zOut : sqlite3_mprintf("");
    }
  }
  while( z[n] && (isalnum((unsigned char)z[n]) || z[n]=='_' || z[n]=='$'
                  || (unsigned char)z[n]>=0x80) ) n++;
  if( n==0 ) return 0;
  s->i += n;
  return sqlite3_mprintf("%.*s", n, z);
}

static int vec0Is(const char *zWord, const char *zKeyword){
  return zWord && sqlite3_stricmp(zWord, zKeyword)==0;
}

const char *vec0MetricName(int eMetric){
  switch( eMetric ){
    case VS_METRIC_COSINE: return "cosine";
    case VS_METRIC_DOT:    return "dot";
    case VS_METRIC_L1:     return "l1";
    case VS_METRIC_HAMMING: return "hamming";
  }
  return "l2";
}

static int vec0ScalarType(const char *zType, int bAux){
  if( vec0Is(zType, "text") ) return VEC0_TYPE_TEXT;
  if( vec0Is(zType, "integer") || vec0Is(zType, "int") ) return VEC0_TYPE_INTEGER;
  if( vec0Is(zType, "float") || vec0Is(zType, "real") || vec0Is(zType, "double") ){
    return VEC0_TYPE_FLOAT;
  }
  if( vec0Is(zType, "boolean") || vec0Is(zType, "bool") ) return VEC0_TYPE_BOOLEAN;
  if( bAux && vec0Is(zType, "blob") ) return VEC0_TYPE_BLOB;
  if( bAux && (zType==0 || zType[0]==0) ) return VEC0_TYPE_ANY;
  return -1;
}

/* Read an option value that must be a whole number from iMin to iMax. */
static int vec0IntValue(const char *zValue, int iMin, int iMax, int *piOut){
  char *zEnd = 0;
  long n;
  if( zValue==0 || zValue[0]==0 ) return 0;
  n = strtol(zValue, &zEnd, 10);
  if( *zEnd || n<iMin || n>iMax ) return 0;
  *piOut = (int)n;
  return 1;
}

/* After "indexed" in a vector column's declaration: "by rescore(quantizer=int8|bit
** [, oversample=N])", sqlite-vec's syntax for a quantized scan with exact re-scoring. */
static int vec0ParseRescore(Vec0Scan *s, const char *zCol, Vec0Config *p, char **pzErr){
  char *zWord = 0, *zValue = 0;
  int rc = SQLITE_OK;
  zWord = vec0Word(s);
  if( !vec0Is(zWord, "by") ) goto syntax;
  sqlite3_free(zWord);
  zWord = vec0Word(s);
  if( !vec0Is(zWord, "rescore") ){
    *pzErr = sqlite3_mprintf("vec0: column \"%s\": unknown index \"%s\"; the index is "
                             "rescore(quantizer=int8|bit, oversample=N)", zCol,
                             zWord ? zWord : "");
    rc = SQLITE_ERROR;
    goto cleanup;
  }
  if( p->eQuant!=VEC0_QUANT_NONE ){
    *pzErr = sqlite3_mprintf("vec0: column \"%s\": more than one index", zCol);
    rc = SQLITE_ERROR;
    goto cleanup;
  }
  vec0SkipBlanks(s);
  if( s->z[s->i]!='(' ) goto syntax;
  s->i++;
  p->nOversample = 0;
  for(;;){
    sqlite3_free(zWord);
    sqlite3_free(zValue);
    zValue = 0;
    zWord = vec0Word(s);
    vec0SkipBlanks(s);
    if( zWord==0 || s->z[s->i]!='=' ) goto syntax;
    s->i++;
    zValue = vec0Word(s);
    if( vec0Is(zWord, "quantizer") ){
      if( vec0Is(zValue, "int8") ) p->eQuant = VEC0_QUANT_INT8;
      else if( vec0Is(zValue, "bit") ) p->eQuant = VEC0_QUANT_BIT;
      else{
        *pzErr = sqlite3_mprintf("vec0: column \"%s\": unknown quantizer \"%s\"; use int8 "
                                 "or bit", zCol, zValue ? zValue : "");
        rc = SQLITE_ERROR;
        goto cleanup;
      }
    }else if( vec0Is(zWord, "oversample") ){
      if( !vec0IntValue(zValue, 1, VEC0_MAX_OVERSAMPLE, &p->nOversample) ){
        *pzErr = sqlite3_mprintf("vec0: column \"%s\": oversample must be an integer from 1 "
                                 "to %d, got \"%s\"", zCol, VEC0_MAX_OVERSAMPLE,
                                 zValue ? zValue : "");
        rc = SQLITE_ERROR;
        goto cleanup;
      }
    }else{
      *pzErr = sqlite3_mprintf("vec0: column \"%s\": unknown rescore option \"%s\"; use "
                               "quantizer and oversample", zCol, zWord);
      rc = SQLITE_ERROR;
      goto cleanup;
    }
    vec0SkipBlanks(s);
    if( s->z[s->i]==',' ){ s->i++; continue; }
    if( s->z[s->i]==')' ){ s->i++; break; }
    goto syntax;
  }
  if( p->eQuant==VEC0_QUANT_NONE ){
    *pzErr = sqlite3_mprintf("vec0: column \"%s\": rescore needs a quantizer (int8 or bit)",
                             zCol);
    rc = SQLITE_ERROR;
  }else if( p->nOversample==0 ){
    p->nOversample = p->eQuant==VEC0_QUANT_BIT ? VEC0_DEFAULT_OVERSAMPLE_BIT
                                               : VEC0_DEFAULT_OVERSAMPLE;
  }
  goto cleanup;

syntax:
  *pzErr = sqlite3_mprintf("vec0: column \"%s\": expected \"indexed by rescore(quantizer="
                           "int8|bit, oversample=N)\"", zCol);
  rc = SQLITE_ERROR;
cleanup:
  sqlite3_free(zWord);
  sqlite3_free(zValue);
  return rc;
}

/* Parse one argument of the vec0(...) declaration. */
static int vec0ParseArg(const char *zArg, Vec0Config *p, char **pzErr){
  Vec0Scan s;
  char *zName = 0, *zType = 0, *zWord = 0;
  int rc = SQLITE_OK;
  int bAux = 0;

  s.z = zArg;
  s.i = 0;
  vec0SkipBlanks(&s);
  if( s.z[s.i]=='+' ){ bAux = 1; s.i++; }
  zName = vec0Word(&s);
  if( zName==0 ){
    *pzErr = sqlite3_mprintf("vec0: cannot read the column declaration \"%s\"", zArg);
    rc = SQLITE_ERROR;
    goto cleanup;
  }
  vec0SkipBlanks(&s);

  /* Table option: chunk_size=N */
  if( !bAux && s.z[s.i]=='=' ){
    if( vec0Is(zName, "chunk_size") ){
      char *zEnd = 0;
      long n = strtol(&s.z[s.i+1], &zEnd, 10);
      while( zEnd && isspace((unsigned char)*zEnd) ) zEnd++;
      if( zEnd==&s.z[s.i+1] || (zEnd && *zEnd) || n<8 || n>65536 || (n%8)!=0 ){
        *pzErr = sqlite3_mprintf(
          "vec0: chunk_size must be a multiple of 8 between 8 and 65536, got \"%s\"",
          &s.z[s.i+1]);
        rc = SQLITE_ERROR;
      }else{
        p->nChunk = (int)n;
      }
    }else{
      *pzErr = sqlite3_mprintf("vec0: unknown table option \"%s\"", zName);
      rc = SQLITE_ERROR;
    }
    goto cleanup;
  }

  if( p->nCol>=VEC0_MAX_COLUMNS ){
    *pzErr = sqlite3_mprintf("vec0: more than %d columns", VEC0_MAX_COLUMNS);
    rc = SQLITE_ERROR;
    goto cleanup;
  }
  {
    int i;
    for(i=0; i<p->nCol; i++){
      if( sqlite3_stricmp(p->aCol[i].zName, zName)==0 ){
        *pzErr = sqlite3_mprintf("vec0: duplicate column name \"%s\"", zName);
        rc = SQLITE_ERROR;
        goto cleanup;
      }
    }
    if( vec0Is(zName, "distance") || vec0Is(zName, "k") || vec0Is(zName, "rowid") ){
      *pzErr = sqlite3_mprintf("vec0: \"%s\" is a reserved column name", zName);
      rc = SQLITE_ERROR;
      goto cleanup;
    }
  }

  zType = vec0Word(&s);
  vec0SkipBlanks(&s);

  /* The vector column: float[N] [distance_metric=...] */
  if( s.z[s.i]=='[' && !bAux ){
    char *zEnd = 0;
    long nDim;
    int eElem = 0, bMetric = 0, bFirst, eMetric = VS_METRIC_L2;
    if( vec0Is(zType, "float") || vec0Is(zType, "float32") || vec0Is(zType, "f32")
     || vec0Is(zType, "float64") || vec0Is(zType, "float8") ){
      /* float64[N] and float8[N] are float32 columns, as in sqlite-vec 0.1.x (which takes
      ** any type name beginning "float" for float32): their vectors are stored, compared
      ** and returned as float32, so a file sqlite-vec wrote with them reads the same. */
      eElem = VS_F32;
    }else if( vec0Is(zType, "int8") || vec0Is(zType, "i8") ){
      eElem = VS_I8;
    }else if( vec0Is(zType, "bit") ){
      eElem = VS_BIT;
    }else{
      *pzErr = sqlite3_mprintf(
        "vec0: column \"%s\": unsupported vector type \"%s\"; use float[N], int8[N] or "
        "bit[N]", zName, zType ? zType : "");
      rc = SQLITE_ERROR;
      goto cleanup;
    }
    nDim = strtol(&s.z[s.i+1], &zEnd, 10);
    if( zEnd==&s.z[s.i+1] || *zEnd!=']' || nDim<1 || nDim>VS_MAX_DIMS ){
      *pzErr = sqlite3_mprintf(
        "vec0: column \"%s\": dimensions must be an integer from 1 to %d", zName,
        VS_MAX_DIMS);
      rc = SQLITE_ERROR;
      goto cleanup;
    }
    s.i = (int)(zEnd - s.z) + 1;
    bFirst = p->iVec<0;
    for(;;){
      char *zValue;
      sqlite3_free(zWord);
      zWord = vec0Word(&s);
      if( zWord==0 ) break;
      if( vec0Is(zWord, "indexed") ){
        if( !bFirst ){
          /* The codes and the in-memory copy are the first vector column's. */
          *pzErr = sqlite3_mprintf("vec0: column \"%s\": indexed by rescore(...) is for the "
                                   "first vector column (\"%s\") only", zName,
                                   p->aCol[p->iVec].zName);
          rc = SQLITE_ERROR;
          goto cleanup;
        }
        rc = vec0ParseRescore(&s, zName, p, pzErr);
        if( rc!=SQLITE_OK ) goto cleanup;
        continue;
      }
      vec0SkipBlanks(&s);
      if( s.z[s.i]!='=' ){
        *pzErr = sqlite3_mprintf("vec0: column \"%s\": expected option=value after \"%s\"",
                                 zName, zWord);
        rc = SQLITE_ERROR;
        goto cleanup;
      }
      s.i++;
      zValue = vec0Word(&s);
      if( vec0Is(zWord, "distance_metric") ){
        bMetric = 1;
        if( vec0Is(zValue, "cosine") ) eMetric = VS_METRIC_COSINE;
        else if( vec0Is(zValue, "l2") ) eMetric = VS_METRIC_L2;
        else if( vec0Is(zValue, "dot") ) eMetric = VS_METRIC_DOT;
        else if( vec0Is(zValue, "l1") ) eMetric = VS_METRIC_L1;
        else{
          *pzErr = sqlite3_mprintf(
            "vec0: unknown distance_metric \"%s\"; use cosine, l2, dot or l1",
            zValue ? zValue : "");
          rc = SQLITE_ERROR;
        }
      }else{
        *pzErr = sqlite3_mprintf("vec0: column \"%s\": unknown option \"%s\"", zName, zWord);
        rc = SQLITE_ERROR;
      }
      sqlite3_free(zValue);
      if( rc!=SQLITE_OK ) goto cleanup;
    }
    if( eElem==VS_BIT && bMetric ){
      /* As sqlite-vec: a bit column's distance is the Hamming distance, and nothing else. */
      *pzErr = sqlite3_mprintf("vec0: column \"%s\": a bit[N] column takes no "
                               "distance_metric: its distance is the Hamming distance", zName);
      rc = SQLITE_ERROR;
      goto cleanup;
    }
    if( eElem==VS_BIT && nDim%8!=0 ){
      /* sqlite-vec accepts the declaration, then refuses every vector (vec_bit makes
      ** whole bytes): refused here, where the reason can be given. */
      *pzErr = sqlite3_mprintf("vec0: column \"%s\": bit[%ld]: the number of bits must be "
                               "a multiple of 8", zName, nDim);
      rc = SQLITE_ERROR;
      goto cleanup;
    }
    if( eElem==VS_I8 && eMetric==VS_METRIC_DOT ){
      *pzErr = sqlite3_mprintf("vec0: column \"%s\": an int8[N] column takes "
                               "distance_metric l2, cosine or l1, not dot", zName);
      rc = SQLITE_ERROR;
      goto cleanup;
    }
    if( bFirst && eElem!=VS_F32 && p->eQuant!=VEC0_QUANT_NONE ){
      /* rescore codes float32 vectors; int8 and bit vectors are scanned as they are. */
      *pzErr = sqlite3_mprintf("vec0: column \"%s\": indexed by rescore(...) is for float[N] "
                               "columns; an %s[N] column is scanned exactly as it is stored",
                               zName, eElem==VS_I8 ? "int8" : "bit");
      rc = SQLITE_ERROR;
      goto cleanup;
    }
    if( eElem==VS_BIT ) eMetric = VS_METRIC_HAMMING;
    p->aCol[p->nCol].nDim = (int)nDim;
    p->aCol[p->nCol].eElem = eElem;
    p->aCol[p->nCol].eMetric = eMetric;
    p->aCol[p->nCol].nVecByte = eElem==VS_F32 ? (int)nDim*4 : eElem==VS_I8 ? (int)nDim
                                                                          : (int)nDim/8;
    if( !bFirst ){
      /* An extra vector column: stored in T_rows, scanned exactly from there. */
      p->nExtraVec++;
      p->aCol[p->nCol].eKind = VEC0_VECTOR;
      p->aCol[p->nCol].eType = VEC0_TYPE_BLOB;
      p->aCol[p->nCol].zName = zName;
      zName = 0;
      p->nCol++;
      goto check_end;
    }
    p->eMetric = eMetric;
    p->eElem = eElem;
    p->nVecByte = p->aCol[p->nCol].nVecByte;
    p->nWord = (p->nVecByte + 3)/4;
    if( p->eMetric==VS_METRIC_L1 && p->eQuant!=VEC0_QUANT_NONE ){
      /* The codes approximate q.x, from which an L1 distance cannot be estimated: the
      ** candidates they chose would not be the nearest by L1. */
      *pzErr = sqlite3_mprintf("vec0: column \"%s\": indexed by rescore(...) does not "
                               "support distance_metric=l1 (use l2, cosine or dot, or "
                               "drop the index: an l1 table is scanned exactly)", zName);
      rc = SQLITE_ERROR;
      goto cleanup;
    }
    p->iVec = p->nCol;
    p->nDim = (int)nDim;
    p->aCol[p->nCol].eKind = VEC0_VECTOR;
    p->aCol[p->nCol].eType = VEC0_TYPE_BLOB;
    p->aCol[p->nCol].zName = zName;
    zName = 0;
    p->nCol++;
    goto check_end;
  }

  /* Primary key: <name> text|integer primary key */
  zWord = vec0Word(&s);
  if( vec0Is(zWord, "primary") ){
    sqlite3_free(zWord);
    zWord = vec0Word(&s);
    if( !vec0Is(zWord, "key") || bAux ){
      *pzErr = sqlite3_mprintf("vec0: column \"%s\": expected PRIMARY KEY", zName);
      rc = SQLITE_ERROR;
      goto cleanup;
    }
    if( p->iPk>=0 ){
      *pzErr = sqlite3_mprintf("vec0: more than one primary key");
      rc = SQLITE_ERROR;
      goto cleanup;
    }
    if( vec0Is(zType, "text") ){
      p->aCol[p->nCol].eType = VEC0_TYPE_TEXT;
    }else if( vec0Is(zType, "integer") || vec0Is(zType, "int") ){
      p->aCol[p->nCol].eType = VEC0_TYPE_INTEGER;
    }else{
      *pzErr = sqlite3_mprintf(
        "vec0: primary key \"%s\" must be text or integer", zName);
      rc = SQLITE_ERROR;
      goto cleanup;
    }
    p->iPk = p->nCol;
    p->aCol[p->nCol].eKind = VEC0_PK;
    p->aCol[p->nCol].zName = zName;
    zName = 0;
    p->nCol++;
    goto check_end;
  }
  /* sqlite-vec's "<name> text|integer partition key": a metadata column with an index in
  ** T_rows, so a KNN query's "user_id = ?" finds that partition's slots without reading the
  ** other rows, and the scan then scores only them (one by one when they are few). */
  if( vec0Is(zWord, "partition") && !bAux ){
    p->aCol[p->nCol].bPartition = 1;
    sqlite3_free(zWord);
    zWord = vec0Word(&s);
    if( !vec0Is(zWord, "key")
     || !(vec0Is(zType, "text") || vec0Is(zType, "integer") || vec0Is(zType, "int")) ){
      *pzErr = sqlite3_mprintf(
        "vec0: column \"%s\": a partition key is declared \"text partition key\" or "
        "\"integer partition key\"", zName);
      rc = SQLITE_ERROR;
      goto cleanup;
    }
    sqlite3_free(zWord);
    zWord = 0;
  }
  if( zWord ){
    *pzErr = sqlite3_mprintf("vec0: column \"%s\": unexpected \"%s\"", zName, zWord);
    rc = SQLITE_ERROR;
    goto cleanup;
  }

  /* Metadata or auxiliary column */
  {
    int eType = vec0ScalarType(zType, bAux);
    if( eType<0 ){
      *pzErr = sqlite3_mprintf(
        "vec0: column \"%s\": unknown type \"%s\"; use text, integer, float or boolean%s",
        zName, zType ? zType : "", bAux ? " (or blob)" : "");
      rc = SQLITE_ERROR;
      goto cleanup;
    }
    p->aCol[p->nCol].eKind = bAux ? VEC0_AUX : VEC0_META;
    p->aCol[p->nCol].eType = eType;
    p->aCol[p->nCol].zName = zName;
    zName = 0;
    p->nCol++;
  }

check_end:
  vec0SkipBlanks(&s);
  if( s.z[s.i] ){
    *pzErr = sqlite3_mprintf("vec0: unexpected text \"%s\" in \"%s\"", &s.z[s.i], zArg);
    rc = SQLITE_ERROR;
  }

cleanup:
  sqlite3_free(zName);
  sqlite3_free(zType);
  sqlite3_free(zWord);
  return rc;
}

int vec0ParseConfig(int argc, const char *const *argv, Vec0Config *pCfg, char **pzErr){
  int rc = SQLITE_OK;
  int i;
  memset(pCfg, 0, sizeof(*pCfg));
  pCfg->iPk = -1;
  pCfg->iVec = -1;
  pCfg->eMetric = VS_METRIC_L2;
  pCfg->nChunk = VEC0_DEFAULT_CHUNK;
  for(i=3; i<argc && rc==SQLITE_OK; i++){
    rc = vec0ParseArg(argv[i], pCfg, pzErr);
  }
  if( rc==SQLITE_OK && pCfg->iVec<0 ){
    *pzErr = sqlite3_mprintf("vec0: a vector column is required, e.g. embedding float[768]");
    rc = SQLITE_ERROR;
  }
  if( rc!=SQLITE_OK ) vec0ConfigClear(pCfg);
  return rc;
}

int vec0IsExtraVector(const Vec0Config *pCfg, int i){
  return i>=0 && i<pCfg->nCol && i!=pCfg->iVec && pCfg->aCol[i].eKind==VEC0_VECTOR;
}

int vec0IsStored(const Vec0Config *pCfg, int i){
  int e = pCfg->aCol[i].eKind;
  return e==VEC0_META || e==VEC0_AUX || vec0IsExtraVector(pCfg, i);
}

void vec0ColumnConfig(const Vec0Config *pCfg, int iCol, Vec0Config *pOut){
  const Vec0Column *pCol = &pCfg->aCol[iCol];
  *pOut = *pCfg;
  pOut->iVec = iCol;
  pOut->nDim = pCol->nDim;
  pOut->eElem = pCol->eElem;
  pOut->eMetric = pCol->eMetric;
  pOut->nVecByte = pCol->nVecByte;
  pOut->nWord = (pCol->nVecByte + 3)/4;
  pOut->eQuant = VEC0_QUANT_NONE;
}

void vec0ConfigClear(Vec0Config *pCfg){
  int i;
  for(i=0; i<pCfg->nCol; i++) sqlite3_free(pCfg->aCol[i].zName);
  pCfg->nCol = 0;
}
