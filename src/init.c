/*
 * init.c -- the one registration table of gpucor's .Call entry points.
 */
#include <R.h>
#include <Rinternals.h>
#include <R_ext/Rdynload.h>
#include "gpucor.h"
#include "status.h"

SEXP gpucor_cor(SEXP x, SEXP y, SEXP method, SEXP use, SEXP rows, SEXP opts, SEXP file);
SEXP gpucor_dist(SEXP x, SEXP method, SEXP power, SEXP opts, SEXP file);
SEXP gpucor_knnmi(SEXP x, SEXP y, SEXP method, SEXP k, SEXP jitter, SEXP jitter_y,
                  SEXP opts, SEXP file);
SEXP gpucor_knnmi_full(SEXP d, SEXP n, SEXP threads);
SEXP gpucor_hdf5_available(void);
SEXP gpucor_hdf5_virtual(SEXP, SEXP, SEXP, SEXP, SEXP, SEXP, SEXP);
SEXP gpucor_ship_write(SEXP x, SEXP paths, SEXP threads);
SEXP gpucor_ship_gather(SEXP parts, SEXP type, SEXP threads);
SEXP gpucor_cov_scale(SEXP r, SEXP sx, SEXP sy, SEXP symmetric, SEXP threads);
SEXP gpucor_col_spread(SEXP x, SEXP method, SEXP threads);
SEXP gpucor_cov_bad(SEXP r, SEXP sx, SEXP sy, SEXP symmetric);
SEXP gpucor_cov_diag(SEXP r, SEXP x, SEXP pairwise, SEXP threads);
SEXP gpucor_sparse_cor(SEXP colptr, SEXP rowind, SEXP val, SEXP nrow, SEXP spearman,
                       SEXP opts);
SEXP gpucor_degree(SEXP x, SEXP method, SEXP use, SEXP rows, SEXP cut, SEXP density,
                   SEXP absolute, SEXP opts);
SEXP gpucor_progress_new(SEXP delay, SEXP label);
SEXP gpucor_progress_frame(SEXP st, SEXP step, SEXP k, SEXP npass, SEXP weight);
SEXP gpucor_progress_step(SEXP st, SEXP frac);
SEXP gpucor_progress_end(SEXP st, SEXP ok);
SEXP gpucor_edges(SEXP x, SEXP y, SEXP method, SEXP use, SEXP rows, SEXP opts,
                  SEXP crit);
SEXP gpucor_edges_begin(SEXP x, SEXP y, SEXP method, SEXP use, SEXP rows, SEXP opts,
                        SEXP crit);
SEXP gpucor_edges_next(SEXP ptr);
SEXP gpucor_edges_absorb(SEXP ptr, SEXP parts);
SEXP gpucor_edges_finish(SEXP ptr);
SEXP gpucor_edges_end(SEXP ptr);
SEXP gpucor_edges_pass(SEXP x, SEXP y, SEXP method, SEXP use, SEXP rows, SEXP opts,
                       SEXP crit, SEXP spec);
SEXP gpucor_bct(SEXP x, SEXP partition, SEXP spec, SEXP opts);
SEXP gpucor_bct_rewire(SEXP w, SEXP lattice, SEXP iter, SEXP seed, SEXP subject, SEXP k);
SEXP gpucor_apsp(SEXP w, SEXP size, SEXP weights, SEXP threshold, SEXP directed,
                 SEXP what, SEXP opts);
SEXP gpucor_aracne(SEXP mi, SEXP eps, SEXP eta, SEXP opts);
SEXP gpucor_clr_mrnet(SEXP mi, SEXP what, SEXP opts);
SEXP gpucor_prune_x(SEXP x, SEXP k, SEXP jitter, SEXP algo, SEXP eps, SEXP eta, SEXP opts);
SEXP gpucor_hclust(SEXP data, SEXP size, SEXP method, SEXP members, SEXP metric,
                   SEXP power, SEXP opts, SEXP inplace);
SEXP gpucor_cutree_hybrid(SEXP merge, SEXP height, SEXP dist, SEXP size, SEXP params,
                          SEXP flags, SEXP external, SEXP opts);
SEXP gpucor_knn(SEXP x, SEXP query, SEXP method, SEXP power, SEXP kk, SEXP anyna, SEXP opts,
                SEXP parts);
SEXP gpucor_range(SEXP x, SEXP query, SEXP method, SEXP power, SEXP threshold, SEXP anyna,
                  SEXP opts, SEXP self);
SEXP gpucor_bicor_prep(SEXP x, SEXP params, SEXP opts);
SEXP gpucor_shrink_scale(SEXP x, SEXP w, SEXP opts);
SEXP gpucor_crossprod(SEXP a, SEXP b, SEXP rows, SEXP opts);
SEXP gpucor_shrink_partial(SEXP m, SEXP z, SEXP opts);
SEXP gpucor_scale_copy(SEXP a, SEXP f, SEXP opts);
SEXP gpucor_bicor_pairs(SEXP x, SEXP fx, SEXP y, SEXP fy, SEXP params, SEXP r, SEXP opts);
SEXP gpucor_bicor_file(SEXP zx, SEXP zy, SEXP x, SEXP y, SEXP fx, SEXP fy, SEXP params,
                       SEXP opts, SEXP file, SEXP what);
SEXP gpucor_adjacency_check(SEXP a, SEXP lo, SEXP opts);
SEXP gpucor_network(SEXP x, SEXP what, SEXP method, SEXP use, SEXP rows, SEXP params,
                    SEXP opts, SEXP file);
SEXP gpucor_cutree_tree(SEXP merge, SEXP height, SEXP order, SEXP nmade, SEXP params,
                        SEXP deep);
SEXP gpucor_module_eigengenes(SEXP x, SEXP code, SEXP nmod, SEXP nve, SEXP threads);
SEXP gpucor_fingerprint(SEXP x);
SEXP gpucor_consensus_tom(SEXP d, SEXP from_tom, SEXP pw, SEXP mode, SEXP q, SEXP w, SEXP opts);
SEXP gpucor_gpu_info(void);
SEXP gpucor_max_threads(void);
SEXP gpucor_measures(void);
SEXP gpucor_gpu_release(void);
SEXP gpucor_resident_new(SEXP x);
SEXP gpucor_resident_info(SEXP ptr);
SEXP gpucor_resident_free(SEXP ptr);
void gpucor_resident_release(void);

#ifdef GPUCOR_CUDA
#include "cuda/engine.h"
#endif

/* Frees the GPU context gpucor keeps between calls (stream, cuBLAS handle,
 * pinned staging); the next GPU call creates it again.  Called by the exit
 * finalizer (R/zzz.R), at unload, and by tests.  In a forked child the
 * parent's context is not usable, so it is only forgotten: freeing it there
 * would be a CUDA call in a child, which fails or hangs. */
SEXP gpucor_gpu_release(void)
{
    gpucor_resident_release();
#ifdef GPUCOR_CUDA
    if (gpucor_forked_child())
        gpucor_cuda_forget();
    else
        gpucor_cuda_release();
#endif
    return R_NilValue;
}

double gpucor_na_real;

#define CALLDEF(name, n) {#name, (DL_FUNC) &name, n}

static const R_CallMethodDef callMethods[] = {
    CALLDEF(gpucor_cor, 7),
    CALLDEF(gpucor_degree, 8),
    CALLDEF(gpucor_measures, 0),
    CALLDEF(gpucor_resident_new, 1),
    CALLDEF(gpucor_resident_info, 1),
    CALLDEF(gpucor_resident_free, 1),
    CALLDEF(gpucor_hdf5_available, 0),
    CALLDEF(gpucor_hdf5_virtual, 7),
    CALLDEF(gpucor_ship_write, 3),
    CALLDEF(gpucor_ship_gather, 3),
    CALLDEF(gpucor_cov_scale, 5),
    CALLDEF(gpucor_col_spread, 3),
    CALLDEF(gpucor_cov_bad, 4),
    CALLDEF(gpucor_cov_diag, 4),
    CALLDEF(gpucor_sparse_cor, 6),
    CALLDEF(gpucor_dist, 5),
    CALLDEF(gpucor_knnmi, 8),
    CALLDEF(gpucor_knnmi_full, 3),
    CALLDEF(gpucor_progress_new, 2),
    CALLDEF(gpucor_progress_frame, 5),
    CALLDEF(gpucor_progress_step, 2),
    CALLDEF(gpucor_progress_end, 2),
    CALLDEF(gpucor_edges, 7),
    CALLDEF(gpucor_edges_begin, 7),
    CALLDEF(gpucor_edges_next, 1),
    CALLDEF(gpucor_edges_absorb, 2),
    CALLDEF(gpucor_edges_finish, 1),
    CALLDEF(gpucor_edges_end, 1),
    CALLDEF(gpucor_edges_pass, 8),
    CALLDEF(gpucor_knn, 8),
    CALLDEF(gpucor_range, 8),
    CALLDEF(gpucor_apsp, 7),
    CALLDEF(gpucor_bct, 4),
    CALLDEF(gpucor_bct_rewire, 6),
    CALLDEF(gpucor_aracne, 4),
    CALLDEF(gpucor_clr_mrnet, 3),
    CALLDEF(gpucor_prune_x, 7),
    CALLDEF(gpucor_hclust, 8),
    CALLDEF(gpucor_cutree_hybrid, 8),
    CALLDEF(gpucor_bicor_prep, 3),
    CALLDEF(gpucor_shrink_scale, 3),
    CALLDEF(gpucor_crossprod, 4),
    CALLDEF(gpucor_shrink_partial, 3),
    CALLDEF(gpucor_scale_copy, 3),
    CALLDEF(gpucor_bicor_pairs, 7),
    CALLDEF(gpucor_bicor_file, 10),
    CALLDEF(gpucor_network, 8),
    CALLDEF(gpucor_adjacency_check, 3),
    CALLDEF(gpucor_cutree_tree, 6),
    CALLDEF(gpucor_module_eigengenes, 5),
    CALLDEF(gpucor_fingerprint, 1),
    CALLDEF(gpucor_consensus_tom, 7),
    CALLDEF(gpucor_gpu_info, 0),
    CALLDEF(gpucor_max_threads, 0),
    CALLDEF(gpucor_gpu_release, 0),
    {NULL, NULL, 0}
};

void R_init_gpucor(DllInfo *dll)
{
    gpucor_na_real = NA_REAL;
    gpucor_threads_init();
    R_registerRoutines(dll, NULL, callMethods, NULL, NULL);
    R_useDynamicSymbols(dll, FALSE);
    R_forceSymbols(dll, TRUE);
}

void R_unload_gpucor(DllInfo *dll)
{
    (void) dll;
    gpucor_gpu_release();
}
