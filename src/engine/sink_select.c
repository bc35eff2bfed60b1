/*
 * sink_select.c -- the host half of the selecting sink (select.h).  The
 * GPU engine stages its panels as they are and they are selected here,
 * over the panel's columns.
 */
#include <math.h>
#include <stdlib.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#include "select.h"

int gc_select_slot(void)
{
#ifdef _OPENMP
    return omp_get_thread_num();
#else
    return 0;
#endif
}

int gc_select_alloc(gc_select *s, int nslots, int hist)
{
    if (nslots < 1) nslots = 1;
    s->nslots = nslots;
    s->hist = hist ? calloc((size_t) nslots * SEL_NBINS, sizeof(uint64_t)) : NULL;
    s->above = calloc((size_t) nslots, sizeof(uint64_t));
    s->valid = calloc((size_t) nslots, sizeof(uint64_t));
    s->cand = calloc((size_t) nslots, sizeof *s->cand);
    s->nvar = s->symmetric ? s->p : s->cols_only ? s->q : s->p + s->q;
    if (s->k) {
        s->heap = malloc(s->nvar * s->k * sizeof(gc_hent));
        s->hlen = calloc(s->nvar, sizeof(uint32_t));
        s->lock = calloc(s->nvar, 1);
        s->hfloor = malloc(s->nvar * sizeof(double));
    }
    return (hist && !s->hist) || !s->above || !s->valid || !s->cand ||
           (s->k && (!s->heap || !s->hlen || !s->lock || !s->hfloor));
}

void gc_select_free(gc_select *s)
{
    if (s->cand)
        for (int k = 0; k < s->nslots; k++) free(s->cand[k].v);
    free(s->cand); free(s->hist); free(s->above); free(s->valid);
    free(s->heap); free(s->hlen); free(s->lock); free(s->hfloor);
    s->cand = NULL; s->hist = s->above = s->valid = NULL;
    s->heap = NULL; s->hlen = NULL; s->lock = NULL; s->hfloor = NULL;
}

void gc_select_reset(gc_select *s)
{
    if (s->hist) memset(s->hist, 0, (size_t) s->nslots * SEL_NBINS * sizeof(uint64_t));
    memset(s->above, 0, (size_t) s->nslots * sizeof(uint64_t));
    memset(s->valid, 0, (size_t) s->nslots * sizeof(uint64_t));
    for (int k = 0; k < s->nslots; k++) s->cand[k].len = 0;
    if (s->hlen) memset(s->hlen, 0, s->nvar * sizeof(uint32_t));
    if (s->hfloor)
        for (size_t v = 0; v < s->nvar; v++) s->hfloor[v] = -INFINITY;
    s->failed = 0;
}

void gc_select_sum(const gc_select *s, uint64_t *hist, uint64_t *above,
                   uint64_t *valid)
{
    memset(hist, 0, SEL_NBINS * sizeof(uint64_t));
    *above = *valid = 0;
    for (int k = 0; k < s->nslots; k++) {
        if (s->hist)
            for (size_t b = 0; b < SEL_NBINS; b++) hist[b] += s->hist[k * SEL_NBINS + b];
        *above += s->above[k];
        *valid += s->valid[k];
    }
}

/* room for n records in slot 0 (where the device's records land) */
static int grow(struct gc_pairvec *c, size_t n)
{
    if (n <= c->cap) return 0;
    gc_pair *nv = realloc(c->v, n * sizeof *nv);
    if (!nv) return 1;
    gc_advise_huge(nv, n * sizeof *nv);
    c->v = nv;
    c->cap = n;
    return 0;
}

int gc_select_reserve(gc_select *s, size_t n)
{
    return grow(&s->cand[0], n);
}

static int push(gc_select *s, int slot, double v, size_t i, size_t j)
{
    struct gc_pairvec *c = &s->cand[slot];
    if (c->len == c->cap) {
        size_t cap = c->cap ? 2 * c->cap : 1024;
        gc_pair *nv = realloc(c->v, cap * sizeof *nv);
        if (!nv) return 1;
        c->v = nv;
        c->cap = cap;
    }
    c->v[c->len].v = v;
    c->v[c->len].i = (uint32_t) i;
    c->v[c->len].j = (uint32_t) j;
    c->len++;
    return 0;
}

/* a is worse than b: weaker, or as strong with the larger partner index */
static inline int worse(const gc_hent *a, const gc_hent *b)
{
    return a->s < b->s || (a->s == b->s && a->partner > b->partner);
}

/* Variable var meets partner with strength st: its bounded heap (the
 * worst kept partner at the root) takes it if it is among the k best. */
static void heap_offer(gc_select *s, size_t var, double st, double v, size_t partner)
{
    gc_hent e = {st, v, (uint32_t) partner};
    gc_hent *h = s->heap + var * s->k;
    unsigned char *lk = s->lock + var;
    /* most pairs are weaker than a full heap's worst: no lock for them */
    double fl;
    __atomic_load(&s->hfloor[var], &fl, __ATOMIC_RELAXED);
    if (st < fl) return;
    while (__atomic_test_and_set(lk, __ATOMIC_ACQUIRE)) { }
    size_t n = s->hlen[var], k = s->k, c;
    if (n < k) {
        /* sift up */
        c = n;
        while (c > 0) {
            size_t par = (c - 1) / 2;
            if (!worse(&e, &h[par])) break;
            h[c] = h[par];
            c = par;
        }
        h[c] = e;
        s->hlen[var] = (uint32_t) (n + 1);
        if (n + 1 == k) __atomic_store(&s->hfloor[var], &h[0].s, __ATOMIC_RELAXED);
    } else if (worse(&h[0], &e)) {
        /* replace the root, sift down */
        c = 0;
        for (;;) {
            size_t l = 2 * c + 1, m = c;
            const gc_hent *mv = &e;
            if (l < k && worse(&h[l], mv)) { m = l; mv = &h[l]; }
            if (l + 1 < k && worse(&h[l + 1], mv)) { m = l + 1; mv = &h[l + 1]; }
            if (m == c) break;
            h[c] = h[m];
            c = m;
        }
        h[c] = e;
        __atomic_store(&s->hfloor[var], &h[0].s, __ATOMIC_RELAXED);
    }
    __atomic_clear(lk, __ATOMIC_RELEASE);
}

void gc_select_offer(gc_select *s, size_t var, double st, double v, size_t partner)
{
    heap_offer(s, var, st, v, partner);
}

int gc_select_push(gc_select *s, int slot, double v, size_t i, size_t j)
{
    return push(s, slot, v, i, j);
}

static void select_tile(const gc_sink *sink, const gc_tile *t, int slot)
{
    gc_select *s = sink->sel;
    int hist = s->mode & SEL_HIST, coll = s->mode & SEL_COLLECT,
        heaps = s->mode & SEL_HEAPS;
    int shift = s->prefix_bits;
    uint64_t *h = hist ? s->hist + (size_t) slot * SEL_NBINS : NULL;
    uint64_t above = 0, valid = 0;
    for (size_t b = 0; b < t->nj; b++) {
        size_t j = t->j0 + b;
        for (size_t a = 0; a < t->ni; a++) {
            size_t i = t->i0 + a;
            if (s->symmetric && i <= j) continue;
            double v = t->is_float ? (double) ((const float *) t->val)[a + b * t->ld] * t->scale
                                   : ((const double *) t->val)[a + b * t->ld];
            if (isnan(v)) continue;
            v = gc_epilogue(sink->epilogue, sink->beta, v);
            double st = sel_strength(s->strength, v);
            if (hist || coll) {
                double key = st;
                if (s->key == KEY_ABS) key = fabs(v);
                else if (s->key == KEY_PVALUE) {
                    double pv = s->pvalue(s->pctx, i, j, v);
                    if (isnan(pv)) goto heap;
                    key = -pv;
                }
                uint64_t c = sel_code(key);
                valid++;
                if (hist) {
                    if (shift == 0) h[c >> (64 - SEL_BIN_BITS)]++;
                    else if ((c >> (64 - shift)) == s->prefix)
                        h[(c << shift) >> (64 - SEL_BIN_BITS)]++;
                    else if ((c >> (64 - shift)) > s->prefix) above++;
                }
                if (coll && c >= s->lower && push(s, slot, v, i, j))
                    __atomic_store_n(&s->failed, 1, __ATOMIC_RELAXED);
            }
        heap:
            if (heaps && (!s->has_thr || st >= s->thr)) {
                if (s->cols_only) {
                    heap_offer(s, j, st, v, i);
                } else {
                    size_t vi = i, vj = s->symmetric ? j : s->p + j;
                    heap_offer(s, vi, st, v, j);
                    heap_offer(s, vj, st, v, i);
                }
            }
        }
    }
    s->above[slot] += above;
    s->valid[slot] += valid;
}

static void select_emit(const gc_sink *sink, const gc_tile *t)
{
    select_tile(sink, t, gc_select_slot());
}

/* A staged GPU panel: what the device half made of it (records, a
 * histogram, each column's best), or its values, over the columns */
static void select_commit(const gc_sink *sink, const gc_tile *t, size_t offset, size_t count,
                          int nthreads)
{
    (void) offset;
    (void) count;
    gc_select *s = sink->sel;
    const gc_pair *r = (const gc_pair *) t->val;
    if (t->rec == TILE_PAIRS) {
        struct gc_pairvec *c = &s->cand[0];
        size_t need = c->len + t->nrec;
        if (need > c->cap && grow(c, need > 2 * c->cap ? need : 2 * c->cap)) {
            __atomic_store_n(&s->failed, 1, __ATOMIC_RELAXED);
            return;
        }
        memcpy(c->v + c->len, r, t->nrec * sizeof *r);
        c->len = need;
        return;
    }
    if (t->rec == TILE_HIST) {
        const uint64_t *c = (const uint64_t *) t->val;
        for (size_t b = 0; b < SEL_NBINS; b++) s->hist[b] += c[b];
        s->above[0] += c[SEL_NBINS];
        s->valid[0] += c[SEL_NBINS + 1];
        return;
    }
    if (t->rec == TILE_TOPK) {
        /* a column's own best partners, best first: its variable's heap
         * only (the partner's column makes the partner's).  An empty heap
         * takes them as they are, worst first (a sorted array is a heap,
         * and gc_select_heap_sorted() then only reverses it); the columns
         * are distinct variables, committed by the threads at once */
        size_t k = s->k, ncol = k ? t->nrec / k : 0;
        if (nthreads < 1) nthreads = 1;
        if ((size_t) nthreads > ncol / 256 + 1) nthreads = (int) (ncol / 256 + 1);
#ifdef _OPENMP
#pragma omp parallel for num_threads(nthreads) schedule(static)
#endif
        for (size_t b = 0; b < ncol; b++) {
            const gc_pair *c = r + b * k;
            size_t m = 0;
            while (m < k && c[m].i != UINT32_MAX) m++;
            if (m == 0) continue;
            size_t var = c[0].j;
            if (s->hlen[var] == 0) {
                gc_hent *h = s->heap + var * k;
                for (size_t a = 0; a < m; a++) {
                    const gc_pair *e = &c[m - 1 - a];
                    h[a].s = sel_strength(s->strength, e->v);
                    h[a].v = e->v;
                    h[a].partner = e->i;
                }
                s->hlen[var] = (uint32_t) m;
                if (m == k) __atomic_store(&s->hfloor[var], &h[0].s, __ATOMIC_RELAXED);
            } else {
                for (size_t a = 0; a < m; a++)
                    heap_offer(s, var, sel_strength(s->strength, c[a].v), c[a].v, c[a].i);
            }
        }
        return;
    }
    if (nthreads < 1) nthreads = 1;
    if (nthreads > sink->sel->nslots) nthreads = sink->sel->nslots;
    if ((size_t) nthreads > t->nj) nthreads = (int) (t->nj ? t->nj : 1);
#ifdef _OPENMP
#pragma omp parallel for num_threads(nthreads) schedule(dynamic, 1)
#endif
    for (size_t b = 0; b < t->nj; b++) {
        gc_tile c = *t;
        size_t esz = t->is_float ? sizeof(float) : sizeof(double);
        c.j0 = t->j0 + b;
        c.nj = 1;
        c.val = (const char *) t->val + b * t->ld * esz;
        select_tile(sink, &c, gc_select_slot());
    }
}

const gc_sink_ops gc_sink_select = {
    .name = "select", .emit = select_emit, .commit = select_commit,
};

static int hent_cmp(const void *a, const void *b)
{
    const gc_hent *x = a, *y = b;
    if (x->s != y->s) return x->s > y->s ? -1 : 1;
    return x->partner < y->partner ? -1 : x->partner > y->partner;
}

size_t gc_select_heap_sorted(gc_select *s, size_t var, const gc_hent **out)
{
    gc_hent *h = s->heap + var * s->k;
    size_t n = s->hlen[var], a = 0;
    /* worst first already (a device's column, above): reversed */
    while (a + 1 < n && hent_cmp(&h[a], &h[a + 1]) >= 0) a++;
    if (a + 1 >= n) {
        for (size_t lo = 0, hi = n ? n - 1 : 0; lo < hi; lo++, hi--) {
            gc_hent tmp = h[lo];
            h[lo] = h[hi];
            h[hi] = tmp;
        }
    } else {
        qsort(h, n, sizeof *h, hent_cmp);
    }
    *out = h;
    return n;
}
