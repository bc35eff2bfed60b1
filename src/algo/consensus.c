/*
 * consensus.c -- the consensus TOM (see consensus.h).  One pass over the
 * pairs: memory is the sets' inputs and the one output, nothing per set.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#include "../engine/engine.h"   /* gc_rpow(): R's x^y */
#include "consensus.h"

/* quantile(v, q, type = 7) of k sorted values, as R's quantile.default:
 * the lower value where the upper one equals it */
static inline double q7(const double *v, size_t k, double q)
{
    double index = 1.0 + (double) (k - 1) * q;
    double lo = floor(index);
    size_t l = (size_t) lo - 1, h = (size_t) ceil(index) - 1;
    if (index > lo && v[h] != v[l]) {
        double g = index - lo;
        return (1 - g) * v[l] + g * v[h];
    }
    return v[l];
}

int gc_consensus_tom(const double *const *d, int from_tom, size_t nsets, size_t len,
                     const double *pw, int mode, double q, const double *w, double *out,
                     double *count, int nthreads)
{
    if (nsets < 1 || nsets > CS_MAX_SETS) return -1;
    if (nthreads < 1) nthreads = 1;
    double *local = calloc((size_t) nthreads * nsets, sizeof(double));
    if (!local) return -2;
    for (size_t s = 0; s < nsets; s++) count[s] = 0;
#pragma omp parallel num_threads(nthreads) if (len > 65536)
    {
        int tid = 0;
#ifdef _OPENMP
        tid = omp_get_thread_num();
#endif
        double *cnt = local + (size_t) tid * nsets;
        double t[CS_MAX_SETS], v[CS_MAX_SETS];
#pragma omp for schedule(static)
        for (size_t i = 0; i < len; i++) {
            for (size_t s = 0; s < nsets; s++) {
                t[s] = from_tom ? d[s][i] : 1 - d[s][i];
                t[s] = gc_rpow(t[s], pw[s]);
            }
            double c = t[0];
            if (mode == CS_MIN) {
                /* pmin(): NaN wins, as in R (no TOM here is NA) */
                for (size_t s = 1; s < nsets; s++)
                    if (isnan(t[s]) || t[s] < c) c = t[s];
            } else if (mode == CS_QUANTILE) {
                memcpy(v, t, nsets * sizeof(double));
                for (size_t a = 1; a < nsets; a++) {
                    double x = v[a];
                    size_t b = a;
                    while (b > 0 && v[b - 1] > x) { v[b] = v[b - 1]; b--; }
                    v[b] = x;
                }
                c = q7(v, nsets, q);
            } else {
                c = w[0] * t[0];
                for (size_t s = 1; s < nsets; s++) c += w[s] * t[s];
            }
            out[i] = 1 - c;
            for (size_t s = 0; s < nsets; s++) cnt[s] += t[s] <= c;
        }
    }
    for (int k = 0; k < nthreads; k++)
        for (size_t s = 0; s < nsets; s++) count[s] += local[(size_t) k * nsets + s];
    free(local);
    return 0;
}
