/*
 * hclust.c -- the CPU engines of gpu_hclust() and the hclust object made
 * from their merges (see hclust.h).
 *
 * The chain keeps the active clusters in a doubly linked list in index
 * order (as fastcluster does), so a row scan visits the active clusters
 * only: the work falls as clusters merge.  A row of the packed 'dist' is
 * two pieces: d(a, k) for k < a lies in column k (one element per column),
 * for k > a in column a (contiguous).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#include "hclust.h"

const char *const gc_hclust_names[HC_COUNT] = {
    "ward.D", "single", "complete", "average", "mcquitty", "median", "centroid", "ward.D2"};

int gc_hclust_find(const char *name)
{
    for (int k = 0; k < HC_COUNT; k++)
        if (strcmp(gc_hclust_names[k], name) == 0) return k;
    return -1;
}

static inline double *cell(double *D, size_t n, size_t i, size_t j)
{
    return i > j ? D + dist_index(n, i, j) : D + dist_index(n, j, i);
}

static double seconds_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Between steps, about every 0.2 s: Ctrl-C (GPUCOR_ERR_INTERRUPT, with its
 * message) and the progress bar. */
typedef struct { gc_host *host; double last; int chain; } ticker;

static int tick(ticker *t, size_t merges, size_t n, char *msg, size_t msgcap)
{
    double now = seconds_now();
    if (now - t->last < 0.2) return GPUCOR_OK;
    t->last = now;
    if (t->host->interrupted && t->host->interrupted()) {
        snprintf(msg, msgcap, "interrupted");
        return GPUCOR_ERR_INTERRUPT;
    }
    if (t->host->progress)
        t->host->progress(t->host->progress_ctx,
                          t->chain ? gc_hclust_chain_done(merges, n)
                                   : (double) merges / (double) (n - 1));
    return GPUCOR_OK;
}

static void square_all(double *D, size_t len, int nt)
{
#ifdef _OPENMP
#pragma omp parallel for num_threads(nt) schedule(static) if (len > 65536)
#endif
    for (size_t k = 0; k < len; k++) D[k] *= D[k];
    (void) nt;
}

int gc_hclust_chain_cpu(double *D, size_t n, int method, const double *members,
                        gc_hclust_merges *out, gc_host *host, int *threads_used,
                        char *msg, size_t msgcap)
{
    int nt = host->opts->nthreads > 0 ? host->opts->nthreads : 1;
    *threads_used = nt;
    if (n < 2) return GPUCOR_OK;
    double *size = malloc(n * sizeof *size);
    size_t *succ = malloc((n + 1) * sizeof *succ), *pred = malloc((n + 1) * sizeof *pred);
    size_t *chain = malloc(n * sizeof *chain);
    int status = GPUCOR_OK;
    if (!size || !succ || !pred || !chain) {
        snprintf(msg, msgcap, "out of host memory");
        status = GPUCOR_ERR_ALLOC;
        goto done;
    }
    if (method == HC_WARD_D2) square_all(D, dist_len(n), nt);
    for (size_t k = 0; k < n; k++) {
        size[k] = members ? members[k] : 1.0;
        succ[k] = k + 1;
        pred[k + 1] = k;
    }
    /* object 0 always stays active: a merge keeps the smaller index, so a
     * new chain starts there */
    ticker tk = {host, seconds_now(), 1};
    size_t len = 0, m = 0;
    while (m < n - 1) {
        if (len == 0) chain[len++] = 0;
        size_t a = chain[len - 1], b = len >= 2 ? chain[len - 2] : n;
        /* the nearest neighbour of a: the smallest distance; among equal
         * ones b, else the smallest index (the list is in index order) */
        size_t best = n;
        double bv = 0;
        for (size_t k = 0; k < a; k = succ[k]) {
            double v = D[dist_index(n, a, k)];
            if (best == n || v < bv || (v == bv && k == b)) { bv = v; best = k; }
        }
        if (a + 1 < n) {
            const double *row = D + dist_offset(n, a) - a - 1;
            for (size_t k = succ[a]; k < n; k = succ[k]) {
                double v = row[k];
                if (best == n || v < bv || (v == bv && k == b)) { bv = v; best = k; }
            }
        }
        if (best != b) {
            chain[len++] = best;
            continue;
        }
        /* a and b are each other's nearest neighbours: merge them into the
         * smaller index s, drop the larger o */
        size_t s = a < b ? a : b, o = a < b ? b : a;
        double ns = size[s], no = size[o];
        for (size_t k = 0; k < n; k = succ[k]) {
            if (k == s || k == o) continue;
            double *ds = cell(D, n, k, s);
            *ds = gc_hclust_lw(method, *ds, *cell(D, n, k, o), bv, ns, no, size[k]);
        }
        size[s] = ns + no;
        succ[pred[o]] = succ[o];
        pred[succ[o]] = pred[o];
        out->a[m] = (int) s;
        out->b[m] = (int) o;
        out->h[m] = method == HC_WARD_D2 ? sqrt(bv) : bv;
        m++;
        len -= 2;
        if ((m & 255) == 0 && (status = tick(&tk, m, n, msg, msgcap)) != GPUCOR_OK)
            goto done;
    }
    if (host->progress) host->progress(host->progress_ctx, 1.0);
done:
    free(size);
    free(succ);
    free(pred);
    free(chain);
    return status;
}

/* stats' algorithm (its Fortran hclust.f, 0-based): each object's nearest
 * neighbour among the objects after it; each step merges the pair of
 * smallest distance (the first object of smallest index among ties),
 * updates the survivor's row and repairs the neighbour list. */
int gc_hclust_generic_cpu(double *D, size_t n, int method, const double *members,
                          gc_hclust_merges *out, gc_host *host, char *msg, size_t msgcap)
{
    if (n < 2) return GPUCOR_OK;
    const double inf = 1e300;   /* stats' "infinity" */
    double *size = malloc(n * sizeof *size), *disnn = malloc(n * sizeof *disnn);
    size_t *nn = malloc(n * sizeof *nn);
    unsigned char *flag = malloc(n);
    int status = GPUCOR_OK;
    if (!size || !disnn || !nn || !flag) {
        snprintf(msg, msgcap, "out of host memory");
        status = GPUCOR_ERR_ALLOC;
        goto done;
    }
    if (method == HC_WARD_D2) square_all(D, dist_len(n), host->opts->nthreads);
    for (size_t k = 0; k < n; k++) {
        size[k] = members ? members[k] : 1.0;
        flag[k] = 1;
    }
    for (size_t i = 0; i + 1 < n; i++) {
        double dmin = inf;
        size_t jm = 0;
        for (size_t j = i + 1; j < n; j++)
            if (dmin > *cell(D, n, i, j)) { dmin = *cell(D, n, i, j); jm = j; }
        nn[i] = jm;
        disnn[i] = dmin;
    }
    ticker tk = {host, seconds_now(), 0};   /* stats' steps: each scans all n */
    size_t im = 0, jm = 0, jj = 0;
    for (size_t m = 0; m + 1 < n; m++) {
        double dmin = inf;
        for (size_t i = 0; i + 1 < n; i++)
            if (flag[i] && disnn[i] < dmin) { dmin = disnn[i]; im = i; jm = nn[i]; }
        size_t i2 = im < jm ? im : jm, j2 = im < jm ? jm : im;
        out->a[m] = (int) i2;
        out->b[m] = (int) j2;
        out->h[m] = method == HC_WARD_D2 ? sqrt(dmin) : dmin;
        flag[j2] = 0;
        dmin = inf;
        double xx = *cell(D, n, i2, j2);
        for (size_t k = 0; k < n; k++) {
            if (!flag[k] || k == i2) continue;
            double *d1 = cell(D, n, i2, k);
            *d1 = gc_hclust_lw(method, *d1, *cell(D, n, j2, k), xx, size[i2], size[j2], size[k]);
            if (i2 < k) {
                if (*d1 < dmin) { dmin = *d1; jj = k; }
            } else if (*d1 < disnn[k]) {
                /* a non-monotone method can bring i2 nearer to k < i2 */
                disnn[k] = *d1;
                nn[k] = i2;
            }
        }
        size[i2] += size[j2];
        disnn[i2] = dmin;
        nn[i2] = jj;
        for (size_t i = 0; i + 1 < n; i++) {
            if (!flag[i] || (nn[i] != i2 && nn[i] != j2)) continue;
            double dm = inf;
            for (size_t j = i + 1; j < n; j++)
                if (flag[j] && *cell(D, n, i, j) < dm) { dm = *cell(D, n, i, j); jj = j; }
            nn[i] = jj;
            disnn[i] = dm;
        }
        if ((m & 63) == 63 && (status = tick(&tk, m + 1, n, msg, msgcap)) != GPUCOR_OK)
            goto done;
    }
    if (host->progress) host->progress(host->progress_ctx, 1.0);
done:
    free(size);
    free(disnn);
    free(nn);
    free(flag);
    return status;
}

size_t gc_hclust_stage(const double *src, size_t len, void *dst, int single, int nthreads)
{
    size_t first = len;
#ifdef _OPENMP
#pragma omp parallel for num_threads(nthreads) schedule(static) reduction(min:first) if (len > 65536)
#endif
    for (size_t k = 0; k < len; k++) {
        double v = src[k];
        if (!isfinite(v) && k < first) first = k;
        if (!dst) continue;
        if (single) ((float *) dst)[k] = (float) v;
        else ((double *) dst)[k] = v;
    }
    (void) nthreads;
    return first;
}

/* stable merge sort of idx[0 .. len) by key */
static void sort_by_key(size_t *idx, size_t *tmp, size_t len, const double *key)
{
    for (size_t w = 1; w < len; w *= 2) {
        for (size_t lo = 0; lo < len; lo += 2 * w) {
            size_t mid = lo + w < len ? lo + w : len, hi = lo + 2 * w < len ? lo + 2 * w : len;
            size_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi) tmp[k++] = key[idx[j]] < key[idx[i]] ? idx[j++] : idx[i++];
            while (i < mid) tmp[k++] = idx[i++];
            while (j < hi) tmp[k++] = idx[j++];
        }
        memcpy(idx, tmp, len * sizeof *idx);
    }
}

int gc_hclust_finish(size_t n, const gc_hclust_merges *in, int sorted, int *merge,
                     double *height, int *order)
{
    if (n < 2) {
        if (n == 1) order[0] = 1;
        return GPUCOR_OK;
    }
    size_t nm = n - 1;
    size_t *idx = malloc(nm * sizeof *idx), *tmp = malloc(nm * sizeof *tmp);
    size_t *last = malloc(n * sizeof *last);
    double *key = malloc(nm * sizeof *key);
    int *stack = malloc((n + 1) * sizeof *stack);
    int status = GPUCOR_OK;
    if (!idx || !tmp || !last || !key || !stack) {
        status = GPUCOR_ERR_ALLOC;
        goto done;
    }
    for (size_t m = 0; m < nm; m++) idx[m] = m;
    if (!sorted) {
        /* a merge's key is at least its clusters' keys, so rounding in the
         * update never puts it before them */
        for (size_t k = 0; k < n; k++) last[k] = nm;
        for (size_t m = 0; m < nm; m++) {
            size_t a = (size_t) in->a[m], b = (size_t) in->b[m];
            double k = in->h[m];
            if (last[a] < nm && key[last[a]] > k) k = key[last[a]];
            if (last[b] < nm && key[last[b]] > k) k = key[last[b]];
            key[m] = k;
            last[a] = m;
        }
        sort_by_key(idx, tmp, nm, key);
    }
    /* stats' hcass2: a cluster is known by its smallest object; -i a
     * singleton, +m what merge m made */
    for (size_t k = 0; k < n; k++) last[k] = 0;
    for (size_t r = 0; r < nm; r++) {
        size_t m = idx[r], a = (size_t) in->a[m], b = (size_t) in->b[m];
        int ca = last[a] ? (int) last[a] : -(int) (a + 1);
        int cb = last[b] ? (int) last[b] : -(int) (b + 1);
        if (ca > 0 && cb < 0) { int t = ca; ca = cb; cb = t; }
        else if (ca > 0 && cb > 0 && cb < ca) { int t = ca; ca = cb; cb = t; }
        else if (ca < 0 && cb < 0 && cb > ca) { int t = ca; ca = cb; cb = t; }
        merge[r] = ca;
        merge[r + nm] = cb;
        height[r] = in->h[m];
        last[a < b ? a : b] = r + 1;
    }
    /* the leaves left to right: the tree from the last merge, first
     * column first */
    size_t top = 0, k = 0;
    stack[top++] = (int) nm;
    while (top) {
        int c = stack[--top];
        if (c < 0) { order[k++] = -c; continue; }
        stack[top++] = merge[c - 1 + nm];
        stack[top++] = merge[c - 1];
    }
done:
    free(idx);
    free(tmp);
    free(last);
    free(key);
    free(stack);
    return status;
}
