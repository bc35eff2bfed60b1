/*
 * bct.h -- the Brain Connectivity Toolbox's weighted undirected metrics
 * behind gpu_brain_metrics() (R/bct.R), for many subjects' networks at
 * once.  R-free: the .Call entry point is bct.c in src/.
 *
 * A subject is one n x n weight matrix.  gc_bct_subject() prepares it
 * (diagonal cleared, sign policy, threshold, normalisation, lengths) and
 * computes every metric asked for into the job's outputs; it needs only
 * its own workspace, so a driver may run subjects on any threads (the CPU
 * driver gc_bct_cpu(): OpenMP over subjects, or inside one subject's
 * searches when there are fewer subjects than threads) and a GPU batch
 * driver can sit beside it with the same job.
 *
 * The definitions are BCT's (MATLAB release 2019-03-03): strengths_und,
 * degrees_und, clustering_coef_wu, transitivity_wu, efficiency_wei (global;
 * local = 2 and local = 1), charpath, betweenness_wei, participation_coef,
 * module_degree_zscore, and community_louvain's Q of a given partition;
 * tests/testthat/helper-bct.R is the plain-R reference.
 */
#ifndef GPUCOR_BCT_H
#define GPUCOR_BCT_H

#include <stddef.h>
#include <stdint.h>
#include "../engine/engine.h"

/* the sign policy: order of 'sign' in R/bct.R */
enum { BCT_SIGN_POSITIVE = 0, BCT_SIGN_ABSOLUTE, BCT_SIGN_NEGATIVE };
/* the threshold: none, or the order of 'threshold_type' in R/bct.R */
enum { BCT_THR_NONE = 0, BCT_THR_PROPORTIONAL, BCT_THR_ABSOLUTE };

/* nodal metrics: order of .bct_nodal in R/bct.R */
enum {
    BCT_STRENGTH = 0, BCT_DEGREE, BCT_CLUSTERING, BCT_LOCAL_EFF, BCT_LOCAL_EFF_ORIG,
    BCT_BETWEENNESS, BCT_BETWEENNESS_NORM, BCT_ECCENTRICITY, BCT_PARTICIPATION,
    BCT_MODULE_Z, BCT_NNODAL
};
/* global metrics: order of .bct_global in R/bct.R */
enum {
    BCT_TRANSITIVITY = 0, BCT_GLOBAL_EFF, BCT_CHAR_PATH, BCT_RADIUS, BCT_DIAMETER,
    BCT_MODULARITY, BCT_SIGMA, BCT_OMEGA, BCT_NGLOBAL
};

/* what went wrong in a subject (the entry point words the error) */
enum { BCT_BAD_NONE = 0, BCT_BAD_VALUE, BCT_BAD_ASYMMETRIC, BCT_BAD_LENGTH };

typedef struct {
    const double *w;        /* n x n x nsub, column-major (subject s at w + s n^2) */
    size_t n, nsub;
    int sign;               /* BCT_SIGN_* */
    int thr_type;           /* BCT_THR_* */
    double thr;             /* proportion (0, 1], or the absolute cut */
    int normalize;          /* divide by the largest |weight| (after the threshold) */
    int weights;            /* weight -> length: W_* of apsp.h */
    int include_infinite;   /* charpath's infinite_dist */
    const int *partition;   /* 0-based module labels, n per subject (or n for
                               all when part_stride is 0); NULL: none */
    size_t part_stride;     /* n, or 0 */
    int nmod;               /* labels are 0 .. nmod - 1 */
    int nrand, rewire;      /* small-worldness: random graphs (and lattices) per
                               subject, rewirings per edge (randmio/latmio's ITER) */
    double seed;            /* their seed; subject s's k-th graph has its own stream */
    int nodal_col[BCT_NNODAL];    /* column of each nodal metric, -1: not asked */
    int global_col[BCT_NGLOBAL];  /* column of each global metric, -1: not asked */
    double *nodal;          /* (n nsub) x k: [col * n nsub + s n + i] */
    double *global;         /* nsub x kg: [col * nsub + s] */
} gc_bct_job;

/* The first failure of a run (lowest subject): kind BCT_BAD_*, the pair
 * (0-based) and the user's value there. */
typedef struct {
    int kind;
    size_t subject, i, j;
    double value, other;
} gc_bct_bad;

/* BCT's randmio_und (lattice 0) or latmio_und (lattice 1) of the
 * symmetric n x n w, in place: iter rewirings per edge (Maslov-Sneppen
 * swaps keeping the degrees; the lattice's only where they move weight
 * nearer the diagonal of a random order of the nodes), random numbers from
 * a generator seeded with 'seed'.  ei, ej: n(n - 1)/2 ints, perm: n.
 * Returns the rewirings made.  Where no two edges have four distinct ends
 * it stops (BCT would loop for ever). */
size_t gc_bct_rewire(double *w, size_t n, int lattice, int iter, uint64_t seed, int *ei, int *ej,
                     int *perm);
/* The seed of subject s's k-th random graph (lattice 0) or lattice. */
uint64_t gc_bct_seed(double seed, size_t subject, int lattice, int k);

typedef struct gc_bct_work gc_bct_work;   /* one subject's workspace */

/* A workspace for subjects of n nodes and searches on 'searchers' threads;
 * NULL when out of memory. */
gc_bct_work *gc_bct_work_new(const gc_bct_job *job, int searchers);
void gc_bct_work_free(gc_bct_work *wk);

/* Subject s into the job's outputs, its searches (betweenness sources,
 * local efficiency nodes) on 'searchers' threads (<= the workspace's).
 * host: NULL on a worker thread; from the master thread, its interrupt
 * hook is called between chunks of the subject's searches.  Returns
 * GPUCOR_OK, GPUCOR_ERR_INTERRUPT, or GPUCOR_ERR_INVALID with *bad set. */
int gc_bct_subject(const gc_bct_job *job, size_t s, gc_bct_work *wk, int searchers,
                   gc_host *host, gc_bct_bad *bad);

/* The CPU driver: every subject, on host->opts->nthreads threads;
 * interrupts and progress between groups of subjects.  On
 * GPUCOR_ERR_INVALID, *bad says where (the lowest subject). */
int gc_bct_cpu(const gc_bct_job *job, gc_host *host, int *threads_used, gc_bct_bad *bad);

#endif
