# Quick check of the GPU's NA and Kendall paths on the GPU machine, before
# the full test suite: a few GPU-vs-stats comparisons (max |difference|,
# NA pattern, warnings) and rough timings of the issue's benchmark shapes.
#   Rscript tools/na_smoke.R
suppressPackageStartupMessages(library(gpucor))
stopifnot(gpu_available())
set.seed(1)
bad <- 0
chk <- function(what, got, want, tol = 1e-10) {
  d <- suppressWarnings(max(abs(got - want), na.rm = TRUE))
  same_na <- identical(is.na(got), is.na(want)) && identical(is.nan(got), is.nan(want))
  ok <- same_na && (!is.finite(d) || d <= tol)
  if (!ok) bad <<- bad + 1
  cat(sprintf("%-58s max diff %.1e  NA %s %s\n", what, d,
              if (same_na) "same" else "DIFFERENT", if (ok) "" else "<-- FAIL"))
}
warned <- function(expr) {
  w <- FALSE
  v <- withCallingHandlers(expr, warning = function(c) { w <<- TRUE; invokeRestart("muffleWarning") })
  attr(v, "warned") <- w
  v
}
x <- matrix(rnorm(60 * 15), 60)
x[sample(length(x), 45)] <- NA
x[1:58, 3] <- NA                    # two observed rows
x[, 4] <- NA                        # none
x[, 5] <- 1e8 + x[, 5]
x[!is.na(x[, 6]) & !is.na(x[, 7]), 7] <- 2   # constant on the rows 6 and 7 share
x[, 8] <- sample(1:3, 60, TRUE)     # ties
y <- x[, 9:12] + rnorm(240)
for (m in c("pearson", "spearman", "kendall"))
  for (u in c("everything", "complete.obs", "na.or.complete", "pairwise.complete.obs")) {
    want <- tryCatch(warned(cor(x, method = m, use = u)), error = conditionMessage)
    got <- tryCatch(warned(gpu_cor(x, method = m, use = u, backend = "gpu")), error = conditionMessage)
    if (is.character(want)) {   # stats' error: gpucor must give the same
      ok <- identical(got, want); if (!ok) bad <- bad + 1
      cat(sprintf("%-58s error \"%s\" %s\n", paste(m, u), want, if (ok) "same" else "<-- FAIL"))
      next
    }
    chk(sprintf("%s %s", m, u), c(got), c(want))
    if (!identical(attr(got, "warned"), attr(want, "warned"))) {
      bad <- bad + 1; cat("   warning differs <-- FAIL\n")
    }
    chk(sprintf("%s %s, y", m, u), suppressWarnings(gpu_cor(x, y, method = m, use = u, backend = "gpu")),
        suppressWarnings(cor(x, y, method = m, use = u)))
    chk(sprintf("%s %s, single", m, u),
        suppressWarnings(gpu_cor(x, method = m, use = u, backend = "gpu", precision = "single")),
        suppressWarnings(cor(x, method = m, use = u)), 1e-5)
  }
xd <- t(x[1:40, ])
for (m in c("correlation", "abscorrelation", "spearman", "kendall", "cosine"))
  chk(paste("dist", m, "with NA"), suppressWarnings(c(gpu_dist(xd, m, backend = "gpu"))),
      suppressWarnings(c(gpu_dist(xd, m, backend = "cpu"))))
xk <- matrix(rnorm(300 * 30), 300)
chk("kendall 300 x 30", gpu_cor(xk, method = "kendall", backend = "gpu"), cor(xk, method = "kendall"))
chk("kendall dist 30 x 300", c(gpu_dist(t(xk), "kendall", backend = "gpu")),
    c(gpu_dist(t(xk), "kendall", backend = "cpu")))
old <- options(gpucor.gpu_slab = 7)
chk("pairwise pearson, 7-column slabs", gpu_cor(x, use = "pairwise", backend = "gpu"), cor(x, use = "pairwise"))
chk("pairwise spearman, 7-column slabs", suppressWarnings(gpu_cor(x, method = "spearman", use = "pairwise", backend = "gpu")),
    suppressWarnings(cor(x, method = "spearman", use = "pairwise")))
chk("kendall, 7-column slabs", gpu_cor(xk, method = "kendall", backend = "gpu"), cor(xk, method = "kendall"))
options(old)

tm <- function(f) { f(); min(replicate(3, system.time(f())[["elapsed"]])) }
x <- matrix(rnorm(300 * 20000), 300)
xn <- x; xn[sample(length(xn), 0.05 * length(xn))] <- NA
cat(sprintf("pearson 20000 vars x 300 complete: %.3f s\n", tm(function() gpu_cor(x, backend = "gpu"))))
cat(sprintf("pearson 20000 vars x 300 pairwise 5%% NA: %.3f s\n", tm(function() gpu_cor(xn, use = "pairwise", backend = "gpu"))))
x <- matrix(rnorm(2000 * 200), 2000)
xn <- x; xn[sample(length(xn), 0.05 * length(xn))] <- NA
cat(sprintf("spearman pairwise 2000 x 200: %.4f s\n", tm(function() gpu_cor(xn, method = "spearman", use = "pairwise", backend = "gpu"))))
cat(sprintf("kendall 2000 x 200: %.4f s\n", tm(function() gpu_cor(x, method = "kendall", backend = "gpu"))))
cat(sprintf("kendall pairwise 2000 x 200: %.4f s\n", tm(function() gpu_cor(xn, method = "kendall", use = "pairwise", backend = "gpu"))))
x <- matrix(rnorm(20000 * 200), 20000)
cat(sprintf("kendall 20000 x 200: %.3f s\n", tm(function() gpu_cor(x, method = "kendall", backend = "gpu"))))
cat(sprintf("smoke: %d failures\n", bad))
