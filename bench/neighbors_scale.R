# bench/neighbors_scale.R -- where the time of a large exact k-NN goes on the
# GPU (issue 39's 1,000,000-cell cases): gpu_knn's own engine timing and the
# whole findKNN()/queryKNN() calls at growing N, and makeSNNGraph split into
# its search and bluster's graph building.
#   Rscript bench/neighbors_scale.R [N ...]     (default 100000 200000 1000000)
# (GPUCOR_BENCH_SNN=0 leaves the SNN part out, GPUCOR_BENCH_LOOP=0 the
# growing N; with several GPUs, findKNN at the largest N on one and on all)
suppressMessages({library(gpucor); library(BiocNeighbors)})
ns <- as.numeric(commandArgs(TRUE)); if (!length(ns)) ns <- c(1e5, 2e5, 1e6)
cat(sprintf("bench/neighbors_scale.R, %s, %s\n", format(Sys.time(), "%Y-%m-%d %H:%M"),
            paste(gpu_info()$devices$name, collapse = " + ")))
el <- function(expr) system.time(expr, gcFirst = FALSE)[["elapsed"]]
set.seed(1)
invisible(gpu_knn(matrix(rnorm(2000 * 50), 2000), 5))
options(gpucor.profile = TRUE)
for (n in if (Sys.getenv("GPUCOR_BENCH_LOOP", "1") != "0") ns) {
  x <- matrix(rnorm(n * 50), n, 50)
  t1 <- el(r <- gpu_knn(x, 30))
  tm <- attr(r, "timing")
  t2 <- el(f <- findKNN(x, 30, BNPARAM = GpucorParam()))
  cat(sprintf("N = %7d  gpu_knn k=30 %.2f s  findKNN %.2f s  same %s\n", n, t1, t2,
              identical(r$index, f$index)))
  if (!is.null(tm)) print(tm)
  rm(r, f); invisible(gc())
}
# every GPU of the machine against its first (issue 39's 4-GPU case)
ndev <- nrow(gpu_info()$devices)
if (ndev > 1) {
  n <- max(ns)
  if (!exists("x") || nrow(x) != n) x <- matrix(rnorm(n * 50), n, 50)
  # every device's context made, as the first one's was above
  invisible(gpu_knn(matrix(rnorm(20000 * 50), 20000), 5, devices = "all"))
  t1 <- el(one <- findKNN(x, 30, BNPARAM = GpucorParam(devices = 0L)))
  t2 <- el(all <- findKNN(x, 30, BNPARAM = GpucorParam(devices = "all")))
  t3 <- el(g <- gpu_knn(x, 30, devices = "all"))
  cat(sprintf("gpu_knn on every GPU %.2f s, engine timing:", t3), attr(g, "timing"), "\n")
  rm(g)
  cat(sprintf("findKNN %d x 50 k=30: one GPU %.2f s, %d GPUs %.2f s, %.2fx, identical %s\n",
              n, t1, ndev, t2, t1 / t2, identical(one, all)))
  rm(one, all); invisible(gc())
}
if (max(ns) >= 1e6) {
  if (!exists("x") || nrow(x) != max(ns)) x <- matrix(rnorm(max(ns) * 50), max(ns), 50)
  ref <- x[1:1e5, ] + 0.1
  t3 <- el(q <- queryKNN(ref, x, 10, BNPARAM = GpucorParam()))
  cat(sprintf("queryKNN 100000 refs x %d queries k=10: %.2f s\n", nrow(x), t3))
  rm(q)
}
if (Sys.getenv("GPUCOR_BENCH_SNN", "1") != "0" && requireNamespace("bluster", quietly = TRUE)) {
  n <- 2e5
  centers <- matrix(rnorm(10 * 50, sd = 3), 10, 50)
  x <- centers[sample.int(10, n, TRUE), ] + matrix(rnorm(n * 50), n, 50)
  t4 <- el(nn <- findKNN(x, 20, BNPARAM = GpucorParam(), get.distance = FALSE))
  t5 <- el(g <- bluster::neighborsToSNNGraph(nn$index))
  t6 <- el(g2 <- bluster::makeSNNGraph(x, k = 20, BNPARAM = GpucorParam()))
  cat(sprintf("SNN 200000: search %.2f s, neighborsToSNNGraph %.2f s, makeSNNGraph %.2f s\n",
              t4, t5, t6))
  sub <- x[1:20000, ]
  t7 <- el(km <- findKNN(sub, 20, BNPARAM = KmknnParam(),
                          BPPARAM = BiocParallel::MulticoreParam(parallel::detectCores())))
  cat(sprintf("Kmknn findKNN 20000 (of the same clustered data, 16 cores): %.2f s\n", t7))
}
# the process's peak resident memory over everything above
cat(grep("VmHWM", readLines("/proc/self/status"), value = TRUE), "\n")
