/*
 * prep.cuh -- getting columns ready for the product path on the device:
 * ranks (Spearman) and standardization (Pearson, Spearman, cosine).
 */
#ifndef GPUCOR_PREP_CUH
#define GPUCOR_PREP_CUH
#include "check.cuh"

/* Mid-ranks of each of the v columns of a (m rows, stride m), in place; NaN
 * stays NaN.  Any m: the sort is CUB's segmented sort, not a power-of-two
 * network. */
int gpucor_rank_columns(double *a, size_t m, size_t v, cudaStream_t st,
                        char *msg, size_t msgcap);

/* For re-ranking on subsets (pairwise Spearman): per column, the rows in
 * sorted order (NaN last) in ord, the tie group [gs[t], ge[t]) of each sorted
 * position and the number of non-NaN values in obs.  a keeps its values. */
int gpucor_sort_columns(double *a, size_t m, size_t v, int *ord, int *gs,
                        int *ge, int *obs, cudaStream_t st, char *msg,
                        size_t msgcap);

/* center: 1 centred, 0 not (cosine), STANDARDIZE_RAW: the column as it is
 * (prepared by the caller, PREP_RAW; no zero-sd flag). */
#define STANDARDIZE_RAW 2

/* z[, c] = (a[, c] - mean) / sqrt(sum of squares) as T; flags[c] gets
 * COL_HAS_NA (NaN present) / COL_ZERO_SD (all values equal, or a spread
 * that underflows a double as stats' cor() treats it: r_rule 1 the
 * variance, as without y; r_rule 2 the standard deviation, as with y). */
template <typename T>
int gpucor_standardize(const double *a, size_t m, size_t v, int center,
                       int r_rule, T *z, unsigned char *flags, cudaStream_t st,
                       char *msg, size_t msgcap);

/* R's NA_real_ (a NaN whose low word is 1954); in float a NaN with payload
 * GPUCOR_FLOAT_NA_BITS, which the host copy-out turns into NA_real_ (a float
 * cannot hold R's payload). */
template <typename T> __device__ inline T na_value(void);
template <> __device__ inline double na_value<double>(void)
{
    return __longlong_as_double(0x7ff00000000007a2LL);
}
template <> __device__ inline float na_value<float>(void)
{
    return __int_as_float((int) GPUCOR_FLOAT_NA_BITS);
}
#endif
