/*
 * edges.c -- see edges.h.
 *
 * Exactness of the FDR cut.  p.adjust(p, "BH") sorts the M non-NA
 * p-values, p_(1) <= ... <= p_(M), and gives rank k the adjusted value
 * min over k' >= k of (M / k') * p_(k') (in double, in that order), so a
 * pair is kept at level q exactly when its rank is at most K = the largest
 * k with (M / k) * p_(k) <= q (tied p-values share one adjusted value).
 * The histogram pass knows, for each bin of keys, how many pairs are
 * stronger (C) and a lower bound of their p-values (the p-value at the
 * bin's upper edge), hence a lower bound (M / C) * p_edge of the terms of
 * every rank in the bin; bins whose bound exceeds q hold no rank <= K.
 * Every pair at or above the weakest bin that may hold one is collected,
 * so that the candidates are the pairs of ranks 1 .. n, whose exact
 * p-values then give K and the adjusted values as p.adjust computes them.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "edges.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + 1e-9 * (double) ts.tv_nsec;
}

typedef struct {
    double v, s, p, adj;   /* value, strength, p-value, BH-adjusted */
    uint32_t row, col;
} cand;

typedef struct {
    size_t n, cap;
    cand *c;
} candvec;

static int cv_push(candvec *cv, double v, double s, uint32_t row, uint32_t col)
{
    if (cv->n == cv->cap) {
        size_t cap = cv->cap ? 2 * cv->cap : 1024;
        cand *nc = realloc(cv->c, cap * sizeof *nc);
        if (!nc) return 1;
        cv->c = nc;
        cv->cap = cap;
    }
    cand *e = &cv->c[cv->n++];
    e->v = v; e->s = s; e->p = e->adj = NAN; e->row = row; e->col = col;
    return 0;
}

static int by_pos(const void *a, const void *b)
{
    const cand *x = a, *y = b;
    if (x->row != y->row) return x->row < y->row ? -1 : 1;
    return x->col < y->col ? -1 : x->col > y->col;
}

static int by_p(const void *a, const void *b)
{
    const cand *x = a, *y = b;
    if (x->p != y->p) return x->p < y->p ? -1 : 1;
    return by_pos(a, b);
}

static int by_strength(const void *a, const void *b)
{
    const cand *x = a, *y = b;
    if (x->s != y->s) return x->s > y->s ? -1 : 1;
    return by_pos(a, b);
}

/* ---- sorting the candidates on 64-bit keys, stable (so that a sort by
 * position first breaks the next sort's ties by position): the top 12
 * bits that vary split the keys into buckets (counted and scattered by
 * nthreads threads, each over its own share, in order), then the buckets
 * are sorted on the remaining bits in parallel; qsort for few ---- */
enum { KEY_POS = 0, KEY_P_ASC = 1, KEY_S_DESC = 2 };

static uint64_t cand_key(const cand *c, int kind)
{
    if (kind == KEY_POS) return ((uint64_t) c->row << 32) | c->col;
    if (kind == KEY_P_ASC) return sel_code(c->p);
    return ~sel_code(c->s);
}

typedef struct { uint64_t k; size_t i; } kv;

/* Sort y[0 .. m) on the low 'bits' bits of the keys (the others equal),
 * stably, with tmp[0 .. m) as scratch: insertion for few, else an LSD
 * radix sort on bytes (constant bytes skipped). */
static void sort_bucket(kv *y, kv *tmp, size_t m, int bits)
{
    if (m <= 48) {
        for (size_t i = 1; i < m; i++) {
            kv e = y[i];
            size_t j = i;
            while (j > 0 && y[j - 1].k > e.k) { y[j] = y[j - 1]; j--; }
            y[j] = e;
        }
        return;
    }
    uint64_t all_and = ~(uint64_t) 0, all_or = 0;
    for (size_t i = 0; i < m; i++) { all_and &= y[i].k; all_or |= y[i].k; }
    kv *src = y, *dst = tmp;
    for (int d = 0; d < bits; d += 8) {
        if ((((all_and ^ all_or) >> d) & 0xff) == 0) continue;
        size_t cnt[256] = {0};
        for (size_t i = 0; i < m; i++) cnt[(src[i].k >> d) & 0xff]++;
        size_t sum = 0;
        for (int b = 0; b < 256; b++) { size_t c = cnt[b]; cnt[b] = sum; sum += c; }
        for (size_t i = 0; i < m; i++) dst[cnt[(src[i].k >> d) & 0xff]++] = src[i];
        kv *t = src; src = dst; dst = t;
    }
    if (src != y) memcpy(y, src, m * sizeof *y);
}

#define SORT_BITS 12

/* big arrays: huge pages where the OS offers them (the first touch of
 * fresh memory is most of the cost of these passes) */
static void *big_alloc(size_t bytes)
{
    void *p = malloc(bytes ? bytes : 1);
    if (p) gc_advise_huge(p, bytes);
    return p;
}

/* the sorts' scratch, kept for the run */
typedef struct {
    kv *x, *y;
    size_t cap;            /* of x and y */
    cand *tmp;
    size_t tcap;
    size_t *cnt, *start;
    int nthreads;
} sorter;

static void sorter_free(sorter *so)
{
    free(so->x); free(so->y); free(so->tmp); free(so->cnt); free(so->start);
    memset(so, 0, sizeof *so);
}

/* Sort cv->c[0 .. n) (what follows is dropped). */
static int sort_cands(sorter *so, candvec *cv, size_t n, int kind)
{
    cand *a = cv->c;
    if (n < 2048) {
        qsort(a, n, sizeof *a, kind == KEY_POS ? by_pos : kind == KEY_P_ASC ? by_p : by_strength);
        return 0;
    }
    int nthreads = so->nthreads;
    const size_t nb = (size_t) 1 << SORT_BITS;
    if (so->cap < n) {
        free(so->x); free(so->y);
        so->x = big_alloc(n * sizeof *so->x);
        so->y = big_alloc(n * sizeof *so->y);
        so->cap = so->x && so->y ? n : 0;
        if (!so->cap) return 1;
    }
    if (so->tcap < n) {
        free(so->tmp);
        so->tmp = big_alloc(n * sizeof *so->tmp);
        so->tcap = so->tmp ? n : 0;
        if (!so->tcap) return 1;
    }
    if (!so->cnt) {
        so->cnt = malloc((size_t) nthreads * nb * sizeof *so->cnt);
        so->start = malloc((nb + 1) * sizeof *so->start);
        if (!so->cnt || !so->start) return 1;
    }
    kv *x = so->x, *y = so->y;
    size_t *cnt = so->cnt, *start = so->start;
    uint64_t all_and = ~(uint64_t) 0, all_or = 0;
#ifdef _OPENMP
#pragma omp parallel for num_threads(nthreads) reduction(&:all_and) reduction(|:all_or)
#endif
    for (size_t i = 0; i < n; i++) {
        x[i].k = cand_key(&a[i], kind);
        x[i].i = i;
        all_and &= x[i].k;
        all_or |= x[i].k;
    }
    uint64_t vary = all_and ^ all_or;
    int top = vary ? 64 - __builtin_clzll(vary) : 0;
    int shift = top > SORT_BITS ? top - SORT_BITS : 0;
#define BUCKET(key) ((size_t) (((key) >> shift) & (nb - 1)))
    memset(cnt, 0, (size_t) nthreads * nb * sizeof *cnt);
#ifdef _OPENMP
#pragma omp parallel for num_threads(nthreads) schedule(static, 1)
#endif
    for (int c = 0; c < nthreads; c++) {
        size_t *h = cnt + (size_t) c * nb;
        for (size_t i = n * c / nthreads; i < n * (c + 1) / nthreads; i++) h[BUCKET(x[i].k)]++;
    }
    size_t sum = 0;
    for (size_t b = 0; b < nb; b++) {
        start[b] = sum;
        for (int c = 0; c < nthreads; c++) {
            size_t v = cnt[(size_t) c * nb + b];
            cnt[(size_t) c * nb + b] = sum;
            sum += v;
        }
    }
    start[nb] = n;
#ifdef _OPENMP
#pragma omp parallel for num_threads(nthreads) schedule(static, 1)
#endif
    for (int c = 0; c < nthreads; c++) {
        size_t *h = cnt + (size_t) c * nb;
        for (size_t i = n * c / nthreads; i < n * (c + 1) / nthreads; i++)
            y[h[BUCKET(x[i].k)]++] = x[i];
    }
#undef BUCKET
#ifdef _OPENMP
#pragma omp parallel for num_threads(nthreads) schedule(dynamic, 8)
#endif
    for (size_t b = 0; b < nb; b++)
        if (start[b + 1] - start[b] > 1)
            sort_bucket(y + start[b], x + start[b], start[b + 1] - start[b], shift);
    cand *t = so->tmp;
#ifdef _OPENMP
#pragma omp parallel for num_threads(nthreads)
#endif
    for (size_t i = 0; i < n; i++) t[i] = a[y[i].i];
    /* the sorted copy becomes the candidates */
    so->tmp = cv->c;
    cv->c = t;
    size_t c = so->tcap;
    so->tcap = cv->cap;
    cv->cap = c;
    if (cv->n > n) cv->n = n;
    return 0;
}

/* one end of a pair, for each variable's top k */
typedef struct {
    size_t var;
    double s;
    uint32_t partner;
    size_t pair;
} endpt;

static int by_var(const void *a, const void *b)
{
    const endpt *x = a, *y = b;
    if (x->var != y->var) return x->var < y->var ? -1 : 1;
    if (x->s != y->s) return x->s > y->s ? -1 : 1;
    return x->partner < y->partner ? -1 : x->partner > y->partner;
}

/* A lower bound of the p-values of keys below code u. */
static double p_below_edge(const gc_edges_job *job, uint64_t u, int top)
{
    if (top) return 0;
    double key = sel_decode(u);
    if (isnan(key)) return 0;
    if (job->common_n) return key >= 1 ? 0 : job->pabs(job->pctx, key);
    return key >= 0 ? 0 : -key;
}

static double pair_p(const gc_edges_job *job, const cand *c)
{
    return job->common_n ? job->pabs(job->pctx, fabs(c->v))
                         : job->pvalue(job->pctx, c->row, c->col, c->v);
}

/* ---- the driver's state, and its phases ---------------------------------- */
enum { STEP_CUT = 0, STEP_COLLECT = 1, STEP_DONE = 2 };

struct gc_edges {
    const gc_edges_job *job;
    int step;                /* STEP_*: the pass to make next */
    uint64_t prefix;         /* STEP_CUT: the bin being refined */
    int bits;
    double t0;               /* the stage clock */
    double stage[8];         /* gc_edges_out.stage, as the steps go */
    gc_select s;
    gc_sink sink;
    candvec cv;
    sorter so;
    uint64_t *h;             /* the histogram passes' bins */
    int cut;                 /* a cut by histogram passes (FDR, density) */
    int heaps;               /* top k alone: the sink keeps heaps */
    int none;                /* nothing can be kept */
    int nt;
    double M;                /* the pairs with a key (FDR's M) */
    double D;                /* the density's number of pairs */
    uint64_t expect;         /* the collecting pass's pairs, when a cut knows */
    uint64_t bin_limit;      /* a bin with more pairs is refined */
    char *msg;
    size_t msgcap;
};
typedef gc_edges edges_run;

static int oom(edges_run *e)
{
    snprintf(e->msg, e->msgcap, "out of host memory for the selected pairs");
    return GPUCOR_ERR_ALLOC;
}

/* 1. The cut: histogram passes, each refining the bin that holds it,
 * until s.lower is the key above which every pair is a candidate.  The
 * pass's histogram: either the next bin to refine (the step stays), or the
 * cut (and the collecting step next). */
static void cut_pass(edges_run *e)
{
    gc_select *s = &e->s;
    s->mode = SEL_HIST;
    s->prefix = e->prefix;
    s->prefix_bits = e->bits;
}

static void cut_found(edges_run *e)
{
    const gc_edges_job *job = e->job;
    gc_select *s = &e->s;
    uint64_t *h = e->h;
    uint64_t prefix = e->prefix, above, valid;
    int bits = e->bits, top;
    e->stage[6] += 1;
    gc_select_sum(s, h, &above, &valid);
    if (bits == 0) e->M = (double) valid;   /* the first pass: every pair */
    e->step = STEP_COLLECT;
    long b = -1;
    if (job->fdr > 0) {
        /* the weakest bin that may hold a rank <= K */
        uint64_t C = above;
        for (size_t k = 0; k < SEL_NBINS; k++) C += h[k];
        for (size_t k = 0; k < SEL_NBINS; k++) {
            if (h[k]) {
                uint64_t u = sel_bin_edge(prefix, bits, k + 1, &top);
                double bound = e->M / (double) C * p_below_edge(job, u, top);
                if (bound <= job->fdr * (1 + 1e-7)) { b = (long) k; break; }
            }
            C -= h[k];
        }
        if (b < 0) {
            /* none here: the kept ranks, if any, are above this range (a
             * bin refined because its bound allowed it) */
            s->lower = sel_bin_edge(prefix, bits, SEL_NBINS, &top);
            if (bits == 0 || top) e->none = 1;
            e->expect = above;
            return;
        }
    } else {
        /* the bin of the D-th strongest pair */
        uint64_t cum = above;
        for (long k = (long) SEL_NBINS - 1; k >= 0; k--) {
            if ((double) (cum + h[k]) >= e->D) { b = k; break; }
            cum += h[k];
        }
        if (b < 0) {
            s->lower = bits ? prefix << (64 - bits) : 0;
            e->expect = cum;
            return;
        }
    }
    if (h[b] > e->bin_limit && bits + SEL_BIN_BITS < 64) {
        e->prefix = (prefix << SEL_BIN_BITS) | (uint64_t) b;
        e->bits = bits + SEL_BIN_BITS;
        e->step = STEP_CUT;
        return;
    }
    s->lower = sel_bin_edge(prefix, bits, (size_t) b, &top);
    e->expect = above;
    for (size_t k = (size_t) b; k < SEL_NBINS; k++) e->expect += h[k];
}

/* The heaps' pairs as candidates, each pair once. */
static int from_heaps(edges_run *e)
{
    const gc_edges_job *job = e->job;
    candvec *cv = &e->cv;
    for (size_t var = 0; var < e->s.nvar; var++) {
        const gc_hent *h;
        size_t n = gc_select_heap_sorted(&e->s, var, &h);
        for (size_t a = 0; a < n; a++) {
            size_t r = var, c = h[a].partner;
            if (!job->symmetric && var >= job->p) { r = h[a].partner; c = var - job->p; }
            else if (job->symmetric && c < r) { r = h[a].partner; c = var; }
            if (cv_push(cv, h[a].v, h[a].s, (uint32_t) r, (uint32_t) c)) return oom(e);
        }
    }
    /* a pair kept by both its variables once */
    if (sort_cands(&e->so, cv, cv->n, KEY_POS)) return oom(e);
    size_t w = 0;
    for (size_t a = 0; a < cv->n; a++)
        if (w == 0 || by_pos(&cv->c[w - 1], &cv->c[a]) != 0) cv->c[w++] = cv->c[a];
    cv->n = w;
    return GPUCOR_OK;
}

/* The collected pairs of every slot as candidates (the slots freed). */
static int from_slots(edges_run *e)
{
    const gc_edges_job *job = e->job;
    gc_select *s = &e->s;
    candvec *cv = &e->cv;
    size_t total = 0;
    for (int sl = 0; sl < s->nslots; sl++) total += s->cand[sl].len;
    if (!(cv->c = big_alloc(total * sizeof *cv->c))) return oom(e);
    cv->n = cv->cap = total;
    size_t at = 0;
    for (int sl = 0; sl < s->nslots; sl++) {
        const gc_pair *pv = s->cand[sl].v;
        size_t len = s->cand[sl].len;
        cand *base = cv->c + at;
#ifdef _OPENMP
#pragma omp parallel for num_threads(e->nt) schedule(static) if (len > 65536)
#endif
        for (size_t a = 0; a < len; a++) {
            cand *c = &base[a];
            c->row = job->symmetric ? pv[a].j : pv[a].i;
            c->col = job->symmetric ? pv[a].i : pv[a].j;
            c->v = pv[a].v;
            c->s = sel_strength(job->strength, pv[a].v);
            c->p = c->adj = NAN;
        }
        at += len;
        free(s->cand[sl].v);
        s->cand[sl].v = NULL;
        s->cand[sl].len = s->cand[sl].cap = 0;
    }
    return GPUCOR_OK;
}

/* 2. The candidates: one pass collecting the pairs above the cut (or the
 * threshold), or keeping each variable's top k in heaps. */
static int collect_pass(edges_run *e)
{
    const gc_edges_job *job = e->job;
    gc_select *s = &e->s;
    if (e->cut) {
        s->mode = SEL_COLLECT;
        if (gc_select_reserve(s, (size_t) e->expect)) return oom(e);
    } else if (e->heaps) {
        s->mode = SEL_HEAPS;
        s->has_thr = job->has_thr;
        s->thr = job->thr;
    } else {
        s->mode = SEL_COLLECT;
        s->lower = sel_code(job->thr);
    }
    return GPUCOR_OK;
}

/* The FDR cut on the candidates' exact p-values: the ranks <= K, with
 * p.adjust's values.  *n: the candidates, then those kept. */
static int fdr_cut(edges_run *e, size_t *n)
{
    candvec *cv = &e->cv;
    if (sort_cands(&e->so, cv, *n, KEY_P_ASC)) return oom(e);
    size_t K = 0;
    for (size_t k = 1; k <= *n; k++)
        if (e->M / (double) k * cv->c[k - 1].p <= e->job->fdr) K = k;
    /* p.adjust's cummin from rank K down */
    double m = INFINITY;
    for (size_t k = K; k >= 1; k--) {
        double t = e->M / (double) k * cv->c[k - 1].p;
        if (t < m) m = t;
        cv->c[k - 1].adj = m < 1 ? m : 1;
    }
    *n = K;
    return GPUCOR_OK;
}

/* Each variable's k strongest partners among the n candidates. */
static int top_k_cut(edges_run *e, size_t *n)
{
    const gc_edges_job *job = e->job;
    candvec *cv = &e->cv;
    endpt *ends = malloc(2 * *n * sizeof *ends);
    unsigned char *mark = calloc(*n, 1);
    if (!ends || !mark) {
        free(ends);
        free(mark);
        return oom(e);
    }
    for (size_t a = 0; a < *n; a++) {
        const cand *c = &cv->c[a];
        ends[2 * a] = (endpt) {c->row, c->s, c->col, a};
        ends[2 * a + 1] = (endpt) {job->symmetric ? c->col : job->p + c->col, c->s,
                                   c->row, a};
    }
    qsort(ends, 2 * *n, sizeof *ends, by_var);
    for (size_t a = 0, run = 0; a < 2 * *n; a++) {
        run = (a > 0 && ends[a].var == ends[a - 1].var) ? run + 1 : 0;
        if (run < job->top_k) mark[ends[a].pair] = 1;
    }
    size_t w = 0;
    for (size_t a = 0; a < *n; a++)
        if (mark[a]) cv->c[w++] = cv->c[a];
    *n = w;
    free(ends);
    free(mark);
    return GPUCOR_OK;
}

/* 3. The exact decisions on the candidates (their p-values known): FDR,
 * threshold, density, top k, in that order; the kept ones in position
 * order.  *n: how many are kept. */
static int decide(edges_run *e, size_t *n)
{
    const gc_edges_job *job = e->job;
    candvec *cv = &e->cv;
    int status = GPUCOR_OK;
    *n = cv->n;
    if (job->fdr > 0 && *n && (status = fdr_cut(e, n)) != GPUCOR_OK) return status;
    /* the threshold (top k alone applied it in the heaps) */
    if (job->has_thr && !e->heaps) {
        size_t w = 0;
        for (size_t a = 0; a < *n; a++)
            if (cv->c[a].s >= job->thr) cv->c[w++] = cv->c[a];
        *n = w;
    }
    /* the density: the D strongest (ties: by position) */
    if (job->density > 0 && (double) *n > e->D) {
        if (sort_cands(&e->so, cv, *n, KEY_POS) || sort_cands(&e->so, cv, *n, KEY_S_DESC))
            return oom(e);
        *n = (size_t) e->D;
    }
    if (job->top_k > 0 && !e->heaps && *n && (status = top_k_cut(e, n)) != GPUCOR_OK)
        return status;
    /* (the heaps' pairs are in position order already) */
    if (!e->heaps && sort_cands(&e->so, cv, *n, KEY_POS)) return oom(e);
    return GPUCOR_OK;
}

/* The n kept pairs into out's vectors. */
static int result(edges_run *e, size_t n, gc_edges_out *out)
{
    const gc_edges_job *job = e->job;
    const cand *c = e->cv.c;
    int want_p = job->fdr > 0 || job->want_p;
    out->n = n;
    size_t nn = n ? n : 1;
    out->row = big_alloc(nn * sizeof *out->row);
    out->col = big_alloc(nn * sizeof *out->col);
    out->val = big_alloc(nn * sizeof *out->val);
    if (want_p) out->p = big_alloc(nn * sizeof *out->p);
    if (job->fdr > 0) out->adj = big_alloc(nn * sizeof *out->adj);
    if (!out->row || !out->col || !out->val || (want_p && !out->p) ||
        (job->fdr > 0 && !out->adj)) {
        gc_edges_free(out);
        return oom(e);
    }
#ifdef _OPENMP
#pragma omp parallel for num_threads(e->nt) schedule(static) if (n > 65536)
#endif
    for (size_t a = 0; a < n; a++) {
        out->row[a] = c[a].row;
        out->col[a] = c[a].col;
        out->val[a] = c[a].v;
        if (out->p) out->p[a] = c[a].p;
        if (out->adj) out->adj[a] = c[a].adj;
    }
    return GPUCOR_OK;
}

#define STAGE(e, k) do { double t1_ = now(); (e)->stage[k] += t1_ - (e)->t0; (e)->t0 = t1_; } while (0)

void gc_edges_end(gc_edges *e)
{
    if (!e) return;
    free(e->h);
    free(e->cv.c);
    sorter_free(&e->so);
    gc_select_free(&e->s);
    free(e);
}

int gc_edges_begin(const gc_edges_job *job, gc_edges **ep, char *msg, size_t msgcap)
{
    edges_run *e = calloc(1, sizeof *e);
    *ep = e;
    if (!e) {
        snprintf(msg, msgcap, "out of host memory");
        return GPUCOR_ERR_ALLOC;
    }
    e->job = job;
    e->s.symmetric = job->symmetric;
    e->s.p = job->p;
    e->s.q = job->q;
    e->s.strength = job->strength;
    e->s.pvalue = job->pvalue;
    e->s.pctx = job->pctx;
    e->cut = job->fdr > 0 || job->density > 0;
    e->heaps = job->top_k > 0 && !e->cut;
    e->s.k = e->heaps ? job->top_k : 0;
    e->s.key = job->fdr > 0 ? (job->common_n ? KEY_ABS : KEY_PVALUE) : KEY_STRENGTH;
    e->sink = (gc_sink) {.kind = SINK_SELECT, .epilogue = job->epilogue, .p = job->p,
                         .q = job->q, .sel = &e->s};
    /* tests: refine with small bins too (GPUCOR_TEST_BIN_LIMIT=n) */
    e->bin_limit = GC_EDGES_BIN_LIMIT;
    const char *env = getenv("GPUCOR_TEST_BIN_LIMIT");
    if (env && *env) e->bin_limit = (uint64_t) strtoull(env, NULL, 10);
    e->nt = job->nslots > 0 ? job->nslots : 1;
    e->so.nthreads = e->nt;
    e->t0 = now();
    double mall = job->symmetric ? (double) job->p * ((double) job->p - 1) / 2
                                 : (double) job->p * (double) job->q;
    if (gc_select_alloc(&e->s, job->nslots, e->cut) ||
        (e->cut && !(e->h = malloc(SEL_NBINS * sizeof *e->h)))) {
        snprintf(msg, msgcap, "out of host memory");
        return GPUCOR_ERR_ALLOC;
    }
    if (job->fdr > 0 && job->common_n && isnan(job->pabs(job->pctx, 0.5))) e->none = 1;
    e->D = job->density > 0 ? nearbyint(job->density * mall) : 0;
    if (job->density > 0 && e->D < 1) e->none = 1;
    e->step = e->none ? STEP_DONE : e->cut ? STEP_CUT : STEP_COLLECT;
    return GPUCOR_OK;
}

int gc_edges_next(gc_edges *e, const gc_sink **sink, char *msg, size_t msgcap)
{
    e->msg = msg;
    e->msgcap = msgcap;
    *sink = NULL;
    if (e->step == STEP_DONE) return GPUCOR_OK;
    if (e->step == STEP_CUT) {
        cut_pass(e);
    } else {
        STAGE(e, 0);   /* the cut's passes */
        int status = collect_pass(e);
        if (status != GPUCOR_OK) return status;
    }
    gc_select_reset(&e->s);
    *sink = &e->sink;
    return GPUCOR_OK;
}

int gc_edges_absorb(gc_edges *e, char *msg, size_t msgcap)
{
    e->msg = msg;
    e->msgcap = msgcap;
    if (e->s.failed) return oom(e);
    if (e->step == STEP_CUT) {
        cut_found(e);
        if (e->none) e->step = STEP_DONE;
        return GPUCOR_OK;
    }
    STAGE(e, 1);
    e->step = STEP_DONE;
    return e->heaps ? from_heaps(e) : from_slots(e);
}

int gc_edges_finish(gc_edges *e, gc_edges_out *out, char *msg, size_t msgcap)
{
    const gc_edges_job *job = e->job;
    size_t n = 0;
    int status;
    e->msg = msg;
    e->msgcap = msgcap;
    memset(out, 0, sizeof *out);
    if (e->none) STAGE(e, 0);   /* no collecting pass: the cut's time */
    e->stage[7] = (double) e->cv.n;
    STAGE(e, 2);
    if (job->fdr > 0 || job->want_p) {
#ifdef _OPENMP
#pragma omp parallel for num_threads(e->nt) schedule(dynamic, 4096)
#endif
        for (size_t a = 0; a < e->cv.n; a++) e->cv.c[a].p = pair_p(job, &e->cv.c[a]);
    }
    STAGE(e, 3);
    if ((status = decide(e, &n)) != GPUCOR_OK) return status;
    STAGE(e, 4);
    if ((status = result(e, n, out)) != GPUCOR_OK) return status;
    STAGE(e, 5);
    memcpy(out->stage, e->stage, sizeof out->stage);
    return GPUCOR_OK;
}
#undef STAGE

int gc_edges_run(const gc_edges_job *job, gc_edges_out *out, char *msg, size_t msgcap)
{
    gc_edges *e = NULL;
    const gc_sink *sink;
    memset(out, 0, sizeof *out);
    int status = gc_edges_begin(job, &e, msg, msgcap);
    while (status == GPUCOR_OK) {
        if ((status = gc_edges_next(e, &sink, msg, msgcap)) != GPUCOR_OK || !sink) break;
        status = job->run(job->run_ctx, sink, msg, msgcap);
        if (status == GPUCOR_OK) status = gc_edges_absorb(e, msg, msgcap);
    }
    if (status == GPUCOR_OK) status = gc_edges_finish(e, out, msg, msgcap);
    if (status != GPUCOR_OK) gc_edges_free(out);
    gc_edges_end(e);
    return status;
}

void gc_edges_free(gc_edges_out *out)
{
    free(out->row); free(out->col); free(out->val); free(out->p); free(out->adj);
    memset(out, 0, sizeof *out);
}
