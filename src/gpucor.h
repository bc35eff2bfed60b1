/*
 * gpucor.h -- status codes, method enums and the prototypes shared by the
 * .Call entry points (cor.c, dist.c, device.c) and the R-free engines in
 * cpu/ and cuda/.  Nothing here includes R headers: cpu/ and cuda/ must
 * build without R.
 */
#ifndef GPUCOR_H
#define GPUCOR_H

#include <stddef.h>

/* Status codes returned by every engine function.  The entry points turn
 * them into R errors after freeing what they own. */
typedef enum {
    GPUCOR_OK = 0,
    GPUCOR_ERR_ALLOC,      /* host allocation failed */
    GPUCOR_ERR_INTERRUPT,  /* user interrupt between tiles */
    GPUCOR_ERR_NO_DEVICE,  /* no usable CUDA device / driver */
    GPUCOR_ERR_CUDA,       /* CUDA runtime or cuBLAS failure */
    GPUCOR_ERR_INVALID     /* invalid argument reached the engine */
} gpucor_status;

/* Correlation methods: same order as the 'method' vector of gpu_cor() in
 * R/cor.R (0-based here, 1-based there). */
enum { COR_PEARSON = 0, COR_SPEARMAN = 1, COR_KENDALL = 2 };

/* 'use' modes: same order as .gpucor_uses in R/cor.R. */
enum {
    USE_EVERYTHING = 0, USE_ALL_OBS = 1, USE_COMPLETE_OBS = 2,
    USE_NA_OR_COMPLETE = 3, USE_PAIRWISE = 4
};

/* Distance methods: same order as the 'method' vector of gpu_dist() in
 * R/dist.R.  The first six are stats::dist()'s, in its order. */
enum {
    DIST_EUCLIDEAN = 0, DIST_MAXIMUM, DIST_MANHATTAN, DIST_CANBERRA,
    DIST_BINARY, DIST_MINKOWSKI, DIST_CORRELATION, DIST_ABSCORRELATION,
    DIST_SPEARMAN, DIST_KENDALL, DIST_COSINE
};

/* R's NA_real_ (a NaN with a payload), set once by R_init_gpucor so the
 * engines can write R's NA without including R headers. */
extern double gpucor_na_real;

/* Interrupt hook: the engines call it between tiles from the master thread.
 * It returns nonzero when the user asked to stop (the entry point supplies
 * one built on R_ToplevelExec, so no longjmp crosses engine code). */
typedef int (*gpucor_interrupt_fn)(void);

/* ---- device queries (cuda/device.cu; stubbed in device.c without CUDA) */
typedef struct {
    int device_count;          /* number of CUDA devices seen */
    int device;                /* device used (0) */
    char name[256];
    double mem_total;          /* bytes */
    double mem_free;           /* bytes */
    int cc_major, cc_minor;
    int driver_version;        /* e.g. 13000 */
    int runtime_version;
} gpucor_device_info;

/* Fills *info for device 0.  Returns GPUCOR_OK, or GPUCOR_ERR_NO_DEVICE /
 * GPUCOR_ERR_CUDA with a human-readable reason in msg. */
int gpucor_cuda_query(gpucor_device_info *info, char *msg, size_t msglen);

/* One row of gpu_info()$devices: what the runtime says about a device
 * without creating a context on it. */
typedef struct {
    char name[256];
    double mem_total;
    int cc_major, cc_minor, sms;
} gpucor_device_row;
/* Rows for devices 0 .. min(count, max) - 1; returns how many. */
int gpucor_cuda_devices(gpucor_device_row *rows, int max);

#endif
