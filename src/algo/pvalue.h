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
#include <stdint.h>

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

/* ---- the p-values of a correlation result's pairs (gpu_cor_edges) -------
 * From the problem's columns: with one n for every pair, a function of |r|
 * (gc_pv_abs); otherwise per pair (gc_pv_pair): pairwise with NA, each
 * pair's own complete rows (their count from bit masks; Kendall's ties
 * from the rows themselves), and Kendall's column ties outside it. */
typedef struct {
    int kind;                  /* PVALUE_* */
    double n;                  /* the common number of observations */
    uint64_t *mx, *my;         /* pairwise with NA: observed rows, per column */
    size_t words;
    gc_ties *tx, *ty;          /* Kendall outside pairwise-with-NA */
    const double *x, *y;       /* Kendall pairwise with NA: the data */
    size_t nrow;
    double *scratch;           /* per thread slot: 2 * nrow doubles */
} gc_pv_ctx;

/* c for the columns of x (n x p) and y (n x q; NULL: x), the rows used
 * (rows, nobs; NULL: all), 'kind' (PVALUE_*), pairwise_na: the pairs have
 * their own rows, nslots: the threads that ask at once.  Nonzero: out of
 * memory (c is then freed). */
int gc_pv_init(gc_pv_ctx *c, int kind, const double *x, const double *y, size_t n,
               size_t p, size_t q, const int *rows, size_t nobs, int pairwise_na,
               int nslots);
void gc_pv_free(gc_pv_ctx *c);
/* The pair's number of complete observations. */
double gc_pv_pair_n(const gc_pv_ctx *c, size_t i, size_t j);
/* gc_edges_job's pabs and pvalue, ctx a gc_pv_ctx. */
double gc_pv_abs(void *ctx, double absr);
double gc_pv_pair(void *ctx, size_t i, size_t j, double r);

#endif
