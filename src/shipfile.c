/*
 * shipfile.c -- a double vector written to a file and read back whole:
 * how a large input reaches BiocParallel's workers on this machine
 * (R/blocks.R, .bp_ship()), once for all of them instead of once a job
 * through BiocParallel's sockets.  Native byte order, no header: the file
 * lives only for the call, on the machine that wrote it.
 */
#include <R.h>
#include <Rinternals.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#define SHIP_CHUNK ((size_t) 1 << 26)   /* values a call of fwrite or fread */

/* x's values into file 'path'; TRUE, or FALSE when the file could not be
 * written whole (the caller sends x through the sockets instead). */
SEXP gpucor_ship_write(SEXP x, SEXP path)
{
    if (TYPEOF(x) != REALSXP) error("internal error: only doubles are shipped");
    if (!isString(path) || XLENGTH(path) != 1) error("internal error: invalid path");
    const char *fn = R_ExpandFileName(translateChar(STRING_ELT(path, 0)));
    FILE *f = fopen(fn, "wb");
    if (!f) return ScalarLogical(FALSE);
    const double *v = REAL(x);
    size_t n = (size_t) XLENGTH(x), done = 0;
    while (done < n) {
        size_t c = n - done < SHIP_CHUNK ? n - done : SHIP_CHUNK;
        if (fwrite(v + done, sizeof(double), c, f) != c) break;
        done += c;
    }
    int ok = fclose(f) == 0 && done == n;
    if (!ok) remove(fn);
    return ScalarLogical(ok);
}

/* The n doubles of file 'path', as a new vector. */
SEXP gpucor_ship_read(SEXP path, SEXP len)
{
    if (!isString(path) || XLENGTH(path) != 1) error("internal error: invalid path");
    double dn = asReal(len);
    if (ISNAN(dn) || dn < 0 || dn > (double) R_XLEN_T_MAX) error("internal error: invalid length");
    const char *fn = R_ExpandFileName(translateChar(STRING_ELT(path, 0)));
    size_t n = (size_t) dn, done = 0;
    SEXP ans = PROTECT(allocVector(REALSXP, (R_xlen_t) n));   /* before the file opens */
    double *v = REAL(ans);
    FILE *f = fopen(fn, "rb");
    if (!f)
        error("cannot open the input file '%s' that the main process wrote (%s): "
              "are the BiocParallel workers on another machine?", fn, strerror(errno));
    while (done < n) {
        size_t c = n - done < SHIP_CHUNK ? n - done : SHIP_CHUNK;
        if (fread(v + done, sizeof(double), c, f) != c) break;
        done += c;
    }
    int extra = fgetc(f) != EOF;
    fclose(f);
    if (done != n || extra)
        error("the input file '%s' is not the one the main process wrote", fn);
    UNPROTECT(1);
    return ans;
}
