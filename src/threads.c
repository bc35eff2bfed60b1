/*
 * threads.c -- how many CPU threads an engine call may use, and fork safety.
 *
 * GNU OpenMP's thread pool does not survive fork(): in a forked child
 * (parallel::mclapply, BiocParallel's MulticoreParam, a FORK cluster) of a
 * process that has run a parallel region, the next region with more than one
 * thread waits forever for pool threads that exist only in the parent.  As
 * data.table and fst do, a pthread_atfork() child handler marks the child,
 * and every engine call there runs on one thread: a one-thread region never
 * touches the pool.  (The R layer's choice of the count -- option, OpenMP
 * environment variables, R CMD check's limit -- is in R/checks.R.)
 *
 * The CUDA side has the same problem (a context does not survive fork);
 * gpu_available() says so in the child, and releasing the cached context
 * there only forgets it (see gpucor_gpu_release in init.c).
 */
#include <R.h>
#include <Rinternals.h>
#ifndef _WIN32
#include <pthread.h>
#endif
#include "status.h"

static volatile int in_forked_child = 0;

#ifndef _WIN32
static void atfork_child(void)
{
    in_forked_child = 1;
}
#endif

void gpucor_threads_init(void)
{
#ifndef _WIN32
    static int registered = 0;
    if (!registered && pthread_atfork(NULL, NULL, atfork_child) == 0)
        registered = 1;
#endif
}

int gpucor_forked_child(void)
{
    return in_forked_child;
}

int gpucor_nthreads(int nt)
{
    if (nt == NA_INTEGER || nt < 1) nt = 1;
    return in_forked_child ? 1 : nt;
}

/* The number of processors OpenMP sees; 1 in a forked child (see above) and
 * in a build without OpenMP. */
SEXP gpucor_max_threads(void)
{
#ifdef _OPENMP
    extern int omp_get_num_procs(void);
    return ScalarInteger(in_forked_child ? 1 : omp_get_num_procs());
#else
    return ScalarInteger(1);
#endif
}
