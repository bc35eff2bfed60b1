/*
 * knn.c -- .Call entry points of gpu_knn() and gpu_range(): one pass of the
 * engine over the distances between rows into the selecting sink
 * (engine/select.h): heaps, each row's k nearest; or the collected pairs
 * within a distance.  Without a query the rows of x against each other (the
 * pairs i > j of a symmetric result); with one, the p x q result of x's
 * rows against the query's, where only the query's columns keep heaps.
 * With BiocParallel, the workers' parts merged.  The R side (R/edges.R,
 * R/neighbors.R) has prepared the input as for gpu_dist().
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
#ifdef GPUCOR_CUDA
#include "cuda/engine.h"
#endif
#include "engine/measure.h"
#include "cpu/cpu.h"

/* ---- k nearest neighbours ---------------------------------------------- */
/* BiocParallel's parts (R/edges.R): each list(index, distance, rows), the
 * k nearest (sorted, NA-padded) of rows 'rows' among the worker's share.
 * A row that one part holds has its whole answer there (the GPU's shares
 * are whole columns) and is copied; a row that several hold (the CPU's
 * tiles) has its parts' neighbours offered to its heap, which keeps the
 * same order and ties. */

/* Checks the parts and counts in held[] the parts that hold each row
 * (at most 2); NULL, or what is wrong. */
static const char *knn_parts_check(SEXP parts, size_t n, size_t nref, size_t k,
                                   unsigned char *held)
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
            if (idx[a] != NA_INTEGER && (idx[a] < 1 || (size_t) idx[a] > nref)) return "index";
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

/* The query's rows, or NULL: x against itself (*nq its rows). */
static const double *knn_query(SEXP query, size_t p, size_t *nq)
{
    if (isNull(query)) return NULL;
    if (TYPEOF(query) != REALSXP || !isMatrix(query) || (size_t) ncols(query) != p)
        error("'query' must be a double matrix with the columns of 'x'");
    *nq = (size_t) nrows(query);
    if (*nq > UINT32_MAX) error("too many rows");
    return REAL(query);
}

/* The pruned search (cpu/knn_prune.c) where it applies: the CPU engine, a
 * Euclidean or Manhattan distance, finite data, no BiocParallel share.
 * Option knn_prune (options(gpucor.knn_prune), R/edges.R): FALSE never,
 * TRUE whenever the data allow it, NA (default) by the measured rule.
 * Returns the answer, or R_NilValue when the brute force is to run (*why:
 * the reason, for verbose, or NULL when the search was not considered). */
static SEXP knn_pruned(SEXP x, const double *qy, size_t nq, const gc_measure *m, size_t k,
                       SEXP opts, const gc_opts *o, gc_host *host,
                       const char **why)
{
    int mode = asLogical(gpucor_field_or_null(opts, "knn_prune"));
    size_t n = (size_t) nrows(x), p = (size_t) ncols(x);
    /* (complete data are checked by cpu_knn_prune: the stats metrics' NA
     * are the brute force's, pair by pair) */
    *why = mode == FALSE ? "options(gpucor.knn_prune = FALSE)"
         : m->family != FAMILY_DISTANCE ? "not a Euclidean or Manhattan distance" : NULL;
    if (o->gpu) *why = NULL;
    if (o->gpu || *why) return R_NilValue;
    SEXP idx = PROTECT(allocMatrix(INTSXP, (int) nq, (int) k));
    SEXP dst = PROTECT(allocMatrix(REALSXP, (int) nq, (int) k));
    int ran = 0;
    cpu_knn_info info;
    int status = cpu_knn_prune(REAL(x), n, p, qy, nq, m->op, k,
                               mode == TRUE ? KNN_PRUNE_FORCE : KNN_PRUNE_AUTO, host,
                               INTEGER(idx), REAL(dst), &ran, &info);
    if (status != GPUCOR_OK) gpucor_raise_msg(status, "gpu_knn", "");
    if (!ran) {
        *why = info.why;
        UNPROTECT(2);
        return R_NilValue;
    }
    SEXP ans = PROTECT(allocVector(VECSXP, 2));
    SET_VECTOR_ELT(ans, 0, idx);
    SET_VECTOR_ELT(ans, 1, dst);
    if (o->profile) {
        char note[160];
        snprintf(note, sizeof note, "pruned search: %zu clusters, %.0f distance-equivalents per row, "
                 "the brute force's %.0f", info.centers, info.evals, info.brute_evals);
        setAttrib(ans, install("knn_path"), mkString(note));
    }
    gpucor_set_threads(ans, o, info.team);
    UNPROTECT(3);
    return ans;
}

/* Row i's neighbours, nearest first, into row r of the nout x k result
 * (NA past the ones it has). */
static void knn_row_out(gc_select *s, size_t i, size_t r, size_t nout, size_t k, int *ip,
                        double *dp)
{
    const gc_hent *e;
    size_t got = gc_select_heap_sorted(s, i, &e);
    for (size_t a = 0; a < k; a++) {
        ip[r + a * nout] = a < got ? (int) e[a].partner + 1 : NA_INTEGER;
        dp[r + a * nout] = a < got ? e[a].v : NA_REAL;
    }
}

/* parts: NULL, or the results of BiocParallel's workers, each of its
 * share of the columns (R/edges.R): their neighbours are merged (above)
 * instead of running the engine, and the flags kept.  query: NULL, or the
 * rows whose neighbours among x's rows are found (no self to leave out, k
 * up to nrow(x)). */
SEXP gpucor_knn(SEXP x, SEXP query, SEXP method, SEXP power, SEXP kk, SEXP anyna, SEXP opts,
                SEXP parts)
{
    if (TYPEOF(x) != REALSXP || !isMatrix(x)) error("'x' must be a double matrix");
    const gc_measure *m = gpucor_measure_arg(method, MEASURE_ROWS);
    size_t n = (size_t) nrows(x), p = (size_t) ncols(x), nq = n;
    const double *qy = knn_query(query, p, &nq);
    double kd = asReal(kk);
    if (ISNAN(kd) || kd < 1 || (n > 0 && kd > (double) n - (qy ? 0 : 1))) error("invalid 'k'");
    if (n > UINT32_MAX) error("too many rows");
    size_t k = (size_t) kd;
    gc_opts o;
    gpucor_opts(opts, &o);
    gpucor_progress pr;
    gc_host host;
    gpucor_host_init(&host, &o, &pr, "gpu_knn");
    const double *rg;
    size_t nr = gpucor_ranges(opts, &rg);
    const char *why = NULL;
    if (isNull(parts) && nr == 0 && p > 0 && (qy ? n > 0 && nq > 0 : n > 1)) {
        SEXP ans = knn_pruned(x, qy, nq, m, k, opts, &o, &host, &why);
        if (!isNull(ans)) return ans;
    }

    gc_select s;
    memset(&s, 0, sizeof s);
    s.symmetric = qy == NULL;
    s.cols_only = qy != NULL;
    s.p = n;
    s.q = nq;
    s.strength = STRENGTH_NEG;
    s.mode = SEL_HEAPS;
    s.k = k;
    gc_sink sink = {.kind = SINK_SELECT, .epilogue = m->epilogue, .p = n, .q = nq, .sel = &s};
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
        held = (unsigned char *) R_alloc(nq ? nq : 1, 1);   /* freed by R */
        memset(held, 0, nq ? nq : 1);
        if (knn_parts_check(parts, nq, n, k, held)) {
            gc_select_free(&s);
            error("internal error: a worker's neighbours are malformed");
        }
        flag = knn_parts_offer(&s, parts, k, held, gc_measure_flag_attr(m));
    } else if (p > 0 && (qy ? n > 0 && nq > 0 : n > 1)) {
        for (size_t a = 0; a < (nr ? nr : 1) && status == GPUCOR_OK; a++) {
            int f = 0;
            if (nr) {
                o.col0 = (size_t) rg[2 * a];
                o.col1 = (size_t) rg[2 * a + 1];
            }
            gc_problem pb = gc_rows_problem(REAL(x), n, p, m, asReal(power),
                                            asLogical(anyna) == TRUE);
            if (qy) {
                pb.y = qy;
                pb.q = nq;
            }
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
    size_t nout = nq;
    SEXP rows = R_NilValue;
    if (nr) {
        nout = 0;
        for (size_t i = 0; i < nq; i++) nout += s.hlen[i] > 0;
        rows = allocVector(INTSXP, (R_xlen_t) nout);
    }
    PROTECT(rows);
    SEXP idx = PROTECT(allocMatrix(INTSXP, (int) nout, (int) k));
    SEXP dst = PROTECT(allocMatrix(REALSXP, (int) nout, (int) k));
    if (!nr && !held) {
        /* every row its own: sorted and copied by the threads */
        int *ip = INTEGER(idx);
        double *dp = REAL(dst);
        int nth = o.nthreads > 0 ? o.nthreads : 1;
        if ((size_t) nth > nq / 4096 + 1) nth = (int) (nq / 4096 + 1);
#ifdef _OPENMP
#pragma omp parallel for num_threads(nth) schedule(static)
#endif
        for (size_t i = 0; i < nq; i++) knn_row_out(&s, i, i, nq, k, ip, dp);
    }
    for (size_t i = 0, r = 0; i < nq && (nr || held); i++) {
        if (nr && s.hlen[i] == 0) continue;
        if (held && held[i] == 1) {   /* below, from its one part */
            r++;
            continue;
        }
        if (nr) INTEGER(rows)[r] = (int) i + 1;
        knn_row_out(&s, i, r, nout, k, INTEGER(idx), REAL(dst));
        r++;
    }
    gc_select_free(&s);
    if (held) knn_parts_copy(parts, k, held, idx, dst);
    SEXP ans = PROTECT(allocVector(VECSXP, nr ? 3 : 2));
    SET_VECTOR_ELT(ans, 0, idx);
    SET_VECTOR_ELT(ans, 1, dst);
    if (nr) SET_VECTOR_ELT(ans, 2, rows);
    if (flag) setAttrib(ans, install(gc_measure_flag_attr(m)), ScalarLogical(TRUE));
    if (why && o.profile) {
        char note[160];
        snprintf(note, sizeof note, "brute force: %s", why);
        setAttrib(ans, install("knn_path"), mkString(note));
    }
    gpucor_call_report(ans, &o, &host, used, "gpu_knn");
    UNPROTECT(4);
    return ans;
}

/* ---- every neighbour within a distance --------------------------------- */
/* A collected pair as one of its row's neighbours. */
typedef struct { uint32_t partner; double d; } rng_ent;

static int rng_cmp(const void *a, const void *b)
{
    const rng_ent *x = a, *y = b;
    return (x->partner > y->partner) - (x->partner < y->partner);
}

/* Every pair at distance <= threshold, as list(index, distance): for each
 * row of the query (or of x, without one: the pairs i > j, both ways, a
 * row not its own neighbour unless 'self'), its neighbours' row numbers in
 * x, ascending,
 * and their distances.  One collecting pass of the selecting sink, then a
 * counting sort of the pairs by row. */
SEXP gpucor_range(SEXP x, SEXP query, SEXP method, SEXP power, SEXP threshold, SEXP anyna,
                  SEXP opts, SEXP self)
{
    /* self: without a query, each row its own neighbour at distance 0, as
     * BiocNeighbors' range search counts it (GpucorParam: complete data,
     * whose distance of a row to itself is 0) */
    int with_self = asLogical(self) == TRUE && isNull(query) && asReal(threshold) >= 0;
    if (TYPEOF(x) != REALSXP || !isMatrix(x)) error("'x' must be a double matrix");
    const gc_measure *m = gpucor_measure_arg(method, MEASURE_ROWS);
    size_t n = (size_t) nrows(x), p = (size_t) ncols(x), nq = n;
    const double *qy = knn_query(query, p, &nq);
    double thr = asReal(threshold);
    if (ISNAN(thr)) error("invalid 'threshold'");
    if (n > UINT32_MAX) error("too many rows");
    gc_opts o;
    gpucor_opts(opts, &o);
    gpucor_progress pr;
    gc_host host;
    gpucor_host_init(&host, &o, &pr, "gpu_range");

    gc_select s;
    memset(&s, 0, sizeof s);
    s.symmetric = qy == NULL;
    s.p = n;
    s.q = nq;
    s.strength = STRENGTH_NEG;
    s.key = KEY_STRENGTH;
    s.mode = SEL_COLLECT;
    s.lower = sel_code(-thr);   /* -d >= -threshold */
    gc_sink sink = {.kind = SINK_SELECT, .epilogue = m->epilogue, .p = n, .q = nq, .sel = &s};
    int status = GPUCOR_OK, flag = 0, used = 0;
    char msg[512] = "";
    if (gc_select_alloc(&s, o.nthreads > 0 ? o.nthreads : 1, 0)) {
        gc_select_free(&s);
        error("gpu_range: out of host memory");
    }
    gc_select_reset(&s);
    if (p > 0 && (qy ? n > 0 && nq > 0 : n > 1)) {
        gc_problem pb = gc_rows_problem(REAL(x), n, p, m, asReal(power),
                                        asLogical(anyna) == TRUE);
        if (qy) {
            pb.y = qy;
            pb.q = nq;
        }
        status = gc_run_warn(&pb, &sink, &host, &flag, &used, msg, sizeof msg);
    }
    if (status == GPUCOR_OK && s.failed) status = GPUCOR_ERR_ALLOC;
    /* the pairs by row (the column j: the query's row; without a query
     * each pair i > j is a neighbour of both) */
    size_t *start = NULL, total = 0;
    rng_ent *ent = NULL;
    if (status == GPUCOR_OK) {
        start = calloc(nq + 1, sizeof *start);
        for (int w = 0; w < s.nslots; w++) total += s.cand[w].len;
        ent = malloc(((qy ? total : 2 * total) + (with_self ? nq : 0)) * sizeof *ent + 1);
        if (!start || !ent) status = GPUCOR_ERR_ALLOC;
    }
    if (status != GPUCOR_OK) {
        free(start);
        free(ent);
        gc_select_free(&s);
        gpucor_raise_msg(status, "gpu_range", msg);
    }
    for (int w = 0; w < s.nslots; w++)
        for (size_t a = 0; a < s.cand[w].len; a++) {
            const gc_pair *e = &s.cand[w].v[a];
            start[e->j + 1]++;
            if (!qy) start[e->i + 1]++;
        }
    if (with_self)
        for (size_t j = 0; j < nq; j++) start[j + 1]++;
    for (size_t j = 0; j < nq; j++) start[j + 1] += start[j];
    if (with_self)
        for (size_t j = 0; j < nq; j++) {
            rng_ent r0 = {(uint32_t) j, 0.0};
            ent[start[j]++] = r0;
        }
    for (int w = 0; w < s.nslots; w++)
        for (size_t a = 0; a < s.cand[w].len; a++) {
            const gc_pair *e = &s.cand[w].v[a];
            rng_ent r1 = {e->i, e->v};
            ent[start[e->j]++] = r1;
            if (!qy) {
                rng_ent r2 = {e->j, e->v};
                ent[start[e->i]++] = r2;
            }
        }
    gc_select_free(&s);
    /* start[j] is now the end of row j's neighbours */
    SEXP idx = PROTECT(allocVector(VECSXP, (R_xlen_t) nq));
    SEXP dst = PROTECT(allocVector(VECSXP, (R_xlen_t) nq));
    for (size_t j = 0, b = 0; j < nq; j++) {
        size_t e = start[j], len = e - b;
        qsort(ent + b, len, sizeof *ent, rng_cmp);
        SEXP vi = allocVector(INTSXP, (R_xlen_t) len);
        SET_VECTOR_ELT(idx, (R_xlen_t) j, vi);
        SEXP vd = allocVector(REALSXP, (R_xlen_t) len);
        SET_VECTOR_ELT(dst, (R_xlen_t) j, vd);
        for (size_t a = 0; a < len; a++) {
            INTEGER(vi)[a] = (int) ent[b + a].partner + 1;
            REAL(vd)[a] = ent[b + a].d;
        }
        b = e;
    }
    free(start);
    free(ent);
    SEXP ans = PROTECT(allocVector(VECSXP, 2));
    SET_VECTOR_ELT(ans, 0, idx);
    SET_VECTOR_ELT(ans, 1, dst);
    if (flag) setAttrib(ans, install(gc_measure_flag_attr(m)), ScalarLogical(TRUE));
    gpucor_call_report(ans, &o, &host, used, "gpu_range");
    UNPROTECT(3);
    return ans;
}

/* ---- x kept on the GPUs between searches (GpucorParam's index) ---------- */
static gc_resident *resident_all;   /* every live one (R's main thread only) */

static void resident_drop_copies(gc_resident *r)
{
#ifdef GPUCOR_CUDA
    if (!gpucor_forked_child()) gpucor_cuda_resident_free(r);
#endif
    for (int d = 0; d < GC_RESIDENT_DEVICES; d++) r->dev[d] = NULL;
}

/* The handle's struct (NULL once freed). */
static gc_resident *resident_of(SEXP ptr)
{
    if (TYPEOF(ptr) != EXTPTRSXP || R_ExternalPtrTag(ptr) != install("gpucor_resident"))
        error("internal error: not a resident handle");
    return (gc_resident *) R_ExternalPtrAddr(ptr);
}

/* Frees the handle and its copies (an R finalizer calls it: R/neighbors.R;
 * a C one could run after the library is unloaded). */
SEXP gpucor_resident_free(SEXP ptr)
{
    gc_resident *r = resident_of(ptr);
    if (!r) return R_NilValue;
    resident_drop_copies(r);
    if (r->prev) r->prev->next = r->next;
    else resident_all = r->next;
    if (r->next) r->next->prev = r->prev;
    free(r);
    R_ClearExternalPtr(ptr);
    return R_NilValue;
}

/* The device copies of every resident x are freed (when gpucor releases
 * the GPUs: src/init.c); the next search uploads again. */
void gpucor_resident_release(void)
{
    for (gc_resident *r = resident_all; r; r = r->next) resident_drop_copies(r);
}

/* A handle for the double matrix x (kept alive by it): given to the engine
 * in its options ("resident"), the searches of rows against x keep x on
 * each GPU they use. */
SEXP gpucor_resident_new(SEXP x)
{
    if (TYPEOF(x) != REALSXP || !isMatrix(x)) error("'x' must be a double matrix");
    gc_resident *r = calloc(1, sizeof *r);
    if (!r) error("out of host memory");
    r->host = REAL(x);
    r->n = (size_t) nrows(x);
    r->p = (size_t) ncols(x);
    for (R_xlen_t i = 0; i < XLENGTH(x) && !r->nonfinite; i++)
        r->nonfinite = !R_FINITE(REAL(x)[i]);
    r->next = resident_all;
    if (resident_all) resident_all->prev = r;
    resident_all = r;
    return R_MakeExternalPtr(r, install("gpucor_resident"), x);
}

/* list(devices = the CUDA ordinals holding a copy, uploads = copies made) */
SEXP gpucor_resident_info(SEXP ptr)
{
    gc_resident *r = resident_of(ptr);
    int nd = 0;
    for (int d = 0; r && d < GC_RESIDENT_DEVICES; d++) nd += r->dev[d] != NULL;
    SEXP dev = PROTECT(allocVector(INTSXP, nd));
    for (int d = 0, a = 0; r && d < GC_RESIDENT_DEVICES; d++)
        if (r->dev[d]) INTEGER(dev)[a++] = d;
    SEXP ans = PROTECT(allocVector(VECSXP, 2));
    SET_VECTOR_ELT(ans, 0, dev);
    SET_VECTOR_ELT(ans, 1, ScalarInteger(r ? (int) r->uploads : 0));
    SEXP nm = PROTECT(allocVector(STRSXP, 2));
    SET_STRING_ELT(nm, 0, mkChar("devices"));
    SET_STRING_ELT(nm, 1, mkChar("uploads"));
    setAttrib(ans, R_NamesSymbol, nm);
    UNPROTECT(3);
    return ans;
}
