/*
 * sparse.c -- Pearson and Spearman correlations between the columns of a
 * sparse matrix (Matrix's dgCMatrix: compressed columns), without making
 * it dense.
 *
 * The covariance of columns a and b is
 *     sum_k (x_ka - m_a)(x_kb - m_b) = G_ab - n m_a m_b,
 * with G = X'X, whose terms are non-zero only in rows where both columns
 * are: G is the sum over rows of the outer products of each row's stored
 * values, so the work is sum over rows of nnz(row)^2 / 2 (the whole matrix
 * is never dense, and nothing of size n x p is allocated).  The means are
 * stats' two-pass long-double means over all n values, zeros included, and
 * the subtraction is done in long double.  The subtraction cancels digits
 * when a column's mean is large against its spread (m^2 >> var): such a
 * column is refused (GPUCOR_ERR_INVALID with *ill set) and the caller
 * falls back to dense columns, where stats' two-pass algorithm is exact.
 *
 * Spearman: a column's ranks are the mid-ranks of its n values, the
 * implicit zeros one tie group; ranks minus the zeros' rank are zero at
 * the zeros, so the ranked column is as sparse as the column and the
 * correlation (shift-invariant) is Pearson's of it.
 *
 * The result is written straight into the p x p R matrix (the dense sink's
 * memory): G's lower triangle first, each thread owning a range of
 * columns, then stats' rules (zero sd -> NA, the clamp, the unit diagonal)
 * and the mirror.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#include "cpu.h"

/* Above this m^2 / var a column's covariances lose more than ~1e-13 */
#define ILL_RATIO 100.0
/* rows between interrupt checks */
#define ROW_BLOCK 8192

/* The stored values of one column replaced by their mid-rank among all n
 * values minus the implicit zeros' mid-rank.  cpu_rank ranks the m stored
 * values; the z implicit zeros then sit between the negative and positive
 * ones, in the tie group of the stored zeros: a positive value's rank moves
 * up by z, a stored zero's by z / 2.  r (m) and idx (2m) are workspace. */
static void rank_column(double *v, size_t m, size_t n, double *r, size_t *idx)
{
    double z = (double) (n - m);
    size_t neg = 0, zs = 0;
    cpu_rank(v, m, r, idx);
    for (size_t k = 0; k < m; k++) {
        neg += v[k] < 0;
        zs += v[k] == 0;
    }
    double r0 = (double) neg + ((double) zs + z + 1) / 2;
    for (size_t k = 0; k < m; k++)
        v[k] = r[k] + (v[k] > 0 ? z : v[k] == 0 ? z / 2 : 0) - r0;
}

int cpu_sparse_cor(const int *colptr, const int *rowind, const double *val,
                   size_t n, size_t p, int spearman, const gc_sink *sink,
                   const gc_host *host, int *sd0, int *ill)
{
    int status = GPUCOR_OK, nt = host->opts->nthreads;
    size_t nnz = (size_t) colptr[p];
    double *out = sink->out;
    double *vcopy = NULL, *rv = NULL, *s = NULL;
    const double *v = val;      /* the values, or their ranks (a copy) */
    long double *mean = NULL, *css = NULL;
    int *rp = NULL, *rc = NULL;
    size_t *bounds = NULL, *idx = NULL;
    unsigned char *zero = NULL;
    *sd0 = 0;
    *ill = 0;
    if (nt < 1) nt = 1;

    if (spearman) v = vcopy = (double *) malloc((nnz ? nnz : 1) * sizeof *vcopy);
    mean = (long double *) calloc(p ? p : 1, sizeof *mean);
    css = (long double *) calloc(p ? p : 1, sizeof *css);
    zero = (unsigned char *) calloc(p ? p : 1, 1);
    rp = (int *) calloc(n + 1, sizeof *rp);
    rc = (int *) malloc((nnz ? nnz : 1) * sizeof *rc);
    rv = (double *) malloc((nnz ? nnz : 1) * sizeof *rv);
    bounds = (size_t *) malloc(((size_t) nt + 1) * sizeof *bounds);
    if (!v || !mean || !css || !zero || !rp || !rc || !rv || !bounds) {
        status = GPUCOR_ERR_ALLOC;
        goto cleanup;
    }

    /* ranks; per column the two-pass mean over all n values and the sum of
     * squared residuals (the variance times n - 1) */
    if (spearman) {
        size_t mmax = 0;
        for (size_t j = 0; j < p; j++) {
            size_t m = (size_t) (colptr[j + 1] - colptr[j]);
            if (m > mmax) mmax = m;
        }
        s = (double *) malloc((mmax ? mmax : 1) * sizeof *s);
        idx = (size_t *) malloc((mmax ? 2 * mmax : 1) * sizeof *idx);
        if (!s || !idx) { status = GPUCOR_ERR_ALLOC; goto cleanup; }
        memcpy(vcopy, val, nnz * sizeof *vcopy);
        for (size_t j = 0; j < p; j++)
            rank_column(vcopy + colptr[j], (size_t) (colptr[j + 1] - colptr[j]), n, s, idx);
    }
    for (size_t j = 0; j < p; j++) {
        const double *c = v + colptr[j];
        size_t m = (size_t) (colptr[j + 1] - colptr[j]), z = n - m;
        long double sum = 0;
        for (size_t k = 0; k < m; k++) sum += c[k];
        long double mu = sum / (long double) n, r = -(long double) z * mu;
        for (size_t k = 0; k < m; k++) r += c[k] - mu;
        mu += r / (long double) n;
        long double ss = (long double) z * mu * mu;
        int constant = m == 0 || (m == n && z == 0);
        for (size_t k = 0; k < m; k++) {
            long double d = c[k] - mu;
            ss += d * d;
            if (c[k] != c[0]) constant = 0;
        }
        /* stats: all values equal (or a spread a double cannot hold) */
        zero[j] = (m == 0 || constant || (double) ss == 0);
        mean[j] = mu;
        css[j] = ss;
        if (!zero[j] && (double) (mu * mu) * (double) n > ILL_RATIO * (double) ss) {
            *ill = 1;
            status = GPUCOR_ERR_INVALID;
            goto cleanup;
        }
    }

    /* rows: the stored (column, value) pairs of each row, columns ascending */
    for (size_t k = 0; k < nnz; k++) rp[rowind[k] + 1]++;
    for (size_t i = 0; i < n; i++) rp[i + 1] += rp[i];
    {
        int *fill = (int *) malloc((n ? n : 1) * sizeof *fill);
        if (!fill) { status = GPUCOR_ERR_ALLOC; goto cleanup; }
        memcpy(fill, rp, n * sizeof *fill);
        for (size_t j = 0; j < p; j++)
            for (int k = colptr[j]; k < colptr[j + 1]; k++) {
                int at = fill[rowind[k]]++;
                rc[at] = (int) j;
                rv[at] = v[k];
            }
        free(fill);
    }

    /* columns split over threads by their share of the work: column a
     * meets, in each of its rows, the stored columns b <= a */
    {
        double total = 0, acc = 0;
        for (size_t j = 0; j < p; j++)
            total += (double) (colptr[j + 1] - colptr[j]) * (double) (j + 1);
        bounds[0] = 0;
        int t = 1;
        for (size_t j = 0; j < p && t < nt; j++) {
            acc += (double) (colptr[j + 1] - colptr[j]) * (double) (j + 1);
            while (t < nt && acc >= total * t / nt) bounds[t++] = j + 1;
        }
        while (t <= nt) bounds[t++] = p;
    }
    gc_sink_begin(sink);
    memset(out, 0, p * p * sizeof *out);
    for (size_t i0 = 0; i0 < n; i0 += ROW_BLOCK) {
        size_t i1 = i0 + ROW_BLOCK < n ? i0 + ROW_BLOCK : n;
#ifdef _OPENMP
#pragma omp parallel num_threads(nt)
#endif
        {
            int t = 0, team = 1;
#ifdef _OPENMP
            t = omp_get_thread_num();
            team = omp_get_num_threads();
#endif
            /* a smaller team than asked: thread 0 takes every column */
            size_t a0 = team == nt ? bounds[t] : 0;
            size_t a1 = team == nt ? bounds[t + 1] : (t == 0 ? p : 0);
            for (size_t i = i0; i < i1 && a0 < a1; i++) {
                const int *cols = rc + rp[i];
                const double *xs = rv + rp[i];
                size_t m = (size_t) (rp[i + 1] - rp[i]);
                /* this thread's columns among the row's: [ka, kb) */
                size_t ka = 0, kb = m, lo, hi;
                lo = 0; hi = m;
                while (lo < hi) { size_t md = (lo + hi) / 2; if ((size_t) cols[md] < a0) lo = md + 1; else hi = md; }
                ka = lo;
                hi = m;
                while (lo < hi) { size_t md = (lo + hi) / 2; if ((size_t) cols[md] < a1) lo = md + 1; else hi = md; }
                kb = lo;
                for (size_t ia = ka; ia < kb; ia++) {
                    double xa = xs[ia];
                    double *col = out + (size_t) cols[ia] * p;
                    for (size_t ib = 0; ib <= ia; ib++) col[cols[ib]] += xa * xs[ib];
                }
            }
        }
        if (host->interrupted && host->interrupted()) {
            status = GPUCOR_ERR_INTERRUPT;
            goto cleanup;
        }
        if (host->progress) host->progress(host->progress_ctx, 0.95 * (double) i1 / n);
    }

    /* G -> r with stats' rules; column a holds rows b <= a */
#ifdef _OPENMP
#pragma omp parallel for num_threads(nt) schedule(dynamic, 16)
#endif
    for (size_t a = 0; a < p; a++) {
        double sa = sqrt((double) css[a]);
        for (size_t b = 0; b <= a; b++) {
            double r;
            if (a == b) {
                r = 1;          /* stats: also for a zero-sd column (no NA here) */
            } else if (zero[a] || zero[b]) {
                r = gpucor_na_real;
            } else {
                long double c = (long double) out[b + a * p] -
                                (long double) n * mean[a] * mean[b];
                r = (double) c / (sa * sqrt((double) css[b]));
                if (r > 1) r = 1;
                else if (r < -1) r = -1;
            }
            out[b + a * p] = r;
        }
    }
    for (size_t a = 0; a < p; a++)
        if (zero[a] && p > 1) *sd0 = 1;   /* stats warns for pairs i != j only */
    /* the mirror: (a, b) for b > a from (b, a), in cache-sized blocks */
#ifdef _OPENMP
#pragma omp parallel for num_threads(nt) schedule(dynamic, 1)
#endif
    for (size_t jb = 0; jb < p; jb += 64)
        for (size_t ib = jb; ib < p; ib += 64)
            for (size_t j = jb; j < jb + 64 && j < p; j++)
                for (size_t i = ib > j + 1 ? ib : j + 1; i < ib + 64 && i < p; i++)
                    out[i + j * p] = out[j + i * p];
    if (host->progress) host->progress(host->progress_ctx, 1.0);

cleanup:
    free(vcopy); free(rv); free(s); free(mean); free(css); free(rp); free(rc);
    free(bounds); free(zero); free(idx);
    return status;
}
