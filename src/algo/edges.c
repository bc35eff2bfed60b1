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
#include "edges.h"

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

/* ---- sorting the candidates: an LSD radix sort on 64-bit keys, stable
 * (so a sort by position first breaks the next sort's ties by position);
 * qsort for few ---- */
enum { KEY_POS = 0, KEY_P_ASC = 1, KEY_S_DESC = 2 };

static uint64_t cand_key(const cand *c, int kind)
{
    if (kind == KEY_POS) return ((uint64_t) c->row << 32) | c->col;
    if (kind == KEY_P_ASC) return sel_code(c->p);
    return ~sel_code(c->s);
}

typedef struct { uint64_t k; size_t i; } kv;

static int sort_cands(cand *a, size_t n, int kind)
{
    if (n < 2048) {
        qsort(a, n, sizeof *a, kind == KEY_POS ? by_pos : kind == KEY_P_ASC ? by_p : by_strength);
        return 0;
    }
    kv *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
    size_t *cnt = malloc(65536 * sizeof *cnt);
    cand *tmp = malloc(n * sizeof *tmp);
    if (!x || !y || !cnt || !tmp) { free(x); free(y); free(cnt); free(tmp); return 1; }
    uint64_t all_and = ~(uint64_t) 0, all_or = 0;
    for (size_t i = 0; i < n; i++) {
        x[i].k = cand_key(&a[i], kind);
        x[i].i = i;
        all_and &= x[i].k;
        all_or |= x[i].k;
    }
    for (int d = 0; d < 64; d += 16) {
        if ((((all_and ^ all_or) >> d) & 0xffff) == 0) continue;   /* digit constant */
        memset(cnt, 0, 65536 * sizeof *cnt);
        for (size_t i = 0; i < n; i++) cnt[(x[i].k >> d) & 0xffff]++;
        size_t sum = 0;
        for (size_t b = 0; b < 65536; b++) { size_t c = cnt[b]; cnt[b] = sum; sum += c; }
        for (size_t i = 0; i < n; i++) y[cnt[(x[i].k >> d) & 0xffff]++] = x[i];
        kv *t = x; x = y; y = t;
    }
    for (size_t i = 0; i < n; i++) tmp[i] = a[x[i].i];
    memcpy(a, tmp, n * sizeof *a);
    free(x); free(y); free(cnt); free(tmp);
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

/* The lowest code of bin b of the range under (prefix, bits); *top when
 * b is one past the last bin of the highest range (no edge). */
static uint64_t bin_edge(uint64_t prefix, int bits, size_t b, int *top)
{
    int wb = 64 - bits - SEL_BIN_BITS;      /* log2 of a bin's width */
    uint64_t lo = bits ? prefix << (64 - bits) : 0;
    *top = 0;
    if (b < SEL_NBINS) return lo + ((uint64_t) b << wb);
    if (bits == 0 || prefix == (((uint64_t) 1 << bits) - 1)) { *top = 1; return 0; }
    return (prefix + 1) << (64 - bits);
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

int gc_edges_run(const gc_edges_job *job, gc_edges_out *out, char *msg,
                 size_t msgcap)
{
    int status = GPUCOR_OK;
    gc_select s;
    candvec cv = {0, 0, NULL};
    endpt *ends = NULL;
    unsigned char *mark = NULL;
    uint64_t *h = NULL;
    memset(out, 0, sizeof *out);
    memset(&s, 0, sizeof s);
    s.symmetric = job->symmetric;
    s.p = job->p;
    s.q = job->q;
    s.strength = job->strength;
    s.pvalue = job->pvalue;
    s.pctx = job->pctx;
    int cut = job->fdr > 0 || job->density > 0;
    int heaps = job->top_k > 0 && !cut;
    s.k = heaps ? job->top_k : 0;
    s.key = job->fdr > 0 ? (job->common_n ? KEY_ABS : KEY_PVALUE) : KEY_STRENGTH;
    double mall = job->symmetric ? (double) job->p * ((double) job->p - 1) / 2
                                 : (double) job->p * (double) job->q;
    gc_sink sink = {SINK_SELECT, EPI_IDENTITY, 0, job->p, job->q, NULL, &s};
    double M = 0;
    int none = 0;
    /* tests: refine with small bins too (GPUCOR_TEST_BIN_LIMIT=n) */
    uint64_t bin_limit = GC_EDGES_BIN_LIMIT;
    const char *env = getenv("GPUCOR_TEST_BIN_LIMIT");
    if (env && *env) bin_limit = (uint64_t) strtoull(env, NULL, 10);

    if (gc_select_alloc(&s, job->nslots, cut) || (cut && !(h = malloc(SEL_NBINS * sizeof *h)))) {
        status = GPUCOR_ERR_ALLOC;
        snprintf(msg, msgcap, "out of host memory");
        goto cleanup;
    }
#define PASS()                                                                \
    do {                                                                      \
        gc_select_reset(&s);                                                  \
        status = job->run(job->run_ctx, &sink, msg, msgcap);                  \
        if (status == GPUCOR_OK && s.failed) {                                \
            status = GPUCOR_ERR_ALLOC;                                        \
            snprintf(msg, msgcap, "out of host memory for the selected pairs"); \
        }                                                                     \
        if (status != GPUCOR_OK) goto cleanup;                                \
    } while (0)

    /* ---- 1. the cut ---- */
    if (job->fdr > 0 && job->common_n && isnan(job->pabs(job->pctx, 0.5))) none = 1;
    double D = job->density > 0 ? nearbyint(job->density * mall) : 0;
    if (job->density > 0 && D < 1) none = 1;
    if (cut && !none) {
        uint64_t prefix = 0, above, valid;
        int bits = 0, first = 1, top;
        for (;;) {
            s.mode = SEL_HIST;
            s.prefix = prefix;
            s.prefix_bits = bits;
            PASS();
            gc_select_sum(&s, h, &above, &valid);
            if (first) M = (double) valid;
            first = 0;
            long b = -1;
            if (job->fdr > 0) {
                /* the weakest bin that may hold a rank <= K */
                uint64_t C = above;
                for (size_t k = 0; k < SEL_NBINS; k++) C += h[k];
                for (size_t k = 0; k < SEL_NBINS; k++) {
                    if (h[k]) {
                        uint64_t u = bin_edge(prefix, bits, k + 1, &top);
                        double bound = M / (double) C * p_below_edge(job, u, top);
                        if (bound <= job->fdr * (1 + 1e-7)) { b = (long) k; break; }
                    }
                    C -= h[k];
                }
                if (b < 0) {
                    /* none here: the kept ranks, if any, are above this
                     * range (a bin refined because its bound allowed it) */
                    s.lower = bin_edge(prefix, bits, SEL_NBINS, &top);
                    if (bits == 0 || top) none = 1;
                    break;
                }
            } else {
                /* the bin of the D-th strongest pair */
                uint64_t cum = above;
                for (long k = (long) SEL_NBINS - 1; k >= 0; k--) {
                    if ((double) (cum + h[k]) >= D) { b = k; break; }
                    cum += h[k];
                }
                if (b < 0) { s.lower = bits ? prefix << (64 - bits) : 0; break; }
            }
            if (h[b] > bin_limit && bits + SEL_BIN_BITS < 64) {
                prefix = (prefix << SEL_BIN_BITS) | (uint64_t) b;
                bits += SEL_BIN_BITS;
                continue;
            }
            s.lower = bin_edge(prefix, bits, (size_t) b, &top);
            break;
        }
    }

    /* ---- 2. the candidates ---- */
    if (!none) {
        if (cut) {
            s.mode = SEL_COLLECT;
        } else if (heaps) {
            s.mode = SEL_HEAPS;
            s.has_thr = job->has_thr;
            s.thr = job->thr;
        } else {
            s.mode = SEL_COLLECT;
            s.lower = sel_code(job->thr);
        }
        PASS();
        if (heaps) {
            for (size_t var = 0; var < s.nvar; var++) {
                const gc_hent *e;
                size_t n = gc_select_heap_sorted(&s, var, &e);
                for (size_t a = 0; a < n; a++) {
                    size_t r = var, c = e[a].partner;
                    if (!job->symmetric && var >= job->p) { r = e[a].partner; c = var - job->p; }
                    else if (job->symmetric && c < r) { r = e[a].partner; c = var; }
                    if (cv_push(&cv, e[a].v, e[a].s, (uint32_t) r, (uint32_t) c)) goto oom;
                }
            }
            /* a pair kept by both its variables once */
            if (sort_cands(cv.c, cv.n, KEY_POS)) goto oom;
            size_t w = 0;
            for (size_t a = 0; a < cv.n; a++)
                if (w == 0 || by_pos(&cv.c[w - 1], &cv.c[a]) != 0) cv.c[w++] = cv.c[a];
            cv.n = w;
        } else {
            for (int sl = 0; sl < s.nslots; sl++) {
                const struct gc_pairvec *pv = &s.cand[sl];
                for (size_t a = 0; a < pv->len; a++) {
                    uint32_t r = pv->v[a].i, c = pv->v[a].j;
                    if (job->symmetric) { uint32_t t = r; r = c; c = t; }
                    if (cv_push(&cv, pv->v[a].v, sel_strength(job->strength, pv->v[a].v), r, c))
                        goto oom;
                }
                free(s.cand[sl].v);
                s.cand[sl].v = NULL;
                s.cand[sl].len = s.cand[sl].cap = 0;
            }
        }
    }

    /* ---- 3. the exact decisions ---- */
    if (job->fdr > 0 || job->want_p) {
#ifdef _OPENMP
#pragma omp parallel for num_threads(job->nslots > 0 ? job->nslots : 1) schedule(dynamic, 4096)
#endif
        for (size_t a = 0; a < cv.n; a++) cv.c[a].p = pair_p(job, &cv.c[a]);
    }
    size_t n = cv.n;
    if (job->fdr > 0 && n) {
        if (sort_cands(cv.c, n, KEY_P_ASC)) goto oom;
        size_t K = 0;
        for (size_t k = 1; k <= n; k++)
            if (M / (double) k * cv.c[k - 1].p <= job->fdr) K = k;
        /* p.adjust's cummin from rank K down */
        double m = INFINITY;
        for (size_t k = K; k >= 1; k--) {
            double t = M / (double) k * cv.c[k - 1].p;
            if (t < m) m = t;
            cv.c[k - 1].adj = m < 1 ? m : 1;
        }
        n = K;
    }
    /* the threshold (top k alone applied it in the heaps) */
    if (job->has_thr && !heaps) {
        size_t w = 0;
        for (size_t a = 0; a < n; a++)
            if (cv.c[a].s >= job->thr) cv.c[w++] = cv.c[a];
        n = w;
    }
    /* the density: the D strongest (ties: by position) */
    if (job->density > 0 && (double) n > D) {
        if (sort_cands(cv.c, n, KEY_POS) || sort_cands(cv.c, n, KEY_S_DESC)) goto oom;
        n = (size_t) D;
    }
    /* each variable's k strongest partners among what is left */
    if (job->top_k > 0 && !heaps && n) {
        ends = malloc(2 * n * sizeof *ends);
        mark = calloc(n, 1);
        if (!ends || !mark) goto oom;
        for (size_t a = 0; a < n; a++) {
            const cand *c = &cv.c[a];
            ends[2 * a] = (endpt) {c->row, c->s, c->col, a};
            ends[2 * a + 1] = (endpt) {job->symmetric ? c->col : job->p + c->col, c->s,
                                       c->row, a};
        }
        qsort(ends, 2 * n, sizeof *ends, by_var);
        for (size_t a = 0, run = 0; a < 2 * n; a++) {
            run = (a > 0 && ends[a].var == ends[a - 1].var) ? run + 1 : 0;
            if (run < job->top_k) mark[ends[a].pair] = 1;
        }
        size_t w = 0;
        for (size_t a = 0; a < n; a++)
            if (mark[a]) cv.c[w++] = cv.c[a];
        n = w;
    }
    /* (the heaps' pairs are in position order already) */
    if (!heaps && sort_cands(cv.c, n, KEY_POS)) goto oom;

    /* ---- the result ---- */
    out->n = n;
    size_t nn = n ? n : 1;
    out->row = malloc(nn * sizeof *out->row);
    out->col = malloc(nn * sizeof *out->col);
    out->val = malloc(nn * sizeof *out->val);
    if (job->fdr > 0 || job->want_p) out->p = malloc(nn * sizeof *out->p);
    if (job->fdr > 0) out->adj = malloc(nn * sizeof *out->adj);
    if (!out->row || !out->col || !out->val || ((job->fdr > 0 || job->want_p) && !out->p) ||
        (job->fdr > 0 && !out->adj)) {
        gc_edges_free(out);
        goto oom;
    }
    for (size_t a = 0; a < n; a++) {
        out->row[a] = cv.c[a].row;
        out->col[a] = cv.c[a].col;
        out->val[a] = cv.c[a].v;
        if (out->p) out->p[a] = cv.c[a].p;
        if (out->adj) out->adj[a] = cv.c[a].adj;
    }
    goto cleanup;
oom:
    status = GPUCOR_ERR_ALLOC;
    snprintf(msg, msgcap, "out of host memory for the selected pairs");
cleanup:
    free(ends);
    free(mark);
    free(h);
    free(cv.c);
    gc_select_free(&s);
    return status;
#undef PASS
}

void gc_edges_free(gc_edges_out *out)
{
    free(out->row); free(out->col); free(out->val); free(out->p); free(out->adj);
    memset(out, 0, sizeof *out);
}
