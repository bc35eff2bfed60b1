# CPU engine benchmark: gpucor (CPU backend) against stats, WGCNA and R's
# BLAS on the same data, in one process.  Prints a table; figures in README
# come from this script.
#   Rscript bench/cpu.R            (reps = 3, all cores)
# Each case: one warm-up, then the median of 'reps' timed runs.
suppressPackageStartupMessages(library(gpucor))
options(width = 200)
reps <- as.integer(Sys.getenv("BENCH_REPS", "3"))
threads <- as.integer(Sys.getenv("BENCH_THREADS", parallel::detectCores()))
options(gpucor.threads = threads)
have_wgcna <- requireNamespace("WGCNA", quietly = TRUE)

timeit <- function(expr, n = reps, warm = TRUE) {
  f <- function() eval.parent(substitute(expr), 3)
  e <- substitute(expr); env <- parent.frame()
  if (warm) eval(e, env)
  median(vapply(seq_len(n), function(i) system.time(eval(e, env))[["elapsed"]], 0))
}

set.seed(42)
rows <- list()
add <- function(case, what, secs, ref) {
  rows[[length(rows) + 1L]] <<- data.frame(case = case, method = what,
                                          seconds = round(secs, 3),
                                          speedup_vs_stats = round(ref / secs, 1))
}

# Pearson 500 x 4000 (4000 variables)
x <- matrix(rnorm(500 * 4000), 500)
t_stats <- timeit(cor(x), n = 1, warm = FALSE)
add("pearson 500x4000", "stats::cor", t_stats, t_stats)
add("pearson 500x4000", "gpucor cpu", timeit(gpu_cor(x, backend = "cpu")), t_stats)
if (have_wgcna) {
  suppressMessages(WGCNA::allowWGCNAThreads(threads))
  add("pearson 500x4000", "WGCNA::cor", timeit(WGCNA::cor(x, nThreads = threads)), t_stats)
}
z <- scale(x) / sqrt(nrow(x) - 1)
add("pearson 500x4000", "R BLAS crossprod (dsyrk) of standardized x",
    timeit(crossprod(z)), t_stats)

# Spearman 500 x 4000
t_stats <- timeit(cor(x, method = "spearman"), n = 1, warm = FALSE)
add("spearman 500x4000", "stats::cor", t_stats, t_stats)
add("spearman 500x4000", "gpucor cpu", timeit(gpu_cor(x, method = "spearman", backend = "cpu")), t_stats)

# Kendall 200 x 300
k <- matrix(rnorm(200 * 300), 200)
t_stats <- timeit(cor(k, method = "kendall"), n = 1, warm = FALSE)
add("kendall 200x300", "stats::cor", t_stats, t_stats)
add("kendall 200x300", "gpucor cpu", timeit(gpu_cor(k, method = "kendall", backend = "cpu")), t_stats)

# Euclidean dist, 5000 rows x 500
d <- matrix(rnorm(5000 * 500), 5000)
t_stats <- timeit(dist(d), n = 1, warm = FALSE)
add("euclidean dist 5000x500", "stats::dist", t_stats, t_stats)
add("euclidean dist 5000x500", "gpucor cpu", timeit(gpu_dist(d, backend = "cpu")), t_stats)
add("euclidean dist 5000x500", "floor: numeric(n(n-1)/2)",
    timeit(numeric(5000 * 4999 / 2)), t_stats)

res <- do.call(rbind, rows)
cat(sprintf("gpucor %s CPU benchmark, %s, %d threads, R %s, BLAS %s\n",
            packageVersion("gpucor"), format(Sys.time(), "%Y-%m-%d"), threads,
            getRversion(), basename(extSoftVersion()[["BLAS"]])))
cat(sprintf("CPU: %s\n", tryCatch(sub(".*: *", "", grep("model name", readLines("/proc/cpuinfo"), value = TRUE)[1]),
                                  error = function(e) "unknown")))
print(res, row.names = FALSE)
