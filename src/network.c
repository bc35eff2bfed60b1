/*
 * network.c -- .Call entry points of gpu_cor_edges() and gpu_knn().  The
 * R side (R/edges.R) has prepared the input as for gpu_cor() / gpu_dist()
 * and checked the criteria; here the selecting sink is run through the
 * engine (algo/edges.c for edges, one heap pass for neighbours) and the
 * kept pairs come back as plain vectors.
 */
#include <R.h>
#include <Rinternals.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "gpucor.h"
#include "status.h"
#include "network.h"
#include "algo/edges.h"

/* ---- one engine pass --------------------------------------------------- */
typedef struct {
    gc_cor_input in;
    gc_host *host;
    int sd0, used;
} cor_pass_ctx;

static int cor_pass(void *ctx, const gc_sink *sink, char *msg, size_t msgcap)
{
    cor_pass_ctx *c = ctx;
    int sd0 = 0;
    /* each pass its own progress bar */
    gpucor_progress_init(c->host->progress_ctx, c->host->opts->progress);
    int status = gpucor_cor_engine(&c->in, sink, c->host, &sd0, &c->used, msg, msgcap);
    c->sd0 |= sd0;
    return status;
}

/* ---- p-values ----------------------------------------------------------- */
typedef struct {
    int method;
    double n;                  /* the common number of observations */
    const uint64_t *mx, *my;   /* pairwise with NA: observed rows, per column */
    size_t words;
    const gc_ties *tx, *ty;    /* Kendall outside pairwise-with-NA */
    const double *x, *y;       /* Kendall pairwise with NA: the data */
    size_t nrow;
    double *scratch;           /* per thread slot: 2 * nrow doubles */
} pv_ctx;

static double pair_n(const pv_ctx *c, size_t i, size_t j)
{
    if (!c->mx) return c->n;
    const uint64_t *a = c->mx + i * c->words, *b = c->my + j * c->words;
    size_t k = 0;
    for (size_t w = 0; w < c->words; w++) k += (size_t) __builtin_popcountll(a[w] & b[w]);
    return (double) k;
}

static double pv_abs(void *ctx, double absr)
{
    const pv_ctx *c = ctx;
    return gc_p_value(c->method, absr, c->n, NULL, NULL);
}

static double pv_pair(void *ctx, size_t i, size_t j, double r)
{
    const pv_ctx *c = ctx;
    double n = pair_n(c, i, j);
    if (c->method != COR_KENDALL) return gc_p_value(c->method, r, n, NULL, NULL);
    if (!c->mx) return gc_p_kendall(r, n, &c->tx[i], &c->ty[j]);
    /* the pair's own complete rows */
    double *xv = c->scratch + (size_t) gc_select_slot() * 2 * c->nrow, *yv = xv + c->nrow;
    const double *a = c->x + i * c->nrow, *b = c->y + j * c->nrow;
    size_t m = 0;
    for (size_t k = 0; k < c->nrow; k++)
        if (!isnan(a[k]) && !isnan(b[k])) { xv[m] = a[k]; yv[m] = b[k]; m++; }
    gc_ties tx, ty;
    gc_kendall_ties(xv, m, &tx);
    gc_kendall_ties(yv, m, &ty);
    return gc_p_kendall(r, (double) m, &tx, &ty);
}

/* observed-row bit masks of the columns of a (nrow x ncol) */
static uint64_t *na_masks(const double *a, size_t nrow, size_t ncol, size_t words)
{
    uint64_t *m = (uint64_t *) R_alloc(ncol * words ? ncol * words : 1, sizeof(uint64_t));
    memset(m, 0, ncol * words * sizeof(uint64_t));
    for (size_t c = 0; c < ncol; c++)
        for (size_t k = 0; k < nrow; k++)
            if (!isnan(a[k + c * nrow])) m[c * words + k / 64] |= (uint64_t) 1 << (k % 64);
    return m;
}

/* Kendall's tie statistics of the used rows of each column */
static gc_ties *column_ties(const double *a, size_t nrow, size_t ncol, const int *rows,
                            size_t nobs)
{
    gc_ties *t = (gc_ties *) R_alloc(ncol ? ncol : 1, sizeof(gc_ties));
    double *v = (double *) R_alloc(nobs ? nobs : 1, sizeof(double));
    for (size_t c = 0; c < ncol; c++) {
        for (size_t k = 0; k < nobs; k++) v[k] = a[(rows ? (size_t) rows[k] : k) + c * nrow];
        gc_kendall_ties(v, nobs, &t[c]);
    }
    return t;
}

SEXP gpucor_edges(SEXP x, SEXP y, SEXP method, SEXP use, SEXP rows, SEXP opts,
                  SEXP crit)
{
    if (TYPEOF(x) != REALSXP || !isMatrix(x)) error("'x' must be a double matrix");
    if (!isNull(y) && (TYPEOF(y) != REALSXP || !isMatrix(y)))
        error("'y' must be a double matrix");
    if (TYPEOF(crit) != REALSXP || XLENGTH(crit) != 6) error("invalid criteria");
    size_t n = (size_t) nrows(x), p = (size_t) ncols(x);
    size_t q = isNull(y) ? p : (size_t) ncols(y);
    if (!isNull(y) && (size_t) nrows(y) != n) error("incompatible dimensions");
    /* method 4: bicor's prepared columns, uncentred (p-values: Pearson's t) */
    int m = asInteger(method) - 1, u = asInteger(use) - 1, cosine = m == COR_KENDALL + 1;
    if (cosine) m = COR_PEARSON;
    if (m < COR_PEARSON || m > COR_KENDALL || u < USE_EVERYTHING || u > USE_PAIRWISE)
        error("invalid 'method' or 'use'");
    if (!isNull(rows) && TYPEOF(rows) != INTSXP) error("'rows' must be an integer vector");
    size_t nobs = isNull(rows) ? n : (size_t) XLENGTH(rows);
    if (!isNull(rows))
        for (size_t k = 0; k < nobs; k++)
            if (INTEGER(rows)[k] < 0 || (size_t) INTEGER(rows)[k] >= n)
                error("'rows' out of range");
    if (p > UINT32_MAX || q > UINT32_MAX) error("too many variables");
    const double *cr = REAL(crit);
    gc_opts o;
    gpucor_opts(opts, &o);
    gpucor_progress pr;
    gc_host host;
    gpucor_host_init(&host, &o, &pr);

    cor_pass_ctx rc;
    memset(&rc, 0, sizeof rc);
    rc.in = (gc_cor_input) {REAL(x), isNull(y) ? NULL : REAL(y), n, p, q,
                            isNull(rows) ? NULL : INTEGER(rows), nobs, m, u, cosine};
    rc.host = &host;

    int pairwise_na = 0;
    if (u == USE_PAIRWISE) {
        const double *px = REAL(x);
        for (size_t k = 0; k < n * p && !pairwise_na; k++) pairwise_na = isnan(px[k]);
    }
    if (u == USE_PAIRWISE && !isNull(y)) {
        const double *py = REAL(y);
        for (size_t k = 0; k < n * q && !pairwise_na; k++) pairwise_na = isnan(py[k]);
    }
    pv_ctx pc;
    memset(&pc, 0, sizeof pc);
    pc.method = m;
    pc.n = (double) nobs;
    pc.nrow = n;
    if (pairwise_na) {
        pc.words = (n + 63) / 64;
        pc.mx = na_masks(REAL(x), n, p, pc.words);
        pc.my = isNull(y) ? pc.mx : na_masks(REAL(y), n, q, pc.words);
        if (m == COR_KENDALL) {
            pc.x = REAL(x);
            pc.y = isNull(y) ? REAL(x) : REAL(y);
            int ns = o.nthreads > 0 ? o.nthreads : 1;
            pc.scratch = (double *) R_alloc((size_t) ns * 2 * (n ? n : 1), sizeof(double));
        }
    } else if (m == COR_KENDALL) {
        const int *rw = isNull(rows) ? NULL : INTEGER(rows);
        pc.tx = column_ties(REAL(x), n, p, rw, nobs);
        pc.ty = isNull(y) ? pc.tx : column_ties(REAL(y), n, q, rw, nobs);
    }

    gc_edges_job job;
    memset(&job, 0, sizeof job);
    job.run = cor_pass;
    job.run_ctx = &rc;
    job.symmetric = isNull(y);
    job.p = p;
    job.q = q;
    job.strength = cr[4] != 0 ? STRENGTH_ABS : STRENGTH_RAW;
    job.nslots = o.nthreads > 0 ? o.nthreads : 1;
    job.has_thr = !ISNAN(cr[0]);
    job.thr = job.has_thr ? cr[0] : 0;
    job.top_k = ISNAN(cr[1]) ? 0 : (size_t) cr[1];
    job.density = ISNAN(cr[2]) ? 0 : cr[2];
    job.fdr = ISNAN(cr[3]) ? 0 : cr[3];
    job.want_p = cr[5] != 0;
    job.common_n = !pairwise_na && m != COR_KENDALL;
    job.pabs = pv_abs;
    job.pvalue = pv_pair;
    job.pctx = &pc;

    gc_edges_out eo;
    char msg[512] = "";
    int status = GPUCOR_OK;
    memset(&eo, 0, sizeof eo);
    /* with fewer than two observations every correlation is NA: nothing
     * is kept */
    if (nobs >= 2 && p > 0 && q > 0 && (p > 1 || !job.symmetric))
        status = gc_edges_run(&job, &eo, msg, sizeof msg);
    if (status != GPUCOR_OK) {
        gc_edges_free(&eo);
        gpucor_raise_msg(status, "gpu_cor_edges", msg);
    }

    /* list(row, col, cor, n, p.value, fdr) */
    int nprot = 0;
    R_xlen_t ne = (R_xlen_t) eo.n;
    SEXP ans = PROTECT(allocVector(VECSXP, 6)); nprot++;
    SEXP r_row = allocVector(INTSXP, ne);
    SET_VECTOR_ELT(ans, 0, r_row);
    SEXP r_col = allocVector(INTSXP, ne);
    SET_VECTOR_ELT(ans, 1, r_col);
    SEXP r_val = allocVector(REALSXP, ne);
    SET_VECTOR_ELT(ans, 2, r_val);
    int *prow = INTEGER(r_row), *pcol = INTEGER(r_col);
    double *pval = REAL(r_val);
    int nth = o.nthreads > 0 ? o.nthreads : 1;
#ifdef _OPENMP
#pragma omp parallel for num_threads(nth) schedule(static) if (ne > 65536)
#endif
    for (R_xlen_t k = 0; k < ne; k++) {
        prow[k] = (int) eo.row[k] + 1;
        pcol[k] = (int) eo.col[k] + 1;
        pval[k] = eo.val[k];
    }
    if (u == USE_PAIRWISE) {
        SEXP r_n = allocVector(INTSXP, ne);
        SET_VECTOR_ELT(ans, 3, r_n);
        for (R_xlen_t k = 0; k < ne; k++)
            INTEGER(r_n)[k] = (int) pair_n(&pc, eo.row[k], eo.col[k]);
    }
    if (eo.p) {
        SEXP r_p = allocVector(REALSXP, ne);
        SET_VECTOR_ELT(ans, 4, r_p);
        double *pp = REAL(r_p);
#ifdef _OPENMP
#pragma omp parallel for num_threads(nth) schedule(static) if (ne > 65536)
#endif
        for (R_xlen_t k = 0; k < ne; k++) pp[k] = isnan(eo.p[k]) ? gpucor_na_real : eo.p[k];
    }
    if (eo.adj) {
        SEXP r_a = allocVector(REALSXP, ne);
        SET_VECTOR_ELT(ans, 5, r_a);
        memcpy(REAL(r_a), eo.adj, (size_t) ne * sizeof(double));
    }
    if (o.profile) {
        SEXP st = PROTECT(allocVector(REALSXP, 8)); nprot++;
        memcpy(REAL(st), eo.stage, sizeof eo.stage);
        setAttrib(ans, install("stages"), st);
    }
    gc_edges_free(&eo);
    if (rc.sd0) setAttrib(ans, install("sd0"), ScalarLogical(TRUE));
    if (rc.used) gpucor_set_threads(ans, &o, rc.used);
    else {
        gpucor_set_timing(ans, &o, host.seconds);
        if (host.note[0]) warning("gpu_cor_edges: %s", host.note);
    }
    UNPROTECT(nprot);
    return ans;
}

/* ---- k nearest neighbours ---------------------------------------------- */
SEXP gpucor_knn(SEXP x, SEXP method, SEXP power, SEXP kk, SEXP anyna, SEXP opts)
{
    if (TYPEOF(x) != REALSXP || !isMatrix(x)) error("'x' must be a double matrix");
    int m = asInteger(method) - 1;
    if (m < DIST_EUCLIDEAN || m > DIST_COSINE) error("invalid distance method");
    size_t n = (size_t) nrows(x), p = (size_t) ncols(x);
    double kd = asReal(kk);
    if (ISNAN(kd) || kd < 1 || (n > 0 && kd > (double) n - 1)) error("invalid 'k'");
    if (n > UINT32_MAX) error("too many rows");
    size_t k = (size_t) kd;
    gc_opts o;
    gpucor_opts(opts, &o);
    gpucor_progress pr;
    gc_host host;
    gpucor_host_init(&host, &o, &pr);

    gc_select s;
    memset(&s, 0, sizeof s);
    s.symmetric = 1;
    s.p = s.q = n;
    s.strength = STRENGTH_NEG;
    s.mode = SEL_HEAPS;
    s.k = k;
    int epi = m <= DIST_MINKOWSKI ? EPI_IDENTITY
            : m == DIST_ABSCORRELATION ? EPI_ONE_MINUS_ABS : EPI_ONE_MINUS;
    gc_sink sink = {SINK_SELECT, epi, 0, n, n, NULL, &s};
    int status = GPUCOR_OK, flag = 0, used = 0;
    char msg[512] = "";
    if (gc_select_alloc(&s, o.nthreads > 0 ? o.nthreads : 1, 0)) {
        gc_select_free(&s);
        error("gpu_knn: out of host memory");
    }
    gc_select_reset(&s);
    if (p > 0 && n > 1)
        status = gpucor_dist_engine(REAL(x), n, p, m, asReal(power), asLogical(anyna) == TRUE,
                                    &sink, &host, &flag, &used, msg, sizeof msg);
    if (status == GPUCOR_OK && s.failed) status = GPUCOR_ERR_ALLOC;
    if (status != GPUCOR_OK) {
        gc_select_free(&s);
        gpucor_raise_msg(status, "gpu_knn", msg);
    }
    SEXP idx = PROTECT(allocMatrix(INTSXP, (int) n, (int) k));
    SEXP dst = PROTECT(allocMatrix(REALSXP, (int) n, (int) k));
    for (size_t i = 0; i < n; i++) {
        const gc_hent *e;
        size_t got = gc_select_heap_sorted(&s, i, &e);
        for (size_t a = 0; a < k; a++) {
            INTEGER(idx)[i + a * n] = a < got ? (int) e[a].partner + 1 : NA_INTEGER;
            REAL(dst)[i + a * n] = a < got ? e[a].v : NA_REAL;
        }
    }
    gc_select_free(&s);
    SEXP ans = PROTECT(allocVector(VECSXP, 2));
    SET_VECTOR_ELT(ans, 0, idx);
    SET_VECTOR_ELT(ans, 1, dst);
    if (flag) setAttrib(ans, install(m == DIST_BINARY ? "nonfinite" : "sd0"), ScalarLogical(TRUE));
    if (used) gpucor_set_threads(ans, &o, used);
    else {
        gpucor_set_timing(ans, &o, host.seconds);
        if (host.note[0]) warning("gpu_knn: %s", host.note);
    }
    UNPROTECT(3);
    return ans;
}
