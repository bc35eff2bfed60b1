/*
 * network.c -- .Call entry points of gpu_cor_edges().  The R side
 * (R/edges.R) has prepared the input as for gpu_cor() and checked the
 * criteria; here the selecting sink is run through the engine by the
 * driver (algo/edges.c) and the kept pairs come back as plain vectors.
 * gpu_knn()'s entry is knn.c.
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
    int sd0, used, npass;
} cor_pass_ctx;

static int cor_pass(void *ctx, const gc_sink *sink, char *msg, size_t msgcap)
{
    cor_pass_ctx *c = ctx;
    int sd0 = 0;
    /* one bar across the passes: the histogram passes of a cut (FDR,
     * density), each followed by at least one more, then the pass that
     * collects the pairs.  How many histogram passes a cut takes is known
     * only as they go, so each pass takes an equal share of what is left
     * (the first of a cut half the bar, a refining one a quarter, ...). */
    int hist = sink->sel && (sink->sel->mode & SEL_HIST);
    c->npass++;
    gc_progress_pass(c->host, hist ? "histogram" : "pairs", c->npass, c->npass + hist, 0);
    int status = gc_run_warn(&c->in, sink, c->host, &sd0, &c->used, msg, msgcap);
    c->sd0 |= sd0;
    return status;
}

/* ---- what a gpu_cor_edges() call, or a BiocParallel worker's pass of
 * one, sets up from its arguments (pvalues: the per-pair p-values' context
 * too, which a worker's pass needs only when its keys are p-values).  Its
 * p-value context is malloc'd: edges_call_free. ---- */
typedef struct {
    gc_opts o;
    gpucor_progress pr;
    gc_host host;
    cor_pass_ctx rc;
    gc_pv_ctx pc;
    gc_edges_job job;
    size_t nobs;
    int use;
} edges_call;

static void edges_call_free(edges_call *e)
{
    gc_pv_free(&e->pc);
}

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
    gpucor_host_init(&e->host, &e->o, &e->pr, "gpu_cor_edges");

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
    gc_edges_job *job = &e->job;
    job->run = cor_pass;
    job->run_ctx = &e->rc;
    job->symmetric = isNull(y);
    job->p = p;
    job->q = q;
    job->nslots = e->o.nthreads > 0 ? e->o.nthreads : 1;
    job->epilogue = m->epilogue;   /* minet's Gaussian MI (the "mim.*" rows) */
    gpucor_criteria(crit, job);
    /* knnmi's neighbours (criteria field k, R/edges.R) */
    if (m->family == FAMILY_KNNMI) {
        SEXP kk = gpucor_field_or_null(crit, "k");
        e->rc.in.k = isNull(kk) ? 3 : (size_t) asInteger(kk);
    }
    /* a measure without a p-value (the shrinkage estimates) selects by
     * value only */
    if (m->pvalue == PVALUE_NONE && (job->fdr > 0 || job->want_p))
        error("invalid 'method'");
    job->common_n = !pairwise_na && m->pvalue != PVALUE_KENDALL;
    job->pabs = gc_pv_abs;
    job->pvalue = gc_pv_pair;
    job->pctx = &e->pc;
    /* last: nothing above raises after it */
    e->pc.kind = m->pvalue;
    e->pc.n = (double) nobs;
    if (pvalues && m->pvalue != PVALUE_NONE && gc_pv_init(&e->pc, m->pvalue, REAL(x), isNull(y) ? NULL : REAL(y), n, p, q,
                              e->rc.in.rows, nobs, pairwise_na, job->nslots))
        error("gpu_cor_edges: out of host memory");
}

/* whether a call has pairs to look at: with fewer than two observations
 * every correlation is NA, and nothing is kept */
static int edges_any(const edges_call *e)
{
    return e->nobs >= 2 && e->job.p > 0 && e->job.q > 0 && (e->job.p > 1 || !e->job.symmetric);
}

/* A new vector of type t and length len as element k of list (protected
 * through it). */
static SEXP list_put(SEXP list, R_xlen_t k, SEXPTYPE t, R_xlen_t len)
{
    SEXP v = allocVector(t, len);
    SET_VECTOR_ELT(list, k, v);
    return v;
}

/* gpu_cor_edges()'s answer from the driver's: list(row, col, cor, n,
 * p.value, fdr), 1-based; frees eo */
static SEXP edges_answer(const edges_call *e, gc_edges_out *eo, int sd0, int used)
{
    const gc_opts *o = &e->o;
    int nprot = 0;
    R_xlen_t ne = (R_xlen_t) eo->n;
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
        prow[k] = (int) eo->row[k] + 1;
        pcol[k] = (int) eo->col[k] + 1;
        pval[k] = eo->val[k];
    }
    if (e->use == USE_PAIRWISE) {
        SEXP r_n = list_put(ans, 3, INTSXP, ne);
        for (R_xlen_t k = 0; k < ne; k++)
            INTEGER(r_n)[k] = (int) gc_pv_pair_n(&e->pc, eo->row[k], eo->col[k]);
    }
    if (eo->p) {
        SEXP r_p = list_put(ans, 4, REALSXP, ne);
        double *pp = REAL(r_p);
#ifdef _OPENMP
#pragma omp parallel for num_threads(nth) schedule(static) if (ne > 65536)
#endif
        for (R_xlen_t k = 0; k < ne; k++) pp[k] = isnan(eo->p[k]) ? gpucor_na_real : eo->p[k];
    }
    if (eo->adj) {
        SEXP r_a = list_put(ans, 5, REALSXP, ne);
        memcpy(REAL(r_a), eo->adj, (size_t) ne * sizeof(double));
    }
    if (o->profile) {
        SEXP st = PROTECT(allocVector(REALSXP, 8)); nprot++;
        memcpy(REAL(st), eo->stage, sizeof eo->stage);
        setAttrib(ans, install("stages"), st);
    }
    gc_edges_free(eo);
    if (sd0) setAttrib(ans, install("sd0"), ScalarLogical(TRUE));
    gpucor_call_report(ans, o, &e->host, used, "gpu_cor_edges");
    UNPROTECT(nprot);
    return ans;
}

SEXP gpucor_edges(SEXP x, SEXP y, SEXP method, SEXP use, SEXP rows, SEXP opts, SEXP crit)
{
    edges_call e;
    edges_setup(x, y, method, use, rows, opts, crit, 1, &e);
    gc_edges_out eo;
    char msg[512] = "";
    int status = GPUCOR_OK;
    memset(&eo, 0, sizeof eo);
    if (edges_any(&e)) status = gc_edges_run(&e.job, &eo, msg, sizeof msg);
    if (status != GPUCOR_OK) {
        gc_edges_free(&eo);
        edges_call_free(&e);
        gpucor_raise_msg(status, "gpu_cor_edges", msg);
    }
    /* eo is freed by edges_answer; e's p-values by R when it raises */
    SEXP ans = PROTECT(edges_answer(&e, &eo, e.rc.sd0, e.rc.used));
    edges_call_free(&e);
    UNPROTECT(1);
    return ans;
}

/* ---- passes on BiocParallel's workers (R/edges.R) -----------------------
 * The driver (algo/edges.c) runs in the main process as steps that R
 * loops over: gpucor_edges_begin; while gpucor_edges_next gives a pass's
 * description (a named list), the workers make it, each over its share of
 * the result's columns (gpucor_edges_pass), and gpucor_edges_absorb adds
 * what they found to the main process's selecting sink -- histograms and
 * counts summed, pairs appended, heap entries offered to the heaps -- so
 * that every decision is the one-process driver's on the same pairs;
 * gpucor_edges_finish gives the answer.  The state is an external pointer
 * that keeps x, y and rows alive; gpucor_edges_end (or the garbage
 * collector) frees it. */
typedef struct {
    edges_call e;
    gc_edges *drv;
    const gc_sink *sink;   /* the pass being made */
    int sd0;
} edges_bp;

static void edges_bp_free(edges_bp *b)
{
    if (!b) return;
    gc_edges_end(b->drv);
    edges_call_free(&b->e);
    free(b);
}

static void edges_bp_finalize(SEXP ptr)
{
    edges_bp_free(R_ExternalPtrAddr(ptr));
    R_ClearExternalPtr(ptr);
}

static edges_bp *edges_bp_get(SEXP ptr)
{
    edges_bp *b = TYPEOF(ptr) == EXTPTRSXP ? R_ExternalPtrAddr(ptr) : NULL;
    if (!b) error("internal error: no gpu_cor_edges() driver");
    return b;
}

/* A 64-bit code in two doubles of 32 bits each (R has no 64-bit integers). */
static SEXP code_pair(uint64_t v)
{
    SEXP r = allocVector(REALSXP, 2);
    REAL(r)[0] = (double) (v >> 32);
    REAL(r)[1] = (double) (v & 0xffffffffu);
    return r;
}

static uint64_t code_get(SEXP list, const char *name)
{
    SEXP v = gpucor_field(list, name);
    if (TYPEOF(v) != REALSXP || XLENGTH(v) != 2) error("invalid pass");
    return ((uint64_t) REAL(v)[0] << 32) | (uint64_t) REAL(v)[1];
}

/* the pass's description: what the workers' selecting sinks do */
static SEXP pass_spec(const gc_select *s)
{
    const char *names[] = {"mode", "prefix", "bits", "lower", "k", "has_thr", "thr",
                           "strength", "key", ""};
    SEXP spec = PROTECT(mkNamed(VECSXP, names));
    SET_VECTOR_ELT(spec, 0, ScalarInteger(s->mode));
    SET_VECTOR_ELT(spec, 1, code_pair(s->prefix));
    SET_VECTOR_ELT(spec, 2, ScalarInteger(s->prefix_bits));
    SET_VECTOR_ELT(spec, 3, code_pair(s->lower));
    SET_VECTOR_ELT(spec, 4, ScalarReal((double) s->k));
    SET_VECTOR_ELT(spec, 5, ScalarLogical(s->has_thr != 0));
    SET_VECTOR_ELT(spec, 6, ScalarReal(s->thr));
    SET_VECTOR_ELT(spec, 7, ScalarInteger(s->strength));
    SET_VECTOR_ELT(spec, 8, ScalarInteger(s->key));
    UNPROTECT(1);
    return spec;
}

SEXP gpucor_edges_begin(SEXP x, SEXP y, SEXP method, SEXP use, SEXP rows, SEXP opts,
                        SEXP crit)
{
    edges_bp *b = calloc(1, sizeof *b);
    if (!b) error("gpu_cor_edges: out of host memory");
    SEXP keep = PROTECT(list3(x, y, rows));
    SEXP ptr = PROTECT(R_MakeExternalPtr(b, R_NilValue, keep));
    R_RegisterCFinalizerEx(ptr, edges_bp_finalize, TRUE);
    /* from here on the finalizer frees b, whatever raises */
    edges_setup(x, y, method, use, rows, opts, crit, 1, &b->e);
    char msg[512] = "";
    int status = edges_any(&b->e) ? gc_edges_begin(&b->e.job, &b->drv, msg, sizeof msg)
                                  : GPUCOR_OK;
    if (status != GPUCOR_OK) gpucor_raise_msg(status, "gpu_cor_edges", msg);
    UNPROTECT(2);
    return ptr;
}

/* The next pass's description, or NULL when none is left. */
SEXP gpucor_edges_next(SEXP ptr)
{
    edges_bp *b = edges_bp_get(ptr);
    char msg[512] = "";
    b->sink = NULL;
    int status = edges_any(&b->e) ? gc_edges_next(b->drv, &b->sink, msg, sizeof msg)
                                  : GPUCOR_OK;
    if (status != GPUCOR_OK) gpucor_raise_msg(status, "gpu_cor_edges", msg);
    return b->sink ? pass_spec(b->sink->sel) : R_NilValue;
}

/* adds one worker's part (gpucor_edges_pass's list) into s; nonzero: out
 * of memory, or a malformed part */
static int part_merge(gc_select *s, SEXP part, int *sd0)
{
    if (!isNewList(part)) return 2;
#define PART(name) gpucor_field_or_null(part, name)
    SEXP hist = PART("hist"), counts = PART("counts");
    SEXP pi = PART("i"), pj = PART("j"), pv = PART("v");
    SEXP hlen = PART("hlen"), hp = PART("partner"), hs = PART("s"), hv = PART("hv");
    if (asLogical(PART("sd0")) == TRUE) *sd0 = 1;
#undef PART
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

/* The workers' parts of the pass gpucor_edges_next described. */
SEXP gpucor_edges_absorb(SEXP ptr, SEXP parts)
{
    edges_bp *b = edges_bp_get(ptr);
    if (!b->sink) error("internal error: no pass to absorb");
    if (!isNewList(parts)) error("internal error: the workers' passes returned no list");
    gc_select *s = b->sink->sel;
    for (R_xlen_t k = 0; k < XLENGTH(parts); k++) {
        int r = part_merge(s, VECTOR_ELT(parts, k), &b->sd0);
        if (r == 1) gpucor_raise_msg(GPUCOR_ERR_ALLOC, "gpu_cor_edges",
                                     "out of host memory for the selected pairs");
        if (r) error("internal error: a worker's pass is malformed");
    }
    b->sink = NULL;
    char msg[512] = "";
    int status = gc_edges_absorb(b->drv, msg, sizeof msg);
    if (status != GPUCOR_OK) gpucor_raise_msg(status, "gpu_cor_edges", msg);
    return R_NilValue;
}

/* The answer, as gpucor_edges gives it; the driver is freed. */
SEXP gpucor_edges_finish(SEXP ptr)
{
    edges_bp *b = edges_bp_get(ptr);
    gc_edges_out eo;
    char msg[512] = "";
    memset(&eo, 0, sizeof eo);
    int status = edges_any(&b->e) ? gc_edges_finish(b->drv, &eo, msg, sizeof msg)
                                  : GPUCOR_OK;
    if (status != GPUCOR_OK) {
        gc_edges_free(&eo);
        gpucor_raise_msg(status, "gpu_cor_edges", msg);
    }
    SEXP ans = PROTECT(edges_answer(&b->e, &eo, b->sd0, 0));
    edges_bp_finalize(ptr);
    UNPROTECT(1);
    return ans;
}

SEXP gpucor_edges_end(SEXP ptr)
{
    if (TYPEOF(ptr) == EXTPTRSXP) edges_bp_finalize(ptr);
    return R_NilValue;
}

/* One pass of the driver over this worker's share of the columns (its
 * ranges: the engine option 'cols'), as spec (gpucor_edges_next's list)
 * describes it: list(hist, counts = c(above, valid), i, j, v (the collected
 * pairs, 0-based), hlen, partner, s, hv (the heaps, nvar x k), sd0). */
SEXP gpucor_edges_pass(SEXP x, SEXP y, SEXP method, SEXP use, SEXP rows, SEXP opts,
                       SEXP crit, SEXP spec)
{
    if (!isNewList(spec)) error("invalid pass");
    int key = asInteger(gpucor_field(spec, "key"));
    int mode = asInteger(gpucor_field(spec, "mode"));
    gc_select s;
    memset(&s, 0, sizeof s);
    s.mode = mode;
    s.prefix = code_get(spec, "prefix");
    s.lower = code_get(spec, "lower");
    s.prefix_bits = asInteger(gpucor_field(spec, "bits"));
    s.has_thr = asLogical(gpucor_field(spec, "has_thr")) == TRUE;
    s.thr = asReal(gpucor_field(spec, "thr"));
    s.strength = asInteger(gpucor_field(spec, "strength"));
    s.k = (mode & SEL_HEAPS) ? (size_t) asReal(gpucor_field(spec, "k")) : 0;
    edges_call e;
    edges_setup(x, y, method, use, rows, opts, crit, key == KEY_PVALUE, &e);
    s.symmetric = e.job.symmetric;
    s.p = e.job.p;
    s.q = e.job.q;
    s.key = key;
    s.pvalue = e.job.pvalue;
    s.pctx = e.job.pctx;
    gc_sink sink = {.kind = SINK_SELECT, .epilogue = e.job.epilogue, .p = s.p, .q = s.q,
                    .sel = &s};
    /* (allocating and resetting leave the pass's description as it is) */
    if (gc_select_alloc(&s, e.job.nslots, (mode & SEL_HIST) != 0)) {
        gc_select_free(&s);
        edges_call_free(&e);
        error("gpu_cor_edges: out of host memory");
    }
    gc_select_reset(&s);
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
    edges_call_free(&e);
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
