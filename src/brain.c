/*
 * brain.c -- .Call entry point of gpu_brain_metrics() (R/bct.R): the
 * subjects' weight matrices and the choices R parsed, run through the CPU
 * driver of algo/bct.h, returned as a nodal matrix ((n subjects) x metrics)
 * and a global one (subjects x metrics).
 */
#include <R.h>
#include <Rinternals.h>
#include <math.h>
#include <string.h>
#include "gpucor.h"
#include "status.h"
#include "algo/bct.h"
#include "algo/apsp.h"

static const char *weight_names[] = {"distance", "inverse", "neglog", "one_minus"};

static int int_field(SEXP spec, const char *name)
{
    return asInteger(gpucor_field(spec, name));
}

/* the 0-based metric codes in 'codes' into the columns of cols[] */
static int columns(SEXP codes, int *cols, int count)
{
    for (int m = 0; m < count; m++) cols[m] = -1;
    if (TYPEOF(codes) != INTSXP) error("internal error: metric codes must be integers");
    for (R_xlen_t k = 0; k < XLENGTH(codes); k++) {
        int m = INTEGER(codes)[k];
        if (m < 0 || m >= count) error("internal error: metric code %d", m);
        cols[m] = (int) k;
    }
    return (int) XLENGTH(codes);
}

/* The user's error for the first subject that failed. */
static void raise_bad(const gc_bct_bad *b, size_t nsub, int weights)
{
    char who[64] = "'x'";
    if (nsub > 1) snprintf(who, sizeof who, "subject %zu", b->subject + 1);
    switch (b->kind) {
    case BCT_BAD_VALUE:
        error("%s has a value that is not a finite number at [%zu, %zu] (%g): the weights "
              "must be finite (the diagonal is ignored)",
              who, b->i + 1, b->j + 1, b->value);
    case BCT_BAD_ASYMMETRIC:
        error("%s is not symmetric ([%zu, %zu] = %.17g but [%zu, %zu] = %.17g): "
              "gpu_brain_metrics() takes undirected networks; make it symmetric, e.g. "
              "(w + t(w)) / 2",
              who, b->i + 1, b->j + 1, b->value, b->j + 1, b->i + 1, b->other);
    case BCT_BAD_LENGTH:
        error("%s: the edge %zu - %zu (weight %g once prepared) has length %g with weights = "
              "\"%s\": the path metrics need finite lengths > 0",
              who, b->i + 1, b->j + 1, b->value, b->other, weight_names[weights]);
    default:
        error("%s: internal error", who);
    }
}

/* x: n x n x nsub doubles; partition: NULL or 0-based labels (n, or n
 * nsub); spec: list(sign, thr_type, thr, normalize, weights,
 * include_infinite, nmod, nodal, global) with 0-based codes (the enums of
 * algo/bct.h); opts: .engine_opts(). */
SEXP gpucor_bct(SEXP x, SEXP partition, SEXP spec, SEXP opts)
{
    if (TYPEOF(x) != REALSXP) error("internal error: 'x' must be double");
    SEXP dim = getAttrib(x, R_DimSymbol);
    if (TYPEOF(dim) != INTSXP || (LENGTH(dim) != 2 && LENGTH(dim) != 3) ||
        INTEGER(dim)[0] != INTEGER(dim)[1])
        error("internal error: 'x' must be n x n x subjects");
    gc_bct_job job;
    memset(&job, 0, sizeof job);
    job.n = (size_t) INTEGER(dim)[0];
    job.nsub = LENGTH(dim) == 3 ? (size_t) INTEGER(dim)[2] : 1;
    job.w = REAL(x);
    job.sign = int_field(spec, "sign");
    job.thr_type = int_field(spec, "thr_type");
    job.thr = asReal(gpucor_field(spec, "thr"));
    job.normalize = asLogical(gpucor_field(spec, "normalize")) == TRUE;
    job.weights = int_field(spec, "weights");
    job.include_infinite = asLogical(gpucor_field(spec, "include_infinite")) == TRUE;
    job.nmod = int_field(spec, "nmod");
    job.nrand = int_field(spec, "nrand");
    job.rewire = int_field(spec, "rewire");
    job.seed = asReal(gpucor_field(spec, "seed"));
    if (job.nrand < 1 || job.rewire < 0 || !(job.seed >= 0)) error("internal error: invalid random graphs");
    if (job.sign < BCT_SIGN_POSITIVE || job.sign > BCT_SIGN_NEGATIVE ||
        job.thr_type < BCT_THR_NONE || job.thr_type > BCT_THR_ABSOLUTE ||
        job.weights < W_DISTANCE || job.weights > W_ONE_MINUS || job.nmod < 0)
        error("internal error: invalid choices");
    if (!isNull(partition)) {
        if (TYPEOF(partition) != INTSXP) error("internal error: 'partition' must be integer");
        R_xlen_t len = XLENGTH(partition);
        if ((size_t) len != job.n && (size_t) len != job.n * job.nsub)
            error("internal error: 'partition' has the wrong length");
        for (R_xlen_t k = 0; k < len; k++)
            if (INTEGER(partition)[k] < 0 || INTEGER(partition)[k] >= job.nmod)
                error("internal error: a module label out of range");
        job.partition = INTEGER(partition);
        job.part_stride = (size_t) len == job.n ? 0 : job.n;
    }
    int kn = columns(gpucor_field(spec, "nodal"), job.nodal_col, BCT_NNODAL);
    int kg = columns(gpucor_field(spec, "global"), job.global_col, BCT_NGLOBAL);
    if (!job.partition &&
        (job.nodal_col[BCT_PARTICIPATION] >= 0 || job.nodal_col[BCT_MODULE_Z] >= 0 ||
         job.global_col[BCT_MODULARITY] >= 0))
        error("internal error: the module metrics need a partition");
    gc_opts o;
    gpucor_opts(opts, &o);
    if (o.gpu) error("gpu_brain_metrics(): the GPU engine is not available yet: use backend = \"cpu\"");

    double rows = (double) job.n * (double) job.nsub;
    if (rows > 2147483647.0) error("gpu_brain_metrics(): too many nodes over all subjects");
    SEXP ans = PROTECT(allocVector(VECSXP, 2));
    SEXP nodal = allocMatrix(REALSXP, (int) rows, kn);
    SET_VECTOR_ELT(ans, 0, nodal);
    SEXP global = allocMatrix(REALSXP, (int) job.nsub, kg);
    SET_VECTOR_ELT(ans, 1, global);
    job.nodal = REAL(nodal);
    job.global = REAL(global);

    gpucor_progress pr;
    gc_host host;
    gpucor_host_init(&host, &o, &pr, "gpu_brain_metrics");
    gc_bct_bad bad;
    int used = 0;
    int status = gc_bct_cpu(&job, &host, &used, &bad);
    if (status == GPUCOR_ERR_INVALID) {
        UNPROTECT(1);
        raise_bad(&bad, job.nsub, job.weights);
    }
    if (status != GPUCOR_OK) {
        UNPROTECT(1);
        gpucor_raise(status, "gpu_brain_metrics");
    }
    gpucor_set_threads(ans, &o, used);
    UNPROTECT(1);
    return ans;
}

/* One random graph (lattice FALSE) or lattice of gpu_brain_metrics()'s
 * small-worldness, as it makes it: w (the prepared n x n weights of
 * subject 'subject', 1-based), the k-th (1-based) of them.  For the tests. */
SEXP gpucor_bct_rewire(SEXP w, SEXP lattice, SEXP iter, SEXP seed, SEXP subject, SEXP k)
{
    if (TYPEOF(w) != REALSXP || !isMatrix(w) || nrows(w) != ncols(w))
        error("internal error: 'w' must be a square double matrix");
    size_t n = (size_t) nrows(w), m = n > 1 ? n * (n - 1) / 2 : 1;
    int lat = asLogical(lattice) == TRUE;
    SEXP ans = PROTECT(duplicate(w));
    int *ei = (int *) R_alloc(m, sizeof(int)), *ej = (int *) R_alloc(m, sizeof(int));
    int *perm = (int *) R_alloc(n + 1, sizeof(int));
    uint64_t sd = gc_bct_seed(asReal(seed), (size_t) (asInteger(subject) - 1), lat,
                              asInteger(k) - 1);
    gc_bct_rewire(REAL(ans), n, lat, asInteger(iter), sd, ei, ej, perm);
    UNPROTECT(1);
    return ans;
}
