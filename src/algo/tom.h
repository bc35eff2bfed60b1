/*
 * tom.h -- WGCNA's topological overlap (TOM) from an adjacency, shared by
 * the CPU driver (tom.c) and the GPU's (cuda/tom.cu).
 *
 * With the diagonal of the adjacency A set to 1, k_i = sum_j |a_ij| (the
 * diagonal's 1 included) and L = A A (so L_ij holds 2 a_ij besides the
 * paths through third genes), TOMsimilarity's C code (tomSimilarityFromAdj)
 * makes of each pair, with den1 = min(k_i, k_j) or (k_i + k_j) / 2:
 *
 *   unsigned        (L - a) / (den1 - a)          0 when the denominator is 0
 *   signed          |L - a| / (den1 - |a|)
 *   signed Nowick   (L - a) / (den1 - |a|)
 *   "... 2" types   (a + r) / 2 (|a + r| / 2 signed), r = (L - 2a) / (den - 1),
 *                   0 when den = den1 - |a| <= 1
 *
 * A gene whose row of A holds an NA (a constant gene: every row then)
 * makes its pairs NA; the diagonal of the TOM is 1.
 */
#ifndef GPUCOR_TOM_H
#define GPUCOR_TOM_H

#include "../engine/engine.h"

enum { TOM_NONE = 0, TOM_UNSIGNED = 1, TOM_SIGNED = 2, TOM_NOWICK = 3,
       TOM_UNSIGNED2 = 4, TOM_SIGNED2 = 5, TOM_NOWICK2 = 6 };

GC_HOST_DEVICE static inline double gc_tom_value(int type, int mean_denom, double L,
                                                 double a, double ki, double kj)
{
    double den1 = mean_denom ? (ki + kj) / 2 : (ki < kj ? ki : kj);
    double aa = (type == TOM_UNSIGNED || type == TOM_UNSIGNED2) ? a : fabs(a);
    double den = den1 - aa;
    if (type <= TOM_NOWICK) {
        if (den == 0) return 0;
        return type == TOM_SIGNED ? fabs(L - a) / den : (L - a) / den;
    }
    double r = den <= 1 ? 0 : (L - a * 2) / (den - 1);
    return type == TOM_SIGNED2 ? fabs(a + r) / 2 : (a + r) / 2;
}

/* The adjacency a TOM type is made of (tomSimilarity's remapping): a
 * signed TOM of an unsigned network, and every "signed Nowick", keep the
 * sign of r. */
static inline int gc_tom_adjacency(int type, int epi)
{
    if (type == TOM_NOWICK) return EPI_ADJ_KEEP_SIGN;
    if (type == TOM_SIGNED && epi == EPI_ADJ_UNSIGNED) return EPI_ADJ_KEEP_SIGN;
    return epi;
}

typedef struct {
    int type;          /* TOM_* (not TOM_NONE) */
    int mean_denom;    /* TOMDenom = "mean" */
} gc_tom_args;

/* CPU: the TOM of the n x n adjacency A (leading dimension ld, a multiple
 * of 4, rows n .. ld zero) into sink (a dense symmetric matrix or a
 * 'dist').  A's diagonal becomes 1 and its NAs 0 (their genes' pairs NA).
 * Returns a status; *team: the threads that ran; *nbad: the genes whose
 * row of A held an NA. */
int gc_tom_cpu(double *A, size_t n, size_t ld, const gc_tom_args *ta,
               const gc_sink *sink, const gc_host *host, int *team, size_t *nbad);

/* Diagonal to 1, NAs to 0, and k_i (NaN for a gene whose row had an NA):
 * columns [c0, c1) of A. */
void gc_tom_degrees(double *A, size_t n, size_t ld, size_t c0, size_t c1, double *k);

/* gpu_tom(adjacency =)'s checks of the n x n A, as R/wgcna.R states them:
 * ADJ_ASYMMETRIC when two mirrored values differ by more than tol (pairs
 * with an NA aside), else ADJ_RANGE when a value is outside [lo, 1]; *na:
 * some value is NA or NaN.  One pass over A by 64 x 64 tiles on nthreads,
 * in chunks of columns with Ctrl-C between them (ADJ_INTERRUPTED). */
enum { ADJ_OK = 0, ADJ_ASYMMETRIC, ADJ_RANGE, ADJ_INTERRUPTED };
int gc_adjacency_check(const double *A, size_t n, double lo, double tol, int nthreads,
                       const gc_host *host, int *na);

/* GPU (cuda/tom.cu): open() takes the device memory of the n x n
 * adjacency (*dev_a, leading dimension n, float when single) on 'device';
 * it is filled by the correlation engine (SINK_DENSE_DEVICE) or upload()
 * (in chunks, with Ctrl-C between them);
 * run() makes the TOM into sink; close() frees all. */
typedef struct gc_tom_dev gc_tom_dev;
int gc_tom_cuda_open(size_t n, int device, int single, double gpu_memory,
                     gc_tom_dev **hp, void **dev_a, char *msg, size_t msgcap);
int gc_tom_cuda_upload(gc_tom_dev *h, const double *A, const gc_host *host, char *msg,
                       size_t msgcap);
int gc_tom_cuda_run(gc_tom_dev *h, const gc_tom_args *ta, const gc_sink *sink,
                    gc_host *host, size_t *nbad, char *msg, size_t msgcap);
void gc_tom_cuda_close(gc_tom_dev *h);

#endif
