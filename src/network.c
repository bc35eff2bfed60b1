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
#include "algo/dispatch.h"
#include "algo/edges.h"

/* ---- one engine pass --------------------------------------------------- */
typedef struct {
    gc_problem in;
    gc_host *host;
    int sd0, used;
} cor_pass_ctx;

static int cor_pass(void *ctx, const gc_sink *sink, char *msg, size_t msgcap)
{
    cor_pass_ctx *c = ctx;
    int sd0 = 0;
    /* each pass its own progress bar */
    gpucor_progress_init(c->host->progress_ctx, c->host->opts->progress);
    int status = gc_run_cor(&c->in, sink, c->host, &sd0, &c->used, msg, msgcap);
    c->sd0 |= sd0;
    return status;
}

/* ---- p-values ----------------------------------------------------------- */
typedef struct {
    int kind;                  /* PVALUE_* */
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
    return gc_p_value(c->kind, absr, c->n, NULL, NULL);
}

static double pv_pair(void *ctx, size_t i, size_t j, double r)
{
    const pv_ctx *c = ctx;
    double n = pair_n(c, i, j);
    if (c->kind != PVALUE_KENDALL) return gc_p_value(c->kind, r, n, NULL, NULL);
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

/* ---- what a gpu_cor_edges() call, or a BiocParallel worker's pass of
 * one, sets up from its arguments (pvalues: the per-pair p-values' context
 * too, which a worker's pass needs only when its keys are p-values) ---- */
typedef struct {
    gc_opts o;
    gpucor_progress pr;
    gc_host host;
    cor_pass_ctx rc;
    pv_ctx pc;
    gc_edges_job job;
    size_t nobs;
    int use;
} edges_call;

static void edges_setup(SEXP x, SEXP y, SEXP method, SEXP use, SEXP rows, SEXP opts,
                        SEXP crit, int pvalues, edges_call *e)
{
    if (TYPEOF(x) != REALSXP || !isMatrix(x)) error("'x' must be a double matrix");
    if (!isNull(y) && (TYPEOF(y) != REALSXP || !isMatrix(y)))
        error("'y' must be a double matrix");
    size_t n = (size_t) nrows(x), p = (size_t) ncols(x);
    size_t q = isNull(y) ? p : (size_t) ncols(y);
    if (!isNull(y) && (size_t) nrows(y) != n) error("incompatible dimensions");
    const gc_measure *m = gpucor_measure_arg(method, MEASURE_COLUMNS);
    int u = gpucor_use_arg(use);
    if (m->pvalue == PVALUE_NONE) error("invalid 'method'");
    if (!isNull(rows) && TYPEOF(rows) != INTSXP) error("'rows' must be an integer vector");
    size_t nobs = isNull(rows) ? n : (size_t) XLENGTH(rows);
    if (!isNull(rows))
        for (size_t k = 0; k < nobs; k++)
            if (INTEGER(rows)[k] < 0 || (size_t) INTEGER(rows)[k] >= n)
                error("'rows' out of range");
    if (p > UINT32_MAX || q > UINT32_MAX) error("too many variables");
    memset(e, 0, sizeof *e);
    e->nobs = nobs;
    e->use = u;
    gpucor_opts(opts, &e->o);
    gpucor_host_init(&e->host, &e->o, &e->pr);

    e->rc.in = (gc_problem) {.x = REAL(x), .y = isNull(y) ? NULL : REAL(y), .n = n, .p = p,
                             .q = q, .rows = isNull(rows) ? NULL : INTEGER(rows),
                             .nobs = nobs, .measure = m, .use = u};
    e->rc.host = &e->host;

    int pairwise_na = 0;
    if (u == USE_PAIRWISE) {
        const double *px = REAL(x);
        for (size_t k = 0; k < n * p && !pairwise_na; k++) pairwise_na = isnan(px[k]);
    }
    if (u == USE_PAIRWISE && !isNull(y)) {
        const double *py = REAL(y);
        for (size_t k = 0; k < n * q && !pairwise_na; k++) pairwise_na = isnan(py[k]);
    }
    pv_ctx *pc = &e->pc;
    pc->kind = m->pvalue;
    pc->n = (double) nobs;
    pc->nrow = n;
    if (pvalues && pairwise_na) {
        pc->words = (n + 63) / 64;
        pc->mx = na_masks(REAL(x), n, p, pc->words);
        pc->my = isNull(y) ? pc->mx : na_masks(REAL(y), n, q, pc->words);
        if (m->pvalue == PVALUE_KENDALL) {
            pc->x = REAL(x);
            pc->y = isNull(y) ? REAL(x) : REAL(y);
            int ns = e->o.nthreads > 0 ? e->o.nthreads : 1;
            pc->scratch = (double *) R_alloc((size_t) ns * 2 * (n ? n : 1), sizeof(double));
        }
    } else if (pvalues && m->pvalue == PVALUE_KENDALL) {
        const int *rw = isNull(rows) ? NULL : INTEGER(rows);
        pc->tx = column_ties(REAL(x), n, p, rw, nobs);
        pc->ty = isNull(y) ? pc->tx : column_ties(REAL(y), n, q, rw, nobs);
    }

    gc_edges_job *job = &e->job;
    job->run = cor_pass;
    job->run_ctx = &e->rc;
    job->symmetric = isNull(y);
    job->p = p;
    job->q = q;
    job->nslots = e->o.nthreads > 0 ? e->o.nthreads : 1;
    gpucor_criteria(crit, job);
    job->common_n = !pairwise_na && m->pvalue != PVALUE_KENDALL;
    job->pabs = pv_abs;
    job->pvalue = pv_pair;
    job->pctx = pc;
}

/* whether a call has pairs to look at: with fewer than two observations
 * every correlation is NA, and nothing is kept */
static int edges_any(const edges_call *e)
{
    return e->nobs >= 2 && e->job.p > 0 && e->job.q > 0 && (e->job.p > 1 || !e->job.symmetric);
}

/* ---- passes on BiocParallel's workers (R/edges.R) -----------------------
 * The driver (algo/edges.c) runs in the main process; each of its passes
 * is made by the workers, each over its share of the result's columns
 * (gpucor_edges_pass), and what they found is added to the main
 * process's selecting sink: histograms and counts summed, pairs
 * appended, heap entries offered to the heaps, so that every decision is
 * the one-process driver's on the same pairs.  The pass is described to
 * R as spec (below); R's function returns the workers' parts. */
enum { SPEC_MODE, SPEC_PREFIX_HI, SPEC_PREFIX_LO, SPEC_BITS, SPEC_LOWER_HI, SPEC_LOWER_LO,
       SPEC_K, SPEC_HAS_THR, SPEC_THR, SPEC_STRENGTH, SPEC_KEY, SPEC_LEN };

static double hi32(uint64_t v) { return (double) (v >> 32); }
static double lo32(uint64_t v) { return (double) (v & 0xffffffffu); }
static uint64_t join32(double hi, double lo) { return ((uint64_t) hi << 32) | (uint64_t) lo; }

typedef struct {
    SEXP fn;             /* R: function(spec) -> list of the workers' parts */
    int sd0;
    int interrupted;
    char err[400];
} bp_ctx;

typedef struct { SEXP call; } bp_eval;

static SEXP bp_body(void *d)
{
    return eval(((bp_eval *) d)->call, R_GlobalEnv);
}

static SEXP bp_handler(SEXP cond, void *d)
{
    bp_ctx *c = d;
    if (inherits(cond, "interrupt")) {
        c->interrupted = 1;
        snprintf(c->err, sizeof c->err, "interrupted");
    } else {
        SEXP m = isNewList(cond) && XLENGTH(cond) > 0 ? VECTOR_ELT(cond, 0) : R_NilValue;
        snprintf(c->err, sizeof c->err, "a BiocParallel worker failed: %s",
                 TYPEOF(m) == STRSXP && XLENGTH(m) > 0 ? CHAR(STRING_ELT(m, 0)) : "(no message)");
    }
    return R_NilValue;
}

/* part[[name]], or R_NilValue */
static SEXP part_get(SEXP part, const char *name)
{
    SEXP nm = getAttrib(part, R_NamesSymbol);
    for (R_xlen_t k = 0; k < XLENGTH(part); k++)
        if (!strcmp(CHAR(STRING_ELT(nm, k)), name)) return VECTOR_ELT(part, k);
    return R_NilValue;
}

/* adds one worker's part (gpucor_edges_pass's list) into s; nonzero: out
 * of memory, or a malformed part */
static int bp_merge(gc_select *s, SEXP part, int *sd0)
{
    if (!isNewList(part)) return 2;
    SEXP hist = part_get(part, "hist"), counts = part_get(part, "counts");
    SEXP pi = part_get(part, "i"), pj = part_get(part, "j"), pv = part_get(part, "v");
    SEXP hlen = part_get(part, "hlen"), hp = part_get(part, "partner"),
         hs = part_get(part, "s"), hv = part_get(part, "hv");
    if (asLogical(part_get(part, "sd0")) == TRUE) *sd0 = 1;
    if (TYPEOF(counts) != REALSXP || XLENGTH(counts) != 2) return 2;
    s->above[0] += (uint64_t) REAL(counts)[0];
    s->valid[0] += (uint64_t) REAL(counts)[1];
    if ((s->mode & SEL_HIST) && s->hist) {
        if (TYPEOF(hist) != REALSXP || (size_t) XLENGTH(hist) != SEL_NBINS) return 2;
        for (size_t b = 0; b < SEL_NBINS; b++) s->hist[b] += (uint64_t) REAL(hist)[b];
    }
    if (s->mode & SEL_COLLECT) {
        if (TYPEOF(pi) != INTSXP || TYPEOF(pj) != INTSXP || TYPEOF(pv) != REALSXP ||
            XLENGTH(pj) != XLENGTH(pi) || XLENGTH(pv) != XLENGTH(pi))
            return 2;
        if (gc_select_reserve(s, s->cand[0].len + (size_t) XLENGTH(pi))) return 1;
        for (R_xlen_t a = 0; a < XLENGTH(pi); a++)
            if (gc_select_push(s, 0, REAL(pv)[a], (size_t) INTEGER(pi)[a],
                               (size_t) INTEGER(pj)[a]))
                return 1;
    }
    if ((s->mode & SEL_HEAPS) && s->k) {
        if (TYPEOF(hlen) != INTSXP || (size_t) XLENGTH(hlen) != s->nvar ||
            TYPEOF(hp) != INTSXP || TYPEOF(hs) != REALSXP || TYPEOF(hv) != REALSXP ||
            (size_t) XLENGTH(hp) != s->nvar * s->k)
            return 2;
        for (size_t var = 0; var < s->nvar; var++)
            for (size_t a = 0; a < (size_t) INTEGER(hlen)[var] && a < s->k; a++) {
                size_t at = var * s->k + a;
                gc_select_offer(s, var, REAL(hs)[at], REAL(hv)[at], (size_t) INTEGER(hp)[at]);
            }
    }
    return 0;
}

static int bp_pass(void *ctx, const gc_sink *sink, char *msg, size_t msgcap)
{
    bp_ctx *c = ctx;
    gc_select *s = sink->sel;
    SEXP spec = PROTECT(allocVector(REALSXP, SPEC_LEN));
    double *sp = REAL(spec);
    sp[SPEC_MODE] = s->mode;
    sp[SPEC_PREFIX_HI] = hi32(s->prefix);
    sp[SPEC_PREFIX_LO] = lo32(s->prefix);
    sp[SPEC_BITS] = s->prefix_bits;
    sp[SPEC_LOWER_HI] = hi32(s->lower);
    sp[SPEC_LOWER_LO] = lo32(s->lower);
    sp[SPEC_K] = (double) s->k;
    sp[SPEC_HAS_THR] = s->has_thr;
    sp[SPEC_THR] = s->thr;
    sp[SPEC_STRENGTH] = s->strength;
    sp[SPEC_KEY] = s->key;
    bp_eval ev = {PROTECT(lang2(c->fn, spec))};
    SEXP conds = PROTECT(allocVector(STRSXP, 2));
    SET_STRING_ELT(conds, 0, mkChar("error"));
    SET_STRING_ELT(conds, 1, mkChar("interrupt"));
    c->err[0] = '\0';
    SEXP parts = PROTECT(R_tryCatch(bp_body, &ev, conds, bp_handler, c, NULL, NULL));
    int status = GPUCOR_OK;
    if (c->err[0]) {
        status = c->interrupted ? GPUCOR_ERR_INTERRUPT : GPUCOR_ERR_INVALID;
        snprintf(msg, msgcap, "%s", c->err);
    } else if (!isNewList(parts)) {
        status = GPUCOR_ERR_INVALID;
        snprintf(msg, msgcap, "internal error: the workers' passes returned no list");
    } else {
        for (R_xlen_t k = 0; k < XLENGTH(parts) && status == GPUCOR_OK; k++) {
            int r = bp_merge(s, VECTOR_ELT(parts, k), &c->sd0);
            if (r == 1) {
                status = GPUCOR_ERR_ALLOC;
                snprintf(msg, msgcap, "out of host memory for the selected pairs");
            } else if (r) {
                status = GPUCOR_ERR_INVALID;
                snprintf(msg, msgcap, "internal error: a worker's pass is malformed");
            }
        }
    }
    UNPROTECT(4);
    return status;
}

/* A new vector of type t and length len as element k of list (protected
 * through it). */
static SEXP list_put(SEXP list, R_xlen_t k, SEXPTYPE t, R_xlen_t len)
{
    SEXP v = allocVector(t, len);
    SET_VECTOR_ELT(list, k, v);
    return v;
}

/* One pass of the driver over this worker's share of the columns (its
 * ranges: the engine option 'cols'), as spec describes it: list(hist, counts =
 * c(above, valid), i, j, v (the collected pairs, 0-based), hlen, partner,
 * s, hv (the heaps, nvar x k), sd0). */
SEXP gpucor_edges_pass(SEXP x, SEXP y, SEXP method, SEXP use, SEXP rows, SEXP opts,
                       SEXP crit, SEXP spec)
{
    if (TYPEOF(spec) != REALSXP || XLENGTH(spec) != SPEC_LEN) error("invalid pass");
    edges_call e;
    edges_setup(x, y, method, use, rows, opts, crit, (int) REAL(spec)[SPEC_KEY] == KEY_PVALUE,
                &e);
    const double *sp = REAL(spec);
    gc_select s;
    memset(&s, 0, sizeof s);
    s.symmetric = e.job.symmetric;
    s.p = e.job.p;
    s.q = e.job.q;
    s.strength = (int) sp[SPEC_STRENGTH];
    s.key = (int) sp[SPEC_KEY];
    s.pvalue = e.job.pvalue;
    s.pctx = e.job.pctx;
    int mode = (int) sp[SPEC_MODE];
    s.k = (mode & SEL_HEAPS) ? (size_t) sp[SPEC_K] : 0;
    gc_sink sink = {.kind = SINK_SELECT, .p = s.p, .q = s.q, .sel = &s};
    if (gc_select_alloc(&s, e.job.nslots, (mode & SEL_HIST) != 0)) {
        gc_select_free(&s);
        error("gpu_cor_edges: out of host memory");
    }
    gc_select_reset(&s);
    s.mode = mode;
    s.prefix = join32(sp[SPEC_PREFIX_HI], sp[SPEC_PREFIX_LO]);
    s.prefix_bits = (int) sp[SPEC_BITS];
    s.lower = join32(sp[SPEC_LOWER_HI], sp[SPEC_LOWER_LO]);
    s.has_thr = sp[SPEC_HAS_THR] != 0;
    s.thr = sp[SPEC_THR];
    char msg[512] = "";
    int status = GPUCOR_OK;
    const double *rg;
    size_t nr = gpucor_ranges(opts, &rg);
    if (edges_any(&e)) {
        for (size_t a = 0; a < (nr ? nr : 1) && status == GPUCOR_OK; a++) {
            if (nr) {
                e.o.col0 = (size_t) rg[2 * a];
                e.o.col1 = (size_t) rg[2 * a + 1];
            }
            status = cor_pass(&e.rc, &sink, msg, sizeof msg);
        }
        if (status == GPUCOR_OK && s.failed) {
            status = GPUCOR_ERR_ALLOC;
            snprintf(msg, sizeof msg, "out of host memory for the selected pairs");
        }
    }
    if (status != GPUCOR_OK) {
        gc_select_free(&s);
        gpucor_raise_msg(status, "gpu_cor_edges", msg);
    }
    const char *names[] = {"hist", "counts", "i", "j", "v", "hlen", "partner", "s", "hv",
                           "sd0", ""};
    SEXP ans = PROTECT(mkNamed(VECSXP, names));
    uint64_t above, valid, *h = (uint64_t *) R_alloc(SEL_NBINS, sizeof *h);
    gc_select_sum(&s, h, &above, &valid);
    if (s.mode & SEL_HIST) {
        SEXP hv = list_put(ans, 0, REALSXP, SEL_NBINS);
        for (size_t b = 0; b < SEL_NBINS; b++) REAL(hv)[b] = (double) h[b];
    }
    SEXP counts = list_put(ans, 1, REALSXP, 2);
    REAL(counts)[0] = (double) above;
    REAL(counts)[1] = (double) valid;
    if (s.mode & SEL_COLLECT) {
        size_t total = 0;
        for (int sl = 0; sl < s.nslots; sl++) total += s.cand[sl].len;
        SEXP ri = list_put(ans, 2, INTSXP, (R_xlen_t) total);
        SEXP rj = list_put(ans, 3, INTSXP, (R_xlen_t) total);
        SEXP rv = list_put(ans, 4, REALSXP, (R_xlen_t) total);
        size_t at = 0;
        for (int sl = 0; sl < s.nslots; sl++)
            for (size_t a = 0; a < s.cand[sl].len; a++, at++) {
                INTEGER(ri)[at] = (int) s.cand[sl].v[a].i;
                INTEGER(rj)[at] = (int) s.cand[sl].v[a].j;
                REAL(rv)[at] = s.cand[sl].v[a].v;
            }
    }
    if ((s.mode & SEL_HEAPS) && s.k) {
        size_t len = s.nvar * s.k;
        SEXP hl = list_put(ans, 5, INTSXP, (R_xlen_t) s.nvar);
        SEXP hp = list_put(ans, 6, INTSXP, (R_xlen_t) len);
        SEXP hs = list_put(ans, 7, REALSXP, (R_xlen_t) len);
        SEXP hv = list_put(ans, 8, REALSXP, (R_xlen_t) len);
        for (size_t var = 0; var < s.nvar; var++) {
            INTEGER(hl)[var] = (int) s.hlen[var];
            for (size_t a = 0; a < s.k; a++) {
                size_t at = var * s.k + a;
                int have = a < s.hlen[var];
                INTEGER(hp)[at] = have ? (int) s.heap[at].partner : NA_INTEGER;
                REAL(hs)[at] = have ? s.heap[at].s : NA_REAL;
                REAL(hv)[at] = have ? s.heap[at].v : NA_REAL;
            }
        }
    }
    SET_VECTOR_ELT(ans, 9, ScalarLogical(e.rc.sd0 != 0));
    gc_select_free(&s);
    UNPROTECT(1);
    return ans;
}

SEXP gpucor_edges(SEXP x, SEXP y, SEXP method, SEXP use, SEXP rows, SEXP opts,
                  SEXP crit, SEXP pass)
{
    edges_call e;
    edges_setup(x, y, method, use, rows, opts, crit, 1, &e);
    bp_ctx bc;
    memset(&bc, 0, sizeof bc);
    if (!isNull(pass)) {
        if (!isFunction(pass)) error("invalid 'pass'");
        bc.fn = pass;
        e.job.run = bp_pass;
        e.job.run_ctx = &bc;
    }
    const gc_opts *o = &e.o;
    gc_edges_out eo;
    char msg[512] = "";
    int status = GPUCOR_OK;
    memset(&eo, 0, sizeof eo);
    if (edges_any(&e)) status = gc_edges_run(&e.job, &eo, msg, sizeof msg);
    if (status != GPUCOR_OK) {
        gc_edges_free(&eo);
        gpucor_raise_msg(status, "gpu_cor_edges", msg);
    }

    /* list(row, col, cor, n, p.value, fdr) */
    int nprot = 0;
    R_xlen_t ne = (R_xlen_t) eo.n;
    SEXP ans = PROTECT(allocVector(VECSXP, 6)); nprot++;
    SEXP r_row = list_put(ans, 0, INTSXP, ne);
    SEXP r_col = list_put(ans, 1, INTSXP, ne);
    SEXP r_val = list_put(ans, 2, REALSXP, ne);
    int *prow = INTEGER(r_row), *pcol = INTEGER(r_col);
    double *pval = REAL(r_val);
    int nth = o->nthreads > 0 ? o->nthreads : 1;
#ifdef _OPENMP
#pragma omp parallel for num_threads(nth) schedule(static) if (ne > 65536)
#endif
    for (R_xlen_t k = 0; k < ne; k++) {
        prow[k] = (int) eo.row[k] + 1;
        pcol[k] = (int) eo.col[k] + 1;
        pval[k] = eo.val[k];
    }
    if (e.use == USE_PAIRWISE) {
        SEXP r_n = list_put(ans, 3, INTSXP, ne);
        for (R_xlen_t k = 0; k < ne; k++)
            INTEGER(r_n)[k] = (int) pair_n(&e.pc, eo.row[k], eo.col[k]);
    }
    if (eo.p) {
        SEXP r_p = list_put(ans, 4, REALSXP, ne);
        double *pp = REAL(r_p);
#ifdef _OPENMP
#pragma omp parallel for num_threads(nth) schedule(static) if (ne > 65536)
#endif
        for (R_xlen_t k = 0; k < ne; k++) pp[k] = isnan(eo.p[k]) ? gpucor_na_real : eo.p[k];
    }
    if (eo.adj) {
        SEXP r_a = list_put(ans, 5, REALSXP, ne);
        memcpy(REAL(r_a), eo.adj, (size_t) ne * sizeof(double));
    }
    if (o->profile) {
        SEXP st = PROTECT(allocVector(REALSXP, 8)); nprot++;
        memcpy(REAL(st), eo.stage, sizeof eo.stage);
        setAttrib(ans, install("stages"), st);
    }
    gc_edges_free(&eo);
    if (e.rc.sd0 || bc.sd0) setAttrib(ans, install("sd0"), ScalarLogical(TRUE));
    gpucor_call_report(ans, o, &e.host, e.rc.used, "gpu_cor_edges");
    UNPROTECT(nprot);
    return ans;
}

/* ---- k nearest neighbours ---------------------------------------------- */
/* BiocParallel's parts (R/edges.R): each list(index, distance, rows), the
 * k nearest (sorted, NA-padded) of rows 'rows' among the worker's share.
 * A row that one part holds has its whole answer there (the GPU's shares
 * are whole columns) and is copied; a row that several hold (the CPU's
 * tiles) has its parts' neighbours offered to its heap, which keeps the
 * same order and ties. */

/* Checks the parts and counts in held[] the parts that hold each row
 * (at most 2); NULL, or what is wrong. */
static const char *knn_parts_check(SEXP parts, size_t n, size_t k, unsigned char *held)
{
    if (!isNewList(parts)) return "parts";
    for (R_xlen_t w = 0; w < XLENGTH(parts); w++) {
        SEXP part = VECTOR_ELT(parts, w);
        if (!isNewList(part) || XLENGTH(part) < 3) return "part";
        SEXP pi = VECTOR_ELT(part, 0), pd = VECTOR_ELT(part, 1), prow = VECTOR_ELT(part, 2);
        size_t nrow = (size_t) XLENGTH(prow);
        if (TYPEOF(pi) != INTSXP || TYPEOF(pd) != REALSXP || TYPEOF(prow) != INTSXP ||
            (size_t) XLENGTH(pi) != nrow * k || (size_t) XLENGTH(pd) != nrow * k)
            return "part";
        const int *row = INTEGER(prow), *idx = INTEGER(pi);
        for (size_t r = 0; r < nrow; r++) {
            if (row[r] < 1 || (size_t) row[r] > n) return "row";
            if (held[row[r] - 1] < 2) held[row[r] - 1]++;
        }
        for (size_t a = 0; a < nrow * k; a++)
            if (idx[a] != NA_INTEGER && (idx[a] < 1 || (size_t) idx[a] > n)) return "index";
    }
    return NULL;
}

/* A checked part's vectors: nrow rows, their neighbours nrow x k. */
typedef struct {
    const int *row, *idx;
    const double *dist;
    size_t nrow;
} knn_part;

static knn_part knn_part_at(SEXP parts, R_xlen_t w)
{
    SEXP part = VECTOR_ELT(parts, w);
    knn_part p = {INTEGER(VECTOR_ELT(part, 2)), INTEGER(VECTOR_ELT(part, 0)),
                  REAL(VECTOR_ELT(part, 1)), (size_t) XLENGTH(VECTOR_ELT(part, 2))};
    return p;
}

/* Offers the neighbours of the rows that several parts hold; the flag
 * (flag_name) of any part. */
static int knn_parts_offer(gc_select *s, SEXP parts, size_t k, const unsigned char *held,
                           const char *flag_name)
{
    int flag = 0;
    for (R_xlen_t w = 0; w < XLENGTH(parts); w++) {
        knn_part p = knn_part_at(parts, w);
        if (asLogical(getAttrib(VECTOR_ELT(parts, w), install(flag_name))) == TRUE) flag = 1;
        for (size_t r = 0; r < p.nrow; r++) {
            if (held[p.row[r] - 1] < 2) continue;
            for (size_t a = 0; a < k && p.idx[r + a * p.nrow] != NA_INTEGER; a++) {
                double d = p.dist[r + a * p.nrow];
                gc_select_offer(s, (size_t) p.row[r] - 1, sel_strength(STRENGTH_NEG, d), d,
                                (size_t) p.idx[r + a * p.nrow] - 1);
            }
        }
    }
    return flag;
}

/* Copies the rows that one part holds into the n x k result. */
static void knn_parts_copy(SEXP parts, size_t k, const unsigned char *held, SEXP idx,
                           SEXP dst)
{
    size_t n = (size_t) nrows(idx);
    for (R_xlen_t w = 0; w < XLENGTH(parts); w++) {
        knn_part p = knn_part_at(parts, w);
        for (size_t r = 0; r < p.nrow; r++) {
            size_t i = (size_t) p.row[r] - 1;
            if (held[i] != 1) continue;
            for (size_t a = 0; a < k; a++) {
                INTEGER(idx)[i + a * n] = p.idx[r + a * p.nrow];
                REAL(dst)[i + a * n] = p.dist[r + a * p.nrow];
            }
        }
    }
}

/* parts: NULL, or the results of BiocParallel's workers, each of its
 * share of the columns (R/edges.R): their neighbours are merged (above)
 * instead of running the engine, and the flags kept. */
SEXP gpucor_knn(SEXP x, SEXP method, SEXP power, SEXP kk, SEXP anyna, SEXP opts,
                SEXP parts)
{
    if (TYPEOF(x) != REALSXP || !isMatrix(x)) error("'x' must be a double matrix");
    const gc_measure *m = gpucor_measure_arg(method, MEASURE_ROWS);
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
    const double *rg;
    size_t nr = gpucor_ranges(opts, &rg);

    gc_select s;
    memset(&s, 0, sizeof s);
    s.symmetric = 1;
    s.p = s.q = n;
    s.strength = STRENGTH_NEG;
    s.mode = SEL_HEAPS;
    s.k = k;
    gc_sink sink = {.kind = SINK_SELECT, .epilogue = m->epilogue, .p = n, .q = n, .sel = &s};
    int status = GPUCOR_OK, flag = 0, used = 0;
    char msg[512] = "";
    if (gc_select_alloc(&s, o.nthreads > 0 ? o.nthreads : 1, 0)) {
        gc_select_free(&s);
        error("gpu_knn: out of host memory");
    }
    gc_select_reset(&s);
    /* how many parts hold each row: 0, 1 or 2 (two or more) */
    unsigned char *held = NULL;
    if (!isNull(parts)) {
        held = (unsigned char *) R_alloc(n ? n : 1, 1);   /* freed by R */
        memset(held, 0, n ? n : 1);
        if (knn_parts_check(parts, n, k, held)) {
            gc_select_free(&s);
            error("internal error: a worker's neighbours are malformed");
        }
        flag = knn_parts_offer(&s, parts, k, held, gc_measure_flag_attr(m));
    } else if (p > 0 && n > 1) {
        for (size_t a = 0; a < (nr ? nr : 1) && status == GPUCOR_OK; a++) {
            int f = 0;
            if (nr) {
                o.col0 = (size_t) rg[2 * a];
                o.col1 = (size_t) rg[2 * a + 1];
            }
            gc_problem pb = gc_rows_problem(REAL(x), n, p, m, asReal(power),
                                            asLogical(anyna) == TRUE);
            status = gc_run_dist(&pb, &sink, &host, &f, &used, msg, sizeof msg);
            flag |= f;
        }
    }
    if (status == GPUCOR_OK && s.failed) status = GPUCOR_ERR_ALLOC;
    if (status != GPUCOR_OK) {
        gc_select_free(&s);
        gpucor_raise_msg(status, "gpu_knn", msg);
    }
    /* a worker's share: only the rows it found neighbours for (on the GPU,
     * those of its own columns), as list(index, distance, rows) */
    size_t nout = n;
    SEXP rows = R_NilValue;
    if (nr) {
        nout = 0;
        for (size_t i = 0; i < n; i++) nout += s.hlen[i] > 0;
        rows = allocVector(INTSXP, (R_xlen_t) nout);
    }
    PROTECT(rows);
    SEXP idx = PROTECT(allocMatrix(INTSXP, (int) nout, (int) k));
    SEXP dst = PROTECT(allocMatrix(REALSXP, (int) nout, (int) k));
    for (size_t i = 0, r = 0; i < n; i++) {
        if (nr && s.hlen[i] == 0) continue;
        if (held && held[i] == 1) {   /* below, from its one part */
            r++;
            continue;
        }
        const gc_hent *e;
        size_t got = gc_select_heap_sorted(&s, i, &e);
        if (nr) INTEGER(rows)[r] = (int) i + 1;
        for (size_t a = 0; a < k; a++) {
            INTEGER(idx)[r + a * nout] = a < got ? (int) e[a].partner + 1 : NA_INTEGER;
            REAL(dst)[r + a * nout] = a < got ? e[a].v : NA_REAL;
        }
        r++;
    }
    gc_select_free(&s);
    if (held) knn_parts_copy(parts, k, held, idx, dst);
    SEXP ans = PROTECT(allocVector(VECSXP, nr ? 3 : 2));
    SET_VECTOR_ELT(ans, 0, idx);
    SET_VECTOR_ELT(ans, 1, dst);
    if (nr) SET_VECTOR_ELT(ans, 2, rows);
    if (flag) setAttrib(ans, install(gc_measure_flag_attr(m)), ScalarLogical(TRUE));
    gpucor_call_report(ans, &o, &host, used, "gpu_knn");
    UNPROTECT(4);
    return ans;
}
