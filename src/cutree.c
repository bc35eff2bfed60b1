/*
 * cutree.c -- .Call entry point of gpu_cutree_dynamic() (R/cutree.R): the
 * hybrid tree cut of algo/cutree.h on a dendrogram's merges and a dense
 * matrix or packed 'dist' of distances.  R computes the thresholds (as
 * cutreeHybrid() does) and renumbers the labels by size afterwards.
 */
#include <R.h>
#include <Rinternals.h>
#include "gpucor.h"
#include "status.h"
#include "algo/cutree.h"

/* The external split: R's fun(branch1, branch2) (1-based objects) gives
 * TRUE to merge; errors are caught (R_tryEval prints them) so the engine
 * frees its memory before the entry point raises. */
static int external_split(void *ctx, const int *b1, size_t n1, const int *b2, size_t n2,
                          int *merge)
{
    SEXP fun = (SEXP) ctx, v1, v2, call, res;
    int err = 0;
    PROTECT(v1 = allocVector(INTSXP, (R_xlen_t) n1));
    PROTECT(v2 = allocVector(INTSXP, (R_xlen_t) n2));
    for (size_t i = 0; i < n1; i++) INTEGER(v1)[i] = b1[i] + 1;
    for (size_t i = 0; i < n2; i++) INTEGER(v2)[i] = b2[i] + 1;
    PROTECT(call = lang3(fun, v1, v2));
    res = R_tryEval(call, R_GlobalEnv, &err);
    if (!err) {
        int v = asLogical(res);
        if (v == NA_LOGICAL) err = 1; else *merge = v;
    }
    UNPROTECT(3);
    return err;
}

/* merge: integer n_merge x 2; height: doubles; dist: the distances, a
 * double matrix (n x n) or a packed 'dist' vector; size: n; params:
 * c(cutHeight, maxAbsCoreScatter, minAbsGap, minAbsSplitHeight,
 * maxPamDist, minClusterSize); flags: c(pamStage, pamRespectsDendro,
 * useMedoids, respectSmallClusters); external: NULL or a function of the
 * two branches' objects, TRUE to merge them.  Returns the labels before the
 * renumbering (0 unlabelled, -1 rejected by the PAM stage). */
SEXP gpucor_cutree_hybrid(SEXP merge, SEXP height, SEXP dist, SEXP size, SEXP params,
                          SEXP flags, SEXP external, SEXP opts)
{
    if (TYPEOF(merge) != INTSXP || !isMatrix(merge) || ncols(merge) != 2)
        error("internal error: 'merge' must be an integer matrix of two columns");
    size_t nm = (size_t) nrows(merge), n = nm + 1;
    if (TYPEOF(height) != REALSXP || (size_t) XLENGTH(height) != nm)
        error("internal error: 'height' must be %zu doubles", nm);
    if (TYPEOF(dist) != REALSXP) error("internal error: 'dist' must be double");
    if (TYPEOF(params) != REALSXP || XLENGTH(params) != 6 || TYPEOF(flags) != LGLSXP ||
        XLENGTH(flags) != 4)
        error("internal error: bad 'params' or 'flags'");
    if ((size_t) asReal(size) != n) error("internal error: %zu objects expected", n);
    gc_distm d = {REAL(dist), n, !isMatrix(dist)};
    if (d.packed ? (size_t) XLENGTH(dist) != (n * (n - 1)) / 2
                 : ((size_t) nrows(dist) != n || (size_t) ncols(dist) != n))
        error("internal error: the distances are not those of %zu objects", n);
    /* merge entries name singletons -1..-n and merges 1..m-1 before m */
    const int *mg = INTEGER(merge);
    for (size_t m = 0; m < nm; m++)
        for (int k = 0; k < 2; k++) {
            int v = mg[m + k * nm];
            if (v == 0 || v == NA_INTEGER || (v < 0 && (size_t) -v > n) ||
                (v > 0 && (size_t) v > m))
                error("'dendro$merge' is not a valid merge matrix (row %zu)", m + 1);
        }
    gc_opts o;
    gpucor_opts(opts, &o);
    const double *pr = REAL(params);
    const int *fl = LOGICAL(flags);
    gc_cutree_params p = {pr[0], pr[1], pr[2], pr[3], pr[4], pr[5],
                          fl[0] == TRUE, fl[1] == TRUE, fl[2] == TRUE, fl[3] == TRUE,
                          o.nthreads > 0 ? o.nthreads : 1,
                          isFunction(external) ? external_split : NULL, (void *) external};
    SEXP ans = PROTECT(allocVector(INTSXP, (R_xlen_t) n));
    char msg[256] = "";
    int st = gc_cutree_hybrid(mg, REAL(height), nm, &d, &p, INTEGER(ans), msg, sizeof msg);
    if (st != GPUCOR_OK) {
        UNPROTECT(1);
        gpucor_raise_msg(st, "gpu_cutree_dynamic", msg);
    }
    UNPROTECT(1);
    return ans;
}
