/*
 * measure.c -- the table of measures (measure.h).  Rows in the order of
 * R's method vectors (R/cor.R, R/dist.R), which the tests compare with it.
 */
#include <string.h>
#include "measure.h"
#include "engine.h"

/* "auto"'s CPU costs, from bench/cpu.R on a 2-core machine: Kendall 200 x
 * 300 took about 17 ns per pair-observation against Pearson's 0.1 ns;
 * pairwise pairs with NA are exact per-pair loops, and Spearman's re-rank
 * each pair. */
static const gc_measure measures[] = {
    /* between columns: gpu_cor() and what is built on it */
    {.name = "pearson", .space = MEASURE_COLUMNS, .family = FAMILY_PRODUCT,
     .cor = COR_PEARSON, .op = -1, .pvalue = PVALUE_PEARSON, .warning = WARN_SD0,
     .cost = 1, .cost_pairwise = 10},
    {.name = "spearman", .space = MEASURE_COLUMNS, .family = FAMILY_PRODUCT,
     .cor = COR_SPEARMAN, .op = -1, .pvalue = PVALUE_SPEARMAN, .warning = WARN_SD0,
     .cost = 1, .cost_pairwise = 50},
    {.name = "kendall", .space = MEASURE_COLUMNS, .family = FAMILY_PAIR,
     .cor = COR_KENDALL, .op = -1, .pvalue = PVALUE_KENDALL, .warning = WARN_SD0,
     .cost = 100, .cost_pairwise = 100},
    /* bicor: Pearson's products of the columns gpucor_bicor_prep made
     * (centred on the median, weighted, scaled); its p-values are
     * Pearson's t (WGCNA's corPvalueStudent) */
    {.name = "bicor", .space = MEASURE_COLUMNS, .family = FAMILY_PRODUCT,
     .cor = COR_PEARSON, .prep = PREP_UNCENTRED, .op = -1, .pvalue = PVALUE_PEARSON,
     .warning = WARN_SD0, .cost = 1, .cost_pairwise = 10},
    /* gpu_cov's pairwise Pearson: a pair with NA gives its covariance, the
     * others their correlation, which R multiplies by the spreads (CPU) */
    {.name = "covariance", .space = MEASURE_COLUMNS, .family = FAMILY_PRODUCT,
     .cor = COR_PEARSON, .prep = PREP_COV, .op = -1, .warning = WARN_SD0,
     .cost = 1, .cost_pairwise = 10},
    /* corpcor's shrinkage correlation and partial correlation: products of
     * the columns gpu_cor_shrink() / gpu_pcor_shrink() prepared (R/shrink.R,
     * algo/shrink.h), the unit diagonal and the clamp */
    {.name = "cor.shrink", .space = MEASURE_COLUMNS, .family = FAMILY_PRODUCT,
     .cor = COR_PEARSON, .prep = PREP_RAW, .op = -1, .cost = 1, .cost_pairwise = 1},
    {.name = "pcor.shrink", .space = MEASURE_COLUMNS, .family = FAMILY_PRODUCT,
     .cor = COR_PEARSON, .prep = PREP_RAW, .op = -1, .cost = 1, .cost_pairwise = 1},
    /* minet's build.mim with a correlation estimator: the Gaussian mutual
     * information -0.5 log(1 - r^2) of stats' correlation (gpu_build_mim) */
#define GAUSS_MI(nm, fam, c, cst) \
    {.name = nm, .space = MEASURE_COLUMNS, .family = fam, .cor = c, .op = -1, \
     .epilogue = EPI_GAUSS_MI, .zero_diag = 1, .warning = WARN_SD0, .cost = cst, \
     .cost_pairwise = cst}
    GAUSS_MI("mim.pearson", FAMILY_PRODUCT, COR_PEARSON, 1),
    GAUSS_MI("mim.spearman", FAMILY_PRODUCT, COR_SPEARMAN, 1),
    GAUSS_MI("mim.kendall", FAMILY_PAIR, COR_KENDALL, 100),
#undef GAUSS_MI
    /* Kraskov's MI between columns (gpu_cor_edges(method = "knnmi")): the
     * producer of gpu_knnmi()'s row below, the variables read as columns */
    {.name = "knnmi", .space = MEASURE_COLUMNS, .family = FAMILY_KNNMI, .cor = -1, .op = -1,
     .cost = 3000, .cost_pairwise = 3000},

    /* between rows: gpu_dist(), gpu_knn(), gpu_hclust(); stats::dist()'s
     * six first, in its order */
#define DIST_OP(nm, code, warn) \
    {.name = nm, .space = MEASURE_ROWS, .family = FAMILY_DISTANCE, .cor = -1, \
     .op = code, .warning = warn, .min_coords = 1, .cost = 1, .cost_pairwise = 1}
    DIST_OP("euclidean", DIST_EUCLIDEAN, WARN_NONE),
    DIST_OP("maximum", DIST_MAXIMUM, WARN_NONE),
    DIST_OP("manhattan", DIST_MANHATTAN, WARN_NONE),
    DIST_OP("canberra", DIST_CANBERRA, WARN_NONE),
    DIST_OP("binary", DIST_BINARY, WARN_NONFINITE),
    DIST_OP("minkowski", DIST_MINKOWSKI, WARN_NONE),
#undef DIST_OP
    /* correlation distances: the rows' correlations (pairwise where a row
     * has NA), 1 - r or 1 - |r| applied by the sink; a row needs two
     * coordinates (a cosine one) */
#define COR_DIST(nm, fam, c, pr, epi, minc, cst, cst_pw) \
    {.name = nm, .space = MEASURE_ROWS, .family = fam, .cor = c, .prep = pr, .op = -1, \
     .epilogue = epi, .warning = WARN_SD0, .min_coords = minc, .cost = cst, \
     .cost_pairwise = cst_pw}
    COR_DIST("correlation", FAMILY_PRODUCT, COR_PEARSON, 0, EPI_ONE_MINUS, 2, 1, 10),
    COR_DIST("abscorrelation", FAMILY_PRODUCT, COR_PEARSON, 0, EPI_ONE_MINUS_ABS, 2, 1, 10),
    COR_DIST("spearman", FAMILY_PRODUCT, COR_SPEARMAN, 0, EPI_ONE_MINUS, 2, 1, 50),
    COR_DIST("kendall", FAMILY_PAIR, COR_KENDALL, 0, EPI_ONE_MINUS, 2, 100, 100),
    COR_DIST("cosine", FAMILY_PRODUCT, COR_PEARSON, PREP_UNCENTRED, EPI_ONE_MINUS, 1, 1, 10),
#undef COR_DIST
    /* gpu_knnmi(): parmigene's k-NN mutual information between rows (k in
     * the problem); it needs k + 1 >= 3 samples.  CPU cost from
     * bench/knnmi.R: 500 rows of 300 samples, k = 3, took about 300 ns per
     * pair-observation on a 2-core machine */
    {.name = "knnmi", .space = MEASURE_ROWS, .family = FAMILY_KNNMI, .cor = -1, .op = -1,
     .min_coords = 3, .cost = 3000, .cost_pairwise = 3000},
};

size_t gc_measure_count(void) { return sizeof measures / sizeof measures[0]; }

const gc_measure *gc_measure_at(size_t k)
{
    return k < gc_measure_count() ? &measures[k] : NULL;
}

const gc_measure *gc_measure_find(const char *name, int space)
{
    for (size_t k = 0; k < gc_measure_count(); k++)
        if (measures[k].space == space && strcmp(measures[k].name, name) == 0)
            return &measures[k];
    return NULL;
}

const char *const gc_use_names[5] = {"everything", "all.obs", "complete.obs",
                                     "na.or.complete", "pairwise.complete.obs"};

int gc_use_find(const char *name)
{
    for (int k = 0; k < 5; k++)
        if (strcmp(gc_use_names[k], name) == 0) return k;
    return -1;
}

/* stats' rule for the warning outside pairwise mode (cov_na_1/2 and
 * cov_complete1/2): a pair of NA-free columns of which one has sd 0; in the
 * one-matrix case stats looks at pairs j < i from the side of an NA-free i. */
int gc_sd0_rule(const unsigned char *fx, size_t p, const unsigned char *fy,
                 size_t q)
{
    const unsigned ZERO = gc_zero_sd_flags(fy != NULL);
    if (!fy) {
        int seen_zero = 0;
        for (size_t i = 0; i < p; i++) {
            if (fx[i] & COL_HAS_NA) continue;
            if ((i > 0 && (fx[i] & ZERO)) || seen_zero) return 1;
            if (fx[i] & ZERO) seen_zero = 1;
        }
        return 0;
    }
    int zx = 0, okx = 0, zy = 0, oky = 0;
    for (size_t i = 0; i < p; i++)
        if (!(fx[i] & COL_HAS_NA)) { okx = 1; zx |= (fx[i] & ZERO) != 0; }
    for (size_t j = 0; j < q; j++)
        if (!(fy[j] & COL_HAS_NA)) { oky = 1; zy |= (fy[j] & ZERO) != 0; }
    return (zx && oky) || (zy && okx);
}
