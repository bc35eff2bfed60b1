# Issue 9: on the CPU the tile size decides only how the work is cut, never
# a value: each pair's sums run over the observations in the same order
# whatever the tile.  So results are bitwise identical across forced tile
# sides, for every method, 'use' mode and sink (matrix, matrix against y,
# 'dist').  (On the GPU, cuBLAS may choose another kernel for another panel
# width, so panel widths are held to stats by the property test instead.)

test_that("CPU results are bitwise identical whatever the tile size", {
  info <- new_seed()
  x <- matrix(rnorm(37 * 29), 37)
  x[sample(length(x), 60)] <- NA
  x[, 5] <- 2                                   # a constant column
  y <- matrix(rnorm(37 * 6), 37)
  old <- options(gpucor.cpu_tile = NULL)
  on.exit(options(old))
  run_all <- function(b) {
    out <- list()
    for (m in c("pearson", "spearman", "kendall"))
      for (u in c("everything", "complete.obs", "pairwise.complete.obs")) {
        out[[paste(m, u)]] <- suppressWarnings(gpucor::gpu_cor(x, use = u, method = m, backend = b))
        out[[paste(m, u, "y")]] <- suppressWarnings(gpucor::gpu_cor(x, y, u, m, backend = b))
      }
    for (m in c("euclidean", "maximum", "manhattan", "canberra", "binary", "minkowski",
                "correlation", "abscorrelation", "spearman", "kendall", "cosine")) {
      out[[m]] <- suppressWarnings(gpucor::gpu_dist(x, m, p = 3, backend = b))
      out[[paste(m, "t")]] <- suppressWarnings(gpucor::gpu_dist(t(x), m, p = 3, backend = b))
    }
    out
  }
  want <- run_all("cpu")
  for (size in c(1, 2, 3, 7, 16)) {
    options(gpucor.cpu_tile = size)
    got <- run_all("cpu")
    for (k in names(want))
      expect_identical(got[[k]], want[[k]], label = sprintf("tile %d: %s; %s", size, k, info))
  }
})
