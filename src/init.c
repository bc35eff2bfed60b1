/*
 * init.c -- the one registration table of gpucor's .Call entry points.
 */
#include <R.h>
#include <Rinternals.h>
#include <R_ext/Rdynload.h>
#include "gpucor.h"

SEXP gpucor_cor(SEXP x, SEXP y, SEXP method, SEXP use, SEXP rows,
                SEXP threads);
SEXP gpucor_dist(SEXP x, SEXP method, SEXP power, SEXP threads);
SEXP gpucor_gpu_info(void);
SEXP gpucor_max_threads(void);

double gpucor_na_real;

#define CALLDEF(name, n) {#name, (DL_FUNC) &name, n}

static const R_CallMethodDef callMethods[] = {
    CALLDEF(gpucor_cor, 6),
    CALLDEF(gpucor_dist, 4),
    CALLDEF(gpucor_gpu_info, 0),
    CALLDEF(gpucor_max_threads, 0),
    {NULL, NULL, 0}
};

void R_init_gpucor(DllInfo *dll)
{
    gpucor_na_real = NA_REAL;
    R_registerRoutines(dll, NULL, callMethods, NULL, NULL);
    R_useDynamicSymbols(dll, FALSE);
    R_forceSymbols(dll, TRUE);
}
