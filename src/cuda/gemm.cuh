/*
 * gemm.cuh -- C = A^T B in double or float through cuBLAS, one name for
 * both (the producers' templates pick the overload): the correlation
 * panels (cor.cu) and the TOM's product against its adjacency (tom.cu).
 */
#ifndef GPUCOR_GEMM_CUH
#define GPUCOR_GEMM_CUH
#include <cublas_v2.h>

static inline cublasStatus_t gemm_tn(cublasHandle_t h, int m, int n, int k,
                                     const double *a, int lda, const double *b, int ldb,
                                     double *c, int ldc)
{
    const double one = 1.0, zero = 0.0;
    return cublasDgemm(h, CUBLAS_OP_T, CUBLAS_OP_N, m, n, k, &one, a, lda, b, ldb, &zero,
                       c, ldc);
}
static inline cublasStatus_t gemm_tn(cublasHandle_t h, int m, int n, int k,
                                     const float *a, int lda, const float *b, int ldb,
                                     float *c, int ldc)
{
    const float one = 1.0f, zero = 0.0f;
    return cublasSgemm(h, CUBLAS_OP_T, CUBLAS_OP_N, m, n, k, &one, a, lda, b, ldb, &zero,
                       c, ldc);
}
#endif
