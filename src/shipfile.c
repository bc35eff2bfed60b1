/*
 * shipfile.c -- a numeric vector written to a file and read back whole:
 * how a large input reaches BiocParallel's workers on this machine, once
 * for all of them instead of once a job through BiocParallel's sockets,
 * and how a worker's large result comes back (R/blocks.R, .bp_ship() and
 * .bp_stash()).  Native byte order, no header: the file lives only for
 * the call, on the machine that wrote it.
 */
#include <R.h>
#include <Rinternals.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

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

/* x's values into file 'path'; TRUE, or FALSE when the file could not be
 * written whole (the caller sends x through the sockets instead). */
SEXP gpucor_ship_write(SEXP x, SEXP path)
{
    size_t es = ship_size(TYPEOF(x));
    if (!isString(path) || XLENGTH(path) != 1) error("internal error: invalid path");
    const char *fn = R_ExpandFileName(translateChar(STRING_ELT(path, 0)));
    FILE *f = fopen(fn, "wb");
    if (!f) return ScalarLogical(FALSE);
    const char *v = (const char *) ship_data(x);
    size_t n = (size_t) XLENGTH(x) * es, done = 0;
    while (done < n) {
        size_t c = n - done < SHIP_CHUNK ? n - done : SHIP_CHUNK;
        if (fwrite(v + done, 1, c, f) != c) break;
        done += c;
    }
    int ok = fclose(f) == 0 && done == n;
    if (!ok) remove(fn);
    return ScalarLogical(ok);
}

/* The len values of file 'path', a new vector of R's type 'type' (the
 * name, as typeof() gives it). */
SEXP gpucor_ship_read(SEXP path, SEXP len, SEXP type)
{
    if (!isString(path) || XLENGTH(path) != 1) error("internal error: invalid path");
    if (!isString(type) || XLENGTH(type) != 1) error("internal error: invalid type");
    SEXPTYPE t = str2type(CHAR(STRING_ELT(type, 0)));
    size_t es = ship_size(t);
    double dn = asReal(len);
    if (ISNAN(dn) || dn < 0 || dn > (double) R_XLEN_T_MAX) error("internal error: invalid length");
    const char *fn = R_ExpandFileName(translateChar(STRING_ELT(path, 0)));
    size_t n = (size_t) dn * es, done = 0;
    SEXP ans = PROTECT(allocVector(t, (R_xlen_t) dn));   /* before the file opens */
    char *v = (char *) ship_data(ans);
    FILE *f = fopen(fn, "rb");
    if (!f)
        error("cannot open the file '%s' that another process of this call wrote (%s): "
              "are the BiocParallel workers on another machine?", fn, strerror(errno));
    while (done < n) {
        size_t c = n - done < SHIP_CHUNK ? n - done : SHIP_CHUNK;
        if (fread(v + done, 1, c, f) != c) break;
        done += c;
    }
    int extra = fgetc(f) != EOF;
    fclose(f);
    if (done != n || extra)
        error("the file '%s' is not the one another process of this call wrote", fn);
    UNPROTECT(1);
    return ans;
}
