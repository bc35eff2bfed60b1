# One case of bench/compare.R, timed in this process with whatever gpucor
# R_LIBS points to: one warm-up, then the median of BENCH_REPS runs (default
# 3).  Prints the seconds on the last line.
#   Rscript bench/compare_case.R CASE
# The cases are those of bench/cpu.R and bench/gpu.R (parts "small", "na"
# and "big") that time gpucor itself.
suppressPackageStartupMessages(library(gpucor))
case <- commandArgs(TRUE)[1]
reps <- as.integer(Sys.getenv("BENCH_REPS", "3"))
set.seed(42)
rn <- function(n, p, na = 0) {
  x <- matrix(rnorm(n * p), n)
  if (na > 0) x[sample.int(n * p, round(na * n * p))] <- NA
  x
}
cases <- list(
  # bench/cpu.R
  "cpu pearson 500x4000"      = list(function() rn(500, 4000), function(x) gpu_cor(x, backend = "cpu")),
  "cpu spearman 500x4000"     = list(function() rn(500, 4000), function(x) gpu_cor(x, method = "spearman", backend = "cpu")),
  "cpu kendall 200x300"       = list(function() rn(200, 300), function(x) gpu_cor(x, method = "kendall", backend = "cpu")),
  "cpu euclidean dist 5000x500" = list(function() rn(5000, 500), function(x) gpu_dist(x, backend = "cpu")),
  "cpu pearson pairwise 300x2000 5% NA" = list(function() rn(300, 2000, 0.05),
                                            function(x) gpu_cor(x, use = "pairwise", backend = "cpu")),
  "cpu correlation dist 3000x300" = list(function() rn(3000, 300), function(x) gpu_dist(x, "correlation", backend = "cpu")),
  # bench/gpu.R small
  "gpu spearman dist 6000x1000"  = list(function() rn(6000, 1000), function(x) gpu_dist(x, "spearman", backend = "gpu")),
  "gpu single spearman dist 6000x1000" = list(function() rn(6000, 1000),
                                            function(x) gpu_dist(x, "spearman", backend = "gpu", precision = "single")),
  "gpu spearman dist 21000x1000" = list(function() rn(21000, 1000), function(x) gpu_dist(x, "spearman", backend = "gpu")),
  "gpu single spearman dist 21000x1000" = list(function() rn(21000, 1000),
                                            function(x) gpu_dist(x, "spearman", backend = "gpu", precision = "single")),
  "gpu pearson 20000 vars x 300" = list(function() rn(300, 20000), function(x) gpu_cor(x, backend = "gpu")),
  "gpu single pearson 20000 vars x 300" = list(function() rn(300, 20000),
                                            function(x) gpu_cor(x, backend = "gpu", precision = "single")),
  "gpu euclidean dist 20000x1000" = list(function() rn(20000, 1000), function(x) gpu_dist(x, backend = "gpu")),
  "gpu single euclidean dist 20000x1000" = list(function() rn(20000, 1000),
                                            function(x) gpu_dist(x, backend = "gpu", precision = "single")),
  "gpu manhattan dist 20000x1000" = list(function() rn(20000, 1000), function(x) gpu_dist(x, "manhattan", backend = "gpu")),
  "gpu single manhattan dist 20000x1000" = list(function() rn(20000, 1000),
                                            function(x) gpu_dist(x, "manhattan", backend = "gpu", precision = "single")),
  "gpu single minkowski p=3 dist 20000x1000" = list(function() rn(20000, 1000),
                                            function(x) gpu_dist(x, "minkowski", p = 3, backend = "gpu", precision = "single")),
  # bench/gpu.R na
  "gpu pearson pairwise 300x20000 5% NA" = list(function() rn(300, 20000, 0.05),
                                            function(x) gpu_cor(x, use = "pairwise", backend = "gpu")),
  "gpu single pearson pairwise 300x20000 5% NA" = list(function() rn(300, 20000, 0.05),
                                            function(x) gpu_cor(x, use = "pairwise", backend = "gpu", precision = "single")),
  "gpu spearman pairwise 2000x200 5% NA" = list(function() rn(2000, 200, 0.05),
                                            function(x) gpu_cor(x, method = "spearman", use = "pairwise", backend = "gpu")),
  "gpu kendall 2000x200"  = list(function() rn(2000, 200), function(x) gpu_cor(x, method = "kendall", backend = "gpu")),
  "gpu kendall 20000x200" = list(function() rn(20000, 200), function(x) gpu_cor(x, method = "kendall", backend = "gpu")),
  # bench/gpu.R big: dense results bound by writing fresh host memory (20 GB, 40 GB)
  "gpu pearson 50000 vars x 300" = list(function() rn(300, 50000), function(x) gpu_cor(x, backend = "gpu")),
  "gpu correlation dist 100000x300" = list(function() rn(100000, 300),
                                          function(x) gpu_dist(x, "correlation", backend = "gpu"))
)
if (identical(case, "list")) { writeLines(names(cases)); quit("no") }
cs <- cases[[case]]
if (is.null(cs)) stop("unknown case: ", case)
x <- cs[[1]]()
invisible(cs[[2]](x))
# one result alive at a time (the big cases are 20 and 40 GB)
t <- vapply(seq_len(reps), function(i) {
  invisible(gc(FALSE))
  system.time(cs[[2]](x))[["elapsed"]]
}, 0)
cat(sprintf("%.4f\n", median(t)))
