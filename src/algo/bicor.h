/*
 * bicor.h -- WGCNA's biweight midcorrelation (bicor), column by column.
 *
 * A column is prepared once: its median and raw median absolute deviation
 * (type-7 quantiles of its observed values, no 1.4826 factor), u = (x -
 * med) / (9 mad), rescaled when maxPOutliers < 1 so that the maxPOutliers
 * and 1 - maxPOutliers quantiles of u map to -0.5 and 0.5 (never
 * stretched), weights (1 - u^2)^2 (0 for |u| >= 1), and (x - med) w scaled
 * to unit length.  bicor(x_i, y_j) is then the dot product of two prepared
 * columns: the engine's uncentred ("cosine") producers compute it on either
 * backend.  A column of zero MAD falls back to Pearson's preparation (x -
 * mean, unit length; "individual") or makes the column NA ("none"); a
 * constant or empty column is NA.  Pairs of columns with NAs under
 * pairwise complete observations are recomputed on their common rows
 * (gc_bicor_pairs), as WGCNA does with quick = 0.
 */
#ifndef GPUCOR_BICOR_H
#define GPUCOR_BICOR_H

#include <stddef.h>
#include "../engine/engine.h"

enum { BICOR_FB_NONE = 1, BICOR_FB_INDIVIDUAL = 2, BICOR_FB_ALL = 3 };
/* column outcomes */
enum { BICOR_COL_NA = 1, BICOR_COL_ZERO_MAD = 2, BICOR_COL_PEARSON = 4 };

typedef struct gc_bicor_opts {
    double max_outliers;   /* maxPOutliers in (0, 1] */
    int fallback;          /* BICOR_FB_* */
    int pearson;           /* robust = FALSE: Pearson's preparation throughout */
} gc_bicor_opts;

/* The type-7 quantile q of v[0 .. m) (reordered), m >= 1. */
double gc_quantile7(double *v, size_t m, double q);

/* Column col[0 .. n) (NaN = missing; skip[k] nonzero also drops row k) into
 * out[0 .. n) (0 at the rows left out); work: 2 n doubles.  Returns the
 * BICOR_COL_* bits. */
int gc_bicor_prep_col(const double *col, size_t n, const unsigned char *skip,
                      const gc_bicor_opts *o, double *out, double *work);

/* Every column of x (n x p) into z (n x p), flags[c] the column's bits,
 * over nthreads.  With BICOR_FB_ALL and a zero MAD anywhere, every column
 * is prepared as Pearson's.  Returns 0, or nonzero when out of memory. */
int gc_bicor_prep(const double *x, size_t n, size_t p, const gc_bicor_opts *o,
                  double *z, int *flags, int nthreads);

/* With pairwise complete observations: the pairs (i, j) of x's columns
 * against y's (y NULL: x against itself, i > j) where either column has
 * more than floor(quick * n) NAs, recomputed on their common rows into the
 * dense p x q result r (its NA columns, flags & BICOR_COL_NA, left alone).
 * *nna: pairs that became NA; zmad[0], zmad[1]: a column of x, of y, had
 * zero MAD on a pair's rows.  The pairs are tiles of the CPU engine's
 * driver (threads, interrupts, progress as host says).  Returns a status. */
int gc_bicor_pairs(const double *x, size_t n, size_t p, const int *fx,
                   const gc_bicor_opts *ox, const double *y, size_t q,
                   const int *fy, const gc_bicor_opts *oy, double quick,
                   double *r, size_t *nna, int *zmad, const gc_host *host);

/* The same pairs for a result that is never whole in memory (a file,
 * engine/file.h): open() prepares what gc_bicor_pairs prepares (nthreads:
 * the CPU's threads); columns() recomputes those pairs among columns [j0,
 * j0 + nj) of the result, val[a + b * ld] holding the product's values of
 * all p rows (a symmetric result's pairs above the diagonal as their
 * mirrors', so the values are gc_bicor_pairs' bit for bit), returning
 * nonzero when out of memory -- it is a gc_file_hook, and may run on any
 * thread, several at once; close() gives *nna and zmad (as gc_bicor_pairs;
 * either may be NULL) and frees. */
typedef struct gc_bicor_pairs_ctx gc_bicor_pairs_ctx;
int gc_bicor_pairs_open(const double *x, size_t n, size_t p, const int *fx,
                        const gc_bicor_opts *ox, const double *y, size_t q,
                        const int *fy, const gc_bicor_opts *oy, double quick,
                        int nthreads, gc_bicor_pairs_ctx **out);
int gc_bicor_pairs_columns(void *ctx, size_t j0, size_t nj, double *val, size_t ld);
void gc_bicor_pairs_close(gc_bicor_pairs_ctx *c, size_t *nna, int *zmad);

#endif
