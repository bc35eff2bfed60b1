# Issue 34's shrinkage cases: gpu_pcor_shrink() and gpu_cor_edges(method =
# "pcor.shrink") against corpcor::pcor.shrink() (R's BLAS: OpenBLAS with
# every core on the GPU machine, reference BLAS here).  Each case in its own
# R process (its own VmHWM); one table.
#   Rscript bench/shrink.R [cases...]     (default: the GPU cases; "cpu": the CPU ones)
#   Rscript bench/shrink.R --one <case>
suppressPackageStartupMessages(library(gpucor))
a <- commandArgs(TRUE)
source("bench/cases.R")
P_PEER <- as.integer(Sys.getenv("SHRINK_PEER_P", "20000"))

data <- function(n, p) { set.seed(1); matrix(rnorm(n * p), n) }
cases <- list(
  pcor = function() {
    x <- data(300, 20000)
    invisible(gpu_pcor_shrink(x[, 1:500], verbose = FALSE, backend = "gpu"))
    t <- tm(r <- gpu_pcor_shrink(x, verbose = FALSE, backend = "gpu"))
    list(case = "gpu_pcor_shrink, 300 x 20000, GPU", t = t, n = attr(r, "lambda"))
  },
  pcor_steps = function() {
    x <- data(300, 20000)
    invisible(gpu_pcor_shrink(x[, 1:500], verbose = FALSE, backend = "gpu"))
    tp <- tm(pr <- gpucor:::.shrink_prepare(x, NULL, NULL, FALSE, TRUE))
    o <- gpucor:::.engine_opts("gpu", "double")
    te <- tm(r <- .Call(gpucor:::C_gpucor_cor, pr$v, NULL, "pcor.shrink", "everything", NULL,
                        o, NULL))
    list(case = sprintf("  its steps: columns (CPU) %.3f s + product (GPU) %.3f s", tp, te),
         t = tp + te, n = pr$lambda)
  },
  cor_floor = function() {
    x <- data(300, 20000)
    invisible(gpu_cor(x[, 1:500], backend = "gpu"))
    t <- tm(r <- gpu_cor(x, backend = "gpu"))
    list(case = "  reference: gpu_cor (Pearson), 300 x 20000", t = t, n = NA)
  },
  pcor_peer = function() {
    x <- data(300, P_PEER)
    t <- tm(r <- corpcor::pcor.shrink(x, verbose = FALSE))
    list(case = sprintf("  peer: corpcor::pcor.shrink, 300 x %d", P_PEER), t = t,
         n = attr(r, "lambda"))
  },
  cor = function() {
    x <- data(300, 20000)
    invisible(gpu_cor_shrink(x[, 1:500], verbose = FALSE, backend = "gpu"))
    t <- tm(r <- gpu_cor_shrink(x, verbose = FALSE, backend = "gpu"))
    list(case = "gpu_cor_shrink, 300 x 20000, GPU", t = t, n = attr(r, "lambda"))
  },
  cor_peer = function() {
    x <- data(300, P_PEER)
    t <- tm(r <- corpcor::cor.shrink(x, verbose = FALSE))
    list(case = sprintf("  peer: corpcor::cor.shrink, 300 x %d", P_PEER), t = t,
         n = attr(r, "lambda"))
  },
  edges = function() {
    x <- data(300, 50000)
    invisible(gpu_cor_edges(x[, 1:500], method = "pcor.shrink", top_k = 10, backend = "gpu"))
    t <- tm(e <- gpu_cor_edges(x, method = "pcor.shrink", top_k = 10, backend = "gpu"))
    list(case = "gpu_cor_edges(pcor.shrink, top_k 10), 300 x 50000", t = t, n = attr(e, "lambda"))
  },
  cpu = function() {
    x <- data(300, 3000)
    t <- tm(r <- gpu_pcor_shrink(x, verbose = FALSE, backend = "cpu"))
    list(case = sprintf("CPU (%d threads): gpu_pcor_shrink, 300 x 3000",
                        gpucor:::.threads()), t = t, n = attr(r, "lambda"))
  },
  cpu_peer = function() {
    x <- data(300, 3000)
    t <- tm(r <- corpcor::pcor.shrink(x, verbose = FALSE))
    list(case = "  peer: corpcor::pcor.shrink, 300 x 3000", t = t, n = attr(r, "lambda"))
  }
)
run_cases("bench/shrink.R", cases, a, c("pcor", "pcor_steps", "pcor_peer", "cor", "cor_floor",
                                       "cor_peer", "edges"),
          c("cpu", "cpu_peer"), "lambda", function(r) sprintf("%.4f", r$n))
