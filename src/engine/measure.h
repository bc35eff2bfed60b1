/*
 * measure.h -- the measures: one row of a table per pairwise measure, the
 * only place that says what a method name means.  R passes the name (as
 * the user's function spells it); the entry point looks it up here and
 * hands the row to the engines, which read its fields instead of codes.
 * R-free: it compiles as C and as CUDA C++.
 *
 * Two name spaces, as R's functions have them: measures between columns
 * (gpu_cor() and the functions built on it) and measures between rows
 * (gpu_dist(), gpu_knn(), gpu_hclust()), where "spearman" means 1 - rho.
 *
 * Adding a measure: a row in measure.c; its CPU pair function or
 * preparation in cpu/, its GPU path in cuda/ (see CONTRIBUTING.md); R's
 * method vector gets the name (tests/testthat/test-measures.R checks that
 * R's names are the table's).
 */
#ifndef GPUCOR_MEASURE_H
#define GPUCOR_MEASURE_H

#include <stddef.h>
#include "../gpucor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* the name space of a measure */
enum { MEASURE_COLUMNS = 0, MEASURE_ROWS = 1 };

/* how a measure is computed */
enum {
    FAMILY_PRODUCT = 0,   /* a correlation: prepared columns, then products
                             (GEMM); per pair where pairwise NA needs it */
    FAMILY_PAIR = 1,      /* a correlation computed pair by pair (Kendall) */
    FAMILY_DISTANCE = 2,  /* one of stats::dist()'s metrics: a distance op */
    FAMILY_KNNMI = 3      /* Kraskov's k-nearest-neighbour mutual information
                             between rows, as parmigene (engine/knnmi.h) */
};

/* the preparation of a correlation's columns, besides what 'cor' says
 * (Spearman's ranks) */
#define PREP_UNCENTRED 2u   /* not centred: cosine, and bicor's columns,
                               which gpucor_bicor_prep has prepared */
#define PREP_COV       4u   /* pairwise: a pair with NA gives its covariance
                               (gpu_cov's pairs without a correlation) */
#define PREP_RAW       8u   /* columns prepared by the caller and multiplied
                               as they are: neither centred nor scaled, no
                               zero-sd rule (the shrinkage estimators'
                               columns, algo/shrink.h) */

/* the p-value of a correlation (algo/pvalue.c) */
enum { PVALUE_NONE = 0, PVALUE_PEARSON, PVALUE_SPEARMAN, PVALUE_KENDALL };

/* the warning stats gives, and the attribute the entry points set for it */
enum { WARN_NONE = 0,
       WARN_SD0 = 1,          /* "the standard deviation is zero" (attribute sd0) */
       WARN_NONFINITE = 2 };  /* binary: "treating non-finite values as NA"
                                 (attribute nonfinite) */

typedef struct {
    const char *name;     /* the R function's method name */
    int space;            /* MEASURE_COLUMNS / MEASURE_ROWS */
    int family;           /* FAMILY_* */
    int cor;              /* COR_*: the correlation (products and pairs;
                             -1 for a distance op) */
    unsigned prep;        /* PREP_* */
    int op;               /* DIST_*: the distance op (FAMILY_DISTANCE);
                             -1 for a correlation */
    int epilogue;         /* EPI_*: applied by the sink (1 - r, 1 - |r|) */
    int zero_diag;        /* 1: a symmetric result's diagonal is 0, whatever
                             the pair's value (minet's build.mim) */
    int pvalue;           /* PVALUE_* */
    int warning;          /* WARN_* */
    size_t min_coords;    /* coordinates a row needs for a value between
                             rows (fewer: every value NA) */
    double cost;          /* "auto": the CPU's time per pair-observation
                             against Pearson's product path ... */
    double cost_pairwise; /* ... and with pairwise NA (R/backend.R) */
} gc_measure;

/* The row of 'name' in 'space', or NULL. */
const gc_measure *gc_measure_find(const char *name, int space);
/* Row k of the table (k < gc_measure_count()). */
const gc_measure *gc_measure_at(size_t k);
size_t gc_measure_count(void);

/* stats' 'use' modes by name (USE_*), or -1; the names in enum order. */
int gc_use_find(const char *name);
extern const char *const gc_use_names[5];

/* Whether a measure between rows is a correlation distance (the rows'
 * correlations, by the correlation engine). */
static inline int gc_measure_is_cor(const gc_measure *m)
{
    return m->family == FAMILY_PRODUCT || m->family == FAMILY_PAIR;
}

/* The attribute an entry point sets on its result for the measure's
 * warning (R gives the warning). */
static inline const char *gc_measure_flag_attr(const gc_measure *m)
{
    return m->warning == WARN_NONFINITE ? "nonfinite" : "sd0";
}

#ifdef __cplusplus
}
#endif
#endif
