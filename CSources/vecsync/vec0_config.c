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
**                                                   -- or ivf(nlist=N, nprobe=N): an
**                                                   -- approximate index (vec0_ivf.c)
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

/* The metric distance_metric=zName declares (as vec0MetricName spells them, hamming
** excepted), or -1. */
static int vec0MetricByName(const char *zName){
  static const int aMetric[] = { VS_METRIC_COSINE, VS_METRIC_L2, VS_METRIC_DOT, VS_METRIC_L1 };
  size_t i;
  for(i=0; i<sizeof(aMetric)/sizeof(aMetric[0]); i++){
    if( vec0Is(zName, vec0MetricName(aMetric[i])) ) return aMetric[i];
  }
  return -1;
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

/* After "indexed by rescore": "(quantizer=int8|bit [, oversample=N])", sqlite-vec's
** syntax for a quantized scan with exact re-scoring. */
static int vec0ParseRescore(Vec0Scan *s, const char *zCol, Vec0Config *p, char **pzErr){
  char *zWord = 0, *zValue = 0;
  int rc = SQLITE_OK;
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


/* Read "(key=value, ...)" after an index's name: calls xOption for each pair, which
** returns SQLITE_OK or sets *pzErr. SQLITE_ERROR with zSyntax's message on bad syntax. */
static int vec0ParseIndexOptions(Vec0Scan *s, const char *zCol, const char *zSyntax,
                                 int (*xOption)(const char*, const char*, const char*,
                                                Vec0Config*, char**),
                                 Vec0Config *p, char **pzErr){
  char *zWord = 0, *zValue = 0;
  int rc = SQLITE_OK;
  vec0SkipBlanks(s);
  if( s->z[s->i]!='(' ) goto syntax;
  s->i++;
  vec0SkipBlanks(s);
  if( s->z[s->i]==')' ){ s->i++; goto cleanup; }      /* "ivf()": every default */
  for(;;){
    zWord = vec0Word(s);
    vec0SkipBlanks(s);
    if( zWord==0 || s->z[s->i]!='=' ) goto syntax;
    s->i++;
    zValue = vec0Word(s);
    if( zValue==0 ) goto syntax;
    rc = xOption(zCol, zWord, zValue, p, pzErr);
    if( rc!=SQLITE_OK ) goto cleanup;
    sqlite3_free(zWord);
    sqlite3_free(zValue);
    zWord = zValue = 0;
    vec0SkipBlanks(s);
    if( s->z[s->i]==',' ){ s->i++; continue; }
    if( s->z[s->i]==')' ){ s->i++; break; }
    goto syntax;
  }
  goto cleanup;

syntax:
  *pzErr = sqlite3_mprintf("vec0: column \"%s\": expected \"indexed by %s\"", zCol, zSyntax);
  rc = SQLITE_ERROR;
cleanup:
  sqlite3_free(zWord);
  sqlite3_free(zValue);
  return rc;
}

/* One option of ivf(...), as sqlite-vec 0.1.10 reads them: nlist (0 to 65536; 0, as
** leaving it out, lets training choose about sqrt(rows)), nprobe (1 to 65536),
** quantizer (none, int8, binary) and oversample (1 or more, with a quantizer); and ours,
** stored_codes (1, the default: a training keeps each row's code in T_ivf_assign; 0:
** none, for a smaller file). The candidates are re-scored from the float32 vectors
** whatever the quantizer: the distances are exact either way. */
static int vec0IvfOption(const char *zCol, const char *zKey, const char *zValue,
                         Vec0Config *p, char **pzErr){
  if( vec0Is(zKey, "nlist") ){
    if( !vec0IntValue(zValue, 0, VEC0_IVF_MAX_LISTS, &p->nIvfList) ){
      *pzErr = sqlite3_mprintf("vec0: column \"%s\": nlist must be an integer from 0 to %d, "
                               "got \"%s\"", zCol, VEC0_IVF_MAX_LISTS, zValue);
      return SQLITE_ERROR;
    }
  }else if( vec0Is(zKey, "nprobe") ){
    if( !vec0IntValue(zValue, 1, VEC0_IVF_MAX_LISTS, &p->nIvfProbe) ){
      *pzErr = sqlite3_mprintf("vec0: column \"%s\": nprobe must be an integer from 1 to %d, "
                               "got \"%s\"", zCol, VEC0_IVF_MAX_LISTS, zValue);
      return SQLITE_ERROR;
    }
  }else if( vec0Is(zKey, "quantizer") ){
    if( vec0Is(zValue, "none") ) p->eIvfQuant = VEC0_QUANT_NONE;
    else if( vec0Is(zValue, "int8") ) p->eIvfQuant = VEC0_QUANT_INT8;
    else if( vec0Is(zValue, "binary") ) p->eIvfQuant = VEC0_QUANT_BIT;
    else{
      *pzErr = sqlite3_mprintf("vec0: column \"%s\": unknown ivf quantizer \"%s\"; use none, "
                               "int8 or binary", zCol, zValue);
      return SQLITE_ERROR;
    }
  }else if( vec0Is(zKey, "oversample") ){
    if( !vec0IntValue(zValue, 1, VEC0_MAX_OVERSAMPLE, &p->nIvfOversample) ){
      *pzErr = sqlite3_mprintf("vec0: column \"%s\": oversample must be an integer from 1 "
                               "to %d, got \"%s\"", zCol, VEC0_MAX_OVERSAMPLE, zValue);
      return SQLITE_ERROR;
    }
  }else if( vec0Is(zKey, "stored_codes") ){
    int bStored = 1;
    if( !vec0IntValue(zValue, 0, 1, &bStored) ){
      *pzErr = sqlite3_mprintf("vec0: column \"%s\": stored_codes must be 0 or 1, got "
                               "\"%s\"", zCol, zValue);
      return SQLITE_ERROR;
    }
    p->bIvfNoCodes = !bStored;
  }else{
    *pzErr = sqlite3_mprintf("vec0: column \"%s\": unknown ivf option \"%s\"; use nlist, "
                             "nprobe, quantizer, oversample and stored_codes", zCol, zKey);
    return SQLITE_ERROR;
  }
  return SQLITE_OK;
}

/* One option of diskann(...), sqlite-vec 0.1.10's graph index, checked as it reads them
** and otherwise unused: the column gets this extension's inverted-file index instead. */
static int vec0DiskannOption(const char *zCol, const char *zKey, const char *zValue,
                             Vec0Config *p, char **pzErr){
  int n = 0;
  (void)p;
  if( vec0Is(zKey, "neighbor_quantizer") ){
    if( vec0Is(zValue, "binary") || vec0Is(zValue, "int8") ) return SQLITE_OK;
    *pzErr = sqlite3_mprintf("vec0: column \"%s\": unknown diskann neighbor_quantizer "
                             "\"%s\"; use binary or int8", zCol, zValue);
    return SQLITE_ERROR;
  }
  if( vec0Is(zKey, "n_neighbors") || vec0Is(zKey, "search_list_size")
   || vec0Is(zKey, "search_list_size_search") || vec0Is(zKey, "search_list_size_insert")
   || vec0Is(zKey, "buffer_threshold") ){
    if( vec0IntValue(zValue, vec0Is(zKey, "buffer_threshold") ? 0 : 1, 1<<20, &n) ){
      return SQLITE_OK;
    }
    *pzErr = sqlite3_mprintf("vec0: column \"%s\": diskann %s must be a whole number, got "
                             "\"%s\"", zCol, zKey, zValue);
    return SQLITE_ERROR;
  }
  *pzErr = sqlite3_mprintf("vec0: column \"%s\": unknown diskann option \"%s\"; use "
                           "neighbor_quantizer, n_neighbors, search_list_size, "
                           "search_list_size_search, search_list_size_insert or "
                           "buffer_threshold", zCol, zKey);
  return SQLITE_ERROR;
}

/* After "indexed by ivf" or "by diskann": its options, then the checks sqlite-vec makes
** (an explicit nprobe above nlist, oversample without a quantizer). */
static int vec0ParseIvf(Vec0Scan *s, const char *zCol, int bDiskann, Vec0Config *p,
                        char **pzErr){
  int rc;
  p->bIvf = 1;
  p->nIvfList = 0;
  p->nIvfProbe = 0;
  p->eIvfQuant = -1;
  p->nIvfOversample = 1;
  p->bIvfNoCodes = 0;
  if( bDiskann ){
    rc = vec0ParseIndexOptions(s, zCol, "diskann(neighbor_quantizer=binary|int8, "
                               "n_neighbors=N, search_list_size=N, ...)",
                               vec0DiskannOption, p, pzErr);
  }else{
    rc = vec0ParseIndexOptions(s, zCol, "ivf(nlist=N, nprobe=N)", vec0IvfOption, p, pzErr);
  }
  if( rc==SQLITE_OK && p->nIvfOversample>1 && p->eIvfQuant<=VEC0_QUANT_NONE ){
    *pzErr = sqlite3_mprintf("vec0: column \"%s\": ivf oversample needs a quantizer (int8 "
                             "or binary)", zCol);
    rc = SQLITE_ERROR;
  }
  if( rc==SQLITE_OK && p->nIvfList>0 && p->nIvfProbe>p->nIvfList ){
    *pzErr = sqlite3_mprintf("vec0: column \"%s\": nprobe (%d) must not exceed nlist (%d)",
                             zCol, p->nIvfProbe, p->nIvfList);
    rc = SQLITE_ERROR;
  }
  /* The lists keep int8 codes unless quantizer=none asks for float32 (sqlite-vec's
  ** default, slower to scan for the same answers: every candidate is re-scored from the
  ** float32 vectors either way). oversample: the candidates re-scored per result. */
  if( p->eIvfQuant<0 ) p->eIvfQuant = VEC0_QUANT_INT8;
  if( p->nIvfOversample<=1 ){
    p->nIvfOversample = p->eIvfQuant==VEC0_QUANT_BIT ? VEC0_DEFAULT_OVERSAMPLE_BIT
                                                     : VEC0_IVF_DEFAULT_OVERSAMPLE;
  }
  if( p->nIvfProbe==0 ){
    p->nIvfProbe = VEC0_IVF_DEFAULT_PROBE;
    if( p->nIvfList>0 && p->nIvfProbe>p->nIvfList ) p->nIvfProbe = p->nIvfList;
  }
  return rc;
}

/* After "indexed" in a vector column's declaration: "by rescore(...)", "by ivf(...)" or
** "by diskann(...)". */
static int vec0ParseIndex(Vec0Scan *s, const char *zCol, Vec0Config *p, char **pzErr){
  char *zWord = vec0Word(s);
  int rc = SQLITE_OK;
  if( !vec0Is(zWord, "by") ){
    *pzErr = sqlite3_mprintf("vec0: column \"%s\": expected \"indexed by rescore(...)\", "
                             "\"indexed by ivf(...)\" or \"indexed by diskann(...)\"", zCol);
    rc = SQLITE_ERROR;
    goto cleanup;
  }
  sqlite3_free(zWord);
  zWord = vec0Word(s);
  if( p->eQuant!=VEC0_QUANT_NONE || p->bIvf ){
    *pzErr = sqlite3_mprintf("vec0: column \"%s\": more than one index", zCol);
    rc = SQLITE_ERROR;
  }else if( vec0Is(zWord, "rescore") ){
    rc = vec0ParseRescore(s, zCol, p, pzErr);
  }else if( vec0Is(zWord, "ivf") || vec0Is(zWord, "diskann") ){
    rc = vec0ParseIvf(s, zCol, vec0Is(zWord, "diskann"), p, pzErr);
  }else{
    *pzErr = sqlite3_mprintf("vec0: column \"%s\": unknown index \"%s\"; the indexes are "
                             "rescore(quantizer=int8|bit, oversample=N), ivf(nlist=N, "
                             "nprobe=N) and diskann(...)", zCol, zWord ? zWord : "");
    rc = SQLITE_ERROR;
  }
cleanup:
  sqlite3_free(zWord);
  return rc;
}

/* ---- one argument of the declaration, by kind ------------------------------------------- */

/* A table option, "name=value": only chunk_size=N. */
static int vec0ParseTableOption(Vec0Scan *s, const char *zName, Vec0Config *p, char **pzErr){
  char *zEnd = 0;
  long n;
  if( !vec0Is(zName, "chunk_size") ){
    *pzErr = sqlite3_mprintf("vec0: unknown table option \"%s\"", zName);
    return SQLITE_ERROR;
  }
  n = strtol(&s->z[s->i+1], &zEnd, 10);
  while( zEnd && isspace((unsigned char)*zEnd) ) zEnd++;
  if( zEnd==&s->z[s->i+1] || (zEnd && *zEnd) || n<8 || n>65536 || (n%8)!=0 ){
    *pzErr = sqlite3_mprintf(
      "vec0: chunk_size must be a multiple of 8 between 8 and 65536, got \"%s\"",
      &s->z[s->i+1]);
    return SQLITE_ERROR;
  }
  p->nChunk = (int)n;
  return SQLITE_OK;
}

/* Whether column zName may be added: room left, a new name, not a reserved one. */
static int vec0CheckNewColumn(const Vec0Config *p, const char *zName, char **pzErr){
  int i;
  if( p->nCol>=VEC0_MAX_COLUMNS ){
    *pzErr = sqlite3_mprintf("vec0: more than %d columns", VEC0_MAX_COLUMNS);
    return SQLITE_ERROR;
  }
  for(i=0; i<p->nCol; i++){
    if( sqlite3_stricmp(p->aCol[i].zName, zName)==0 ){
      *pzErr = sqlite3_mprintf("vec0: duplicate column name \"%s\"", zName);
      return SQLITE_ERROR;
    }
  }
  if( vec0Is(zName, "distance") || vec0Is(zName, "k") || vec0Is(zName, "rowid") ){
    *pzErr = sqlite3_mprintf("vec0: \"%s\" is a reserved column name", zName);
    return SQLITE_ERROR;
  }
  return SQLITE_OK;
}

/* Add the column being declared (p->aCol[p->nCol], whose other fields are set), taking
** *pzName. */
static void vec0AddColumn(Vec0Config *p, char **pzName, int eKind, int eType){
  p->aCol[p->nCol].eKind = eKind;
  p->aCol[p->nCol].eType = eType;
  p->aCol[p->nCol].zName = *pzName;
  *pzName = 0;
  p->nCol++;
}

/* Whether zType is "float" followed by digits or nothing (float, float32, float16, ...). */
static int vec0FloatName(const char *zType){
  int i;
  if( zType==0 || sqlite3_strnicmp(zType, "float", 5)!=0 ) return 0;
  for(i=5; zType[i]; i++){
    if( zType[i]<'0' || zType[i]>'9' ) return 0;
  }
  return 1;
}

/* The element type of a vector column's type name: VS_F32, VS_I8 or VS_BIT. */
static int vec0VectorElement(const char *zName, const char *zType, int *peElem, char **pzErr){
  if( vec0FloatName(zType) || vec0Is(zType, "f32") ){
    /* float64[N], float16[N] and float8[N] are float32 columns, as in sqlite-vec 0.1.x
    ** (which takes any type name beginning "float" for float32): their vectors are
    ** stored, compared and returned as float32, so a file sqlite-vec wrote with them
    ** reads the same. */
    *peElem = VS_F32;
  }else if( vec0Is(zType, "int8") || vec0Is(zType, "i8") ){
    *peElem = VS_I8;
  }else if( vec0Is(zType, "bit") ){
    *peElem = VS_BIT;
  }else{
    *pzErr = sqlite3_mprintf(
      "vec0: column \"%s\": unsupported vector type \"%s\"; use float[N], int8[N] or "
      "bit[N]", zName, zType ? zType : "");
    return SQLITE_ERROR;
  }
  return SQLITE_OK;
}

/* A vector column's options after its [N]: distance_metric=... (*peMetric, *pbMetric) and,
** on the first vector column (bFirst), indexed by rescore(...). */
static int vec0ParseVectorOptions(Vec0Scan *s, const char *zName, int bFirst, Vec0Config *p,
                                  int *peMetric, int *pbMetric, char **pzErr){
  char *zWord = 0, *zValue = 0;
  int rc = SQLITE_OK;
  while( rc==SQLITE_OK && (zWord = vec0Word(s))!=0 ){
    if( vec0Is(zWord, "indexed") ){
      if( !bFirst ){
        /* The codes and the in-memory copy are the first vector column's. */
        /* Named as declared: "indexed by ivf(...) is for the first vector column". */
        int iAt = s->i;
        char *zBy = vec0Word(s), *zIndex = vec0Word(s);
        s->i = iAt;
        *pzErr = sqlite3_mprintf("vec0: column \"%s\": %s(...) is for the first vector "
                                 "column (\"%s\") only", zName, zIndex ? zIndex : "an index",
                                 p->aCol[p->iVec].zName);
        sqlite3_free(zBy);
        sqlite3_free(zIndex);
        rc = SQLITE_ERROR;
      }else{
        rc = vec0ParseIndex(s, zName, p, pzErr);
      }
    }else{
      vec0SkipBlanks(s);
      if( s->z[s->i]!='=' ){
        *pzErr = sqlite3_mprintf("vec0: column \"%s\": expected option=value after \"%s\"",
                                 zName, zWord);
        rc = SQLITE_ERROR;
        goto cleanup;
      }
      s->i++;
      zValue = vec0Word(s);
      if( !vec0Is(zWord, "distance_metric") ){
        *pzErr = sqlite3_mprintf("vec0: column \"%s\": unknown option \"%s\"", zName, zWord);
        rc = SQLITE_ERROR;
      }else if( (*peMetric = vec0MetricByName(zValue))<0 ){
        *pzErr = sqlite3_mprintf(
          "vec0: unknown distance_metric \"%s\"; use cosine, l2, dot or l1",
          zValue ? zValue : "");
        rc = SQLITE_ERROR;
      }
      *pbMetric = 1;
      sqlite3_free(zValue);
      zValue = 0;
    }
    sqlite3_free(zWord);
    zWord = 0;
  }

cleanup:
  sqlite3_free(zWord);
  sqlite3_free(zValue);
  return rc;
}

/* The combinations a vector column may not have: a bit column with a metric or with bits
** not a multiple of 8, int8 under dot, rescore codes on int8 or bit, rescore under l1. */
static int vec0CheckVectorColumn(const Vec0Config *p, const char *zName, int bFirst,
                                 int eElem, long nDim, int eMetric, int bMetric,
                                 char **pzErr){
  if( eElem==VS_BIT && bMetric ){
    /* As sqlite-vec: a bit column's distance is the Hamming distance, and nothing else. */
    *pzErr = sqlite3_mprintf("vec0: column \"%s\": a bit[N] column takes no "
                             "distance_metric: its distance is the Hamming distance", zName);
  }else if( eElem==VS_BIT && nDim%8!=0 ){
    /* sqlite-vec accepts the declaration, then refuses every vector (vec_bit makes
    ** whole bytes): refused here, where the reason can be given. */
    *pzErr = sqlite3_mprintf("vec0: column \"%s\": bit[%ld]: the number of bits must be "
                             "a multiple of 8", zName, nDim);
  }else if( eElem==VS_I8 && eMetric==VS_METRIC_DOT ){
    *pzErr = sqlite3_mprintf("vec0: column \"%s\": an int8[N] column takes "
                             "distance_metric l2, cosine or l1, not dot", zName);
  }else if( bFirst && eElem!=VS_F32 && p->eQuant!=VEC0_QUANT_NONE ){
    /* rescore codes float32 vectors; int8 and bit vectors are scanned as they are. */
    *pzErr = sqlite3_mprintf("vec0: column \"%s\": indexed by rescore(...) is for float[N] "
                             "columns; an %s[N] column is scanned exactly as it is stored",
                             zName, eElem==VS_I8 ? "int8" : "bit");
  }else if( bFirst && p->bIvf && eElem!=VS_F32 ){
    *pzErr = sqlite3_mprintf("vec0: column \"%s\": indexed by ivf(...) is for float[N] "
                             "columns", zName);
  }else if( bFirst && p->bIvf && eMetric!=VS_METRIC_L2 && eMetric!=VS_METRIC_COSINE ){
    /* The lists are k-means cells of Euclidean (or, for cosine, angular) space: the
    ** nearest cells by dot product or L1 are not where the nearest rows are. */
    *pzErr = sqlite3_mprintf("vec0: column \"%s\": indexed by ivf(...) supports "
                             "distance_metric=l2 or cosine, not %s", zName,
                             vec0MetricName(eMetric));
  }else if( bFirst && eMetric==VS_METRIC_L1 && p->eQuant!=VEC0_QUANT_NONE ){
    /* The codes approximate q.x, from which an L1 distance cannot be estimated: the
    ** candidates they chose would not be the nearest by L1. */
    *pzErr = sqlite3_mprintf("vec0: column \"%s\": indexed by rescore(...) does not "
                             "support distance_metric=l1 (use l2, cosine or dot, or "
                             "drop the index: an l1 table is scanned exactly)", zName);
  }else{
    return SQLITE_OK;
  }
  return SQLITE_ERROR;
}

/* A vector column: "<name> float|int8|bit[N] [distance_metric=...] [indexed by ...]". The
** first is the table's (T_vectors, the in-memory copy); further ones are stored in
** T_rows and scanned exactly from there. */
static int vec0ParseVectorColumn(Vec0Scan *s, char **pzName, const char *zType,
                                 Vec0Config *p, char **pzErr){
  const char *zName = *pzName;
  Vec0Column *pCol = &p->aCol[p->nCol];
  char *zEnd = 0;
  long nDim;
  int eElem = 0, bMetric = 0, eMetric = VS_METRIC_L2, bFirst = p->iVec<0, bNumber;
  int rc = vec0VectorElement(zName, zType, &eElem, pzErr);
  if( rc!=SQLITE_OK ) return rc;
  s->i++;                     /* past "[": the number, blanks around it allowed */
  vec0SkipBlanks(s);
  nDim = strtol(&s->z[s->i], &zEnd, 10);
  bNumber = zEnd!=&s->z[s->i];
  s->i = (int)(zEnd - s->z);
  vec0SkipBlanks(s);
  if( !bNumber || s->z[s->i]!=']' || nDim<1 || nDim>VS_MAX_DIMS ){
    *pzErr = sqlite3_mprintf(
      "vec0: column \"%s\": dimensions must be an integer from 1 to %d", zName,
      VS_MAX_DIMS);
    return SQLITE_ERROR;
  }
  s->i++;                     /* past "]" */
  rc = vec0ParseVectorOptions(s, zName, bFirst, p, &eMetric, &bMetric, pzErr);
  if( rc==SQLITE_OK ){
    rc = vec0CheckVectorColumn(p, zName, bFirst, eElem, nDim, eMetric, bMetric, pzErr);
  }
  if( rc!=SQLITE_OK ) return rc;
  if( eElem==VS_BIT ) eMetric = VS_METRIC_HAMMING;
  pCol->nDim = (int)nDim;
  pCol->eElem = eElem;
  pCol->eMetric = eMetric;
  pCol->nVecByte = eElem==VS_F32 ? (int)nDim*4 : eElem==VS_I8 ? (int)nDim : (int)nDim/8;
  if( bFirst ){
    p->eMetric = eMetric;
    p->eElem = eElem;
    p->nVecByte = pCol->nVecByte;
    p->nWord = (p->nVecByte + 3)/4;
    p->iVec = p->nCol;
    p->nDim = (int)nDim;
  }else{
    p->nExtraVec++;
  }
  vec0AddColumn(p, pzName, VEC0_VECTOR, VEC0_TYPE_BLOB);
  return SQLITE_OK;
}

/* The primary key: "<name> text|integer primary key" ("primary" read already). */
static int vec0ParsePrimaryKey(Vec0Scan *s, char **pzName, const char *zType, int bAux,
                               Vec0Config *p, char **pzErr){
  char *zWord = vec0Word(s);
  int eType = vec0Is(zType, "text") ? VEC0_TYPE_TEXT
            : vec0Is(zType, "integer") || vec0Is(zType, "int") ? VEC0_TYPE_INTEGER : -1;
  int rc = SQLITE_ERROR;
  if( !vec0Is(zWord, "key") || bAux ){
    *pzErr = sqlite3_mprintf("vec0: column \"%s\": expected PRIMARY KEY", *pzName);
  }else if( p->iPk>=0 || p->bRowidPk ){
    *pzErr = sqlite3_mprintf("vec0: more than one primary key");
  }else if( eType<0 ){
    *pzErr = sqlite3_mprintf("vec0: primary key \"%s\" must be text or integer", *pzName);
  }else{
    p->iPk = p->nCol;
    vec0AddColumn(p, pzName, VEC0_PK, eType);
    rc = SQLITE_OK;
  }
  sqlite3_free(zWord);
  return rc;
}

/* "rowid integer primary key" ("rowid" read already), which sqlite-vec accepts and
** LangChain's SQLiteVec and sqlite-vec-client declare: the table's own rowid, declared
** explicitly. Nothing is added: the table is a rowid table, as without it. */
static int vec0ParseRowidKey(Vec0Scan *s, Vec0Config *p, char **pzErr){
  char *zType = vec0Word(s);
  char *zPrimary = vec0Word(s);
  char *zKey = vec0Word(s);
  int rc = SQLITE_ERROR;
  if( !(vec0Is(zType, "integer") || vec0Is(zType, "int"))
   || !vec0Is(zPrimary, "primary") || !vec0Is(zKey, "key") ){
    *pzErr = sqlite3_mprintf("vec0: \"rowid\" is reserved: declare it only as \"rowid "
                             "integer primary key\" (the table's rowid)");
  }else if( p->iPk>=0 || p->bRowidPk ){
    *pzErr = sqlite3_mprintf("vec0: more than one primary key");
  }else{
    p->bRowidPk = 1;
    rc = SQLITE_OK;
  }
  sqlite3_free(zType);
  sqlite3_free(zPrimary);
  sqlite3_free(zKey);
  return rc;
}

/* sqlite-vec's "<name> text|integer partition key" ("partition" read already): a metadata
** column with an index in T_rows, so a KNN query's "user_id = ?" finds that partition's
** slots without reading the other rows, and the scan then scores only them (one by one
** when they are few). The column itself is added as metadata by the caller. */
static int vec0ParsePartitionKey(Vec0Scan *s, const char *zName, const char *zType,
                                 Vec0Config *p, char **pzErr){
  char *zWord = vec0Word(s);
  int rc = SQLITE_OK;
  p->aCol[p->nCol].bPartition = 1;
  if( !vec0Is(zWord, "key")
   || !(vec0Is(zType, "text") || vec0Is(zType, "integer") || vec0Is(zType, "int")) ){
    *pzErr = sqlite3_mprintf(
      "vec0: column \"%s\": a partition key is declared \"text partition key\" or "
      "\"integer partition key\"", zName);
    rc = SQLITE_ERROR;
  }
  sqlite3_free(zWord);
  return rc;
}

/* A metadata column ("album text") or, with bAux, an auxiliary one ("+caption text"). */
static int vec0ParseScalarColumn(char **pzName, const char *zType, int bAux, Vec0Config *p,
                                 char **pzErr){
  int eType = vec0ScalarType(zType, bAux);
  if( eType<0 ){
    *pzErr = sqlite3_mprintf(
      "vec0: column \"%s\": unknown type \"%s\"; use text, integer, float or boolean%s",
      *pzName, zType ? zType : "", bAux ? " (or blob)" : "");
    return SQLITE_ERROR;
  }
  vec0AddColumn(p, pzName, bAux ? VEC0_AUX : VEC0_META, eType);
  return SQLITE_OK;
}

/* Parse one argument of the vec0(...) declaration: a table option, or a column of one of
** the kinds above, then nothing more. */
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
  if( !bAux && s.z[s.i]=='=' ){
    rc = vec0ParseTableOption(&s, zName, p, pzErr);
    goto cleanup;
  }
  if( !bAux && vec0Is(zName, "rowid") ){
    rc = vec0ParseRowidKey(&s, p, pzErr);
    if( rc==SQLITE_OK ) goto trailing;
    goto cleanup;
  }
  rc = vec0CheckNewColumn(p, zName, pzErr);
  if( rc!=SQLITE_OK ) goto cleanup;
  zType = vec0Word(&s);
  vec0SkipBlanks(&s);
  if( s.z[s.i]=='[' && !bAux ){
    rc = vec0ParseVectorColumn(&s, &zName, zType, p, pzErr);
  }else{
    zWord = vec0Word(&s);
    if( vec0Is(zWord, "primary") ){
      rc = vec0ParsePrimaryKey(&s, &zName, zType, bAux, p, pzErr);
    }else{
      int bNotNull = 0;
      if( vec0Is(zWord, "not") ){
        /* "c text not null": sqlite-vec 0.1.9 takes the declaration (its metadata are
        ** never NULL); here NULL is then refused for the column. */
        sqlite3_free(zWord);
        zWord = vec0Word(&s);
        if( vec0Is(zWord, "null") ){
          bNotNull = 1;
          sqlite3_free(zWord);
          zWord = 0;
        }else{
          *pzErr = sqlite3_mprintf("vec0: column \"%s\": expected \"not null\"", zName);
          rc = SQLITE_ERROR;
        }
      }
      if( rc!=SQLITE_OK ){
        /* reported above */
      }else if( vec0Is(zWord, "partition") && !bAux ){
        rc = vec0ParsePartitionKey(&s, zName, zType, p, pzErr);
      }else if( zWord ){
        *pzErr = sqlite3_mprintf("vec0: column \"%s\": unexpected \"%s\"", zName, zWord);
        rc = SQLITE_ERROR;
      }
      if( rc==SQLITE_OK ) rc = vec0ParseScalarColumn(&zName, zType, bAux, p, pzErr);
      if( rc==SQLITE_OK ) p->aCol[p->nCol-1].bNotNull = bNotNull;
    }
  }
  if( rc!=SQLITE_OK ) goto cleanup;
trailing:
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

int vec0BlockCheck(const Vec0Config *pCfg, const char *zTable, char **pzErr){
  sqlite3_int64 nRow = 4*(sqlite3_int64)pCfg->nWord;
  sqlite3_int64 nByte = nRow*pCfg->nChunk;
  sqlite3_int64 nFit = (VEC0_MAX_BLOCK_BYTES/nRow) & ~(sqlite3_int64)7;
  const char *zElem = pCfg->eElem==VS_I8 ? "int8" : pCfg->eElem==VS_BIT ? "bit" : "float";
  if( nByte<=VEC0_MAX_BLOCK_BYTES ) return SQLITE_OK;
  *pzErr = sqlite3_mprintf("vec0 \"%s\": a block of chunk_size=%d vectors of %s[%d] takes "
                           "%lld MiB, over the limit of %lld MiB a block "
                           "(VEC0_MAX_BLOCK_BYTES); declare chunk_size=%lld or less",
                           zTable, pCfg->nChunk, zElem, pCfg->nDim, nByte>>20,
                           VEC0_MAX_BLOCK_BYTES>>20, nFit);
  return *pzErr ? SQLITE_ERROR : SQLITE_NOMEM;
}

int vec0HasTextPk(Vec0Table *p){
  return p->cfg.iPk>=0 && p->cfg.aCol[p->cfg.iPk].eType==VEC0_TYPE_TEXT;
}

int vec0ColumnOffset(const Vec0Table *p){
  return p->cfg.iPk<0 ? 1 : 0;
}
