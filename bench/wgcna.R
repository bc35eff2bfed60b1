# Issue 11's cases: gpu_tom(), gpu_soft_threshold() and gpu_bicor() against
# WGCNA 1.72 on the same machine (WGCNA with nThreads = 16 on the GPU
# machine, 2 on the CPU cases), each case in its own R process (VmHWM its
# own).  The last column is a checksum of the result (the mean of the TOM
# or bicor matrix, the sum of the soft-threshold table), to compare a case
# with its peer.
#   Rscript bench/wgcna.R [cases...]   (default: the GPU cases; "cpu": the CPU ones)
#   Rscript bench/wgcna.R --one <case>
suppressPackageStartupMessages(library(gpucor))
a <- commandArgs(TRUE)
source("bench/cases.R")
data <- function(p, n = 300) {
  # genes driven by 20 latent factors (a network with modules), as
  # expression data has them
  set.seed(1)
  f <- matrix(rnorm(n * 20), n)
  w <- matrix(rnorm(20 * p) * (runif(20 * p) < 0.1), 20)
  f %*% w + matrix(rnorm(n * p), n)
}
wthreads <- as.integer(Sys.getenv("WGCNA_THREADS", "16"))
wg <- function() suppressPackageStartupMessages(library(WGCNA))
warm <- function() invisible(gpu_tom(data(200, 20), backend = "gpu"))
ck <- function(v) sprintf("%.12g", v)
tom_gpu <- function(p, dist = FALSE, type = "unsigned", precision = "double") function() {
  x <- data(p)
  warm()
  t <- tm(tom <- gpu_tom(x, power = 6, TOMType = type, dist = dist, backend = "gpu",
                         precision = precision))
  list(case = sprintf("gpu_tom %s, 300 x %d, power 6%s%s", type, p,
                      if (dist) ", dist = TRUE" else "",
                      if (precision == "single") ", single" else ""),
       t = t, extra = ck(mean(tom)))
}
tom_wg <- function(p, type = "unsigned") function() {
  x <- data(p)
  wg()
  t <- tm(tom <- TOMsimilarityFromExpr(x, power = 6, TOMType = type, nThreads = wthreads,
                                       verbose = 0))
  list(case = sprintf("  peer: WGCNA::TOMsimilarityFromExpr, %d threads", wthreads), t = t,
       extra = ck(mean(tom)))
}
soft_sum <- function(s) sum(as.matrix(s$fitIndices))
soft_gpu <- function(p) function() {
  x <- data(p)
  warm()
  t <- tm(s <- gpu_soft_threshold(x, backend = "gpu"))
  list(case = sprintf("gpu_soft_threshold, 300 x %d, 15 powers", p), t = t,
       extra = ck(soft_sum(s)))
}
soft_wg <- function(p) function() {
  x <- data(p)
  wg()
  allowWGCNAThreads(wthreads)
  t <- tm(invisible(capture.output(s <- pickSoftThreshold(x, verbose = 0))))
  list(case = sprintf("  peer: WGCNA::pickSoftThreshold (estimate %s)", s$powerEstimate),
       t = t, extra = ck(soft_sum(s)))
}
bicor_gpu <- function(p) function() {
  x <- data(p)
  warm()
  t <- tm(r <- gpu_bicor(x, backend = "gpu"))
  list(case = sprintf("gpu_bicor, 300 x %d", p), t = t, extra = ck(mean(r)))
}
bicor_wg <- function(p) function() {
  x <- data(p)
  wg()
  t <- tm(r <- bicor(x, nThreads = wthreads))
  list(case = sprintf("  peer: WGCNA::bicor, %d threads", wthreads), t = t, extra = ck(mean(r)))
}
cases <- list(
  tom10000 = tom_gpu(10000), wg_tom10000 = tom_wg(10000),
  tom20000 = tom_gpu(20000), wg_tom20000 = tom_wg(20000),
  tomdist50000 = tom_gpu(50000, dist = TRUE, type = "signed"),
  tomdist50000s = tom_gpu(50000, dist = TRUE, type = "signed", precision = "single"),
  soft10000 = soft_gpu(10000), wg_soft10000 = soft_wg(10000),
  soft50000 = soft_gpu(50000),
  bicor20000 = bicor_gpu(20000), wg_bicor20000 = bicor_wg(20000),
  cpu_tom3000 = function() {
    x <- data(3000)
    t <- tm(tom <- gpu_tom(x, power = 6, TOMType = "unsigned", backend = "cpu"))
    list(case = sprintf("CPU engine (%d threads) gpu_tom unsigned, 300 x 3000",
                        as.integer(gpucor:::.threads())), t = t, extra = ck(mean(tom)))
  },
  wg_cpu_tom3000 = tom_wg(3000)
)
run_cases("bench/wgcna.R", cases, a,
          c("tom10000", "wg_tom10000", "tom20000", "wg_tom20000", "tomdist50000",
            "tomdist50000s", "soft10000", "wg_soft10000", "soft50000", "bicor20000",
            "wg_bicor20000"),
          c("cpu_tom3000", "wg_cpu_tom3000"), "checksum", function(r) r$extra)
