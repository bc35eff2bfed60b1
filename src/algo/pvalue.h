/*
 * pvalue.h -- two-sided p-values of correlations as
 * stats::cor.test(x, y, method =, exact = FALSE) computes them, from the
 * estimate r and the pair's n complete observations (the same arithmetic,
 * in the same order; Rmath's pt and pnorm).  NaN where cor.test gives NA
 * or stops ("not enough finite observations").
 */
#ifndef GPUCOR_PVALUE_H
#define GPUCOR_PVALUE_H

#include <stddef.h>

/* Kendall's tie statistics of one variable: sums over its groups of t
 * tied values of t(t - 1), t(t - 1)(2t + 5) and t(t - 1)(t - 2). */
typedef struct { double a1, a2, a3; } gc_ties;

double gc_p_pearson(double r, double n);
double gc_p_spearman(double r, double n);
double gc_p_kendall(double r, double n, const gc_ties *tx, const gc_ties *ty);
/* The p-value of kind PVALUE_* (engine/measure.h; NaN for none) */
double gc_p_value(int kind, double r, double n, const gc_ties *tx,
                  const gc_ties *ty);
/* The tie statistics of v[0 .. n-1] (no NaN); sorts v in place. */
void gc_kendall_ties(double *v, size_t n, gc_ties *t);

#endif
