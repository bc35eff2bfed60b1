# The table of measures (src/engine/measure.c) is the one place that says
# what a method name means: R passes names, C looks them up.  R's method
# vectors must be the table's names, in its order.

test_that("R's method names are the C table's, in its order", {
  tb <- gpucor:::.measures()
  # between rows: gpu_dist()'s methods, then gpu_knnmi()'s estimator
  rows <- tb$name[tb$space == "rows"]
  expect_identical(rows, c(gpucor:::.gpucor_dist_methods, "knnmi"))
  expect_identical(rows[1:6], gpucor:::.stats_dist_methods)
  # gpu_cor()'s methods, then those that other functions pass: bicor's
  # prepared columns, gpu_cov()'s pairwise covariances, the shrinkage
  # estimates' prepared columns and build.mim's Gaussian MI (the
  # functions' own argument orders are stats')
  cols <- tb$name[tb$space == "columns"]
  expect_identical(cols[4:11], c("bicor", "covariance", "cor.shrink", "pcor.shrink",
                                 "mim.pearson", "mim.spearman", "mim.kendall", "knnmi"))
  expect_setequal(cols[1:3], eval(formals(gpucor::gpu_cor)$method))
  expect_setequal(cols[1:3], eval(formals(gpucor::gpu_cov)$method))
  expect_setequal(cols[-5], eval(formals(gpucor::gpu_cor_edges)$method))   # not covariance
  expect_setequal(eval(formals(gpucor::gpu_dist)$method), gpucor:::.gpucor_dist_methods)
  expect_setequal(eval(formals(gpucor::gpu_knn)$method), gpucor:::.gpucor_dist_methods)
  expect_identical(tb$uses, gpucor:::.gpucor_uses)
  expect_identical(tb$linkages, gpucor:::.gpucor_hclust_methods)
  expect_setequal(eval(formals(gpucor::gpu_hclust)$method), gpucor:::.gpucor_hclust_methods)
  expect_false(anyDuplicated(paste(tb$space, tb$name)) > 0)
})

test_that("'auto' weighs the work by the table's costs", {
  expect_identical(gpucor:::.cpu_cost("pearson", FALSE), 1)
  expect_identical(gpucor:::.cpu_cost("kendall", FALSE), 100)
  expect_identical(gpucor:::.cpu_cost("spearman", TRUE), 50)
  expect_identical(gpucor:::.cpu_cost("bicor", TRUE), 10)
  expect_identical(gpucor:::.cpu_cost("euclidean", TRUE, "rows"), 1)
  expect_identical(gpucor:::.cpu_cost("cosine", TRUE, "rows"), 10)
  expect_identical(gpucor:::.cpu_cost("kendall", FALSE, "rows"), 100)
})

test_that("an unknown measure or 'use' name is an internal error, not a crash", {
  x <- matrix(as.double(1:12), 4)
  o <- gpucor:::.engine_opts("cpu", "double")
  expect_error(.Call(gpucor:::C_gpucor_cor, x, NULL, "pearsn", "everything", NULL, o, NULL),
               "unknown correlation measure 'pearsn'", fixed = TRUE)
  expect_error(.Call(gpucor:::C_gpucor_cor, x, NULL, 1L, "everything", NULL, o, NULL),
               "unknown correlation measure 'NA'", fixed = TRUE)
  expect_error(.Call(gpucor:::C_gpucor_cor, x, NULL, "pearson", 1L, NULL, o, NULL),
               "invalid 'use'", fixed = TRUE)
  # a distance name is not a correlation, nor the other way round
  expect_error(.Call(gpucor:::C_gpucor_cor, x, NULL, "euclidean", "everything", NULL, o, NULL),
               "unknown correlation measure", fixed = TRUE)
  expect_error(.Call(gpucor:::C_gpucor_dist, x, "bicor", 2, o, NULL),
               "unknown distance measure 'bicor'", fixed = TRUE)
  expect_error(.Call(gpucor:::C_gpucor_knn, x, NULL, "pearson", 2, 1, FALSE, o, NULL),
               "unknown distance measure 'pearson'", fixed = TRUE)
  # gpu_cov's covariances are for pairwise mode only
  expect_error(.Call(gpucor:::C_gpucor_cor, x, NULL, "covariance", "everything", NULL, o, NULL),
               "invalid 'method' or 'use'", fixed = TRUE)
})
