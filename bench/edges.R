# Issue 10's cases: networks without n^2, side by side with what users do
# today (dense gpu_cor + which()/order(), WGCNA::corAndPvalue + p.adjust).
# Each case runs in its own R process, so that its peak host memory
# (VmHWM) is its own.  Prints one table.
#   Rscript bench/edges.R [cases...]      (default: all; "cpu" for the CPU case)
#   Rscript bench/edges.R --one <case>    (one case, in this process)
suppressPackageStartupMessages(library(gpucor))
a <- commandArgs(TRUE)

source("bench/cases.R")

cases <- list(
  thr = function() {
    set.seed(1); x <- matrix(rnorm(300 * 20000), 300)
    invisible(gpu_cor_edges(x[, 1:100], threshold = 0.2, backend = "gpu"))
    t <- tm(e <- gpu_cor_edges(x, threshold = 0.2, backend = "gpu"))
    list(case = "threshold 0.2, pearson, 300 x 20000", t = t, n = nrow(e))
  },
  thr_peer = function() {
    set.seed(1); x <- matrix(rnorm(300 * 20000), 300)
    t <- tm({r <- gpu_cor(x, backend = "gpu"); w <- which(abs(r) > 0.2 & upper.tri(r), arr.ind = TRUE)})
    list(case = "  peer: dense gpu_cor + which()", t = t, n = nrow(w))
  },
  topk = function() {
    set.seed(1); x <- matrix(rnorm(300 * 20000), 300)
    invisible(gpu_cor_edges(x[, 1:100], top_k = 10, backend = "gpu"))
    t <- tm(e <- gpu_cor_edges(x, top_k = 10, backend = "gpu"))
    list(case = "top_k 10, pearson, 300 x 20000", t = t, n = nrow(e))
  },
  topk_peer = function() {
    set.seed(1); x <- matrix(rnorm(300 * 20000), 300)
    t <- tm({r <- gpu_cor(x, backend = "gpu"); diag(r) <- 0
             o <- apply(abs(r), 2, function(v) order(v, decreasing = TRUE)[1:10])})
    list(case = "  peer: dense gpu_cor + order() per column", t = t, n = length(o))
  },
  fdr = function() {
    set.seed(1); x <- matrix(rnorm(300 * 20000), 300)
    x[, 1:2000] <- x[, 1:2000] + rnorm(300)          # a module of co-expressed genes
    invisible(gpu_cor_edges(x[, 1:100], fdr = 0.05, backend = "gpu"))
    t <- tm(e <- gpu_cor_edges(x, fdr = 0.05, backend = "gpu"))
    list(case = "fdr 0.05, pearson, 300 x 20000", t = t, n = nrow(e))
  },
  fdr_peer = function() {
    if (!requireNamespace("WGCNA", quietly = TRUE)) return(list(case = "  peer: WGCNA not installed", t = NA, n = NA))
    suppressMessages(WGCNA::allowWGCNAThreads(16))
    set.seed(1); x <- matrix(rnorm(300 * 20000), 300)
    x[, 1:2000] <- x[, 1:2000] + rnorm(300)
    t <- tm({cp <- WGCNA::corAndPvalue(x); p <- cp$p[upper.tri(cp$p)]; rm(cp); gc()
             q <- p.adjust(p, "BH"); k <- sum(q <= 0.05)})
    list(case = "  peer: WGCNA::corAndPvalue + p.adjust", t = t, n = k)
  },
  topk_voxels = function() {
    set.seed(1); x <- matrix(rnorm(300 * 100000), 300)
    invisible(gpu_cor_edges(x[, 1:100], top_k = 10, backend = "gpu"))
    t <- tm(e <- gpu_cor_edges(x, top_k = 10, backend = "gpu"))
    list(case = "top_k 10, pearson, 300 x 100000", t = t, n = nrow(e))
  },
  density = function() {
    set.seed(1); x <- matrix(rnorm(50 * 20000), 50)
    invisible(gpu_cor_edges(x[, 1:100], density = 0.001, method = "spearman", backend = "gpu"))
    t <- tm(e <- gpu_cor_edges(x, density = 0.001, method = "spearman", backend = "gpu"))
    list(case = "density 0.001, spearman, 50 x 20000", t = t, n = nrow(e))
  },
  knn50 = function() {
    set.seed(1); x <- matrix(rnorm(100000 * 50), 100000)
    invisible(gpu_knn(x[1:1000, ], 15, backend = "gpu"))
    t <- tm(nn <- gpu_knn(x, 15, backend = "gpu"))
    list(case = "gpu_knn 100000 x 50, k 15", t = t, n = length(nn$index))
  },
  knn300 = function() {
    set.seed(1); x <- matrix(rnorm(100000 * 300), 100000)
    invisible(gpu_knn(x[1:1000, ], 15, backend = "gpu"))
    t <- tm(nn <- gpu_knn(x, 15, backend = "gpu"))
    list(case = "gpu_knn 100000 x 300, k 15", t = t, n = length(nn$index))
  },
  cpu = function() {
    set.seed(1); x <- matrix(rnorm(300 * 5000), 300)
    t <- tm(e <- gpu_cor_edges(x, top_k = 10, backend = "cpu"))
    list(case = sprintf("CPU (%s threads): top_k 10, 300 x 5000", as.integer(getOption("gpucor.threads", parallel::detectCores()))), t = t, n = nrow(e))
  },
  cpu_peer = function() {
    set.seed(1); x <- matrix(rnorm(300 * 5000), 300)
    t <- tm(r <- gpu_cor(x, backend = "cpu"))
    list(case = "  peer: dense gpu_cor on the CPU", t = t, n = length(r))
  }
)

run_cases("bench/edges.R", cases, a, setdiff(names(cases), c("cpu", "cpu_peer")),
          c("cpu", "cpu_peer"), "pairs/items", function(r) format(r$n, big.mark = ","))
