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

/* ---- one call's state, and its phases ------------------------------------ */
typedef struct {
    const int *colptr, *rowind;
    size_t n, p, nnz;
    int nt;
    const double *v;          /* the values, or their ranks (vcopy) */
    double *vcopy;
    long double *mean, *css;  /* per column: mean and sum of squared residuals */
    unsigned char *zero;      /* per column: stats' zero sd */
    int *rp, *rc;             /* by rows: row pointers, the columns ... */
    double *rv;               /* ... and the values */
    size_t *bounds;           /* the threads' ranges of columns */
} sparse_run;

/* Spearman: each column's stored values replaced by their ranks (a copy). */
static int rank_columns(sparse_run *r, const double *val)
{
    size_t mmax = 0;
    for (size_t j = 0; j < r->p; j++) {
        size_t m = (size_t) (r->colptr[j + 1] - r->colptr[j]);
        if (m > mmax) mmax = m;
    }
    double *s = (double *) malloc((mmax ? mmax : 1) * sizeof *s);
    size_t *idx = (size_t *) malloc((mmax ? 2 * mmax : 1) * sizeof *idx);
    if (!s || !idx) {
        free(s);
        free(idx);
        return GPUCOR_ERR_ALLOC;
    }
    memcpy(r->vcopy, val, r->nnz * sizeof *r->vcopy);
    for (size_t j = 0; j < r->p; j++)
        rank_column(r->vcopy + r->colptr[j], (size_t) (r->colptr[j + 1] - r->colptr[j]), r->n,
                    s, idx);
    free(s);
    free(idx);
    return GPUCOR_OK;
}

/* Per column the two-pass mean over all n values and the sum of squared
 * residuals (the variance times n - 1); 1 when a column is too ill
 * conditioned for the sparse formula. */
static int column_moments(sparse_run *r)
{
    size_t n = r->n;
    for (size_t j = 0; j < r->p; j++) {
        const double *c = r->v + r->colptr[j];
        size_t m = (size_t) (r->colptr[j + 1] - r->colptr[j]), z = n - m;
        long double sum = 0;
        for (size_t k = 0; k < m; k++) sum += c[k];
        long double mu = sum / (long double) n, res = -(long double) z * mu;
        for (size_t k = 0; k < m; k++) res += c[k] - mu;
        mu += res / (long double) n;
        long double ss = (long double) z * mu * mu;
        int constant = m == 0 || (m == n && z == 0);
        for (size_t k = 0; k < m; k++) {
            long double d = c[k] - mu;
            ss += d * d;
            if (c[k] != c[0]) constant = 0;
        }
        /* stats: all values equal (or a spread a double cannot hold) */
        r->zero[j] = (m == 0 || constant || (double) ss == 0);
        r->mean[j] = mu;
        r->css[j] = ss;
        if (!r->zero[j] && (double) (mu * mu) * (double) n > ILL_RATIO * (double) ss)
            return 1;
    }
    return 0;
}

/* The stored (column, value) pairs of each row, columns ascending. */
static int by_rows(sparse_run *r)
{
    size_t n = r->n;
    for (size_t k = 0; k < r->nnz; k++) r->rp[r->rowind[k] + 1]++;
    for (size_t i = 0; i < n; i++) r->rp[i + 1] += r->rp[i];
    int *fill = (int *) malloc((n ? n : 1) * sizeof *fill);
    if (!fill) return GPUCOR_ERR_ALLOC;
    memcpy(fill, r->rp, n * sizeof *fill);
    for (size_t j = 0; j < r->p; j++)
        for (int k = r->colptr[j]; k < r->colptr[j + 1]; k++) {
            int at = fill[r->rowind[k]]++;
            r->rc[at] = (int) j;
            r->rv[at] = r->v[k];
        }
    free(fill);
    return GPUCOR_OK;
}

/* Columns split over threads by their share of the work: column a meets,
 * in each of its rows, the stored columns b <= a. */
static void share_columns(sparse_run *r)
{
    double total = 0, acc = 0;
    for (size_t j = 0; j < r->p; j++)
        total += (double) (r->colptr[j + 1] - r->colptr[j]) * (double) (j + 1);
    r->bounds[0] = 0;
    int t = 1, nt = r->nt;
    for (size_t j = 0; j < r->p && t < nt; j++) {
        acc += (double) (r->colptr[j + 1] - r->colptr[j]) * (double) (j + 1);
        while (t < nt && acc >= total * t / nt) r->bounds[t++] = j + 1;
    }
    while (t <= nt) r->bounds[t++] = r->p;
}

/* G's lower triangle into out (p x p, zeroed): rows in blocks, each thread
 * adding the outer products of its columns among each row's. */
static int gram(const sparse_run *r, double *out, const gc_host *host)
{
    size_t n = r->n, p = r->p;
    int nt = r->nt;
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
            size_t a0 = team == nt ? r->bounds[t] : 0;
            size_t a1 = team == nt ? r->bounds[t + 1] : (t == 0 ? p : 0);
            for (size_t i = i0; i < i1 && a0 < a1; i++) {
                const int *cols = r->rc + r->rp[i];
                const double *xs = r->rv + r->rp[i];
                size_t m = (size_t) (r->rp[i + 1] - r->rp[i]);
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
        if (host->interrupted && host->interrupted()) return GPUCOR_ERR_INTERRUPT;
        if (host->progress) host->progress(host->progress_ctx, 0.95 * (double) i1 / n);
    }
    return GPUCOR_OK;
}

/* G -> r with stats' rules (column a holds rows b <= a), then the mirror;
 * returns stats' zero-sd warning. */
static int to_correlations(const sparse_run *r, double *out)
{
    size_t n = r->n, p = r->p;
#ifdef _OPENMP
#pragma omp parallel for num_threads(r->nt) schedule(dynamic, 16)
#endif
    for (size_t a = 0; a < p; a++) {
        double sa = sqrt((double) r->css[a]);
        for (size_t b = 0; b <= a; b++) {
            double v;
            if (a == b) {
                v = 1;          /* stats: also for a zero-sd column (no NA here) */
            } else if (r->zero[a] || r->zero[b]) {
                v = gpucor_na_real;
            } else {
                long double c = (long double) out[b + a * p] -
                                (long double) n * r->mean[a] * r->mean[b];
                v = (double) c / (sa * sqrt((double) r->css[b]));
                if (v > 1) v = 1;
                else if (v < -1) v = -1;
            }
            out[b + a * p] = v;
        }
    }
    int sd0 = 0;
    for (size_t a = 0; a < p; a++)
        if (r->zero[a] && p > 1) sd0 = 1;   /* stats warns for pairs i != j only */
    /* the mirror: (a, b) for b > a from (b, a), in cache-sized blocks */
#ifdef _OPENMP
#pragma omp parallel for num_threads(r->nt) schedule(dynamic, 1)
#endif
    for (size_t jb = 0; jb < p; jb += 64)
        for (size_t ib = jb; ib < p; ib += 64)
            for (size_t j = jb; j < jb + 64 && j < p; j++)
                for (size_t i = ib > j + 1 ? ib : j + 1; i < ib + 64 && i < p; i++)
                    out[i + j * p] = out[j + i * p];
    return sd0;
}

int cpu_sparse_cor(const int *colptr, const int *rowind, const double *val,
                   size_t n, size_t p, int spearman, const gc_sink *sink,
                   const gc_host *host, int *sd0, int *ill)
{
    int status = GPUCOR_OK;
    sparse_run r = {.colptr = colptr, .rowind = rowind, .n = n, .p = p,
                    .nnz = (size_t) colptr[p], .nt = host->opts->nthreads, .v = val};
    size_t nnz = r.nnz;
    *sd0 = 0;
    *ill = 0;
    if (r.nt < 1) r.nt = 1;
    if (spearman) r.v = r.vcopy = (double *) malloc((nnz ? nnz : 1) * sizeof *r.vcopy);
    r.mean = (long double *) calloc(p ? p : 1, sizeof *r.mean);
    r.css = (long double *) calloc(p ? p : 1, sizeof *r.css);
    r.zero = (unsigned char *) calloc(p ? p : 1, 1);
    r.rp = (int *) calloc(n + 1, sizeof *r.rp);
    r.rc = (int *) malloc((nnz ? nnz : 1) * sizeof *r.rc);
    r.rv = (double *) malloc((nnz ? nnz : 1) * sizeof *r.rv);
    r.bounds = (size_t *) malloc(((size_t) r.nt + 1) * sizeof *r.bounds);
    if (!r.v || !r.mean || !r.css || !r.zero || !r.rp || !r.rc || !r.rv || !r.bounds)
        status = GPUCOR_ERR_ALLOC;
    if (status == GPUCOR_OK && spearman) status = rank_columns(&r, val);
    if (status == GPUCOR_OK && column_moments(&r)) {
        *ill = 1;
        status = GPUCOR_ERR_INVALID;
    }
    if (status == GPUCOR_OK) status = by_rows(&r);
    if (status == GPUCOR_OK) {
        share_columns(&r);
        gc_sink_begin(sink);
        memset(sink->out, 0, p * p * sizeof *sink->out);
        status = gram(&r, sink->out, host);
    }
    if (status == GPUCOR_OK) {
        *sd0 = to_correlations(&r, sink->out);
        if (host->progress) host->progress(host->progress_ctx, 1.0);
    }
    free(r.vcopy); free(r.rv); free(r.mean); free(r.css); free(r.rp); free(r.rc);
    free(r.bounds); free(r.zero);
    return status;
}
