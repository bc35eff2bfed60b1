/*
 * prune.c -- see prune.h: the input's check, ARACNE's max-min tiles and
 * parmigene's tree on the CPU, CLR and MRNET.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#include "prune.h"

/* The column blocks [c0, c1) of gc_prune_check(), into *bad, *asym, *neg. */
static void check_cols(const double *mi, size_t n, size_t T, size_t c0, size_t c1,
                       size_t *bad_out, size_t *asym_out, int *neg_out, int nthreads)
{
    size_t bad = *bad_out, asym = *asym_out;
    int neg = *neg_out;
    (void) nthreads;
#ifdef _OPENMP
#pragma omp parallel for num_threads(nthreads) schedule(dynamic, 1) \
    reduction(min:bad, asym) reduction(|:neg)
#endif
    for (size_t jb = c0; jb < c1; jb++) {
        size_t j1 = (jb + 1) * T < n ? (jb + 1) * T : n;
        for (size_t ib = 0; ib <= jb; ib++) {
            size_t i1 = (ib + 1) * T < n ? (ib + 1) * T : n;
            for (size_t j = jb * T; j < j1; j++)
                for (size_t i = ib * T; i < i1 && i <= j; i++) {
                    double a = mi[i + j * n], b = mi[j + i * n];
                    if (!isfinite(a) || !isfinite(b)) {
                        size_t at = isfinite(b) ? i + j * n
                                  : isfinite(a) ? j + i * n
                                  : (i + j * n < j + i * n ? i + j * n : j + i * n);
                        if (at < bad) bad = at;
                    } else if (a != b && i + j * n < asym) {
                        asym = i + j * n;
                    }
                    if (i != j && a < 0) neg = 1;
                }
        }
    }
    *bad_out = bad;
    *asym_out = asym;
    *neg_out = neg;
}

int gc_prune_check(const double *mi, size_t n, size_t *bi, size_t *bj, int *negative,
                   int nthreads, const gc_host *host)
{
    const size_t T = 64, nb = (n + T - 1) / T;
    size_t bad = SIZE_MAX, asym = SIZE_MAX;   /* i + j n of the first of each */
    int neg = 0;
    /* column blocks reading about GC_COPY_CHUNK bytes between the checks
     * for Ctrl-C (a 30000-gene mi is 7.2 GB) */
    size_t per = GC_COPY_CHUNK / sizeof(double) / (T * (n ? n : 1)) + 1;
    for (size_t c0 = 0; c0 < nb; c0 += per) {
        if (gc_host_interrupted(host)) return PRUNE_INTERRUPTED;
        check_cols(mi, n, T, c0, c0 + per < nb ? c0 + per : nb, &bad, &asym, &neg, nthreads);
    }
    *negative = neg;
    size_t at = bad != SIZE_MAX ? bad : asym;
    if (at == SIZE_MAX) return PRUNE_OK;
    *bi = at % n;
    *bj = at / n;
    return bad != SIZE_MAX ? PRUNE_NONFINITE : PRUNE_ASYMMETRIC;
}

/* ---- ARACNE on the CPU --------------------------------------------------- */

/* The tile side: a b x b tile of m (128 KiB at 128) and the two packed
 * k-panels of the same size stay in L2 while the tile is made. */
#define PRUNE_CPU_BLOCK 128
/* The micro-kernel makes 4 columns i x 8 rows j at once: 8 AVX2 registers
 * of running maxima, the 8 rows' panel values loaded once for 4 columns. */
#define MR 8
#define NR 4

static size_t round_up(size_t a, size_t m) { return (a + m - 1) / m * m; }

/* The tile of m with rows [j0, j1) and columns [i0, i1) into acc (column
 * il at acc + il * ldj, ldj = j1 - j0 rounded up to MR), over all k.  P
 * (ldj x b) holds mi[j, k] and S (b x ldi) mi[k, i] of one block of k, the
 * diagonal and the padding as -Inf, so k = i and k = j never win a max. */
static void maxmin_tile(const double *mi, size_t n, size_t b, size_t j0, size_t j1, size_t i0,
                        size_t i1, double *acc, double *P, double *S)
{
    const size_t ldj = round_up(j1 - j0, MR), ldi = round_up(i1 - i0, NR);
    for (size_t e = 0; e < ldj * ldi; e++) acc[e] = -INFINITY;
    for (size_t k0 = 0; k0 < n; k0 += b) {
        size_t k1 = k0 + b < n ? k0 + b : n, kb = k1 - k0;
        for (size_t kl = 0; kl < kb; kl++) {
            size_t k = k0 + kl;
            const double *col = mi + k * n;   /* mi[j, k] = column k's row j */
            double *p = P + kl * ldj;
            for (size_t j = j0; j < j1; j++) p[j - j0] = j == k ? -INFINITY : col[j];
            for (size_t jl = j1 - j0; jl < ldj; jl++) p[jl] = -INFINITY;
        }
        for (size_t il = 0; il < ldi; il++) {
            size_t i = i0 + il;
            double *s = S + il * kb;
            if (i >= i1) {
                for (size_t kl = 0; kl < kb; kl++) s[kl] = -INFINITY;
                continue;
            }
            const double *col = mi + i * n + k0;
            for (size_t kl = 0; kl < kb; kl++) s[kl] = k0 + kl == i ? -INFINITY : col[kl];
        }
        for (size_t il = 0; il < ldi; il += NR) {
            const double *s0 = S + il * kb, *s1 = s0 + kb, *s2 = s1 + kb, *s3 = s2 + kb;
            for (size_t jl = 0; jl < ldj; jl += MR) {
                double a[NR][MR];
                for (int c = 0; c < NR; c++)
                    for (int r = 0; r < MR; r++) a[c][r] = acc[jl + r + (il + c) * ldj];
                for (size_t kl = 0; kl < kb; kl++) {
                    const double *p = P + jl + kl * ldj;
                    const double t[NR] = {s0[kl], s1[kl], s2[kl], s3[kl]};
                    for (int c = 0; c < NR; c++) {
#ifdef _OPENMP
#pragma omp simd
#endif
                        for (int r = 0; r < MR; r++) {
                            double v = p[r] < t[c] ? p[r] : t[c];
                            a[c][r] = v > a[c][r] ? v : a[c][r];
                        }
                    }
                }
                for (int c = 0; c < NR; c++)
                    for (int r = 0; r < MR; r++) acc[jl + r + (il + c) * ldj] = a[c][r];
            }
        }
    }
}

void gc_aracne_apply_mask(const double *mi, size_t n, const unsigned char *mask, size_t ldm,
                          size_t bi0, size_t bi1, double *out, int nthreads)
{
    /* by 64 x 64 tile pairs (a tile below the diagonal and its mirror), so
     * that the mirrored writes stay in cache and each thread first touches
     * the fresh result pages it writes; a pair {i, j} belongs to one tile
     * pair, so no two threads write the same value */
    const size_t T = GC_ARACNE_BAND, nb = (n + T - 1) / T;
    (void) nthreads;
    if (bi1 > nb) bi1 = nb;
#ifdef _OPENMP
#pragma omp parallel for num_threads(nthreads) schedule(dynamic, 1)
#endif
    for (size_t bi = bi0; bi < bi1; bi++) {
        size_t i0 = bi * T, i1 = i0 + T < n ? i0 + T : n;
        for (size_t bj = 0; bj <= bi; bj++) {
            size_t j0 = bj * T, j1 = j0 + T < n ? j0 + T : n;
            for (size_t j = j0; j < j1; j++)
                memcpy(out + i0 + j * n, mi + i0 + j * n, (i1 - i0) * sizeof *out);
            if (bj != bi)
                for (size_t i = i0; i < i1; i++)
                    memcpy(out + j0 + i * n, mi + j0 + i * n, (j1 - j0) * sizeof *out);
            if (!mask) continue;
            for (size_t i = i0; i < i1; i++)
                for (size_t j = j0; j < j1 && j < i; j++)
                    if (mask[j + (i - bi0 * T) * ldm]) out[j + i * n] = out[i + j * n] = 0;
        }
    }
}

int gc_aracne_cpu(const gc_aracne_job *job, gc_host *host, int *threads_used, char *msg,
                  size_t msgcap)
{
    const gc_opts *o = host->opts;
    const size_t n = job->n, b = job->block ? job->block : PRUNE_CPU_BLOCK;
    const double *mi = job->mi;
    double *out = job->out;
    const double eps = job->eps, eta = job->eta;
    int nt = o->nthreads > 0 ? o->nthreads : 1;
    *threads_used = nt;
    if (n == 0) return GPUCOR_OK;
#ifdef _OPENMP
#pragma omp parallel for num_threads(nt) schedule(static)
#endif
    for (size_t j = 0; j < n; j++) memcpy(out + j * n, mi + j * n, n * sizeof *out);
    if (n < 3) return GPUCOR_OK;

    /* the tiles (J, I), J <= I, in batches between interrupt checks.  Each
     * unordered pair is decided by one tile, which writes both of its
     * cells: no two threads write the same cell. */
    const size_t nb = (n + b - 1) / b, ntiles = nb * (nb + 1) / 2;
    const size_t batch = (size_t) nt * 4;
    const size_t ld = round_up(b, MR) > round_up(b, NR) ? round_up(b, MR) : round_up(b, NR);
    int status = GPUCOR_OK, failed = 0;
    for (size_t t0 = 0; t0 < ntiles && !failed; t0 += batch) {
        size_t t1 = t0 + batch < ntiles ? t0 + batch : ntiles;
#ifdef _OPENMP
#pragma omp parallel num_threads(nt)
#endif
        {
            double *acc = NULL, *P = NULL, *S = NULL;
            if (job->maxmin) {
                acc = malloc(ld * ld * sizeof *acc);
                P = malloc(ld * b * sizeof *P);
                S = malloc(ld * b * sizeof *S);
            }
            if (job->maxmin && (!acc || !P || !S)) {
#ifdef _OPENMP
#pragma omp atomic write
#endif
                failed = 1;
            } else {
#ifdef _OPENMP
#pragma omp for schedule(dynamic, 1)
#endif
                for (size_t t = t0; t < t1; t++) {
                    /* t -> (J, I): column I holds tiles J = 0 .. I */
                    size_t I = (size_t) ((sqrt(8.0 * (double) t + 1) - 1) / 2);
                    while (I * (I + 1) / 2 > t) I--;
                    while ((I + 1) * (I + 2) / 2 <= t) I++;
                    size_t J = t - I * (I + 1) / 2;
                    size_t i0 = I * b, i1 = i0 + b < n ? i0 + b : n;
                    size_t j0 = J * b, j1 = j0 + b < n ? j0 + b : n;
                    if (job->maxmin) {
                        maxmin_tile(mi, n, b, j0, j1, i0, i1, acc, P, S);
                        size_t ldj = round_up(j1 - j0, MR);
                        for (size_t i = i0; i < i1; i++)
                            for (size_t j = j0; j < j1 && j < i; j++) {
                                double m = acc[(j - j0) + (i - i0) * ldj];
                                /* parmigene's f(m) = m * eta - eps, its rounding */
                                if (m > -INFINITY && mi[j + i * n] < m * eta - eps)
                                    out[j + i * n] = out[i + j * n] = 0;
                            }
                    } else {
                        for (size_t i = i0; i < i1; i++)
                            for (size_t j = j0; j < j1 && j < i; j++)
                                if (gc_aracne_pair_removed(mi, n, n, i, j, eps, eta))
                                    out[j + i * n] = out[i + j * n] = 0;
                    }
                }
            }
            free(acc);
            free(P);
            free(S);
        }
        if (failed) break;
        if (host->interrupted && host->interrupted()) {
            status = GPUCOR_ERR_INTERRUPT;
            break;
        }
        if (host->progress) host->progress(host->progress_ctx, (double) t1 / (double) ntiles);
    }
    if (failed) {
        snprintf(msg, msgcap, "out of host memory for the tiles");
        status = GPUCOR_ERR_ALLOC;
    }
    return status;
}

/* ---- CLR ----------------------------------------------------------------- */

int gc_clr_cpu(const double *mi, size_t n, double *out, gc_host *host, int *threads_used,
               char *msg, size_t msgcap)
{
    int nt = host->opts->nthreads > 0 ? host->opts->nthreads : 1;
    *threads_used = nt;
    if (n == 0) return GPUCOR_OK;
    double *ms = malloc(n * sizeof *ms), *vs = malloc(n * sizeof *vs);
    if (!ms || !vs) {
        free(ms);
        free(vs);
        snprintf(msg, msgcap, "out of host memory");
        return GPUCOR_ERR_ALLOC;
    }
    /* parmigene's moments: its row i is our column i (mi is symmetric),
     * summed in the same order, divisor n */
#ifdef _OPENMP
#pragma omp parallel for num_threads(nt) schedule(static)
#endif
    for (size_t i = 0; i < n; i++) gc_clr_moments(mi + i * n, 1, n, ms + i, vs + i);
#ifdef _OPENMP
#pragma omp parallel for num_threads(nt) schedule(static)
#endif
    for (size_t i = 0; i < n; i++) {
        const double *c = mi + i * n;
        double *r = out + i * n;
        for (size_t j = 0; j < n; j++)
            r[j] = j == i ? 0 : gc_clr_pair(c[j], ms[i], vs[i], ms[j], vs[j]);
    }
    free(ms);
    free(vs);
    return GPUCOR_OK;
}

/* ---- MRNET --------------------------------------------------------------- */

/* Target i's greedy selection into res (its column of the result, zeros
 * on entry); sel and rs: n bytes and n doubles of scratch. */
static void mrnet_target(const double *mi, size_t n, size_t i, double *res, unsigned char *sel,
                         double *rs)
{
    const double *ci = mi + i * n;
    memset(sel, 0, n);
    sel[i] = 1;
    for (size_t j = 0; j < n; j++) rs[j] = 0;
    for (size_t turn = 0; turn < n; turn++) {
        /* the best score, the first index on ties (parmigene's 's > max') */
        double max = 0;
        size_t at = 0;
        for (size_t j = 0; j < n; j++) {
            if (sel[j]) continue;
            double s = gc_mrnet_score(ci[j], rs[j], turn);
            if (s > max) {
                max = s;
                at = j;
            }
        }
        if (max <= 0) break;
        res[at] = max;
        sel[at] = 1;
        const double *ca = mi + at * n;
        for (size_t j = 0; j < n; j++)
            if (!sel[j]) rs[j] += ca[j];
    }
}

int gc_mrnet_cpu(const double *mi, size_t n, double *out, gc_host *host, int *threads_used,
                 char *msg, size_t msgcap)
{
    int nt = host->opts->nthreads > 0 ? host->opts->nthreads : 1;
    *threads_used = nt;
    int failed = 0;
    if (n == 0) return GPUCOR_OK;
    memset(out, 0, n * n * sizeof *out);
    /* target i's scores go to column i: parmigene's res[i * n + j]; the
     * targets in batches between interrupt checks */
    const size_t batch = (size_t) nt * 16;
    int status = GPUCOR_OK;
    for (size_t b0 = 0; b0 < n && !failed; b0 += batch) {
        size_t b1 = b0 + batch < n ? b0 + batch : n;
#ifdef _OPENMP
#pragma omp parallel num_threads(nt)
#endif
        {
            unsigned char *sel = malloc(n);
            double *rs = malloc(n * sizeof *rs);
            if (!sel || !rs) {
#ifdef _OPENMP
#pragma omp atomic write
#endif
                failed = 1;
            } else {
#ifdef _OPENMP
#pragma omp for schedule(dynamic, 1)
#endif
                for (size_t i = b0; i < b1; i++) mrnet_target(mi, n, i, out + i * n, sel, rs);
            }
            free(sel);
            free(rs);
        }
        if (failed) break;
        if (host->interrupted && host->interrupted()) {
            status = GPUCOR_ERR_INTERRUPT;
            break;
        }
        if (host->progress) host->progress(host->progress_ctx, (double) b1 / (double) n);
    }
    if (failed) {
        snprintf(msg, msgcap, "out of host memory");
        return GPUCOR_ERR_ALLOC;
    }
    if (status != GPUCOR_OK) return status;
    gc_mrnet_symmetrize(out, n, nt);
    return GPUCOR_OK;
}

void gc_mrnet_symmetrize(double *out, size_t n, int nthreads)
{
    /* the larger direction, both halves, in 64 x 64 tiles */
    const size_t T = 64, nb = (n + T - 1) / T;
    (void) nthreads;
#ifdef _OPENMP
#pragma omp parallel for num_threads(nthreads) schedule(dynamic, 1)
#endif
    for (size_t jb = 0; jb < nb; jb++)
        for (size_t ib = jb; ib < nb; ib++)
            for (size_t j = jb * T; j < (jb + 1) * T && j < n; j++)
                for (size_t i = ib * T > j + 1 ? ib * T : j + 1; i < (ib + 1) * T && i < n; i++) {
                    double a = out[i + j * n], c = out[j + i * n];
                    out[i + j * n] = out[j + i * n] = a > c ? a : c;
                }
}
