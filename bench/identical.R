# bench/identical.R -- are two builds' results bitwise identical?
#
#   Rscript bench/identical.R LIB_BEFORE LIB_AFTER [backends]
#
# Runs every case below with gpucor from LIB_BEFORE and from LIB_AFTER (each
# in its own R process) and compares the results with identical(): values,
# NA/NaN bits as R sees them, attributes and warnings.  backends: "cpu"
# (default), or "cpu,gpu" on the GPU machine.  Prints one line per case that
# differs and a summary; exits 1 when any differs.  Used for the engine
# redesign (issue 9) and the measure table (issue 33), whose arithmetic is
# meant to be unchanged; covers gpu_cor, gpu_dist and every function that
# passes a measure to the engine.

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
        # the functions built on the engine: every measure they pass by name
        for (m in c("pearson", "spearman", "kendall"))
          res[[paste(b, pr, "cov", dn, m)]] <- grab(gpu_cov(x, method = m, use = if (m == "pearson")
            "pairwise.complete.obs" else "everything", backend = b, precision = pr))
        for (m in c("pearson", "spearman", "kendall", "bicor"))
          res[[paste(b, pr, "edges", dn, m)]] <- grab(gpu_cor_edges(x, method = m, top_k = 25,
            p_value = TRUE, backend = b, precision = pr))
        for (m in c("pearson", "kendall")) {
          res[[paste(b, pr, "edges thr", dn, m)]] <- grab(gpu_cor_edges(x, method = m,
            threshold = 0.3, top_k = 3, backend = b, precision = pr))
          res[[paste(b, pr, "edges density", dn, m)]] <- grab(gpu_cor_edges(x, method = m,
            density = 0.05, use = "pairwise.complete.obs", backend = b, precision = pr))
          res[[paste(b, pr, "edges fdr", dn, m)]] <- grab(gpu_cor_edges(x, method = m,
            fdr = 0.2, use = "pairwise.complete.obs", backend = b, precision = pr))
        }
        for (m in c("euclidean", "canberra", "binary", "correlation", "abscorrelation",
                    "spearman", "kendall", "cosine"))
          res[[paste(b, pr, "knn", dn, m)]] <- grab(gpu_knn(x, 4, m, backend = b, precision = pr))
        for (m in c("average", "ward.D2", "median"))
          res[[paste(b, pr, "hclust", dn, m)]] <- grab(gpu_hclust(x = x, method = m,
            distance = "correlation", backend = b, precision = pr))
        res[[paste(b, pr, "hclust d", dn)]] <- grab(gpu_hclust(dist(x), "complete", backend = b,
                                                               precision = pr))
        res[[paste(b, pr, "bicor", dn)]] <- grab(gpu_bicor(x, use = "pairwise.complete.obs",
                                                           backend = b, precision = pr))
        # dgCMatrix input: the sparse path of the CPU engine (or dense columns)
        if (b == "cpu" && requireNamespace("Matrix", quietly = TRUE) && !anyNA(x)) {
          xs <- x; xs[abs(xs - stats::median(xs)) < stats::sd(xs)] <- 0
          xs <- Matrix::Matrix(xs, sparse = TRUE)
          for (m in c("pearson", "spearman"))
            res[[paste(b, pr, "sparse", dn, m)]] <- grab(gpu_cor(xs, method = m, backend = b))
        }
        for (ct in c("pearson", "spearman", "bicor")) {
          res[[paste(b, pr, "adjacency", dn, ct)]] <- grab(gpu_adjacency(x, power = 3,
            type = "signed", corType = ct, backend = b, precision = pr))
          # one CPU thread: the connectivity slots of the threads are added in the
          # order the tiles happened to land in them (not reproducible bitwise)
          old <- options(gpucor.threads = 1L)
          res[[paste(b, pr, "soft", dn, ct)]] <- grab(gpu_soft_threshold(x, powerVector = c(1, 4, 6),
            corType = ct, backend = b, precision = pr)$fitIndices)
          options(old)
          res[[paste(b, pr, "tom", dn, ct)]] <- grab(gpu_tom(x, power = 4, corType = ct,
            backend = b, precision = pr))
        }
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
