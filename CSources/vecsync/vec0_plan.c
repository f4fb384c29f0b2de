/*
** vec0_plan.c: how a vec0 query is answered: xBestIndex, the idxStr it writes, and the
** slot mask that a KNN query's filters become.
**
** Usage (internal):
**
**   vec0BestIndex(pVtab, pInfo);                   // the xBestIndex method
**   vec0PlanDecode(idxStr, aArg, nMax, &nArg);     // in xFilter: what argv[i] is
**   vec0FilterMask(p, aArg, nArg, argv, &aMask);   // KNN filters -> aMask[slot]
**
** Plans (idxNum):
**   VEC0_PLAN_KNN    embedding MATCH ? with k = ? and/or LIMIT ?, plus filters on
**                    metadata columns, the primary key and the rowid: =, <>, <, <=, >,
**                    >=, IS, IS NOT, IS NULL, IS NOT NULL, IN (...); and bounds on
**                    distance (>, >=, <, <=), for paging
**   VEC0_PLAN_POINT  rowid = ? or primary key = ?
**   VEC0_PLAN_SCAN   every row, by rowid
**
** idxStr records what each xFilter argument is, four characters an argument (see
** Vec0PlanArg): the kind (VEC0_ARG_*), the operator (VEC0_OP_* or ' '), and the column
** as two hex digits, "--" for the rowid. "M 02K --Fe03Fx01" is MATCH on vector column 2,
** k, then a filter col3 = ? and col1 IN (...). Any column of the 64 a table may declare fits.
**
** How filters work: the filters of a KNN query become one SELECT over T_rows that marks
** the slots of the rows that pass, before the scan; the scan then skips the others, so a
** filtered query still returns k rows whenever k rows match.
*/
#include "vecsync_int.h"
SQLITE_EXTENSION_INIT3

#include <string.h>

/* Characters of one argument in idxStr. */
#define VEC0_PLAN_ARG_LEN 4

/* The operator a KNN filter evaluates, by SQLITE_INDEX_CONSTRAINT_* code, or 0. */
static char vec0FilterOp(int op){
  switch( op ){
    case SQLITE_INDEX_CONSTRAINT_EQ:        return VEC0_OP_EQ;
    case SQLITE_INDEX_CONSTRAINT_GT:        return VEC0_OP_GT;
    case SQLITE_INDEX_CONSTRAINT_GE:        return VEC0_OP_GE;
    case SQLITE_INDEX_CONSTRAINT_LT:        return VEC0_OP_LT;
    case SQLITE_INDEX_CONSTRAINT_LE:        return VEC0_OP_LE;
    case SQLITE_INDEX_CONSTRAINT_NE:        return VEC0_OP_NE;
    case SQLITE_INDEX_CONSTRAINT_IS:        return VEC0_OP_IS;
    case SQLITE_INDEX_CONSTRAINT_ISNOT:     return VEC0_OP_ISNOT;
    case SQLITE_INDEX_CONSTRAINT_ISNULL:    return VEC0_OP_ISNULL;
    case SQLITE_INDEX_CONSTRAINT_ISNOTNULL: return VEC0_OP_ISNOTNULL;
  }
  return 0;
}

/* Whether the statement reads the distance column (user column iColDistance) or bounds it:
** colUsed has a bit a column, the last for every column from the 64th on. */
static int vec0DistanceUsed(const Vec0Table *p, const sqlite3_index_info *pInfo,
                            int iColDistance){
  int i, iSql = iColDistance + vec0ColumnOffset(p);
  if( iSql>=63 || (pInfo->colUsed & ((sqlite3_uint64)1<<iSql))!=0 ) return 1;
  for(i=0; i<pInfo->nConstraint; i++){
    if( vec0UserColumn(p, pInfo->aConstraint[i].iColumn)==iColDistance ) return 1;
  }
  return 0;
}

/* SQL comparison text of a filter operator taking one value. */
static const char *vec0OpSql(char eOp){
  switch( eOp ){
    case VEC0_OP_GT:    return ">";
    case VEC0_OP_GE:    return ">=";
    case VEC0_OP_LT:    return "<";
    case VEC0_OP_LE:    return "<=";
    case VEC0_OP_NE:    return "<>";
    case VEC0_OP_IS:    return "IS";
    case VEC0_OP_ISNOT: return "IS NOT";
  }
  return "=";
}

static void vec0PlanAppend(sqlite3_str *pStr, char eArg, char eOp, int iCol){
  if( iCol==VEC0_COL_ROWID ){
    sqlite3_str_appendf(pStr, "%c%c--", eArg, eOp);
  }else{
    sqlite3_str_appendf(pStr, "%c%c%02x", eArg, eOp, iCol);
  }
}

static int vec0HexDigit(char c){
  if( c>='0' && c<='9' ) return c-'0';
  if( c>='a' && c<='f' ) return c-'a'+10;
  return -1;
}

int vec0PlanDecode(const char *zIdx, Vec0PlanArg *aArg, int nMax, int *pnArg){
  int n = 0;
  *pnArg = 0;
  if( zIdx==0 ) return SQLITE_OK;
  while( zIdx[0] ){
    const char *z = zIdx;
    int i;
    for(i=0; i<VEC0_PLAN_ARG_LEN; i++){
      if( z[i]==0 ) return SQLITE_ERROR;
    }
    if( n>=nMax ) return SQLITE_ERROR;
    aArg[n].eArg = z[0];
    aArg[n].eOp = z[1];
    if( z[2]=='-' && z[3]=='-' ){
      aArg[n].iCol = VEC0_COL_ROWID;
    }else{
      int hi = vec0HexDigit(z[2]), lo = vec0HexDigit(z[3]);
      if( hi<0 || lo<0 ) return SQLITE_ERROR;
      aArg[n].iCol = hi*16 + lo;
    }
    n++;
    zIdx += VEC0_PLAN_ARG_LEN;
  }
  *pnArg = n;
  return SQLITE_OK;
}

/* Whether a KNN query can filter on column iCol inside the search. */
static int vec0Filterable(Vec0Table *p, int iCol){
  return iCol==VEC0_COL_ROWID || iCol==p->cfg.iPk
      || (iCol>=0 && iCol<p->cfg.nCol && p->cfg.aCol[iCol].eKind==VEC0_META);
}

static int vec0HasVtabIn(void){ return sqlite3_libversion_number()>=3038000; }

int vec0BestIndex(sqlite3_vtab *pVtab, sqlite3_index_info *pInfo){
  Vec0Table *p = (Vec0Table*)pVtab;
  int iMatch = -1, iK = -1, iLimit = -1, iPoint = -1, iProbe = -1;
  int iMatchCol = -1;         /* the vector column of MATCH */
  int bMatchUnusable = 0, bKUnusable = 0;
  int iColDistance = p->cfg.nCol, iColK = p->cfg.nCol+1;
  int i, nArg = 0;
  sqlite3_str *pStr = 0;
  char *zIdx;

  for(i=0; i<pInfo->nConstraint; i++){
    const struct sqlite3_index_constraint *pC = &pInfo->aConstraint[i];
    int iCol = vec0UserColumn(p, pC->iColumn);
    if( pC->op==SQLITE_INDEX_CONSTRAINT_MATCH
     && (iCol==p->cfg.iVec || vec0IsExtraVector(&p->cfg, iCol)) ){
      if( iMatchCol>=0 && iMatchCol!=iCol ){
        /* As sqlite-vec: one KNN search a query, on one vector column. */
        vec0SetError(p, "only 1 MATCH operator is allowed in a single vec0 query");
        return SQLITE_ERROR;
      }
      iMatchCol = iCol;
      if( pC->usable ) iMatch = i; else bMatchUnusable = 1;
    }else if( iCol==iColK && pC->op==SQLITE_INDEX_CONSTRAINT_EQ ){
      if( pC->usable ) iK = i; else bKUnusable = 1;
    }else if( p->cfg.bIvf && iCol==p->cfg.nCol+2 && pC->op==SQLITE_INDEX_CONSTRAINT_EQ
           && pC->usable ){
      iProbe = i;                     /* nprobe = ?: the ivf index's knob */
    }else if( pC->op==SQLITE_INDEX_CONSTRAINT_LIMIT && pC->usable ){
      iLimit = i;
    }else if( pC->usable && pC->op==SQLITE_INDEX_CONSTRAINT_EQ
           && (iCol==VEC0_COL_ROWID || iCol==p->cfg.iPk) ){
      iPoint = i;
    }
  }

  if( iMatch<0 && bMatchUnusable ) return SQLITE_CONSTRAINT;
  if( iMatch>=0 ){
    /* What sqlite-vec refuses is refused, rather than filtered after the k rows are
    ** chosen (which would return fewer than k). */
    const char *zRefuse = 0;
    int bDesc = pInfo->nOrderBy>=1
             && vec0UserColumn(p, pInfo->aOrderBy[0].iColumn)==iColDistance
             && pInfo->aOrderBy[0].desc;
    if( iK>=0 ){
      /* "k = ?" chooses the rows and SQLite applies any LIMIT to them itself (ordering
      ** them farthest first under ORDER BY distance DESC): the LIMIT 1 SQLite 3.41+ hands
      ** down from a scalar subquery, max(distance) over a KNN query, or a LIMIT written
      ** beside k, which sqlite-vec refuses. */
      iLimit = -1;
    }
    if( bDesc && iK<0 && bKUnusable ) return SQLITE_CONSTRAINT;   /* a plan with k comes */
    if( bDesc && iK<0 ){
      zRefuse = "a KNN query without \"k = ?\" is ordered by distance ascending only";
    }
    for(i=0; zRefuse==0 && i<pInfo->nConstraint; i++){
      const struct sqlite3_index_constraint *pC = &pInfo->aConstraint[i];
      int iCol = vec0UserColumn(p, pC->iColumn);
      if( !pC->usable || iCol<0 || iCol>=p->cfg.nCol || i==iMatch ) continue;
      if( p->cfg.aCol[iCol].eKind==VEC0_AUX ){
        zRefuse = sqlite3_mprintf("auxiliary column \"%s\" cannot be filtered in a KNN "
                                  "query; declare it without + to filter on it",
                                  p->cfg.aCol[iCol].zName);
        if( zRefuse==0 ) return SQLITE_NOMEM;
        vec0SetError(p, "vec0 \"%s\": %s", p->zName, zRefuse);
        sqlite3_free((char*)zRefuse);
        return SQLITE_ERROR;
      }
      if( p->cfg.aCol[iCol].eKind==VEC0_META
       && (pC->op==SQLITE_INDEX_CONSTRAINT_LIKE || pC->op==SQLITE_INDEX_CONSTRAINT_GLOB
        || pC->op==SQLITE_INDEX_CONSTRAINT_REGEXP || pC->op==SQLITE_INDEX_CONSTRAINT_MATCH) ){
        zRefuse = "LIKE, GLOB, REGEXP and MATCH on a metadata column are not supported "
                  "in a KNN query";
      }
    }
    if( zRefuse ){
      vec0SetError(p, "vec0 \"%s\": %s", p->zName, zRefuse);
      return SQLITE_ERROR;
    }
  }
  if( iMatch>=0 ){
    if( iK<0 && iLimit<0 && sqlite3_libversion_number()>=3041000 ){
      /* SQLite before 3.41 does not hand LIMIT to a virtual table that sorts its own
      ** output: there the scan returns every row nearest first and SQLite stops at the
      ** LIMIT. From 3.41 on, a KNN query without k or LIMIT is a mistake. */
      if( bKUnusable ) return SQLITE_CONSTRAINT;
      vec0SetError(p, "vec0 \"%s\": a KNN query needs \"k = ?\" or LIMIT beside MATCH",
                   p->zName);
      return SQLITE_ERROR;
    }
    pStr = sqlite3_str_new(0);
    pInfo->aConstraintUsage[iMatch].argvIndex = ++nArg;
    pInfo->aConstraintUsage[iMatch].omit = 1;
    vec0PlanAppend(pStr, VEC0_ARG_MATCH, ' ', iMatchCol);
    if( iK>=0 ){
      pInfo->aConstraintUsage[iK].argvIndex = ++nArg;
      pInfo->aConstraintUsage[iK].omit = 1;
      vec0PlanAppend(pStr, VEC0_ARG_K, ' ', VEC0_COL_ROWID);
    }
    if( iLimit>=0 ){
      pInfo->aConstraintUsage[iLimit].argvIndex = ++nArg;
      pInfo->aConstraintUsage[iLimit].omit = 1;
      vec0PlanAppend(pStr, VEC0_ARG_LIMIT, ' ', VEC0_COL_ROWID);
    }
    if( iProbe>=0 ){
      pInfo->aConstraintUsage[iProbe].argvIndex = ++nArg;
      pInfo->aConstraintUsage[iProbe].omit = 1;
      vec0PlanAppend(pStr, VEC0_ARG_NPROBE, ' ', VEC0_COL_ROWID);
    }
    for(i=0; i<pInfo->nConstraint; i++){
      /* Bounds on distance, for paging: applied inside the search. */
      const struct sqlite3_index_constraint *pC = &pInfo->aConstraint[i];
      char eOp = vec0FilterOp(pC->op);
      if( !pC->usable || vec0UserColumn(p, pC->iColumn)!=iColDistance ) continue;
      if( eOp!=VEC0_OP_GT && eOp!=VEC0_OP_GE && eOp!=VEC0_OP_LT && eOp!=VEC0_OP_LE ) continue;
      pInfo->aConstraintUsage[i].argvIndex = ++nArg;
      pInfo->aConstraintUsage[i].omit = 1;
      vec0PlanAppend(pStr, VEC0_ARG_DISTANCE, eOp, VEC0_COL_ROWID);
    }
    for(i=0; i<pInfo->nConstraint; i++){
      const struct sqlite3_index_constraint *pC = &pInfo->aConstraint[i];
      int iCol = vec0UserColumn(p, pC->iColumn);
      char eOp;
      if( !pC->usable || i==iMatch || i==iK || i==iLimit ) continue;
      if( !vec0Filterable(p, iCol) ) continue;
      eOp = vec0FilterOp(pC->op);
      if( eOp==0 ) continue;
      if( eOp==VEC0_OP_EQ && vec0HasVtabIn() && sqlite3_vtab_in(pInfo, i, -1) ){
        sqlite3_vtab_in(pInfo, i, 1);
        eOp = VEC0_OP_IN;
      }
      pInfo->aConstraintUsage[i].argvIndex = ++nArg;
      pInfo->aConstraintUsage[i].omit = 1;
      vec0PlanAppend(pStr, VEC0_ARG_FILTER, eOp, iCol);
    }
    zIdx = sqlite3_str_finish(pStr);
    if( zIdx==0 ) return SQLITE_NOMEM;
    pInfo->idxNum = VEC0_PLAN_KNN;
    if( !vec0DistanceUsed(p, pInfo, iColDistance) ) pInfo->idxNum |= VEC0_PLAN_NO_DISTANCE;
    pInfo->idxStr = zIdx;
    pInfo->needToFreeIdxStr = 1;
    pInfo->estimatedCost = 10.0;
    pInfo->estimatedRows = 10;
    if( pInfo->nOrderBy==1 && vec0UserColumn(p, pInfo->aOrderBy[0].iColumn)==iColDistance
     && !pInfo->aOrderBy[0].desc ){
      pInfo->orderByConsumed = 1;
    }
    return SQLITE_OK;
  }

  if( iPoint>=0 ){
    int iCol = vec0UserColumn(p, pInfo->aConstraint[iPoint].iColumn);
    pStr = sqlite3_str_new(0);
    vec0PlanAppend(pStr, VEC0_ARG_POINT, VEC0_OP_EQ, iCol);
    zIdx = sqlite3_str_finish(pStr);
    if( zIdx==0 ) return SQLITE_NOMEM;
    pInfo->aConstraintUsage[iPoint].argvIndex = 1;
    pInfo->aConstraintUsage[iPoint].omit = 1;
    pInfo->idxNum = VEC0_PLAN_POINT;
    pInfo->idxStr = zIdx;
    pInfo->needToFreeIdxStr = 1;
    pInfo->estimatedCost = 1.0;
    pInfo->estimatedRows = 1;
    pInfo->idxFlags = SQLITE_INDEX_SCAN_UNIQUE;
    return SQLITE_OK;
  }

  pInfo->idxNum = VEC0_PLAN_SCAN;
  pInfo->estimatedCost = 1e6;
  pInfo->estimatedRows = 100000;
  if( pInfo->nOrderBy==1 && vec0UserColumn(p, pInfo->aOrderBy[0].iColumn)==VEC0_COL_ROWID && !pInfo->aOrderBy[0].desc ){
    pInfo->orderByConsumed = 1;
  }
  return SQLITE_OK;
}

int vec0UserColumn(const Vec0Table *p, int iSqlCol){
  int nOff = vec0ColumnOffset(p);
  if( iSqlCol<0 || (nOff && iSqlCol==0) ) return VEC0_COL_ROWID;
  return iSqlCol - nOff;
}

char *vec0StoredColumn(Vec0Table *p, int iCol){
  if( iCol==VEC0_COL_ROWID || (iCol==p->cfg.iPk && !vec0HasTextPk(p)) ){
    return sqlite3_mprintf("rowid");
  }
  if( iCol==p->cfg.iPk ) return sqlite3_mprintf("id");
  return sqlite3_mprintf("c%d", iCol);
}

/* Append the SQL of one filter to pStr; *pnBind counts the parameters. */
static int vec0FilterSql(Vec0Table *p, const Vec0PlanArg *pArg, sqlite3_value *pVal,
                         sqlite3_str *pStr, int *pnBind){
  char *zCol;
  if( !vec0Filterable(p, pArg->iCol) ) return SQLITE_ERROR;
  zCol = vec0StoredColumn(p, pArg->iCol);
  if( zCol==0 ) return SQLITE_NOMEM;
  if( pArg->eOp==VEC0_OP_ISNULL ){
    sqlite3_str_appendf(pStr, "%s IS NULL", zCol);
  }else if( pArg->eOp==VEC0_OP_ISNOTNULL ){
    sqlite3_str_appendf(pStr, "%s IS NOT NULL", zCol);
  }else if( pArg->eOp==VEC0_OP_IN ){
    sqlite3_value *pEach = 0;
    int rc2, bOne = 0;
    sqlite3_str_appendf(pStr, "%s IN (", zCol);
    for(rc2 = sqlite3_vtab_in_first(pVal, &pEach); rc2==SQLITE_OK && pEach;
        rc2 = sqlite3_vtab_in_next(pVal, &pEach)){
      sqlite3_str_appendf(pStr, "%s?%d", bOne ? "," : "", ++*pnBind);
      bOne = 1;
    }
    sqlite3_str_appendall(pStr, ")");
  }else{
    sqlite3_str_appendf(pStr, "%s %s ?%d", zCol, vec0OpSql(pArg->eOp), ++*pnBind);
  }
  sqlite3_free(zCol);
  return SQLITE_OK;
}

int vec0FilterMask(Vec0Table *p, const Vec0PlanArg *aArg, int nArg, sqlite3_value **argv,
                   unsigned char **paMask){
  sqlite3_str *pStr = sqlite3_str_new(p->db);
  sqlite3_stmt *pStmt = 0;
  unsigned char *aMask = 0;
  char *zSql = 0;
  sqlite3_int64 nSlot = p->pView ? p->pView->nSlot : 0;
  int rc = SQLITE_OK, i, nBind = 0, bFirst = 1;

  sqlite3_str_appendf(pStr, "SELECT slot FROM \"%w\".\"%w_rows\" WHERE ", p->zStoreSchema,
                      p->zName);
  for(i=0; i<nArg && rc==SQLITE_OK; i++){
    if( aArg[i].eArg!=VEC0_ARG_FILTER ) continue;
    if( !bFirst ) sqlite3_str_appendall(pStr, " AND ");
    bFirst = 0;
    rc = vec0FilterSql(p, &aArg[i], argv[i], pStr, &nBind);
  }
  zSql = sqlite3_str_finish(pStr);
  if( rc==SQLITE_OK && zSql==0 ) rc = SQLITE_NOMEM;
  if( rc!=SQLITE_OK ) goto cleanup;
  rc = sqlite3_prepare_v2(p->dbStore, zSql, -1, &pStmt, 0);
  if( rc!=SQLITE_OK ) goto cleanup;
  nBind = 0;
  for(i=0; i<nArg; i++){
    const Vec0PlanArg *pArg = &aArg[i];
    if( pArg->eArg!=VEC0_ARG_FILTER ) continue;
    if( pArg->eOp==VEC0_OP_ISNULL || pArg->eOp==VEC0_OP_ISNOTNULL ) continue;
    if( pArg->eOp==VEC0_OP_IN ){
      sqlite3_value *pEach = 0;
      int rc2;
      for(rc2 = sqlite3_vtab_in_first(argv[i], &pEach); rc2==SQLITE_OK && pEach;
          rc2 = sqlite3_vtab_in_next(argv[i], &pEach)){
        sqlite3_bind_value(pStmt, ++nBind, pEach);
      }
    }else{
      sqlite3_bind_value(pStmt, ++nBind, argv[i]);
    }
  }
  aMask = sqlite3_malloc64((sqlite3_uint64)(nSlot ? nSlot : 1));
  if( aMask==0 ){ rc = SQLITE_NOMEM; goto cleanup; }
  memset(aMask, 0, (size_t)(nSlot ? nSlot : 1));
  while( sqlite3_step(pStmt)==SQLITE_ROW ){
    sqlite3_int64 iSlot = sqlite3_column_int64(pStmt, 0);
    if( iSlot<0 || iSlot>=nSlot ){
      vec0SetError(p, "vec0 \"%s\": storage is damaged: a row names slot %lld, next_slot "
                      "is %lld", p->zName, iSlot, nSlot);
      rc = SQLITE_CORRUPT_VTAB;
      break;
    }
    aMask[iSlot] = 1;
  }
  if( rc==SQLITE_OK ) rc = sqlite3_reset(pStmt);

cleanup:
  sqlite3_finalize(pStmt);
  sqlite3_free(zSql);
  if( rc!=SQLITE_OK ){
    sqlite3_free(aMask);
    aMask = 0;
  }
  *paMask = aMask;
  return rc;
}
