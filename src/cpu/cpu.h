/*
 * cpu.h -- the R-free CPU engine: a generic tiled pairwise driver and the
 * small pieces (ranking, standardizing, dot-product tiles, Kendall, the
 * distance ops) that plug into it.  Every function returns a gpucor_status
 * or is infallible; none includes R headers.
 */
#ifndef GPUCOR_CPU_H
#define GPUCOR_CPU_H

#include <stddef.h>
#include <stdint.h>
#include "../gpucor.h"
#include "../engine/engine.h"
#include "../engine/problem.h"

/* ---- the generic tile driver (tiles.c) ------------------------------------
 * Output is a p x q grid of pairs (i, j); with 'symmetric' only the tiles on
 * or below the diagonal (j-block <= i-block) are visited.  For each tile the
 * driver calls the producer's fill() into a thread-private buffer (ni x nj,
 * column-major, leading dimension ni): the canonical tile of engine.h, with
 * stats' rules applied.  The sink then takes it (gc_sink_emit).  'scratch'
 * is a thread-private workspace of scratch_bytes.  *team (may be NULL) gets
 * the number of threads that ran. */
typedef void (*tile_fill_fn)(void *ctx, size_t i0, size_t ni, size_t j0,
                             size_t nj, double *tile, void *scratch);

int cpu_tiles_run(size_t p, size_t q, int symmetric, size_t tile,
                  tile_fill_fn fill, void *fill_ctx, size_t scratch_bytes,
                  const gc_sink *sink, const gc_host *host, int *team);

/* ---- sparse columns (sparse.c) -------------------------------------------
 * Pearson (or Spearman) correlations between the p columns of the n-row
 * compressed-column matrix (colptr, rowind, val: Matrix's dgCMatrix, no NA)
 * into the p x p dense sink, with stats' rules.  *sd0: a column had zero
 * sd.  *ill: a column's mean is too large against its spread for the
 * sparse formula (GPUCOR_ERR_INVALID): use its dense columns instead. */
int cpu_sparse_cor(const int *colptr, const int *rowind, const double *val,
                   size_t n, size_t p, int spearman, const gc_sink *sink,
                   const gc_host *host, int *sd0, int *ill);

/* ---- ranking (rank.c) ---------------------------------------------------- */
/* Mid-ranks of x[0..n-1] (ties averaged, as rank(ties.method = "average")),
 * NaN kept as NaN (na.last = "keep").  idx is workspace of n size_t. */
void cpu_rank(const double *x, size_t n, double *rank, size_t *idx);
/* Sort idx[0..n-1] so that x[idx[.]] is ascending (stable for ties). */
void cpu_order(const double *x, size_t *idx, size_t n, size_t *tmp);

/* ---- standardized columns (standardize.c) --------------------------------
 * stats' two-pass mean (cov.c's MEAN): long-double sum, then the mean of the
 * residuals added back; returned, as stats keeps it, in a double. */
double cpu_r_mean(const double *v, size_t n);

/* How a column is centred: not at all (cosine); with stats' two-pass mean
 * rounded to a double (cor() outside pairwise mode: MEAN in cov.c); with
 * its one-pass long-double mean kept in long double (pairwise mode:
 * COV_PAIRWISE_BODY), so that pairs of complete columns under
 * "pairwise.complete.obs" carry the same mean as stats gives them. */
enum { MEAN_NONE = 0, MEAN_R_TWO_PASS = 1, MEAN_PAIRWISE = 2,
       MEAN_RAW = 3 /* the column as it is: not centred, not scaled */ };

/*
 * Column c of the n-row, column-major x (column stride ldx) is read at rows
 * rows[0..nobs-1] (all rows when rows is NULL), ranked first when 'rank' is
 * set, centred as 'mean_kind' says and scaled to unit sum of squares, into
 * z (column stride ldz, zero padded to ldz).  A column whose largest
 * |value| is near either end of the double range is first scaled by a
 * power of two (exact): the mean of subnormal values then keeps its digits,
 * and squares of values near 1e300 do not overflow where long double is
 * only double.  flags[c] gets COL_HAS_NA, COL_ZERO_SD and the two underflow
 * rules. */
int cpu_standardize(const double *x, size_t n, size_t p, size_t ldx,
                    size_t stride_obs, const int *rows, size_t nobs,
                    int rank, int mean_kind, double *z, size_t ldz,
                    unsigned char *flags, int nthreads);

/* Dot products of column blocks: tile[a + b*ni] = sum_k A[a*ld + k] *
 * B[b*ld + k] for a < ni, b < nj, k < m.  ld is a multiple of 4. */
void cpu_dot_tile(const double *A, const double *B, size_t ld, size_t m,
                  size_t ni, size_t nj, double *tile);

/* ---- exact per-pair correlations (pairwise.c, kendall.c) ----------------
 * These follow stats' C code (long-double sums in the same order), so that
 * they agree with stats::cor also in degenerate cases.  They return the
 * correlation, or NA via gpucor_na_real; *sd0 is set when a zero standard
 * deviation made the result NA. */
double cpu_pearson_pair(const double *x, const double *y, size_t n,
                        int *sd0);
double cpu_spearman_pair(const double *x, const double *y, size_t n,
                         double *work, size_t *idx, int *sd0);
double cpu_cosine_pair(const double *x, const double *y, size_t n,
                       int *sd0);
/* stats' pairwise covariance (COV_PAIRWISE_BODY with cor = FALSE): NA
 * below two shared rows. */
double cpu_cov_pair(const double *x, const double *y, size_t n);

/* Kendall's tau-b with Knight's O(n log n) algorithm.  Values are dense
 * integer ranks (ties equal); *sd0 set when either side is all ties. */
double cpu_kendall_dense(const int *xr, const int *yr, size_t n, int *work,
                         int *sd0);
/* Dense ranks (0 .. k-1) of the finite or infinite values of x; NaN -> -1. */
void cpu_dense_rank(const double *x, size_t n, int *out, size_t *idx,
                    size_t *tmp);


/* ---- one pass of the CPU engine ------------------------------------------
 * cpu_run (run.c): the producer of the measure's family.
 * A correlation measure (FAMILY_PRODUCT or FAMILY_PAIR) between the columns
 * of x (and y), or between the rows of x (between_rows: stats' rules of
 * 1 - cor(t(x)), the zero-sd warning per pair) (correlate.c); a distance op
 * between the rows of x (distance.c); the k-NN mutual information between
 * the rows of x (knnmi.c).  The values go to sink; out gets the
 * warnings' flags and the team size. */
int cpu_run(const gc_problem *pb, const gc_sink *sink, const gc_host *host, gc_pass *out);
int cpu_cor_run(const gc_problem *pb, const gc_sink *sink, const gc_host *host,
                gc_pass *out);
int cpu_dist_run(const gc_problem *pb, const gc_sink *sink, const gc_host *host,
                 gc_pass *out);
/* Kraskov's mutual information between the rows of x, as parmigene's
 * knnmi.all() (knnmi.c; the estimator in engine/knnmi.h). */
int cpu_knnmi_run(const gc_problem *pb, const gc_sink *sink, const gc_host *host,
                  gc_pass *out);

/* Euclidean (DIST_EUCLIDEAN) or Manhattan distances of rows i0 .. i0 + ni
 * - 1 of xt (rows of ld doubles, a multiple of 4, zero padded) to y, by the
 * same arithmetic as distance.c's tiles (so, bit for bit, gpu_dist's). */
void cpu_dist_rows(int method, const double *xt, size_t ld, size_t i0, size_t ni,
                   const double *y, double *res);

/* ---- exact k-NN by a pruned search (knn_prune.c) --------------------------
 * Each of the q rows of y (y NULL: each row of x, itself left out) gets its
 * k nearest rows of the n x p, column-major x by the Euclidean or Manhattan
 * distance (method), exactly as the brute force's selecting sink finds them:
 * the same distances bit for bit, ties to the smaller index.  The rows of x
 * are grouped into k-means clusters, and triangle-inequality bounds skip
 * clusters and points that cannot be among the k nearest.  idx and dist
 * (q x k, column-major) get 1-based row numbers and distances.  mode:
 * KNN_PRUNE_AUTO (a rule decides whether pruning pays: see knn_prune.c),
 * KNN_PRUNE_FORCE (whenever the data allow it).  *ran is 1 when the
 * search ran, 0 when it did not (the data are not all finite or are too
 * large for the bounds, or the rule chose the brute force): then idx and
 * dist are undefined and the caller runs the brute force.  info: what
 * happened, for verbose (may be NULL). */
enum { KNN_PRUNE_AUTO = 0, KNN_PRUNE_FORCE = 1 };
typedef struct {
    size_t centers;      /* clusters of the index (0: none built) */
    double evals;        /* distances computed per searched row, sampled (auto) or all */
    double brute_evals;  /* the brute force's per row */
    const char *why;     /* why the brute force was chosen, or NULL */
    int team;            /* threads that ran */
} cpu_knn_info;
int cpu_knn_prune(const double *x, size_t n, size_t p, const double *y, size_t q,
                  int method, size_t k, int mode, const gc_host *host, int *idx,
                  double *dist, int *ran, cpu_knn_info *info);


/* Whether stats' pairwise code gives "the standard deviation is zero" for
 * some variable against itself: the diagonal of cor(t(x), use =
 * "pairwise.complete.obs"), which a 'dist' does not store but whose warning
 * gpu_dist's correlation distances of data with NA still give.  Variable v
 * is x[v * var_stride + k * obs_stride], k < nobs.  method: COR_*. */
int cpu_self_pairs_sd0(const double *x, size_t nvar, size_t nobs,
                       size_t var_stride, size_t obs_stride, int method,
                       int cosine);


#endif
