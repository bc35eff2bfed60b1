/*
 * apsp.c -- see apsp.h: the lengths made from the user's values, the CPU
 * engine's blocked Floyd-Warshall, and the metrics' row sums.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#include "apsp.h"
#include "../engine/layout.h"

/* the value of pair (i, j), i != j */
static inline double value(const gc_apsp_src *s, size_t i, size_t j)
{
    if (!s->is_dist) return s->w[i + j * s->n];
    return i > j ? s->w[dist_index(s->n, i, j)] : s->w[dist_index(s->n, j, i)];
}

int gc_apsp_fill(const gc_apsp_src *s, size_t j0, size_t j1, void *dst, size_t ld,
                 int is_float, int nthreads)
{
    size_t n = s->n;
    int bad = 0;
#define PUT(i, d)                                                             \
    do {                                                                      \
        double d_ = (d);                                                      \
        bad |= !(d_ >= 0);                                                    \
        if (is_float) ((float *) dst)[(i) + (j - j0) * ld] = (float) d_;      \
        else ((double *) dst)[(i) + (j - j0) * ld] = d_;                      \
    } while (0)
#ifdef _OPENMP
#pragma omp parallel for num_threads(nthreads) schedule(static) reduction(|:bad) if (j1 - j0 > 16)
#endif
    for (size_t j = j0; j < j1; j++) {
        if (!s->is_dist) {
            const double *w = s->w + j * n;
            for (size_t i = 0; i < n; i++) PUT(i, i == j ? 0 : gc_apsp_length(s, w[i]));
        } else {
            for (size_t i = 0; i < j; i++) PUT(i, gc_apsp_length(s, s->w[dist_index(n, j, i)]));
            PUT(j, 0);
            const double *w = s->w + (j + 1 < n ? dist_index(n, j + 1, j) : 0);
            for (size_t i = j + 1; i < n; i++) PUT(i, gc_apsp_length(s, w[i - j - 1]));
        }
        /* padding rows: no edge */
        for (size_t i = n; i < ld; i++) PUT(i, INFINITY);
    }
#undef PUT
    (void) nthreads;
    return bad;
}

int gc_apsp_first_bad(const gc_apsp_src *s, size_t *bi, size_t *bj, double *bv)
{
    for (size_t j = 0; j < s->n; j++)
        for (size_t i = 0; i < s->n; i++) {
            if (i == j) continue;
            double v = value(s, i, j);
            if (!(gc_apsp_length(s, v) >= 0)) {
                *bi = i; *bj = j; *bv = v;
                return 1;
            }
        }
    return 0;
}

/* same value: bitwise, or both NA/NaN */
static inline int same(double a, double b)
{
    return a == b || (isnan(a) && isnan(b));
}

/* The first (i + j n) upper pair of the column blocks [c0, c1) (T
 * columns each) whose mirror differs, or SIZE_MAX. */
static size_t asymmetric_cols(const gc_apsp_src *s, size_t T, size_t c0, size_t c1,
                              int nthreads)
{
    const size_t n = s->n;
    size_t first = SIZE_MAX;
    (void) nthreads;
#ifdef _OPENMP
#pragma omp parallel for num_threads(nthreads) schedule(dynamic, 1) reduction(min:first)
#endif
    for (size_t jb = c0; jb < c1; jb++) {
        size_t j1 = (jb + 1) * T < n ? (jb + 1) * T : n;
        for (size_t ib = 0; ib <= jb; ib++) {
            size_t i1 = (ib + 1) * T < n ? (ib + 1) * T : n;
            for (size_t j = jb * T; j < j1; j++)
                for (size_t i = ib * T; i < i1 && i < j; i++)
                    if (!same(s->w[i + j * n], s->w[j + i * n]) && i + j * n < first)
                        first = i + j * n;
        }
    }
    return first;
}

int gc_apsp_asymmetric(const gc_apsp_src *s, size_t *bi, size_t *bj, int nthreads,
                       const gc_host *host)
{
    if (s->is_dist) return 0;
    const size_t T = 64, n = s->n, nb = (n + T - 1) / T;
    size_t first = SIZE_MAX;   /* i + j n of the first upper pair that differs */
    /* column blocks reading about GC_COPY_CHUNK bytes between the checks
     * for Ctrl-C (a 30000-vertex matrix is 7.2 GB) */
    size_t per = GC_COPY_CHUNK / sizeof(double) / (T * (n ? n : 1)) + 1;
    for (size_t c0 = 0; c0 < nb && first == SIZE_MAX; c0 += per) {
        if (gc_host_interrupted(host)) return -1;
        first = asymmetric_cols(s, T, c0, c0 + per < nb ? c0 + per : nb, nthreads);
    }
    if (first == SIZE_MAX) return 0;
    *bi = first % n;
    *bj = first / n;
    return 1;
}

/* ---- the CPU engine ---------------------------------------------------- */

/* D_IJ = min(D_IJ, D_IK (x) D_KJ) over rows [i0, i1), columns [j0, j1) and
 * pivots [k0, k1).  kouter: Floyd-Warshall's order (the pivot block itself);
 * otherwise column by column (every other block: the values only fall and
 * stay lengths of paths, and every term of the product is met).  D_IK's
 * column k is D's (A NULL) or A's column k - k0 (ld rows); bt: D_KJ is
 * read transposed (D[j, k] for D[k, j]: an undirected graph's block below
 * the diagonal, from its mirror). */
static void relax(double *D, size_t ld, size_t i0, size_t i1, size_t j0, size_t j1,
                  size_t k0, size_t k1, int kouter, const double *A, int bt)
{
    size_t m = i1 - i0;
    size_t jn = kouter ? k1 - k0 : j1 - j0, kn = kouter ? j1 - j0 : k1 - k0;
    for (size_t x = 0; x < jn; x++)
        for (size_t y = 0; y < kn; y++) {
            size_t j = kouter ? j0 + y : j0 + x, k = kouter ? k0 + x : k0 + y;
            double s = bt ? D[j + k * ld] : D[k + j * ld];
            if (s == INFINITY) continue;
            double *dj = D + j * ld + i0;
            const double *dk = (A ? A + (k - k0) * ld : D + k * ld) + i0;
#ifdef _OPENMP
#pragma omp simd
#endif
            for (size_t a = 0; a < m; a++) {
                double v = dk[a] + s;
                dj[a] = v < dj[a] ? v : dj[a];
            }
        }
}

#define APSP_CPU_BLOCK 128

void gc_apsp_row_sums(const double *D, size_t n, size_t ld, size_t r0, size_t r1,
                      const gc_apsp_out *out)
{
    for (size_t i = r0; i < r1; i++) {
        if (out->inv_sum) out->inv_sum[i] = 0;
        if (out->len_sum) out->len_sum[i] = 0;
        if (out->reach) out->reach[i] = 0;
        if (out->ecc) out->ecc[i] = 0;
    }
    for (size_t j = 0; j < n; j++) {
        const double *dj = D + j * ld;
        for (size_t i = r0; i < r1; i++) {
            double d = dj[i];
            if (i == j || d == INFINITY) continue;
            if (out->inv_sum) out->inv_sum[i] += 1 / d;
            if (out->len_sum) out->len_sum[i] += d;
            if (out->reach) out->reach[i] += 1;
            if (out->ecc && d > out->ecc[i]) out->ecc[i] = d;
        }
    }
}

void gc_apsp_take(const gc_apsp_out *out, size_t n, size_t j0, size_t j1, const void *D,
                  size_t ld, int is_float, int nthreads)
{
    (void) nthreads;
#ifdef _OPENMP
#pragma omp parallel for num_threads(nthreads) schedule(static) if (j1 - j0 > 16)
#endif
    for (size_t j = j0; j < j1; j++) {
        size_t at = (j - j0) * ld;
        if (!is_float) {
            const double *col = (const double *) D + at;
            if (out->out_matrix && out->out_matrix + j * n != col)
                memcpy(out->out_matrix + j * n, col, n * sizeof *col);
            if (out->out_dist && j + 1 < n)
                memcpy(out->out_dist + dist_offset(n, j), col + j + 1,
                       (n - j - 1) * sizeof *col);
        } else {
            const float *col = (const float *) D + at;
            if (out->out_matrix)
                for (size_t i = 0; i < n; i++) out->out_matrix[i + j * n] = (double) col[i];
            if (out->out_dist)
                for (size_t i = j + 1; i < n; i++)
                    out->out_dist[dist_index(n, i, j)] = (double) col[i];
        }
    }
}

int gc_apsp_cpu(const gc_apsp_job *job, gc_host *host, int *threads_used, char *msg,
                size_t msgcap)
{
    const gc_opts *o = host->opts;
    const gc_apsp_out *out = &job->out;
    size_t n = job->src.n, b = job->block ? job->block : APSP_CPU_BLOCK;
    int nt = o->nthreads > 0 ? o->nthreads : 1;
    *threads_used = nt;
    if (n == 0) return GPUCOR_OK;
    /* D: the matrix result itself when there is one */
    double *D = out->out_matrix, *own = NULL, *P = NULL;
    if (!D) {
        if ((double) n * (double) n > (double) SIZE_MAX / sizeof(double) ||
            !(own = malloc(n * n * sizeof *own))) {
            snprintf(msg, msgcap, "out of host memory for the %zu x %zu lengths", n, n);
            return GPUCOR_ERR_ALLOC;
        }
        gc_advise_huge(own, n * n * sizeof *own);
        D = own;
    }
    int status = GPUCOR_OK;
    /* the lengths from w, in chunks of columns with Ctrl-C between them */
    size_t per = GC_COPY_CHUNK / sizeof(double) / n + 1;
    for (size_t j0 = 0; j0 < n; j0 += per) {
        if (gc_host_interrupted(host)) {
            status = GPUCOR_ERR_INTERRUPT;
            goto done;
        }
        if (gc_apsp_fill(&job->src, j0, j0 + per < n ? j0 + per : n, D + j0 * n, n, 0, nt)) {
            *job->bad = 1;
            status = GPUCOR_ERR_INVALID;
            snprintf(msg, msgcap, "negative length");
            goto done;
        }
    }
    size_t nb = (n + b - 1) / b;
    int sym = job->symmetric;
    /* an undirected graph's pivot column, whole (from above the diagonal) */
    if (sym && nb > 1 && !(P = malloc(n * b * sizeof *P))) {
        snprintf(msg, msgcap, "out of host memory");
        status = GPUCOR_ERR_ALLOC;
        goto done;
    }
    for (size_t K = 0; K < nb; K++) {
        size_t k0 = K * b, k1 = k0 + b < n ? k0 + b : n;
        /* 1. the pivot block */
        relax(D, n, k0, k1, k0, k1, k0, k1, 1, NULL, 0);
        /* 2. its row and its column of blocks (undirected: the ones above
         * the diagonal) */
#ifdef _OPENMP
#pragma omp parallel for num_threads(nt) schedule(dynamic, 1)
#endif
        for (size_t t = 0; t < 2 * nb; t++) {
            size_t B = t / 2;
            int row = t % 2 == 0;
            if (B == K || (sym && row != (B > K))) continue;
            size_t x0 = B * b, x1 = x0 + b < n ? x0 + b : n;
            if (row) relax(D, n, k0, k1, x0, x1, k0, k1, 0, NULL, 0);   /* (K, B) */
            else relax(D, n, x0, x1, k0, k1, k0, k1, 0, NULL, 0);       /* (B, K) */
        }
        /* 3. the rest (undirected: the blocks on and above the diagonal,
         * D_IK from the whole pivot column P, D_KJ below the diagonal from
         * its mirror) */
        if (sym && nb > 1) {
            size_t kb = k1 - k0;
#ifdef _OPENMP
#pragma omp parallel for num_threads(nt) schedule(static)
#endif
            for (size_t c = 0; c < kb; c++) {
                size_t k = k0 + c;
                for (size_t i = 0; i < k1; i++) P[i + c * n] = D[i + k * n];
                for (size_t i = k1; i < n; i++) P[i + c * n] = D[k + i * n];
            }
        }
#ifdef _OPENMP
#pragma omp parallel for num_threads(nt) schedule(dynamic, 1) collapse(2)
#endif
        for (size_t J = 0; J < nb; J++)
            for (size_t I = 0; I < nb; I++) {
                if (I == K || J == K || (sym && I > J)) continue;
                size_t i0 = I * b, i1 = i0 + b < n ? i0 + b : n;
                size_t j0 = J * b, j1 = j0 + b < n ? j0 + b : n;
                relax(D, n, i0, i1, j0, j1, k0, k1, 0, sym ? P : NULL, sym && K > J);
            }
        if (host->interrupted && host->interrupted()) {
            status = GPUCOR_ERR_INTERRUPT;
            goto done;
        }
        if (host->progress) host->progress(host->progress_ctx, (double) (K + 1) / (double) nb);
    }
    /* undirected: the lower half from the upper */
    if (sym && nb > 1) gc_mirror(D, n, 1, nt);
    if (out->inv_sum || out->len_sum || out->reach || out->ecc) {
        size_t chunk = 256, nc = (n + chunk - 1) / chunk;
#ifdef _OPENMP
#pragma omp parallel for num_threads(nt) schedule(dynamic, 1)
#endif
        for (size_t c = 0; c < nc; c++)
            gc_apsp_row_sums(D, n, n, c * chunk, (c + 1) * chunk < n ? (c + 1) * chunk : n, out);
    }
    if (out->out_dist) gc_apsp_take(out, n, 0, n, D, n, 0, nt);
done:
    free(own);
    free(P);
    return status;
}
