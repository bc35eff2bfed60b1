/*
 * device.c -- .Call entry point for gpu_info() (R/backend.R).
 *
 * In the CUDA build (GPUCOR_CUDA defined by src/Makevars) it asks
 * cuda/device.cu about device 0; in the CPU-only build it answers without
 * referencing any CUDA symbol.
 */
#include <stdio.h>
#include <string.h>

#include <R.h>
#include <Rinternals.h>

#include "gpucor.h"

static const char *info_names[] = {
    "built_with_cuda", "available", "reason", "device_count", "name",
    "memory_total", "memory_free", "compute_capability",
    "driver_version", "runtime_version", "devices", ""
};

#define MAX_ROWS 64

/* gpu_info()$devices: one row per visible device (none without CUDA). */
static SEXP device_table(void)
{
    static const char *cols[] = {"id", "name", "memory_total",
                                 "compute_capability", "multiprocessors", ""};
    int n = 0;
#ifdef GPUCOR_CUDA
    gpucor_device_row rows[MAX_ROWS];
    n = gpucor_cuda_devices(rows, MAX_ROWS);
#endif
    SEXP df = PROTECT(Rf_mkNamed(VECSXP, cols));
    SEXP id = PROTECT(allocVector(INTSXP, n)), nm = PROTECT(allocVector(STRSXP, n));
    SEXP mem = PROTECT(allocVector(REALSXP, n)), cc = PROTECT(allocVector(STRSXP, n));
    SEXP sm = PROTECT(allocVector(INTSXP, n));
    for (int k = 0; k < n; k++) {
#ifdef GPUCOR_CUDA
        char buf[32];
        INTEGER(id)[k] = k;
        SET_STRING_ELT(nm, k, mkChar(rows[k].name));
        REAL(mem)[k] = rows[k].mem_total;
        snprintf(buf, sizeof buf, "%d.%d", rows[k].cc_major, rows[k].cc_minor);
        SET_STRING_ELT(cc, k, mkChar(buf));
        INTEGER(sm)[k] = rows[k].sms;
#endif
    }
    SET_VECTOR_ELT(df, 0, id);
    SET_VECTOR_ELT(df, 1, nm);
    SET_VECTOR_ELT(df, 2, mem);
    SET_VECTOR_ELT(df, 3, cc);
    SET_VECTOR_ELT(df, 4, sm);
    SEXP rn = PROTECT(allocVector(INTSXP, 2));
    INTEGER(rn)[0] = NA_INTEGER;
    INTEGER(rn)[1] = -n;
    setAttrib(df, R_RowNamesSymbol, rn);
    setAttrib(df, R_ClassSymbol, mkString("data.frame"));
    UNPROTECT(7);
    return df;
}

SEXP gpucor_gpu_info(void)
{
    int nprot = 0;
    int built = 0, status = GPUCOR_ERR_NO_DEVICE;
    char reason[512] = "gpucor was built without CUDA";
    gpucor_device_info info;
    SEXP ans;

    /* Fields that stay unknown are reported as NA. */
    memset(&info, 0, sizeof(info));
    info.mem_total = -1.0;
    info.mem_free = -1.0;
    info.cc_major = -1;
    info.cc_minor = -1;

#ifdef GPUCOR_CUDA
    built = 1;
    status = gpucor_cuda_query(&info, reason, sizeof(reason));
    if (status == GPUCOR_OK)
        reason[0] = '\0';
    else if (reason[0] == '\0')
        snprintf(reason, sizeof(reason), "CUDA device query failed (status %d)", status);
#endif

    ans = PROTECT(Rf_mkNamed(VECSXP, info_names)); nprot++;
    SET_VECTOR_ELT(ans, 0, Rf_ScalarLogical(built));
    SET_VECTOR_ELT(ans, 1, Rf_ScalarLogical(status == GPUCOR_OK));
    SET_VECTOR_ELT(ans, 2, Rf_mkString(reason));
    SET_VECTOR_ELT(ans, 3, Rf_ScalarInteger(info.device_count));
    SET_VECTOR_ELT(ans, 4, info.name[0] != '\0'
                   ? Rf_mkString(info.name) : Rf_ScalarString(NA_STRING));
    SET_VECTOR_ELT(ans, 5, Rf_ScalarReal(info.mem_total >= 0 ? info.mem_total : NA_REAL));
    SET_VECTOR_ELT(ans, 6, Rf_ScalarReal(info.mem_free >= 0 ? info.mem_free : NA_REAL));
    if (info.cc_major >= 0) {
        char cc[32];
        snprintf(cc, sizeof(cc), "%d.%d", info.cc_major, info.cc_minor);
        SET_VECTOR_ELT(ans, 7, Rf_mkString(cc));
    } else {
        SET_VECTOR_ELT(ans, 7, Rf_ScalarString(NA_STRING));
    }
    /* 0 means "no driver" / "no runtime" (the CPU-only build). */
    SET_VECTOR_ELT(ans, 8, Rf_ScalarInteger(info.driver_version > 0
                                            ? info.driver_version : NA_INTEGER));
    SET_VECTOR_ELT(ans, 9, Rf_ScalarInteger(info.runtime_version > 0
                                            ? info.runtime_version : NA_INTEGER));
    SET_VECTOR_ELT(ans, 10, device_table());

    UNPROTECT(nprot);
    return ans;
}
