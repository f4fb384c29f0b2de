/*
** vector_topk.c: keep the k nearest of n candidates in O(n log k).
**
** Usage (internal):
**
**   VsTopK top;
**   vsTopKInit(&top, k, nRows);
**   for(each candidate) vsTopKPush(&top, distance, rowid, slot);
**   vsTopKSort(&top);            // top.a[0..top.n) nearest first
**   vsTopKFree(&top);
**
** How it works: a binary max-heap of at most k hits whose root is the worst hit kept.
** Hits are ordered by (distance, rowid), a total order, so equal distances come out by
** ascending rowid and the result never depends on the order candidates arrive in.
*/
#include "vecsync_int.h"
SQLITE_EXTENSION_INIT3

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* True when hit x ranks after hit y (is farther, or as far with a larger rowid). */
static int vsHitAfter(const VsHit *x, const VsHit *y){
  if( x->rDist!=y->rDist ) return x->rDist > y->rDist;
  return x->iRowid > y->iRowid;
}

int vsTopKInit(VsTopK *p, sqlite3_int64 k, sqlite3_int64 nMaxCandidates){
  sqlite3_int64 nCap = k < nMaxCandidates ? k : nMaxCandidates;
  if( nCap<1 ) nCap = 1;
  if( nCap>0x7fffffff ) nCap = 0x7fffffff;
  p->n = 0;
  p->nCap = (int)nCap;
  p->a = sqlite3_malloc64(sizeof(VsHit)*(sqlite3_uint64)nCap);
  return p->a ? SQLITE_OK : SQLITE_NOMEM;
}

void vsTopKFree(VsTopK *p){
  sqlite3_free(p->a);
  p->a = 0;
  p->n = p->nCap = 0;
}

double vsTopKBound(const VsTopK *p){
  return p->n<p->nCap ? INFINITY : p->a[0].rDist;
}

static void vsSiftDown(VsHit *a, int n, int i){
  for(;;){
    int l = 2*i+1, r = l+1, m = i;
    VsHit t;
    if( l<n && vsHitAfter(&a[l], &a[m]) ) m = l;
    if( r<n && vsHitAfter(&a[r], &a[m]) ) m = r;
    if( m==i ) return;
    t = a[i]; a[i] = a[m]; a[m] = t;
    i = m;
  }
}

void vsTopKPush(VsTopK *p, double rDist, sqlite3_int64 iRowid, sqlite3_int64 iSlot){
  VsHit h;
  h.rDist = rDist;
  h.iRowid = iRowid;
  h.iSlot = iSlot;
  if( p->n<p->nCap ){
    int i = p->n++;
    while( i>0 ){
      int up = (i-1)/2;
      if( !vsHitAfter(&h, &p->a[up]) ) break;
      p->a[i] = p->a[up];
      i = up;
    }
    p->a[i] = h;
  }else if( vsHitAfter(&p->a[0], &h) ){
    p->a[0] = h;
    vsSiftDown(p->a, p->n, 0);
  }
}

static int vsHitCompare(const void *x, const void *y){
  const VsHit *a = x, *b = y;
  if( vsHitAfter(a, b) ) return 1;
  if( vsHitAfter(b, a) ) return -1;
  return 0;
}

void vsTopKSort(VsTopK *p){
  qsort(p->a, (size_t)p->n, sizeof(VsHit), vsHitCompare);
}

void vsTopKNullsFirst(VsTopK *p){
  int nNull = 0, i;
  VsHit *aTmp;
  while( nNull<p->n && p->a[p->n-1-nNull].rDist!=p->a[p->n-1-nNull].rDist ) nNull++;
  if( nNull==0 || nNull==p->n ) return;
  aTmp = sqlite3_malloc64(sizeof(VsHit)*(size_t)nNull);
  if( aTmp==0 ){
    /* No memory for the move: rotate one hit at a time, in place. */
    for(i=0; i<nNull; i++){
      VsHit h = p->a[p->n-1];
      memmove(&p->a[1], &p->a[0], sizeof(VsHit)*(size_t)(p->n-1));
      p->a[0] = h;
    }
    return;
  }
  memcpy(aTmp, &p->a[p->n-nNull], sizeof(VsHit)*(size_t)nNull);
  memmove(&p->a[nNull], &p->a[0], sizeof(VsHit)*(size_t)(p->n-nNull));
  memcpy(&p->a[0], aTmp, sizeof(VsHit)*(size_t)nNull);
  sqlite3_free(aTmp);
}
