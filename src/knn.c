/*
 * knn.c -- .Call entry point of gpu_knn(): one pass of the engine over the
 * distances between rows into the selecting sink's heaps (engine/select.h),
 * each row's k nearest; with BiocParallel, the workers' parts merged.  The
 * R side (R/edges.R) has prepared the input as for gpu_dist().
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
#include "engine/select.h"

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
            status = gc_run_warn(&pb, &sink, &host, &f, &used, msg, sizeof msg);
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
