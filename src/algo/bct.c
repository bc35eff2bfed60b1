/*
 * bct.c -- see bct.h: one subject's preparation and BCT metrics, and the
 * CPU driver over subjects.
 *
 * Shortest paths are Dijkstra searches (a binary heap) on the subject's
 * edges: BCT's own algorithm, so each distance is the same sum of the same
 * lengths, added from the source outwards, as BCT's (bitwise: the
 * betweenness's equal-length paths are the ones BCT finds equal).  Brandes'
 * betweenness takes a node's predecessors after the search (v before w
 * with d(v) + l(v, w) == d(w), the test BCT makes while it searches).  Local
 * efficiency runs the searches on each node's neighbourhood, built from
 * the edges once per node (its cost: sum over nodes of k times the
 * neighbourhood's edges, times log k).
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#include "bct.h"
#include "apsp.h"
#include "../gpucor.h"

static inline int thread_id(void)
{
#ifdef _OPENMP
    return omp_get_thread_num();
#else
    return 0;
#endif
}

typedef struct { double v; size_t pos; } bct_pair;

/* latmio_und's distance to the diagonal: the circular distance of places */
static inline double circ(int a, int b, size_t n)
{
    size_t d = (size_t) (a > b ? a - b : b - a);
    return (double) (d < n - d ? d : n - d);
}

typedef struct {            /* one searcher's arrays (n each unless said) */
    double *dist, *sigma, *delta, *bc, *mark, *csub, *kmod /* nmod */;
    int *heap, *pos, *order, *loc;
    int *npred, *pred;      /* n, and n^2: node x's predecessors at pred[ptr[x]..] */
    size_t *sptr;           /* n + 1 */
    int *sadj;              /* n^2: a neighbourhood's edges */
    double *slen;           /* n^2 */
} bct_search;

struct gc_bct_work {
    size_t n;
    int nsearch;
    double *w;              /* the prepared n x n weights */
    size_t *ptr;            /* CSR of the prepared graph: n + 1 */
    int *adj;               /* n^2 */
    double *len, *cw;       /* lengths and cube roots of the weights, n^2 */
    bct_pair *pairs;        /* the upper triangle, for the proportional threshold */
    double *cyc3, *inv_sum, *fin_sum, *fin_max;
    size_t *reach;
    double *w0;             /* small-worldness: the prepared weights kept */
    int *ei, *ej, *perm;    /* ... the rewiring's edges, the lattice's order */
    bct_search *sr;
};

void gc_bct_work_free(gc_bct_work *wk)
{
    if (!wk) return;
    if (wk->sr)
        for (int t = 0; t < wk->nsearch; t++) {
            bct_search *s = &wk->sr[t];
            free(s->dist); free(s->sigma); free(s->delta); free(s->bc); free(s->mark);
            free(s->csub); free(s->kmod); free(s->heap); free(s->pos); free(s->order);
            free(s->loc); free(s->npred); free(s->pred); free(s->sptr); free(s->sadj); free(s->slen);
        }
    free(wk->sr);
    free(wk->w); free(wk->ptr); free(wk->adj); free(wk->len); free(wk->cw); free(wk->pairs);
    free(wk->w0); free(wk->ei); free(wk->ej); free(wk->perm);
    free(wk->cyc3); free(wk->inv_sum); free(wk->fin_sum); free(wk->fin_max); free(wk->reach);
    free(wk);
}

gc_bct_work *gc_bct_work_new(const gc_bct_job *job, int searchers)
{
    size_t n = job->n, nn = n * n, m = n > 1 ? n * (n - 1) / 2 : 1;
    gc_bct_work *wk = calloc(1, sizeof *wk);
    if (!wk) return NULL;
    wk->n = n;
    wk->nsearch = searchers < 1 ? 1 : searchers;
    int ok = (wk->w = malloc((nn ? nn : 1) * sizeof(double))) &&
             (wk->ptr = malloc((n + 1) * sizeof(size_t))) &&
             (wk->adj = malloc((nn ? nn : 1) * sizeof(int))) &&
             (wk->len = malloc((nn ? nn : 1) * sizeof(double))) &&
             (wk->cw = malloc((nn ? nn : 1) * sizeof(double))) &&
             (job->thr_type != BCT_THR_PROPORTIONAL ||
              (wk->pairs = malloc(m * sizeof(bct_pair)))) &&
             (wk->cyc3 = malloc((n + 1) * sizeof(double))) &&
             (wk->inv_sum = malloc((n + 1) * sizeof(double))) &&
             (wk->fin_sum = malloc((n + 1) * sizeof(double))) &&
             (wk->fin_max = malloc((n + 1) * sizeof(double))) &&
             (wk->reach = malloc((n + 1) * sizeof(size_t))) &&
             (wk->sr = calloc((size_t) wk->nsearch, sizeof(bct_search)));
    if (ok && (job->global_col[BCT_SIGMA] >= 0 || job->global_col[BCT_OMEGA] >= 0))
        ok = (wk->w0 = malloc((nn ? nn : 1) * sizeof(double))) &&
             (wk->ei = malloc(m * sizeof(int))) && (wk->ej = malloc(m * sizeof(int))) &&
             (wk->perm = malloc((n + 1) * sizeof(int)));
    for (int t = 0; ok && t < wk->nsearch; t++) {
        bct_search *s = &wk->sr[t];
        size_t n1 = n + 1;
        ok = (s->dist = malloc(n1 * sizeof(double))) && (s->sigma = malloc(n1 * sizeof(double))) &&
             (s->delta = malloc(n1 * sizeof(double))) && (s->bc = malloc(n1 * sizeof(double))) &&
             (s->mark = calloc(n1, sizeof(double))) && (s->csub = malloc(n1 * sizeof(double))) &&
             (s->kmod = malloc(((size_t) job->nmod + 1) * sizeof(double))) &&
             (s->heap = malloc(n1 * sizeof(int))) && (s->pos = malloc(n1 * sizeof(int))) &&
             (s->order = malloc(n1 * sizeof(int))) && (s->loc = malloc(n1 * sizeof(int))) &&
             (s->npred = malloc(n1 * sizeof(int))) &&
             (s->pred = malloc((nn ? nn : 1) * sizeof(int))) &&
             (s->sptr = malloc((n1 + 1) * sizeof(size_t))) &&
             (s->sadj = malloc((nn ? nn : 1) * sizeof(int))) &&
             (s->slen = malloc((nn ? nn : 1) * sizeof(double)));
        if (ok) for (size_t i = 0; i < n; i++) s->loc[i] = -1;
    }
    if (!ok) {
        gc_bct_work_free(wk);
        return NULL;
    }
    return wk;
}

/* ---- preparation ---------------------------------------------------------- */

/* BCT's sortrows(-value) is stable: larger values first, then the earlier
 * position (column-major in the upper triangle). */
static int pair_cmp(const void *a, const void *b)
{
    const bct_pair *x = a, *y = b;
    if (x->v > y->v) return -1;
    if (x->v < y->v) return 1;
    return (x->pos > y->pos) - (x->pos < y->pos);
}

/* Reorders p[0 .. m) so that its first k are the k first in pair_cmp's
 * order (a quickselect: the threshold needs the kept set, not a sorted
 * list; every key is distinct, positions breaking the ties). */
static void select_first(bct_pair *p, size_t m, size_t k)
{
    size_t lo = 0, hi = m;   /* the k-th lies in [lo, hi) */
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2, a = lo, b = hi - 1;
        /* median of three as the pivot, moved to hi - 1 */
        if (pair_cmp(&p[mid], &p[a]) < 0) { bct_pair t = p[mid]; p[mid] = p[a]; p[a] = t; }
        if (pair_cmp(&p[b], &p[a]) < 0) { bct_pair t = p[b]; p[b] = p[a]; p[a] = t; }
        if (pair_cmp(&p[b], &p[mid]) < 0) { bct_pair t = p[b]; p[b] = p[mid]; p[mid] = t; }
        bct_pair piv = p[mid];
        p[mid] = p[b];
        p[b] = piv;
        size_t st = lo;
        for (size_t i = lo; i < b; i++)
            if (pair_cmp(&p[i], &piv) < 0) { bct_pair t = p[i]; p[i] = p[st]; p[st] = t; st++; }
        p[b] = p[st];
        p[st] = piv;
        if (st == k) return;
        if (k < st) hi = st; else lo = st + 1;
    }
}

static double signed_weight(int sign, double v)
{
    switch (sign) {
    case BCT_SIGN_ABSOLUTE: return fabs(v);
    case BCT_SIGN_NEGATIVE: return v < 0 ? -v : 0;
    default: return v > 0 ? v : 0;
    }
}

static double to_length(int weights, double v)
{
    switch (weights) {
    case W_INVERSE: return 1 / v;
    case W_NEGLOG: return -log(v);
    case W_ONE_MINUS: return 1 - v;
    default: return v;
    }
}

static int edges(const gc_bct_job *job, gc_bct_work *wk, size_t s, gc_bct_bad *bad);

/* Subject s's weights checked and prepared into wk->w, and its edges. */
static int prepare(const gc_bct_job *job, size_t s, gc_bct_work *wk, gc_bct_bad *bad)
{
    size_t n = job->n;
    const double *x = job->w + s * n * n;
    double *w = wk->w;
    for (size_t j = 0; j < n; j++)
        for (size_t i = 0; i < j; i++) {
            double a = x[i + j * n], b = x[j + i * n];
            if (!isfinite(a) || !isfinite(b)) {
                int first = !isfinite(a);
                *bad = (gc_bct_bad) {BCT_BAD_VALUE, s, first ? i : j, first ? j : i,
                                     first ? a : b, 0};
                return GPUCOR_ERR_INVALID;
            }
            if (a != b) {
                *bad = (gc_bct_bad) {BCT_BAD_ASYMMETRIC, s, i, j, a, b};
                return GPUCOR_ERR_INVALID;
            }
            double v = signed_weight(job->sign, a);
            if (job->thr_type == BCT_THR_ABSOLUTE && v < job->thr) v = 0;
            w[i + j * n] = w[j + i * n] = v;
        }
    for (size_t i = 0; i < n; i++) w[i + i * n] = 0;

    if (job->thr_type == BCT_THR_PROPORTIONAL && n > 1) {
        size_t m = 0;
        for (size_t j = 0; j < n; j++)
            for (size_t i = 0; i < j; i++)
                if (w[i + j * n] != 0) wk->pairs[m++] = (bct_pair) {w[i + j * n], i + j * n};
        /* MATLAB's round(): halves away from zero */
        double en = floor((double) n * (double) (n - 1) * job->thr / 2 + 0.5);
        size_t keep = en < (double) m ? (size_t) en : m;
        if (keep > 0 && keep < m) select_first(wk->pairs, m, keep);
        for (size_t k = keep; k < m; k++) {
            size_t p = wk->pairs[k].pos, i = p % n, j = p / n;
            w[i + j * n] = w[j + i * n] = 0;
        }
    }
    if (job->normalize) {
        double mx = 0;
        for (size_t k = 0; k < n * n; k++) if (w[k] > mx) mx = w[k];
        if (mx > 0) for (size_t k = 0; k < n * n; k++) w[k] /= mx;
    }
    return edges(job, wk, s, bad);
}

/* The edges of wk->w (its nonzeros, row by row): lengths, cube roots. */
static int edges(const gc_bct_job *job, gc_bct_work *wk, size_t s, gc_bct_bad *bad)
{
    size_t n = job->n, e = 0;
    const double *w = wk->w;
    for (size_t i = 0; i < n; i++) {
        wk->ptr[i] = e;
        for (size_t j = 0; j < n; j++) {
            double v = w[j + i * n];
            if (v == 0) continue;
            double l = to_length(job->weights, v);
            if (!(l > 0) || isinf(l)) {
                *bad = (gc_bct_bad) {BCT_BAD_LENGTH, s, i, j, v, l};
                return GPUCOR_ERR_INVALID;
            }
            wk->adj[e] = (int) j;
            wk->len[e] = l;
            wk->cw[e] = cbrt(v);
            e++;
        }
    }
    wk->ptr[n] = e;
    return GPUCOR_OK;
}

/* ---- Dijkstra ------------------------------------------------------------- */

static inline void heap_up(int *heap, int *pos, const double *d, int k)
{
    int v = heap[k];
    while (k > 0) {
        int p = (k - 1) / 2;
        if (d[heap[p]] <= d[v]) break;
        heap[k] = heap[p];
        pos[heap[k]] = k;
        k = p;
    }
    heap[k] = v;
    pos[v] = k;
}

static inline void heap_down(int *heap, int *pos, const double *d, int k, int size)
{
    int v = heap[k];
    for (;;) {
        int c = 2 * k + 1;
        if (c >= size) break;
        if (c + 1 < size && d[heap[c + 1]] < d[heap[c]]) c++;
        if (d[heap[c]] >= d[v]) break;
        heap[k] = heap[c];
        pos[heap[k]] = k;
        k = c;
    }
    heap[k] = v;
    pos[v] = k;
}

/* Distances from u over the edges (ptr, adj, len) of n nodes into s->dist;
 * the nodes reached in the order they were settled into s->order.  Returns
 * how many were reached (u included).  pos: -1 unseen, -2 settled.  With
 * paths, also the path counts s->sigma and the predecessors (s->npred,
 * s->pred at ptr[x]), as betweenness_wei keeps them while it searches: a
 * shorter path to x replaces them, one of the same length adds to them. */
static size_t dijkstra(size_t n, const size_t *ptr, const int *adj, const double *len, int u,
                       bct_search *s, int paths)
{
    double *d = s->dist;
    int *heap = s->heap, *pos = s->pos, size = 0;
    size_t cnt = 0;
    for (size_t i = 0; i < n; i++) {
        d[i] = INFINITY;
        pos[i] = -1;
        if (paths) s->npred[i] = 0;
    }
    d[u] = 0;
    heap[size++] = u;
    pos[u] = 0;
    if (paths) {
        s->sigma[u] = 1;
        s->npred[u] = 0;
    }
    while (size > 0) {
        int v = heap[0];
        heap[0] = heap[--size];
        if (size > 0) {
            pos[heap[0]] = 0;
            heap_down(heap, pos, d, 0, size);
        }
        pos[v] = -2;
        s->order[cnt++] = v;
        for (size_t e = ptr[v]; e < ptr[v + 1]; e++) {
            int x = adj[e];
            if (pos[x] == -2) continue;
            double dx = d[v] + len[e];
            if (dx < d[x]) {
                d[x] = dx;
                if (pos[x] == -1) {
                    heap[size] = x;
                    pos[x] = size++;
                }
                heap_up(heap, pos, d, pos[x]);
                if (paths) {
                    s->sigma[x] = s->sigma[v];
                    s->pred[ptr[x]] = v;
                    s->npred[x] = 1;
                }
            } else if (paths && dx == d[x]) {
                s->sigma[x] += s->sigma[v];
                s->pred[ptr[x] + (size_t) s->npred[x]++] = v;
            }
        }
    }
    return cnt;
}

/* Brandes' dependencies of the search from order[0] (cnt nodes reached,
 * dijkstra() with paths) added into s->bc, in order of non-increasing
 * distance, as betweenness_wei. */
static void brandes(const gc_bct_work *wk, bct_search *s, size_t cnt)
{
    for (size_t k = 0; k < cnt; k++) s->delta[s->order[k]] = 0;
    for (size_t k = cnt; k-- > 1;) {
        int x = s->order[k];
        s->bc[x] += s->delta[x];
        const int *pr = s->pred + wk->ptr[x];
        for (int q = 0; q < s->npred[x]; q++)
            s->delta[pr[q]] += (1 + s->delta[x]) * s->sigma[pr[q]] / s->sigma[x];
    }
}

/* Local efficiency of node u (efficiency_wei's local = 2, or 1 when
 * original): searches among u's neighbours on their own edges. */
static double local_eff(const gc_bct_work *wk, bct_search *s, size_t u, int original)
{
    size_t k = wk->ptr[u + 1] - wk->ptr[u];
    if (k < 2) return 0;
    const int *nb = wk->adj + wk->ptr[u];
    for (size_t a = 0; a < k; a++) {
        s->loc[nb[a]] = (int) a;
        s->csub[a] = wk->cw[wk->ptr[u] + a];
    }
    size_t e2 = 0;
    for (size_t a = 0; a < k; a++) {
        s->sptr[a] = e2;
        int j = nb[a];
        for (size_t e = wk->ptr[j]; e < wk->ptr[j + 1]; e++) {
            int b = s->loc[wk->adj[e]];
            if (b < 0) continue;
            s->sadj[e2] = b;
            s->slen[e2] = original ? wk->len[e] : cbrt(wk->len[e]);
            e2++;
        }
    }
    s->sptr[k] = e2;
    for (size_t a = 0; a < k; a++) s->loc[nb[a]] = -1;
    double numer = 0;
    for (size_t a = 0; a < k; a++) {
        size_t cnt = dijkstra(k, s->sptr, s->sadj, s->slen, (int) a, s, 0);
        double part = 0;
        for (size_t r = 1; r < cnt; r++) {
            int b = s->order[r];
            double f = original ? cbrt(1 / s->dist[b]) : 1 / s->dist[b];
            part += s->csub[b] * f;
        }
        numer += s->csub[a] * part;
    }
    return numer != 0 ? numer / ((double) k * (double) (k - 1)) : 0;
}

/* ---- the searches and sums every metric shares ------------------------------ */

/* Onnela's cycles: cyc3(i) = sum over neighbours j, h of i of c(i, j)
 * c(j, h) c(h, i), c the cube roots (the neighbours of i marked). */
static void cycles(gc_bct_work *wk, int searchers)
{
    size_t n = wk->n;
    (void) searchers;
#ifdef _OPENMP
#pragma omp parallel for num_threads(searchers) schedule(dynamic, 16) if (searchers > 1)
#endif
    for (size_t i = 0; i < n; i++) {
        double *mk = wk->sr[thread_id()].mark;
        for (size_t e = wk->ptr[i]; e < wk->ptr[i + 1]; e++) mk[wk->adj[e]] = wk->cw[e];
        double c3 = 0;
        for (size_t e = wk->ptr[i]; e < wk->ptr[i + 1]; e++) {
            int j = wk->adj[e];
            double t = 0;
            for (size_t f = wk->ptr[j]; f < wk->ptr[j + 1]; f++) t += wk->cw[f] * mk[wk->adj[f]];
            c3 += wk->cw[e] * t;
        }
        for (size_t e = wk->ptr[i]; e < wk->ptr[i + 1]; e++) mk[wk->adj[e]] = 0;
        wk->cyc3[i] = c3;
    }
}

/* mean(clustering_coef_wu(W)) */
static double mean_clustering(gc_bct_work *wk, int searchers)
{
    size_t n = wk->n;
    cycles(wk, searchers);
    double sum = 0;
    for (size_t i = 0; i < n; i++) {
        double k = (double) (wk->ptr[i + 1] - wk->ptr[i]);
        sum += wk->cyc3[i] != 0 ? wk->cyc3[i] / (k * (k - 1)) : 0;
    }
    return sum / (double) n;
}

/* The master thread's interrupt check between chunks of one subject's
 * node loops (host NULL: a worker's subject, checked between subjects). */
static inline int stop_asked(gc_host *host)
{
    return host && host->interrupted && host->interrupted();
}

/* nodes per chunk between those checks */
#define BCT_CHUNK 256

/* A search from every node: per source the sum of 1 / d, of the finite d,
 * their largest and count (wk->inv_sum ...); with bc, Brandes'
 * dependencies into each searcher's bc. */
static int path_sums(gc_bct_work *wk, int searchers, int bc, gc_host *host)
{
    size_t n = wk->n;
    (void) searchers;
    if (bc) for (int t = 0; t < searchers; t++) memset(wk->sr[t].bc, 0, n * sizeof(double));
    for (size_t u0 = 0; u0 < n; u0 += BCT_CHUNK) {
        size_t u1 = u0 + BCT_CHUNK < n ? u0 + BCT_CHUNK : n;
#ifdef _OPENMP
#pragma omp parallel for num_threads(searchers) schedule(static) if (searchers > 1)
#endif
        for (size_t u = u0; u < u1; u++) {
            bct_search *sr = &wk->sr[thread_id()];
            size_t cnt = dijkstra(n, wk->ptr, wk->adj, wk->len, (int) u, sr, bc);
            double inv = 0, fin = 0, mx = 0;
            for (size_t k = 1; k < cnt; k++) {
                double d = sr->dist[sr->order[k]];
                inv += 1 / d;
                fin += d;
                if (d > mx) mx = d;
            }
            wk->inv_sum[u] = inv;
            wk->fin_sum[u] = fin;
            wk->fin_max[u] = mx;
            wk->reach[u] = cnt - 1;
            if (bc) brandes(wk, sr, cnt);
        }
        if (stop_asked(host)) return GPUCOR_ERR_INTERRUPT;
    }
    return GPUCOR_OK;
}

/* charpath's lambda from path_sums() */
static double lambda_of(const gc_bct_job *job, const gc_bct_work *wk)
{
    size_t n = wk->n;
    double fin = 0, reach = 0, pairs = (double) n * (double) (n - 1);
    for (size_t u = 0; u < n; u++) {
        fin += wk->fin_sum[u];
        reach += (double) wk->reach[u];
    }
    if (job->include_infinite) return pairs == 0 ? NAN : reach < pairs ? INFINITY : fin / pairs;
    return reach == 0 ? NAN : fin / reach;
}

/* ---- random graphs and lattices (small-worldness) ------------------------ */

/* splitmix64: a small generator whose stream depends only on its seed, so
 * that a subject's random graphs do not depend on the threads. */
static inline uint64_t mix64(uint64_t *st)
{
    uint64_t z = (*st += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static inline double unif(uint64_t *st)
{
    return (double) (mix64(st) >> 11) * 0x1.0p-53;
}

uint64_t gc_bct_seed(double seed, size_t subject, int lattice, int k)
{
    uint64_t st = (uint64_t) seed;
    st = mix64(&st) ^ (uint64_t) subject;
    st = mix64(&st) ^ ((uint64_t) k << 1 | (uint64_t) (lattice != 0));
    return mix64(&st);
}

size_t gc_bct_rewire(double *w, size_t n, int lattice, int iter, uint64_t seed, int *ei, int *ej,
                     int *perm)
{
    uint64_t st = seed;
    size_t K = 0;
    for (size_t j = 0; j < n; j++)          /* find(tril(R)): column-major */
        for (size_t i = j + 1; i < n; i++)
            if (w[i + j * n] != 0) {
                ei[K] = (int) i;
                ej[K] = (int) j;
                K++;
            }
    if (K < 2 || n < 4) return 0;
    if (lattice) {                           /* randperm(n): each node's place */
        for (size_t i = 0; i < n; i++) perm[i] = (int) i;
        for (size_t i = n - 1; i > 0; i--) {
            size_t r = (size_t) (unif(&st) * (double) (i + 1));
            int t = perm[i]; perm[i] = perm[r]; perm[r] = t;
        }
    }
    double dn = (double) n, dk = (double) K;
    double att_max = floor(dn * dk / (lattice ? dn * (dn - 1) / 2 : dn * (dn - 1)) + 0.5);
    size_t total = K * (size_t) iter, eff = 0;
    /* BCT loops forever where no two edges have four distinct ends (a
     * star, a triangle): give up after this many draws in a row */
    size_t max_draws = 100 * K + 1000;
#define W(a, b) w[(size_t) (a) + (size_t) (b) * n]
#define DD(a, b) (lattice ? circ(perm[a], perm[b], n) : 0)
    for (size_t it = 0; it < total; it++) {
        for (double att = 0; att <= att_max; att++) {
            size_t e1, e2, draws = 0;
            int a, b, c, d;
            for (;;) {
                e1 = (size_t) (unif(&st) * dk);
                do e2 = (size_t) (unif(&st) * dk); while (e2 == e1);
                a = ei[e1]; b = ej[e1]; c = ei[e2]; d = ej[e2];
                if (a != c && a != d && b != c && b != d) break;
                if (++draws > max_draws) return eff;
            }
            if (unif(&st) > 0.5) {           /* the edge c-d flipped */
                ei[e2] = d; ej[e2] = c;
                c = ei[e2]; d = ej[e2];
            }
            if (W(a, d) != 0 || W(c, b) != 0) continue;
            if (lattice && !(DD(a, b) * W(a, b) + DD(c, d) * W(c, d) >=
                             DD(a, d) * W(a, b) + DD(c, b) * W(c, d)))
                continue;
            W(a, d) = W(a, b); W(a, b) = 0;
            W(d, a) = W(b, a); W(b, a) = 0;
            W(c, b) = W(c, d); W(c, d) = 0;
            W(b, c) = W(d, c); W(d, c) = 0;
            ej[e1] = d;
            ej[e2] = b;
            eff++;
            break;
        }
    }
#undef W
#undef DD
    return eff;
}

/* ---- one subject ---------------------------------------------------------- */

static inline void put_nodal(const gc_bct_job *job, int metric, size_t s, size_t i, double v)
{
    int c = job->nodal_col[metric];
    if (c >= 0) job->nodal[(size_t) c * job->n * job->nsub + s * job->n + i] = v;
}

static inline void put_global(const gc_bct_job *job, int metric, size_t s, double v)
{
    int c = job->global_col[metric];
    if (c >= 0) job->global[(size_t) c * job->nsub + s] = v;
}

#define ASKED(m) (job->nodal_col[m] >= 0)
#define ASKED_G(m) (job->global_col[m] >= 0)

int gc_bct_subject(const gc_bct_job *job, size_t s, gc_bct_work *wk, int searchers,
                   gc_host *host, gc_bct_bad *bad)
{
    size_t n = job->n;
    int st = prepare(job, s, wk, bad);
    if (st != GPUCOR_OK) return st;
    const double *w = wk->w;
    if (searchers > wk->nsearch) searchers = wk->nsearch;
    if (searchers < 1) searchers = 1;

    double *strength = wk->sr[0].csub;   /* reused below only after this block */
    for (size_t i = 0; i < n; i++) {
        double sum = 0;
        for (size_t j = 0; j < n; j++) sum += w[j + i * n];
        strength[i] = sum;
        put_nodal(job, BCT_STRENGTH, s, i, sum);
        put_nodal(job, BCT_DEGREE, s, i, (double) (wk->ptr[i + 1] - wk->ptr[i]));
    }

    /* participation, module z-score, Q: before the searches reuse csub */
    if (job->partition) {
        const int *ci = job->partition + s * job->part_stride;
        bct_search *s0 = &wk->sr[0];
        double *kin = s0->delta;
        if (ASKED(BCT_PARTICIPATION) || ASKED(BCT_MODULE_Z))
            for (size_t i = 0; i < n; i++) {
                for (int m = 0; m < job->nmod; m++) s0->kmod[m] = 0;
                for (size_t e = wk->ptr[i]; e < wk->ptr[i + 1]; e++)
                    s0->kmod[ci[wk->adj[e]]] += w[wk->adj[e] + i * n];
                double kc2 = 0;
                for (int m = 0; m < job->nmod; m++) kc2 += s0->kmod[m] * s0->kmod[m];
                double ko = strength[i];
                put_nodal(job, BCT_PARTICIPATION, s, i, ko != 0 ? 1 - kc2 / (ko * ko) : 0);
                kin[i] = s0->kmod[ci[i]];
            }
        if (ASKED(BCT_MODULE_Z))
            for (int m = 0; m < job->nmod; m++) {
                double sum = 0, ss = 0, first = 0;
                size_t cnt = 0;
                int same = 1;
                for (size_t i = 0; i < n; i++) {
                    if (ci[i] != m) continue;
                    if (cnt == 0) first = kin[i];
                    same &= kin[i] == first;
                    sum += kin[i];
                    cnt++;
                }
                double mean = cnt ? sum / (double) cnt : 0;
                for (size_t i = 0; i < n; i++)
                    if (ci[i] == m) ss += (kin[i] - mean) * (kin[i] - mean);
                double sd = cnt > 1 ? sqrt(ss / (double) (cnt - 1)) : 0;
                for (size_t i = 0; i < n; i++)
                    if (ci[i] == m)
                        put_nodal(job, BCT_MODULE_Z, s, i,
                                  cnt < 2 || same || !(sd > 0) ? 0 : (kin[i] - mean) / sd);
            }
        if (ASKED_G(BCT_MODULARITY)) {
            double tot = 0, within = 0;
            double *km = s0->kmod;
            for (int m = 0; m < job->nmod; m++) km[m] = 0;
            for (size_t i = 0; i < n; i++) {
                tot += strength[i];
                km[ci[i]] += strength[i];
                for (size_t e = wk->ptr[i]; e < wk->ptr[i + 1]; e++)
                    if (ci[wk->adj[e]] == ci[i]) within += w[wk->adj[e] + i * n];
            }
            double expct = 0;
            for (int m = 0; m < job->nmod; m++) expct += km[m] * km[m];
            put_global(job, BCT_MODULARITY, s, (within - expct / tot) / tot);
        }
    }

    if (ASKED(BCT_CLUSTERING) || ASKED_G(BCT_TRANSITIVITY)) {
        cycles(wk, searchers);
        double num = 0, den = 0;
        for (size_t i = 0; i < n; i++) {
            double k = (double) (wk->ptr[i + 1] - wk->ptr[i]);
            put_nodal(job, BCT_CLUSTERING, s, i, wk->cyc3[i] != 0 ? wk->cyc3[i] / (k * (k - 1)) : 0);
            num += wk->cyc3[i];
            den += k * (k - 1);
        }
        put_global(job, BCT_TRANSITIVITY, s, num / den);
    }

    int want_bc = ASKED(BCT_BETWEENNESS) || ASKED(BCT_BETWEENNESS_NORM);
    if (want_bc || ASKED(BCT_ECCENTRICITY) || ASKED_G(BCT_GLOBAL_EFF) || ASKED_G(BCT_CHAR_PATH) ||
        ASKED_G(BCT_RADIUS) || ASKED_G(BCT_DIAMETER)) {
        if ((st = path_sums(wk, searchers, want_bc, host)) != GPUCOR_OK) return st;
        double inv = 0, rad = NAN, dia = NAN, pairs = (double) n * (double) (n - 1);
        for (size_t u = 0; u < n; u++) {
            inv += wk->inv_sum[u];
            double ecc;
            if (job->include_infinite)
                ecc = n < 2 ? NAN : wk->reach[u] < n - 1 ? INFINITY : wk->fin_max[u];
            else
                ecc = wk->reach[u] == 0 ? NAN : wk->fin_max[u];
            put_nodal(job, BCT_ECCENTRICITY, s, u, ecc);
            if (!isnan(ecc)) {
                if (isnan(rad) || ecc < rad) rad = ecc;
                if (isnan(dia) || ecc > dia) dia = ecc;
            }
            if (want_bc) {
                double b = 0;
                for (int t = 0; t < searchers; t++) b += wk->sr[t].bc[u];
                put_nodal(job, BCT_BETWEENNESS, s, u, b);
                put_nodal(job, BCT_BETWEENNESS_NORM, s, u,
                          b / (((double) n - 1) * ((double) n - 2)));
            }
        }
        put_global(job, BCT_GLOBAL_EFF, s, inv / pairs);
        put_global(job, BCT_CHAR_PATH, s, lambda_of(job, wk));
        put_global(job, BCT_RADIUS, s, rad);
        put_global(job, BCT_DIAMETER, s, dia);
    }

    for (int v = 0; v < 2; v++) {
        int metric = v ? BCT_LOCAL_EFF_ORIG : BCT_LOCAL_EFF;
        if (!ASKED(metric)) continue;
        for (size_t u0 = 0; u0 < n; u0 += BCT_CHUNK) {
            size_t u1 = u0 + BCT_CHUNK < n ? u0 + BCT_CHUNK : n;
#ifdef _OPENMP
#pragma omp parallel for num_threads(searchers) schedule(dynamic, 4) if (searchers > 1)
#endif
            for (size_t u = u0; u < u1; u++)
                put_nodal(job, metric, s, u, local_eff(wk, &wk->sr[thread_id()], u, v));
            if (stop_asked(host)) return GPUCOR_ERR_INTERRUPT;
        }
    }

    /* small-worldness, last: the random graphs and lattices take over the
     * workspace's edges */
    if (ASKED_G(BCT_SIGMA) || ASKED_G(BCT_OMEGA)) {
        double c0 = mean_clustering(wk, searchers), l0, cr = 0, lr = 0, cl = 0;
        if ((st = path_sums(wk, searchers, 0, host)) != GPUCOR_OK) return st;
        l0 = lambda_of(job, wk);
        memcpy(wk->w0, wk->w, n * n * sizeof(double));
        for (int lat = 0; lat < 2; lat++) {
            if (lat && !ASKED_G(BCT_OMEGA)) break;
            for (int k = 0; k < job->nrand; k++) {
                memcpy(wk->w, wk->w0, n * n * sizeof(double));
                gc_bct_rewire(wk->w, n, lat, job->rewire, gc_bct_seed(job->seed, s, lat, k),
                              wk->ei, wk->ej, wk->perm);
                st = edges(job, wk, s, bad);
                if (st != GPUCOR_OK) return st;
                double c = mean_clustering(wk, searchers);
                if (lat) {
                    cl += c;
                } else {
                    cr += c;
                    if ((st = path_sums(wk, searchers, 0, host)) != GPUCOR_OK) return st;
                    lr += lambda_of(job, wk);
                }
            }
        }
        cr /= job->nrand;
        lr /= job->nrand;
        cl /= job->nrand;
        put_global(job, BCT_SIGMA, s, (c0 / cr) / (l0 / lr));
        put_global(job, BCT_OMEGA, s, lr / l0 - c0 / cl);
        memcpy(wk->w, wk->w0, n * n * sizeof(double));
    }
    return GPUCOR_OK;
}

/* ---- the CPU driver ------------------------------------------------------- */

int gc_bct_cpu(const gc_bct_job *job, gc_host *host, int *threads_used, gc_bct_bad *bad)
{
    int nt = host->opts->nthreads > 0 ? host->opts->nthreads : 1;
    size_t nsub = job->nsub;
    int outer = nsub >= (size_t) nt;     /* else the threads share one subject's searches */
    int nwork = outer ? nt : 1;
    gc_bct_work **wk = calloc((size_t) nwork, sizeof *wk);
    int status = GPUCOR_OK;
    if (!wk) return GPUCOR_ERR_ALLOC;
    for (int t = 0; t < nwork; t++)
        if (!(wk[t] = gc_bct_work_new(job, outer ? 1 : nt))) {
            status = GPUCOR_ERR_ALLOC;
            goto cleanup;
        }
    *threads_used = nt;
    memset(bad, 0, sizeof *bad);
    bad->subject = (size_t) -1;
    /* groups of subjects, so that Ctrl-C is seen between them */
    size_t group = outer ? 4 * (size_t) nt : 1;
    for (size_t s0 = 0; s0 < nsub && status == GPUCOR_OK; s0 += group) {
        size_t s1 = s0 + group < nsub ? s0 + group : nsub;
        if (outer) {
#ifdef _OPENMP
#pragma omp parallel for num_threads(nt) schedule(dynamic, 1)
#endif
            for (size_t s = s0; s < s1; s++) {
                gc_bct_bad b;
                if (gc_bct_subject(job, s, wk[thread_id()], 1, NULL, &b) != GPUCOR_OK) {
#ifdef _OPENMP
#pragma omp critical(gc_bct_bad)
#endif
                    if (b.subject < bad->subject) *bad = b;
                }
            }
        } else {
            gc_bct_bad b;
            int st = gc_bct_subject(job, s0, wk[0], nt, host, &b);
            if (st == GPUCOR_ERR_INVALID) *bad = b;
            else if (st != GPUCOR_OK) status = st;
        }
        if (status != GPUCOR_OK) break;
        if (bad->subject != (size_t) -1) status = GPUCOR_ERR_INVALID;
        else if (host->interrupted && host->interrupted()) status = GPUCOR_ERR_INTERRUPT;
        else if (host->progress) host->progress(host->progress_ctx, (double) s1 / (double) nsub);
    }
cleanup:
    for (int t = 0; t < nwork; t++) gc_bct_work_free(wk[t]);
    free(wk);
    return status;
}
