/*
 * simd.h -- four-double vectors through GCC/Clang vector extensions, and the
 * attribute that compiles a hot function twice (AVX2+FMA and baseline) with
 * run-time selection, so one binary is fast on current CPUs and still runs
 * on old ones without -march flags (which CRAN does not allow).
 */
#ifndef GPUCOR_SIMD_H
#define GPUCOR_SIMD_H

#include <string.h>

typedef double v4d __attribute__((vector_size(32)));
typedef long long v4i __attribute__((vector_size(32)));

/* Macros, not functions: passing or returning a 32-byte vector by value
 * in a function compiled without AVX changes the ABI (gcc -Wpsabi). */
#define V4_LOAD(dst, p) memcpy(&(dst), (p), sizeof(v4d))   /* unaligned */
#define V4_SUM(v) (((v)[0] + (v)[1]) + ((v)[2] + (v)[3]))
#define V4_MAX2(a, b) ((a) > (b) ? (a) : (b))
#define V4_MAX(v) V4_MAX2(V4_MAX2((v)[0], (v)[1]), V4_MAX2((v)[2], (v)[3]))
#define V4_ABSMASK ((v4i) {0x7fffffffffffffffLL, 0x7fffffffffffffffLL, \
                           0x7fffffffffffffffLL, 0x7fffffffffffffffLL})
#define V4_ABS(v) ((v4d) ((v4i) (v) & V4_ABSMASK))
/* lane-wise max (a > b ? a : b) without the C++-only vector ?: */
#define V4_VMAX(a, b) ((v4d) (((v4i) (a) & ((a) > (b))) | ((v4i) (b) & ~((a) > (b)))))

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && \
    defined(__linux__)
#define GPUCOR_MULTIVERSION __attribute__((target_clones("arch=haswell", "default")))
#else
#define GPUCOR_MULTIVERSION
#endif

#endif
