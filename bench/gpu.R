# GPU benchmark (issue "GPU engine"): every case side by side in one run on
# the GPU machine -- gpucor GPU, gpucor CPU, stats (where it finishes in
# minutes), torch on the same GPU (host arrays in and out, float64 and
# float32, through bench/torch_cases.py), and the floor: R's own time to
# allocate and fill a result of the same size.  One warm-up, then the median
# of BENCH_REPS runs (default 3).  Prints a table, and per-stage times of the
# GPU pipeline (waiting for the GPU, copying into R memory, total).
#   Rscript bench/gpu.R [small|crossover|big|na|all]
# (x_floor is relative to the floor row of each case; for the crossover
# rows, relative to the CPU engine; for the "na" cases without a floor row,
# relative to gpucor gpu, so that a peer's x_floor is its ratio to us.)
# "na" is Kendall and use = "pairwise.complete.obs" (5% of cells NA); after
# the table it prints the ratios with their targets and the spot checks
# against stats.
# Environment, for a dry run of part "na" on a machine without a GPU (they
# are refused with any other part):
#   BENCH_BACKEND=cpu  the "gpucor gpu" rows run with backend = "cpu"
#                      (labelled "gpucor gpu->cpu")
#   BENCH_SCALE=0.1    shrinks the "na" sizes: case 1's variables, the
#                      observations (rows) of the other cases
suppressPackageStartupMessages(library(gpucor))
options(width = 200)
which <- commandArgs(TRUE)[1]; if (is.na(which)) which <- "small"
reps <- as.integer(Sys.getenv("BENCH_REPS", "3"))
bk <- Sys.getenv("BENCH_BACKEND", "gpu")
scale <- as.numeric(Sys.getenv("BENCH_SCALE", "1"))
stopifnot(bk %in% c("gpu", "cpu"), is.finite(scale), scale > 0)
if ((bk != "gpu" || scale != 1) && which != "na")
  stop("BENCH_BACKEND and BENCH_SCALE apply to part \"na\" only")
options(gpucor.profile = TRUE)
if (bk == "gpu") stopifnot(gpu_available())
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
notes <- character()   # ratios and spot checks, printed after the table
add <- function(case, what, res, floor) {
  t <- if (is.list(res)) res$t else res
  st <- if (is.list(res) && !is.null(res$stage)) sprintf("%.2f / %.2f / %.2f", res$stage[1], res$stage[2], res$stage[3]) else ""
  rows[[length(rows) + 1L]] <<- data.frame(case = case, method = what,
    seconds = round(t, 3), x_floor = round(t / floor, 2), stages = st)
  cat(sprintf("%-40s %-34s %8.3f s\n", case, what, t))
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
  rm(x); invisible(gc(FALSE))
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

if (which %in% c("na", "all")) {
  # Kendall and use = "pairwise.complete.obs" against stats and WGCNA.
  # stats does independent work per pair of columns in both paths (its C
  # loop over pairs for Pearson, an R loop calling rank() and .Call per pair
  # for Spearman, the O(n^2) sign sum per pair for Kendall), so its time on a
  # subset of columns, scaled by the ratio of pairs, is its time on the whole
  # matrix; such rows say "scaled" and by how much.  Measured on a 2-core
  # x86 VM (slower than the GPU machine's CPU), n = 2000 unless said:
  #   Pearson pairwise 300 x 1000: 0.94 s (x400 -> 377 s); 300 x 300: 0.09 s
  #   Spearman pairwise 2000 x 60: 1.09 s (x11.0 -> 11.9 s); 2000 x 200 in
  #     full: 11.6 s -- under 30 s, so case 2 times stats in full
  #   Kendall 2000 x 20: 11.1 s; 2000 x 200 would be ~1100 s
  # With WGCNA (~40-60 s: 4000 vars took 12.0 s on 2 threads, p^2 work) the
  # part takes about 2-3 minutes on the GPU machine.
  gpu_lab <- if (bk == "gpu") "gpucor gpu" else "gpucor gpu->cpu"
  with_na <- function(x, frac = 0.05) {
    x[sample.int(length(x), round(frac * length(x)))] <- NA
    x
  }
  # pairs stats computes for p columns, the diagonal included (for the
  # Pearson and Spearman pairwise paths it costs as much as any pair)
  npairs <- function(p) p * (p + 1) / 2
  maxdiff <- function(a, b) max(abs(a - b))

  # 1. Pearson pairwise, 20000 variables x 300 observations
  n1 <- 300; p1 <- round(20000 * scale)
  x <- matrix(rnorm(n1 * p1), n1)
  xna <- with_na(x)
  c1 <- sprintf("pearson pairwise %d vars x %d, 5%% NA", p1, n1)
  fl <- med(function() matrix(0.5, p1, p1))$t
  add(c1, "floor matrix(0.5, n, n)", fl, fl)
  tc <- med(function() gpu_cor(x, backend = bk))$t
  add(c1, paste(gpu_lab, "complete x"), tc, fl)
  tp <- med(function() gpu_cor(xna, use = "pairwise.complete.obs", backend = bk))$t
  add(c1, paste(gpu_lab, "pairwise"), tp, fl)
  add(c1, paste(gpu_lab, "pairwise single"),
      med(function() gpu_cor(xna, use = "pairwise.complete.obs", backend = bk, precision = "single")), fl)
  tw <- NA
  if (suppressPackageStartupMessages(requireNamespace("WGCNA", quietly = TRUE))) {
    # every column has NAs, so WGCNA takes its exact per-pair path everywhere
    nth <- parallel::detectCores()
    tw <- med(function() WGCNA::cor(xna, use = "p", nThreads = nth), n = 1, warm = FALSE)$t
    add(c1, sprintf("WGCNA::cor (%d threads)", nth), tw, fl)
  } else {
    message("WGCNA is not installed: its row is skipped")
  }
  # 1000 columns: 0.6-1 s; the full 20000 would take ~5 minutes
  ps <- round(1000 * scale)
  ts <- system.time(s <- cor(xna[, 1:ps], use = "pairwise"))[["elapsed"]]
  f <- npairs(p1) / npairs(ps)
  add(c1, sprintf("stats::cor (%d cols, x%.0f scaled)", ps, f), ts * f, fl)
  k <- min(300, ps)          # spot check on columns 1:k, stats' result reused
  g <- gpu_cor(xna[, 1:k], use = "pairwise.complete.obs", backend = bk)
  notes <- c(notes,
    sprintf("case 1: pairwise / complete, %s: %.2f (target <= 3)", gpu_lab, tp / tc),
    if (is.na(tw)) "case 1: WGCNA / gpucor pairwise: n/a (WGCNA not installed)"
    else sprintf("case 1: WGCNA / gpucor pairwise: %.1f (target >= 10)", tw / tp),
    sprintf("check 1: pearson pairwise xna[, 1:%d], max |%s - stats| = %.3g", k, gpu_lab, maxdiff(g, s[1:k, 1:k])))
  rm(x, xna, s, g); gc(FALSE)

  # 2. Spearman pairwise, 2000 observations x 200 variables; stats in full
  # (12 s on the slow VM above), once
  n2 <- round(2000 * scale); p2 <- 200
  x <- with_na(matrix(rnorm(n2 * p2), n2))
  c1 <- sprintf("spearman pairwise %d x %d, 5%% NA", n2, p2)
  tg <- med(function() gpu_cor(x, method = "spearman", use = "pairwise.complete.obs", backend = bk))$t
  add(c1, gpu_lab, tg, tg)
  add(c1, "gpucor cpu", med(function() gpu_cor(x, method = "spearman", use = "pairwise.complete.obs",
                                               backend = "cpu"), n = 1), tg)
  ts <- system.time(s <- cor(x, method = "spearman", use = "pairwise"))[["elapsed"]]
  add(c1, "stats::cor", ts, tg)
  g <- gpu_cor(x, method = "spearman", use = "pairwise.complete.obs", backend = bk)
  notes <- c(notes,
    sprintf("case 2: stats / %s: %.0f (target >= 1000)", gpu_lab, ts / tg),
    sprintf("check 2: spearman pairwise, all %d cols, max |%s - stats| = %.3g", p2, gpu_lab, maxdiff(g, s)))
  rm(x, s, g)

  # 3. Kendall, 2000 x 200, no NA; stats on 20 columns (~7-11 s), scaled.
  # Here the diagonal costs stats about half a pair (20 -> 40 columns at
  # n = 1000 took 3.98x: p(p-1)/2 pairs would give 4.11x, p(p+1)/2 3.90x),
  # so its work grows as p(p-1)/2 + p/2 = p^2/2 and the factor is
  # (200/20)^2 = 100 -- lower, so more conservative, than 19900/190.
  n3 <- round(2000 * scale); p3 <- 200; pk <- 20
  x <- matrix(rnorm(n3 * p3), n3)
  c1 <- sprintf("kendall %d x %d, no NA", n3, p3)
  tg <- med(function() gpu_cor(x, method = "kendall", backend = bk))$t
  add(c1, gpu_lab, tg, tg)
  add(c1, "gpucor cpu", med(function() gpu_cor(x, method = "kendall", backend = "cpu"), n = 1), tg)
  ts <- system.time(s <- cor(x[, 1:pk], method = "kendall"))[["elapsed"]]
  f <- p3^2 / pk^2
  add(c1, sprintf("stats::cor (%d cols, x%.0f scaled)", pk, f), ts * f, tg)
  g <- gpu_cor(x[, 1:10], method = "kendall", backend = bk)
  notes <- c(notes,
    sprintf("case 3: stats / %s: %.0f (target >= 100)", gpu_lab, ts * f / tg),
    sprintf("check 3: kendall x[, 1:10], max |%s - stats| = %.3g", gpu_lab, maxdiff(g, s[1:10, 1:10])))
  rm(x, s, g)

  # 4. Kendall, 20000 x 200: no peer finishes (stats ~100x case 3's per
  # pair); the spot check is against gpucor's CPU engine on 10 columns
  n4 <- round(20000 * scale); p4 <- 200
  x <- matrix(rnorm(n4 * p4), n4)
  c1 <- sprintf("kendall %d x %d, no NA", n4, p4)
  tg <- med(function() gpu_cor(x, method = "kendall", backend = bk))$t
  add(c1, gpu_lab, tg, tg)
  add(c1, paste(gpu_lab, "single"),
      med(function() gpu_cor(x, method = "kendall", backend = bk, precision = "single")), tg)
  g <- gpu_cor(x[, 1:10], method = "kendall", backend = bk)
  notes <- c(notes, sprintf("check 4: kendall x[, 1:10] (n = %d), max |%s - gpucor cpu| = %.3g", n4, gpu_lab,
                            maxdiff(g, gpu_cor(x[, 1:10], method = "kendall", backend = "cpu"))))
  rm(x, g); invisible(gc(FALSE))
}

res <- do.call(rbind, rows)
cat(sprintf("\ngpucor %s GPU benchmark, %s, %s (%.0f GiB), driver %s, %d host threads; median of %d after a warm-up\n",
            packageVersion("gpucor"), format(Sys.time(), "%Y-%m-%d"), info$name,
            info$memory_total / 2^30, info$driver_version, parallel::detectCores(), reps))
if (bk != "gpu" || scale != 1)
  cat(sprintf("DRY RUN: BENCH_BACKEND=%s BENCH_SCALE=%g -- not GPU figures\n", bk, scale))
cat("stages (GPU runs): host waiting for GPU / copying into R memory / pipeline total, seconds\n")
print(res, row.names = FALSE)
if (length(notes)) cat("", notes, sep = "\n")
