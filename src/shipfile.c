/*
 * shipfile.c -- a numeric vector written to files and read back whole:
 * how a large input reaches BiocParallel's workers on this machine, once
 * for all of them instead of once a job through BiocParallel's sockets,
 * and how a worker's large result comes back (R/blocks.R, .bp_ship() and
 * .bp_stash()).  The vector is cut into as many equal pieces as there are
 * file names, each written or read by a thread of its own (one thread
 * writing the page cache of a fresh file runs at about 1 GB/s).  Native
 * byte order, no header: the files live only for the call, on the machine
 * that wrote them.
 */
#include <R.h>
#include <Rinternals.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#define SHIP_CHUNK ((size_t) 1 << 29)   /* bytes a call of fwrite or fread */

static size_t ship_size(int type)
{
    switch (type) {
    case REALSXP: return sizeof(double);
    case INTSXP: case LGLSXP: return sizeof(int);
    default: error("internal error: only double, integer and logical vectors are shipped");
    }
    return 0;
}

static void *ship_data(SEXP x)
{
    switch (TYPEOF(x)) {
    case REALSXP: return REAL(x);
    case INTSXP: return INTEGER(x);
    default: return LOGICAL(x);
    }
}

/* The file names, native; the pieces: piece k holds elements
 * [from(k), from(k + 1)) of n. */
static const char **ship_paths(SEXP paths)
{
    if (!isString(paths) || XLENGTH(paths) < 1 || XLENGTH(paths) > 1024)
        error("internal error: invalid paths");
    const char **fn = (const char **) R_alloc((size_t) XLENGTH(paths), sizeof(char *));
    for (R_xlen_t k = 0; k < XLENGTH(paths); k++) {
        const char *e = R_ExpandFileName(translateChar(STRING_ELT(paths, k)));   /* static */
        char *c = R_alloc(strlen(e) + 1, 1);
        strcpy(c, e);
        fn[k] = c;
    }
    return fn;
}

static size_t ship_from(size_t n, size_t pieces, size_t k)
{
    return (size_t) ((double) n * (double) k / (double) pieces);
}

static int ship_threads(SEXP threads, size_t pieces)
{
    int t = asInteger(threads);
    if (t == NA_INTEGER || t < 1) t = 1;
    return (size_t) t < pieces ? t : (int) pieces;
}

/* x's values into the files 'paths' (one piece each, 'threads' threads);
 * TRUE, or FALSE when they could not be written whole (then none is left;
 * the caller sends x through the sockets instead). */
SEXP gpucor_ship_write(SEXP x, SEXP paths, SEXP threads)
{
    size_t es = ship_size(TYPEOF(x));
    const char **fn = ship_paths(paths);
    size_t np = (size_t) XLENGTH(paths), n = (size_t) XLENGTH(x);
    const char *v = (const char *) ship_data(x);
    int failed = 0;
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 1) num_threads(ship_threads(threads, np))
#endif
    for (size_t k = 0; k < np; k++) {
        size_t at = ship_from(n, np, k) * es, len = ship_from(n, np, k + 1) * es - at, done = 0;
        FILE *f = fopen(fn[k], "wb");
        if (f) {
            while (done < len) {
                size_t c = len - done < SHIP_CHUNK ? len - done : SHIP_CHUNK;
                if (fwrite(v + at + done, 1, c, f) != c) break;
                done += c;
            }
            if (fclose(f) != 0) done = 0;
        }
        if (!f || done != len) {
#ifdef _OPENMP
#pragma omp atomic write
#endif
            failed = 1;
        }
    }
    if (failed)
        for (size_t k = 0; k < np; k++) remove(fn[k]);
    return ScalarLogical(!failed);
}

/* The len values of the files 'paths' (pieces as written), a new vector
 * of R's type 'type' (the name, as typeof() gives it). */
SEXP gpucor_ship_read(SEXP paths, SEXP len, SEXP type, SEXP threads)
{
    if (!isString(type) || XLENGTH(type) != 1) error("internal error: invalid type");
    SEXPTYPE t = str2type(CHAR(STRING_ELT(type, 0)));
    size_t es = ship_size(t);
    double dn = asReal(len);
    if (ISNAN(dn) || dn < 0 || dn > (double) R_XLEN_T_MAX) error("internal error: invalid length");
    const char **fn = ship_paths(paths);
    size_t np = (size_t) XLENGTH(paths), n = (size_t) dn;
    SEXP ans = PROTECT(allocVector(t, (R_xlen_t) n));   /* before the files open */
    char *v = (char *) ship_data(ans);
    /* per piece: 0 read whole, 1 not opened (errno in err[]), 2 not that file */
    int *bad = (int *) R_alloc(np, sizeof(int)), *err = (int *) R_alloc(np, sizeof(int));
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 1) num_threads(ship_threads(threads, np))
#endif
    for (size_t k = 0; k < np; k++) {
        size_t at = ship_from(n, np, k) * es, want = ship_from(n, np, k + 1) * es - at, done = 0;
        bad[k] = 0;
        FILE *f = fopen(fn[k], "rb");
        if (!f) {
            bad[k] = 1;
            err[k] = errno;
            continue;
        }
        while (done < want) {
            size_t c = want - done < SHIP_CHUNK ? want - done : SHIP_CHUNK;
            if (fread(v + at + done, 1, c, f) != c) break;
            done += c;
        }
        if (done != want || fgetc(f) != EOF) bad[k] = 2;
        fclose(f);
    }
    for (size_t k = 0; k < np; k++) {
        if (bad[k] == 1)
            error("cannot open the file '%s' that another process of this call wrote (%s): "
                  "are the BiocParallel workers on another machine?", fn[k], strerror(err[k]));
        if (bad[k] == 2)
            error("the file '%s' is not the one another process of this call wrote", fn[k]);
    }
    UNPROTECT(1);
    return ans;
}
