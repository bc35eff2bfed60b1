/*
 * shrink.h -- corpcor's shrinkage correlation and partial correlation
 * (Schaefer and Strimmer 2005) as columns the engine multiplies.
 *
 * With weights w (sum 1), h1 = 1 / (1 - sum w^2) and the weighted
 * standardized data xs (corpcor's wt.scale), let z_i = sqrt(w) * xs_i and
 * r0 = h1 Z'Z.  The shrinkage correlation is (1 - lambda) r0 off the
 * diagonal and 1 on it: the products of the columns sqrt((1 - lambda) h1)
 * z_i.  Its inverse, by the eigenvectors Q and values d of the smaller Gram
 * matrix of Y = sqrt((1 - lambda) h1) Z, is (I - U'U) / lambda with
 * U = diag(1 / sqrt(lambda + d)) Q'Y (Woodbury; r = min(n, p) rows), so the
 * partial correlation of i and j is u_i.u_j / sqrt((1 - |u_i|^2)(1 - |u_j|^2)):
 * again products of prepared columns, v_i = u_i / sqrt(1 - |u_i|^2).  No
 * p x p matrix is made before the engine's.  R (R/shrink.R) does the
 * eigen decomposition of the r x r Gram matrix; these are the O(n p) and
 * O(r^2 p) steps.
 */
#ifndef GPUCOR_SHRINK_H
#define GPUCOR_SHRINK_H

#include <stddef.h>

/* corpcor's moments and the sums its lambda estimate needs.  x: n x p,
 * column-major; w: n weights summing to 1.  z (n x p, column-major) gets
 * sqrt(w_k) (x_ki - m_i) / s_i, 0 for a column of zero scale (variance
 * below DBL_EPSILON, corpcor's rule; zero[i] set); er2 = sum over i != j of
 * sum_k w_k xs_ki^2 xs_kj^2, z4 = sum_i |z_i|^4.  Two-pass weighted means
 * (corpcor's are one-pass: E[x^2] - m^2).  Returns 0, or 1 when out of
 * memory. */
int gc_shrink_scale(const double *x, size_t n, size_t p, const double *w,
                    double *z, int *zero, double *er2, double *z4, int nthreads);

/* c = t(a) b: a is m x na, b m x nb (column-major, stride m); b NULL:
 * t(a) a, exactly symmetric.  rows nonzero: a b' of the rows instead
 * (a is na x m, b nb x m).  c is na x nb.  Returns 0, or 1 when out of
 * memory. */
int gc_crossprod(const double *a, size_t na, const double *b, size_t nb, size_t m,
                 int rows, double *c, int nthreads);

/* out[k] = a[k] * f, k < len, on nthreads (the shrinkage correlation's
 * columns: fresh memory first touched by all threads). */
void gc_scale_copy(const double *a, size_t len, double f, double *out, int nthreads);

/* The partial correlation's columns: u_i = t(m) z_i (m: n x r, the scaled
 * eigenvectors; z: n x p), u2[i] = |u_i|^2, v_i = u_i / sqrt(1 - u2[i])
 * into v (r x p).  Returns 0, or 1 when out of memory. */
int gc_shrink_partial(const double *m, size_t r, const double *z, size_t n, size_t p,
                      double *v, double *u2, int nthreads);

#endif
