# bench/identical.R -- are two builds' results bitwise identical?
#
#   Rscript bench/identical.R LIB_BEFORE LIB_AFTER [backends]
#
# Runs every case below with gpucor from LIB_BEFORE and from LIB_AFTER (each
# in its own R process) and compares the results with identical(): values,
# NA/NaN bits as R sees them, attributes and warnings.  backends: "cpu"
# (default), or "cpu,gpu" on the GPU machine.  Prints one line per case that
# differs and a summary; exits 1 when any differs.  Used for the engine
# redesign (issue 9), whose arithmetic is meant to be unchanged.

args <- commandArgs(trailingOnly = TRUE)
if (length(args) < 2) stop("usage: Rscript bench/identical.R LIB_BEFORE LIB_AFTER [backends]")
backends <- if (length(args) >= 3) strsplit(args[3], ",")[[1]] else "cpu"

run_cases <- function(lib, backends, out) {
  code <- sprintf('
    library(gpucor, lib.loc = "%s")
    backends <- c(%s)
    set.seed(20261123)
    mk <- function(n, p, na = 0, offset = 0) {
      x <- matrix(rnorm(n * p), n, p) + offset
      if (na > 0) x[sample(length(x), round(na * length(x)))] <- NA
      x
    }
    data <- list(small = mk(40, 70), wide = mk(30, 300), tall = mk(500, 40),
                 na = mk(60, 90, 0.1), off = mk(50, 80, 0, 1e8),
                 ties = matrix(sample(-2:2, 60 * 50, TRUE), 60))
    data$const <- data$small; data$const[, 3] <- 1; data$const[5, ] <- 2
    res <- list()
    grab <- function(expr) {
      w <- character()
      v <- withCallingHandlers(tryCatch(expr, error = function(e) paste("error:", conditionMessage(e))),
                               warning = function(m) { w <<- c(w, conditionMessage(m)); invokeRestart("muffleWarning") })
      list(v, w)
    }
    for (b in backends) for (pr in if (b == "gpu") c("double", "single") else "double") {
      for (dn in names(data)) {
        x <- data[[dn]]
        for (m in c("pearson", "spearman", "kendall"))
          for (u in c("everything", "complete.obs", "pairwise.complete.obs")) {
            res[[paste(b, pr, "cor", dn, m, u)]] <- grab(gpu_cor(x, method = m, use = u, backend = b, precision = pr))
            res[[paste(b, pr, "cor y", dn, m, u)]] <- grab(gpu_cor(x, x[, 1:7] * 2, method = m, use = u, backend = b, precision = pr))
          }
        for (m in c("euclidean", "maximum", "manhattan", "canberra", "binary", "minkowski",
                    "correlation", "abscorrelation", "spearman", "kendall", "cosine"))
          res[[paste(b, pr, "dist", dn, m)]] <- grab(gpu_dist(x, m, p = 3, backend = b, precision = pr))
      }
    }
    saveRDS(res, "%s")', lib, paste0('"', backends, '"', collapse = ", "), out)
  f <- tempfile(fileext = ".R")
  writeLines(code, f)
  st <- system2(file.path(R.home("bin"), "Rscript"), f)
  if (st != 0) stop("the cases failed with ", lib)
  readRDS(out)
}

a <- run_cases(args[1], backends, tempfile(fileext = ".rds"))
errs <- vapply(a, function(r) is.character(r[[1]]), NA)
cat(sprintf("%d of %d cases are errors (compared as such)\n", sum(errs), length(a)))
b <- run_cases(args[2], backends, tempfile(fileext = ".rds"))
stopifnot(identical(names(a), names(b)))
# attributes the engines add only with option gpucor.profile are absent here
differ <- names(a)[!vapply(names(a), function(k) identical(a[[k]], b[[k]]), NA)]
for (k in differ) cat("differs:", k, "\n")
cat(sprintf("%s: %d cases, %d bitwise identical, %d differ (%s vs %s)\n",
            format(Sys.time(), "%Y-%m-%d %H:%M"), length(a), length(a) - length(differ),
            length(differ), args[1], args[2]))
quit(status = if (length(differ)) 1 else 0)
