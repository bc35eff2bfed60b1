/*
 * eigengene.h -- module eigengenes in one pass (gpu_module_eigengenes(),
 * R/modules.R): for each module of genes, WGCNA::moduleEigengenes()'s
 * summary where its sign is free (align = "along average"): the genes
 * scaled to mean 0 and variance 1, the first right singular vector of the
 * genes x samples matrix, the variance it and the next ones explain, the
 * average scaled expression, the eigengene's sign aligned with it.
 * R-free: the .Call entry point is src/modules.c.
 *
 * A module of m genes over n samples is the matrix M of its scaled values:
 * samples x genes when m <= n, genes x samples otherwise, so that the Gram
 * matrix M'M is the smaller of the two (min(m, n) square).  Its top
 * eigenvectors (LAPACK dsyevr, only those asked for) are the right
 * singular vectors of M: the eigengenes when m > n, the genes' weights when
 * m <= n (the eigengene is then M u, normalized).  A module this code does
 * not summarize as R would (a missing or infinite value, a constant gene,
 * one gene, an eigengene uncorrelated with the average, a LAPACK failure)
 * gets status 1: R summarizes it (imputation, svd's sign, the hub gene).
 */
#ifndef GPUCOR_EIGENGENE_H
#define GPUCOR_EIGENGENE_H

#include <stddef.h>

/* x: n x p (samples x genes, column-major); code[g] in 1..nmod names gene
 * g's module, anything else no module; nve: the components whose variance
 * explained is wanted (1..10).  Out, per module k: pc[k*n ..] the
 * eigengene, ve[k*nve ..] the variance explained (NA past min(m, n)),
 * ae[k*n ..] the average scaled expression, status[k] (0: done, 1: leave
 * to R).  Returns 0, or -1 when memory ran out (every status then 1). */
int gc_module_eigengenes(const double *x, size_t n, size_t p, const int *code, int nmod,
                         int nve, int nthreads, double *pc, double *ve, double *ae,
                         int *status);

/* A 64-bit hash of len bytes (four interleaved multiply-xor lanes): a
 * fingerprint of a data matrix for the module-summary cache. */
unsigned long long gc_hash_bytes(const void *data, size_t len, unsigned long long seed);

#endif
