# bench/cov.R -- gpu_cov() against gpu_cor() on the same data, same run
# (issue 32: gpu_cov must take at most 1.5x gpu_cor's time), and against
# stats::cov where that finishes in reasonable time.
# Usage: Rscript bench/cov.R [backend] [n] [p] [reps]
args <- commandArgs(TRUE)
backend <- if (length(args) > 0) args[1] else "cpu"
n <- if (length(args) > 1) as.integer(args[2]) else 300L
p <- if (length(args) > 2) as.integer(args[3]) else 20000L
reps <- if (length(args) > 3) as.integer(args[4]) else 3L
suppressMessages(library(gpucor))
set.seed(1)
x <- matrix(rnorm(n * p), n)
xn <- x; xn[sample(length(x), 50)] <- NA     # pairwise: a few columns with NA
time1 <- function(expr) { gc(); t0 <- proc.time()[["elapsed"]]; force(expr); proc.time()[["elapsed"]] - t0 }
best <- function(f) min(vapply(seq_len(reps), function(i) time1(f()), 0))
invisible(gpu_cor(x[, 1:100], backend = backend))          # warm-up (context, pages)
rows <- list(
  c("gpu_cor(x)", best(function() gpu_cor(x, backend = backend))),
  c("gpu_cov(x)", best(function() gpu_cov(x, backend = backend))),
  c("gpu_cor(x, method = \"spearman\")", best(function() gpu_cor(x, method = "spearman", backend = backend))),
  c("gpu_cov(x, method = \"spearman\")", best(function() gpu_cov(x, method = "spearman", backend = backend))))
if (backend == "cpu" || p <= 5000)
  rows <- c(rows, list(
    c("gpu_cor(xn, use = \"pairwise\")", best(function() gpu_cor(xn, use = "pairwise", backend = backend))),
    c("gpu_cov(xn, use = \"pairwise\")", best(function() gpu_cov(xn, use = "pairwise", backend = backend)))))
if (p <= 5000) rows <- c(rows, list(c("stats::cov(x)", best(function() stats::cov(x)))))
# same values as stats on a slice (the whole check is in the tests)
s <- 1:300
stopifnot(isTRUE(all.equal(gpu_cov(x[, s], backend = backend), stats::cov(x[, s]), tolerance = 1e-13)))
cat(sprintf("gpu_cov benchmark: backend %s, %d x %d, best of %d, %s, %s threads\n", backend, n, p,
            reps, format(Sys.Date()), gpucor:::.threads()))
cat(sprintf("%-36s %9s %8s\n", "call", "seconds", "/ cor"))
base <- c(as.numeric(rows[[1]][2]), NA, as.numeric(rows[[3]][2]), NA)
for (k in seq_along(rows)) {
  ref <- switch(rows[[k]][1], "gpu_cov(x)" = as.numeric(rows[[1]][2]),
                "gpu_cov(x, method = \"spearman\")" = as.numeric(rows[[3]][2]),
                "gpu_cov(xn, use = \"pairwise\")" = as.numeric(rows[[5]][2]), NA)
  cat(sprintf("%-36s %9.3f %8s\n", rows[[k]][1], as.numeric(rows[[k]][2]),
              if (is.na(ref)) "" else sprintf("%.2fx", as.numeric(rows[[k]][2]) / ref)))
}
cat(sprintf("peak RSS %.0f MB\n", as.numeric(sub(" kB", "", grep("VmHWM", readLines("/proc/self/status"), value = TRUE)
  |> sub(pattern = "VmHWM:\\s*", replacement = ""))) / 1024))
