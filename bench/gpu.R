# GPU benchmark (issue "GPU engine"): every case side by side in one run on
# the GPU machine -- gpucor GPU, gpucor CPU, stats (where it finishes in
# minutes), torch on the same GPU (host arrays in and out, float64 and
# float32, through bench/torch_cases.py), and the floor: R's own time to
# allocate and fill a result of the same size.  One warm-up, then the median
# of BENCH_REPS runs (default 3).  Prints a table, and per-stage times of the
# GPU pipeline (waiting for the GPU, copying into R memory, total).
#   Rscript bench/gpu.R [small|crossover|big|all]
# (x_floor is relative to the floor row of each case; for the crossover
# rows, relative to the CPU engine.)
suppressPackageStartupMessages(library(gpucor))
options(width = 200)
which <- commandArgs(TRUE)[1]; if (is.na(which)) which <- "small"
reps <- as.integer(Sys.getenv("BENCH_REPS", "3"))
options(gpucor.profile = TRUE)
stopifnot(gpu_available())
info <- gpu_info()

med <- function(f, n = reps, warm = TRUE) {
  if (warm) f()
  t <- numeric(n); stage <- NULL
  for (i in seq_len(n)) {
    gc(FALSE)
    t[i] <- system.time(r <- f())[["elapsed"]]
    stage <- rbind(stage, attr(r, "timing"))
    rm(r)
  }
  gc(FALSE)
  list(t = median(t), stage = if (!is.null(stage)) apply(stage, 2, median))
}
torch <- function(case, n, p, dtype, n_reps = reps) {
  out <- tryCatch(system2("python3", c("bench/torch_cases.py", case, n, p, dtype, n_reps),
                          stdout = TRUE, stderr = FALSE), error = function(e) NA)
  v <- suppressWarnings(as.numeric(tail(out, 1)))
  if (length(v) == 0) NA else v
}
rows <- list()
add <- function(case, what, res, floor) {
  t <- if (is.list(res)) res$t else res
  st <- if (is.list(res) && !is.null(res$stage)) sprintf("%.2f / %.2f / %.2f", res$stage[1], res$stage[2], res$stage[3]) else ""
  rows[[length(rows) + 1L]] <<- data.frame(case = case, method = what,
    seconds = round(t, 3), x_floor = round(t / floor, 2), stages = st)
  cat(sprintf("%-32s %-28s %8.3f s\n", case, what, t))
}
set.seed(1)

if (which %in% c("small", "all")) {
  # Spearman dist 6000 x 1000 (rows are entities)
  x <- matrix(rnorm(6000 * 1000), 6000)
  fl <- med(function() numeric(6000 * 5999 / 2))$t
  c1 <- "spearman dist 6000x1000"
  add(c1, "floor numeric(n(n-1)/2)", fl, fl)
  g <- med(function() gpu_dist(x, "spearman", backend = "gpu")); add(c1, "gpucor gpu", g, fl)
  add(c1, "gpucor gpu single", med(function() gpu_dist(x, "spearman", backend = "gpu", precision = "single")), fl)
  add(c1, "gpucor cpu", med(function() gpu_dist(x, "spearman", backend = "cpu"), n = 1), fl)
  add(c1, "stats::cor", system.time(as.dist(1 - cor(t(x), method = "spearman")))[["elapsed"]], fl)
  add(c1, "torch float64", torch("spearman", 6000, 1000, "float64"), fl)
  add(c1, "torch float32", torch("spearman", 6000, 1000, "float32"), fl)

  # Spearman dist 21000 x 1000
  x <- matrix(rnorm(21000 * 1000), 21000)
  c1 <- "spearman dist 21000x1000"
  fl <- med(function() numeric(21000 * 20999 / 2))$t
  add(c1, "floor numeric(n(n-1)/2)", fl, fl)
  add(c1, "gpucor gpu", med(function() gpu_dist(x, "spearman", backend = "gpu")), fl)
  add(c1, "gpucor gpu single", med(function() gpu_dist(x, "spearman", backend = "gpu", precision = "single")), fl)
  add(c1, "torch float64", torch("spearman", 21000, 1000, "float64"), fl)
  add(c1, "torch float32", torch("spearman", 21000, 1000, "float32"), fl)

  # Pearson gpu_cor, 20000 variables x 300 observations -> 20000^2 matrix
  x <- matrix(rnorm(300 * 20000), 300)
  c1 <- "pearson cor 20000 vars x 300"
  fl <- med(function() matrix(0.5, 20000, 20000))$t
  add(c1, "floor matrix(0.5, n, n)", fl, fl)
  add(c1, "gpucor gpu", med(function() gpu_cor(x, backend = "gpu")), fl)
  add(c1, "gpucor gpu single", med(function() gpu_cor(x, backend = "gpu", precision = "single")), fl)
  add(c1, "gpucor cpu", med(function() gpu_cor(x, backend = "cpu"), n = 1), fl)
  add(c1, "torch float64", torch("pearson", 20000, 300, "float64"), fl)
  add(c1, "torch float32", torch("pearson", 20000, 300, "float32"), fl)

  # Euclidean and manhattan dist, 20000 x 1000
  x <- matrix(rnorm(20000 * 1000), 20000)
  fl <- med(function() numeric(20000 * 19999 / 2))$t
  for (m in c("euclidean", "manhattan")) {
    c1 <- sprintf("%s dist 20000x1000", m)
    add(c1, "floor numeric(n(n-1)/2)", fl, fl)
    add(c1, "gpucor gpu", med(function() gpu_dist(x, m, backend = "gpu")), fl)
    add(c1, "gpucor gpu single", med(function() gpu_dist(x, m, backend = "gpu", precision = "single")), fl)
    add(c1, "gpucor cpu", med(function() gpu_dist(x, m, backend = "cpu"), n = 1, warm = FALSE), fl)
    add(c1, if (m == "euclidean") "torch.cdist exact float64" else "torch.cdist p=1 float64",
        torch(m, 20000, 1000, "float64"), fl)
  }
  rm(x); gc(FALSE)
}

if (which %in% c("crossover", "all")) {
  # where "auto" should switch: gpucor CPU (all cores) vs GPU, growing sizes
  for (p in c(250, 500, 1000, 2000, 4000)) {
    x <- matrix(rnorm(300 * p), 300)
    c1 <- sprintf("crossover pearson 300 x %d", p)
    work <- p * p / 2 * 300
    g <- med(function() gpu_cor(x, backend = "gpu"))$t
    cc <- med(function() gpu_cor(x, backend = "cpu"))$t
    add(c1, sprintf("gpu (work %.1e)", work), g, cc)
    add(c1, "cpu", cc, cc)
  }
  for (n in c(500, 1000, 2000, 4000)) {
    x <- matrix(rnorm(n * 100), n)
    c1 <- sprintf("crossover euclidean %d x 100", n)
    work <- n * n / 2 * 100
    g <- med(function() gpu_dist(x, backend = "gpu"))$t
    cc <- med(function() gpu_dist(x, backend = "cpu"))$t
    add(c1, sprintf("gpu (work %.1e)", work), g, cc)
    add(c1, "cpu", cc, cc)
  }
}

if (which %in% c("big", "all")) {
  # Pearson 50000 variables x 300 -> 20 GB matrix
  x <- matrix(rnorm(300 * 50000), 300)
  c1 <- "pearson cor 50000 vars x 300"
  fl <- med(function() matrix(0.5, 50000, 50000), n = 2, warm = FALSE)$t
  add(c1, "floor matrix(0.5, n, n)", fl, fl)
  add(c1, "gpucor gpu", med(function() gpu_cor(x, backend = "gpu"), n = 2, warm = FALSE), fl)
  rm(x); gc(FALSE)
  # correlation dist 100000 x 300 -> 40 GB dist
  x <- matrix(rnorm(100000 * 300), 100000)
  c1 <- "correlation dist 100000x300"
  fl <- med(function() numeric(100000 * 99999 / 2), n = 1, warm = FALSE)$t
  add(c1, "floor numeric(n(n-1)/2)", fl, fl)
  add(c1, "gpucor gpu", med(function() gpu_dist(x, "correlation", backend = "gpu"), n = 1, warm = FALSE), fl)
}

res <- do.call(rbind, rows)
cat(sprintf("\ngpucor %s GPU benchmark, %s, %s (%.0f GiB), driver %s, %d host threads; median of %d after a warm-up\n",
            packageVersion("gpucor"), format(Sys.time(), "%Y-%m-%d"), info$name,
            info$memory_total / 2^30, info$driver_version, parallel::detectCores(), reps))
cat("stages (GPU runs): host waiting for GPU / copying into R memory / pipeline total, seconds\n")
print(res, row.names = FALSE)
