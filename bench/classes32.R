# bench/classes32.R -- issue 32's four GPU failure classes, each drawn many
# times on the engine named (cpu or gpu) against stats; prints per class the
# cases that differ beyond the tolerance and saves the first inputs to $OUT.
# Usage: Rscript bench/classes32.R [backend] [cases per class]
args <- commandArgs(TRUE)
b <- if (length(args)) args[1] else "gpu"
N <- if (length(args) > 1) as.integer(args[2]) else 200
suppressMessages(library(gpucor))
out <- Sys.getenv("OUT", tempdir())
maxdiff <- function(g, w) {
  g <- as.vector(g); w <- as.vector(w)
  if (length(g) != length(w)) return(Inf)
  if (!identical(is.na(g), is.na(w))) return(Inf)
  ok <- !is.na(g)
  if (!any(ok)) 0 else max(abs(g[ok] - w[ok]))
}
warns <- function(expr) {
  w <- character()
  v <- withCallingHandlers(expr, warning = function(c) {
    w <<- c(w, conditionMessage(c)); invokeRestart("muffleWarning") })
  list(v = v, w = sort(unique(w)))
}
cor_dist_ref <- function(x, m) {
  r <- stats::cor(t(as.matrix(x)), use = "pairwise.complete.obs")
  if (m == "abscorrelation") r <- abs(r)
  stats::as.dist(1 - r)
}
classes <- list(
  cordist_na_const = function(i) {
    x <- matrix(rnorm(16 * 8), 16)
    x[, sample(8, sample(1:3, 1))] <- sample(c(0, 2.5, -1e8, 1e4), 1)
    x[sample(length(x), round(0.3 * length(x)))] <- NA
    list(x = as.data.frame(x), m = sample(c("correlation", "abscorrelation"), 1))
  },
  cordist_subnormal_na = function(i) {
    x <- matrix(rnorm(257 * 7), 257) * 1e-310
    big <- sample(length(x), length(x) %/% 3)      # cells, so rows mix the scales
    x[big] <- x[big] * 1e15
    x[sample(length(x), round(0.2 * length(x)))] <- NA
    x[, sample(7, 1)] <- NA
    list(x = x, m = sample(c("correlation", "abscorrelation"), 1))
  },
  pairwise_neardup_inf = function(i) {
    b0 <- rnorm(5) + sample(c(0, 1, 1e8), 1)
    x <- b0 + matrix(rnorm(5 * 127) * 10^sample(-12:-6, 1), 5)
    x[sample(length(x), 20)] <- sample(c(Inf, -Inf), 20, TRUE)
    if (runif(1) < 0.5) x[sample(length(x), 10)] <- NA
    list(x = x)
  },
  minkowski_single = function(i) {
    x <- matrix(sample(-3:3, 39 * 4, TRUE), 39)
    x[, sample(4, 1)] <- sample(c(-1e8, 7, 1e6), 1)
    storage.mode(x) <- "integer"
    list(x = x, p = sample(c(20, 64, 100), 1))
  })
for (cl in names(classes)) {
  set.seed(32)
  bad <- 0; worst <- 0; first <- NULL
  for (i in seq_len(N)) {
    a <- classes[[cl]](i)
    r <- tryCatch({
      if (cl %in% c("cordist_na_const", "cordist_subnormal_na")) {
        # stats' values on the data times 2^1000 (exact; its products
        # underflow on the data as given), its rules on the data as given
        w <- warns(cor_dist_ref(a$x, a$m))
        if (cl == "cordist_subnormal_na") w$v <- suppressWarnings(cor_dist_ref(a$x * 2^1000, a$m))
        g <- warns(gpu_dist(a$x, a$m, backend = b))
        list(d = maxdiff(g$v, w$v), same_w = identical(g$w, w$w))
      } else if (cl == "pairwise_neardup_inf") {
        w <- warns(stats::cor(a$x, use = "pairwise.complete.obs"))
        g <- warns(gpu_cor(a$x, use = "pairwise.complete.obs", backend = b))
        list(d = maxdiff(g$v, w$v), same_w = identical(g$w, w$w))
      } else {
        w <- stats::dist(a$x, "minkowski", p = a$p)
        g <- gpu_dist(a$x, "minkowski", p = a$p, backend = b,
                      precision = if (b == "gpu") "single" else "double")
        rel <- abs(c(g) - c(w)) / pmax(abs(c(w)), 1e-300)
        list(d = max(c(0, rel[is.finite(rel)])), same_w = TRUE)
      }
    }, error = function(e) list(d = Inf, same_w = FALSE, err = conditionMessage(e)))
    tol <- if (cl == "minkowski_single") 1e-4 else 1e-12
    if (r$d > tol || !r$same_w) {
      bad <- bad + 1
      if (is.null(first)) { first <- a; saveRDS(a, file.path(out, paste0(cl, ".rds"))) }
    }
    if (is.finite(r$d)) worst <- max(worst, r$d)
  }
  cat(sprintf("%-22s %s: %d of %d cases differ (worst finite difference %.3g)\n",
              cl, b, bad, N, worst))
}
