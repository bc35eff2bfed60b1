/*
 * cov.c -- what gpu_cov() needs beside the engine (R/cov.R): the spreads
 * s_i that make covariances r_ij s_i s_j of correlations (the engine
 * multiplies them in as the values land: sink mul_row/mul_col), the
 * columns without a correlation, and the pairwise mode's scaling.  Before
 * this, R did it in about ten single-threaded passes over the p x q
 * result, 25 s of a 27 s call at 300 x 20000 on the H100 machine.
 */
#include <R.h>
#include <Rinternals.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "cpu/cpu.h"
#include "status.h"
#ifdef _OPENMP
#include <omp.h>
#endif

static inline int thread_num(void)
{
#ifdef _OPENMP
    return omp_get_thread_num();
#else
    return 0;
#endif
}

/* gpu_cov(use = "pairwise.complete.obs") of data with NA: r (p x q, the
 * CPU engine's covariances for the pairs that meet an NA, correlations for
 * the pairs of complete columns; modified in place unless R shares it)
 * times sx[i] sy[j] where both spreads are known (complete columns), the
 * other pairs kept.  Returns list(r, rows, cols): the scaled r and the
 * 1-based rows with a known spread whose known values off the diagonal are
 * all NA (and there is one, or the diagonal is NA too: cor() gives 1 there
 * even for a column without a correlation), the same for the columns --
 * complete columns without a correlation, whose covariances R takes from
 * stats. */
SEXP gpucor_cov_scale(SEXP r, SEXP sx, SEXP sy, SEXP symmetric, SEXP threads)
{
    if (TYPEOF(r) != REALSXP || TYPEOF(sx) != REALSXP || TYPEOF(sy) != REALSXP)
        error("internal error: gpucor_cov_scale takes doubles");
    size_t p = (size_t) XLENGTH(sx), q = (size_t) XLENGTH(sy);
    if ((size_t) XLENGTH(r) != p * q) error("internal error: gpucor_cov_scale's sizes");
    int sym = asLogical(symmetric) == TRUE;
    int nt = asInteger(threads);
    if (nt == NA_INTEGER || nt < 1) nt = 1;
    int nprot = 0;
    if (MAYBE_SHARED(r)) { r = PROTECT(duplicate(r)); nprot++; }
    double *v = REAL(r);
    const double *a = REAL(sx), *b = REAL(sy);
    size_t known_q = 0, known_p = 0;
    for (size_t j = 0; j < q; j++) known_q += !ISNAN(b[j]);
    for (size_t i = 0; i < p; i++) known_p += !ISNAN(a[i]);
    /* NA counts: per column directly, per row in one slot a thread */
    size_t *colna = (size_t *) R_alloc(q ? q : 1, sizeof(size_t));
    char *rowsel = R_alloc(p ? p : 1, 1), *colsel = R_alloc(q ? q : 1, 1);
    char *diagna = R_alloc(p ? p : 1, 1);
    memset(diagna, 0, p ? p : 1);
    size_t *rowna = (size_t *) calloc((size_t) nt * (p ? p : 1), sizeof(size_t));
    if (!rowna) error("gpu_cov: out of memory");
#ifdef _OPENMP
#pragma omp parallel for schedule(static) num_threads(nt)
#endif
    for (size_t j = 0; j < q; j++) {
        size_t *rn = rowna + (size_t) thread_num() * p, cn = 0;
        double *c = v + j * p;
        int bj = !ISNAN(b[j]);
        for (size_t i = 0; i < p; i++) {
            /* the diagonal is counted apart (diagna): cor() gives 1 there
             * even for a column without a correlation */
            if (sym && i == j) {
                diagna[i] = ISNAN(c[i]);
                if (!bj || ISNAN(a[i])) continue;
            } else if (bj && !ISNAN(a[i])) {
                int na = ISNAN(c[i]);
                cn += na;
                rn[i] += na;
            } else {
                continue;
            }
            /* s_i s_j first: the product is then the same for (i, j) and
             * (j, i), and a symmetric result stays exactly symmetric */
            c[i] *= a[i] * b[j];
        }
        colna[j] = cn;
    }
    for (int t = 1; t < nt; t++)
        for (size_t i = 0; i < p; i++) rowna[i] += rowna[(size_t) t * p + i];
    /* which rows: decided before rowna is freed, so that no R allocation
     * (which may longjmp) happens while it is held */
    size_t nr = 0, nc = 0;
    /* bad: every known value off the diagonal NA, and there is one (or
     * the diagonal is NA too: a lone column without a correlation) */
    for (size_t i = 0; i < p; i++) {
        size_t others = known_q - (sym && !ISNAN(a[i]));
        nr += rowsel[i] = !ISNAN(a[i]) && rowna[i] == others && (others > 0 || diagna[i]);
    }
    free(rowna);
    for (size_t j = 0; j < q; j++) {
        size_t others = known_p - (sym && !ISNAN(b[j]));
        colsel[j] = !ISNAN(b[j]) && colna[j] == others && (others > 0 || (sym && diagna[j]));
        nc += colsel[j];
    }
    SEXP ans = PROTECT(allocVector(VECSXP, 3)); nprot++;
    SET_VECTOR_ELT(ans, 0, r);
    SEXP rows = allocVector(INTSXP, (R_xlen_t) nr);
    SET_VECTOR_ELT(ans, 1, rows);
    SEXP cols = allocVector(INTSXP, (R_xlen_t) nc);
    SET_VECTOR_ELT(ans, 2, cols);
    nr = nc = 0;
    for (size_t i = 0; i < p; i++)
        if (rowsel[i]) INTEGER(rows)[nr++] = (int) i + 1;
    for (size_t j = 0; j < q; j++)
        if (colsel[j]) INTEGER(cols)[nc++] = (int) j + 1;
    UNPROTECT(nprot);
    return ans;
}

/* The spread that turns column c's correlations into covariances, over
 * its n values: the standard deviation (of its mid-ranks for Spearman) by
 * R's two-pass colMeans() arithmetic, on the column scaled by a power of
 * two so that squares of tiny or huge values neither underflow nor
 * overflow; for Kendall sqrt(n(n - 1) - sum t(t - 1)) over its tie groups
 * (the ordered pairs of rows it does not tie).  NA for a column with NA,
 * NaN for one with an infinite value.  w: n doubles, idx: 2n size_t. */
static double col_spread(const double *c, size_t n, int cor, double *w, size_t *idx)
{
    for (size_t k = 0; k < n; k++)
        if (ISNAN(c[k])) return NA_REAL;
    for (size_t k = 0; k < n; k++)
        if (!R_FINITE(c[k])) return R_NaN;
    if (cor == COR_KENDALL) {
        cpu_order(c, idx, n, idx + n);
        double tied = 0;
        for (size_t a = 0; a < n;) {
            size_t b = a + 1;
            while (b < n && c[idx[b]] == c[idx[a]]) b++;
            double t = (double) (b - a);
            tied += t * (t - 1);
            a = b;
        }
        return sqrt((double) n * (double) (n - 1) - tied);
    }
    const double *v = c;
    if (cor == COR_SPEARMAN) {                 /* the mid-ranks */
        cpu_rank(c, n, w, idx);
        v = w;
    }
    double big = 0;
    for (size_t k = 0; k < n; k++) big = fmax(big, fabs(v[k]));
    int e = 0;
    if (big > 0) { (void) frexp(big, &e); e -= 1; }
    double sc = ldexp(1.0, -e);
    /* colMeans(): a long-double sum; then the mean of the residuals added */
    long double s = 0;
    for (size_t k = 0; k < n; k++) s += v[k] * sc;
    double mu = (double) (s / n);
    s = 0;
    for (size_t k = 0; k < n; k++) s += v[k] * sc - mu;
    mu += (double) (s / n);
    s = 0;
    for (size_t k = 0; k < n; k++) {
        double d = v[k] * sc - mu;
        s += d * d;
    }
    return sqrt((double) s / (double) (n - 1)) * ldexp(1.0, e);
}

/* col_spread() of every column of the n x p matrix x under the measure
 * named 'method' ("pearson", "spearman", "kendall"), on the threads. */
SEXP gpucor_col_spread(SEXP x, SEXP method, SEXP threads)
{
    if (TYPEOF(x) != REALSXP || !isMatrix(x)) error("internal error: a double matrix");
    size_t n = (size_t) nrows(x), p = (size_t) ncols(x);
    int m = gpucor_measure_arg(method, MEASURE_COLUMNS)->cor, nt = asInteger(threads);
    if (nt == NA_INTEGER || nt < 1) nt = 1;
    if ((size_t) nt > p) nt = p ? (int) p : 1;
    SEXP ans = PROTECT(allocVector(REALSXP, (R_xlen_t) p));
    double *w = (double *) R_alloc((size_t) nt * (n ? n : 1), sizeof(double));
    size_t *idx = (size_t *) R_alloc((size_t) nt * 2 * (n ? n : 1), sizeof(size_t));
    const double *px = REAL(x);
    double *out = REAL(ans);
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 64) num_threads(nt)
#endif
    for (size_t j = 0; j < p; j++) {
        size_t t = (size_t) thread_num();
        out[j] = col_spread(px + j * n, n, m, w + t * n, idx + t * 2 * n);
    }
    UNPROTECT(1);
    return ans;
}

/* stats' variance of a column of n values (x_k, k < n, stride 1): cov()'s
 * cov_complete1 outside pairwise mode (MEAN's two-pass mean kept in a
 * double, the residuals and their products in long double), or its
 * pairwise body over the non-NA values (cpu_cov_pair). */
static double stats_var(const double *x, size_t n, int pairwise)
{
    if (pairwise) return cpu_cov_pair(x, x, n);
    if (n < 2) return NA_REAL;
    long double m = cpu_r_mean(x, n), sum = 0;
    for (size_t k = 0; k < n; k++) sum += (x[k] - m) * (x[k] - m);
    return (double) (sum / (long double) (n - 1));
}

/* The diagonal of gpu_cov(x)'s Pearson covariances (r, p x p, the rows of x
 * those used) set to stats' variances, where r has a value: r s_i s_i, or
 * r_ii s_i s_i in pairwise mode, may differ from them in the last bit, and
 * by how the columns are blocked (BPPARAM).  r is changed in place when it
 * is not shared. */
SEXP gpucor_cov_diag(SEXP r, SEXP x, SEXP pairwise, SEXP threads)
{
    if (TYPEOF(r) != REALSXP || TYPEOF(x) != REALSXP || !isMatrix(x))
        error("internal error: gpucor_cov_diag takes doubles");
    size_t n = (size_t) nrows(x), p = (size_t) ncols(x);
    if ((size_t) XLENGTH(r) != p * p) error("internal error: gpucor_cov_diag's sizes");
    int pw = asLogical(pairwise) == TRUE, nt = asInteger(threads), nprot = 0;
    if (nt == NA_INTEGER || nt < 1) nt = 1;
    if (MAYBE_SHARED(r)) { r = PROTECT(duplicate(r)); nprot++; }
    double *v = REAL(r);
    const double *px = REAL(x);
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 64) num_threads(nt)
#endif
    for (size_t i = 0; i < p; i++) {
        if (ISNAN(v[i + i * p])) continue;
        double d = stats_var(px + i * n, n, pw);
        if (!ISNAN(d)) v[i + i * p] = d;
    }
    UNPROTECT(nprot);
    return r;
}

/* The rows and columns of gpu_cov()'s covariances (outside pairwise mode)
 * that have no correlation: list(rows, cols), 1-based, among those with a
 * known spread.  Outside pairwise mode a value is NA exactly when its row
 * or its column has no correlation (stats' rules are per column), so one
 * column with a value somewhere tells every row apart, and one row every
 * column: O(p + q) reads, not a pass over the result.  Columns before the
 * first good one are read whole (each is bad, or the good one). */
SEXP gpucor_cov_bad(SEXP r, SEXP sx, SEXP sy, SEXP symmetric)
{
    if (TYPEOF(r) != REALSXP || TYPEOF(sx) != REALSXP || TYPEOF(sy) != REALSXP)
        error("internal error: gpucor_cov_bad takes doubles");
    size_t p = (size_t) XLENGTH(sx), q = (size_t) XLENGTH(sy);
    if ((size_t) XLENGTH(r) != p * q) error("internal error: gpucor_cov_bad's sizes");
    int sym = asLogical(symmetric) == TRUE;
    const double *v = REAL(r), *a = REAL(sx), *b = REAL(sy);
    char *rowbad = R_alloc(p ? p : 1, 1), *colbad = R_alloc(q ? q : 1, 1);
    size_t gi = p, gj = q;                 /* a good row and column: a value at (gi, gj) */
    for (size_t j = 0; j < q && gj == q; j++) {
        colbad[j] = 0;
        if (ISNAN(b[j])) continue;
        for (size_t i = 0; i < p; i++)
            if (!ISNAN(a[i]) && !(sym && i == j) && !ISNAN(v[i + j * p])) {
                gi = i;
                gj = j;
                break;
            }
        colbad[j] = gj == q;
    }
    /* without a good column every known value off the diagonal is NA: a
     * row is bad when it has such values, or (a lone known column) when
     * its diagonal is NA too -- cor() gives 1 there otherwise */
    size_t known_p = 0;
    for (size_t i = 0; i < p; i++) known_p += !ISNAN(a[i]);
    for (size_t i = 0; i < p; i++)
        rowbad[i] = !ISNAN(a[i]) &&
            (gj < q ? ISNAN(v[i + gj * p]) && !(sym && i == gj)
                    : !sym || known_p > 1 || ISNAN(v[i + i * p]));
    /* the columns: a symmetric result's are its rows; else those scanned
     * whole before the good one are bad, the others NA in the good row */
    for (size_t j = 0; j < q; j++)
        colbad[j] = sym ? rowbad[j]
                  : !ISNAN(b[j]) && (j < gj ? colbad[j] : gj == q || ISNAN(v[gi + j * p]));
    size_t nr = 0, nc = 0;
    for (size_t i = 0; i < p; i++) nr += rowbad[i];
    for (size_t j = 0; j < q; j++) nc += colbad[j];
    SEXP ans = PROTECT(allocVector(VECSXP, 2));
    SEXP rows = allocVector(INTSXP, (R_xlen_t) nr);
    SET_VECTOR_ELT(ans, 0, rows);
    SEXP cols = allocVector(INTSXP, (R_xlen_t) nc);
    SET_VECTOR_ELT(ans, 1, cols);
    nr = nc = 0;
    for (size_t i = 0; i < p; i++) if (rowbad[i]) INTEGER(rows)[nr++] = (int) i + 1;
    for (size_t j = 0; j < q; j++) if (colbad[j]) INTEGER(cols)[nc++] = (int) j + 1;
    UNPROTECT(1);
    return ans;
}
