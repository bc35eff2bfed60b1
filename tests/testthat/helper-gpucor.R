# Helpers shared by the gpucor tests.
#
# Every CPU test compares gpucor with stats::cor() / stats::dist() on the same
# input: values, NA/NaN pattern, dimnames or dist attributes, warnings and
# errors. GPU tests call skip_if_no_gpu() one by one, so that a machine
# without a GPU (CRAN, CI) still runs everything else.

skip_if_no_gpu <- function() {
  ok <- gpucor::gpu_available()
  if (!isTRUE(as.vector(ok))) {
    reason <- attr(ok, "reason")
    skip(paste("no usable GPU:", if (is.null(reason)) "(no reason given)" else reason))
  }
  invisible(TRUE)
}

# Draws a fresh seed, sets it and returns a string to pass as `info`, so that a
# failure says how to reproduce it. GPUCOR_TEST_SEED=<n> replays a seed.
new_seed <- function() {
  env <- Sys.getenv("GPUCOR_TEST_SEED", "")
  seed <- if (nzchar(env)) as.integer(env) else sample.int(.Machine$integer.max, 1L)
  set.seed(seed)
  paste0("seed ", seed, " (replay with GPUCOR_TEST_SEED=", seed, ")")
}

# An n x p standard normal matrix plus `offset`, with a fraction `na` of its
# cells set to NA at random positions.
rmat <- function(n, p, na = 0, offset = 0, dimnames = NULL) {
  x <- matrix(offset + stats::rnorm(n * p), n, p, dimnames = dimnames)
  if (na > 0) x[sample.int(n * p, round(na * n * p))] <- NA
  x
}

# Evaluates `expr` and returns its value, the messages of all its warnings
# (muffled) and the message of its error (NULL when none).
capture_conditions <- function(expr) {
  warnings <- character()
  value <- tryCatch(
    withCallingHandlers(expr, warning = function(w) {
      warnings <<- c(warnings, conditionMessage(w))
      invokeRestart("muffleWarning")
    }),
    error = function(e) e
  )
  if (inherits(value, "error")) {
    list(value = NULL, error = conditionMessage(value), warnings = warnings)
  } else {
    list(value = value, error = NULL, warnings = warnings)
  }
}

# got and want must have the same error (want's message must occur in got's),
# or both none; TRUE when both ran, so that the caller goes on comparing.
expect_same_error <- function(got, want, what, info) {
  if (!is.null(want$error)) {
    expect(
      !is.null(got$error) && grepl(want$error, got$error, fixed = TRUE),
      sprintf("%s: stats errors with \"%s\" but gpucor %s. %s", what, want$error,
              if (is.null(got$error)) "returned a value" else
                paste0("errors with \"", got$error, "\""), info)
    )
    return(FALSE)
  }
  expect(is.null(got$error),
         sprintf("%s: stats returns a value but gpucor errors with \"%s\". %s",
                 what, got$error, info))
  is.null(got$error)
}

# Same warnings, as sets of messages: stats may repeat one (once per pair), so
# only which messages occur is compared.
expect_same_warnings <- function(got, want, what, info) {
  g <- sort(unique(got$warnings))
  w <- sort(unique(want$warnings))
  expect(identical(g, w),
         sprintf("%s: warnings differ.\n  stats : %s\n  gpucor: %s\n%s", what,
                 if (length(w)) paste(dQuote(w, FALSE), collapse = ", ") else "(none)",
                 if (length(g)) paste(dQuote(g, FALSE), collapse = ", ") else "(none)",
                 info))
}

# Compares numbers with an absolute tolerance: same length and shape, same NA
# and NaN positions, equal infinities, and finite values within `tol`.
expect_abs_equal <- function(got, want, tol, what, info) {
  expect(is.double(got), sprintf("%s: result is %s, not double. %s", what, typeof(got), info))
  expect(identical(dim(got), dim(want)) && identical(length(got), length(want)),
         sprintf("%s: shape differs: got dim %s length %d, stats dim %s length %d. %s", what,
                 deparse(dim(got)), length(got), deparse(dim(want)), length(want), info))
  if (length(got) != length(want)) return(invisible(FALSE))
  g <- as.vector(got)
  w <- as.vector(want)
  bad_na <- which(is.na(g) != is.na(w))
  expect(length(bad_na) == 0L,
         sprintf("%s: NA pattern differs at %d element(s), first [%d]: got %s, stats %s. %s",
                 what, length(bad_na), bad_na[1], format(g[bad_na[1]]),
                 format(w[bad_na[1]]), info))
  bad_nan <- which(is.nan(g) != is.nan(w))
  expect(length(bad_nan) == 0L,
         sprintf("%s: NaN-vs-NA differs at %d element(s), first [%d]: got %s, stats %s. %s",
                 what, length(bad_nan), bad_nan[1], format(g[bad_nan[1]]),
                 format(w[bad_nan[1]]), info))
  inf <- is.infinite(w) | is.infinite(g)
  expect(identical(g[inf], w[inf]),
         sprintf("%s: infinite values differ. %s", what, info))
  ok <- !is.na(g) & !is.na(w) & !inf
  err <- if (any(ok)) max(abs(g[ok] - w[ok])) else 0
  at <- if (any(ok)) which(ok)[which.max(abs(g[ok] - w[ok]))] else NA
  expect(err <= tol,
         sprintf("%s: max abs difference %.3g > %.3g at [%d]: got %.17g, stats %.17g. %s",
                 what, err, tol, at, g[at], w[at], info))
  invisible(TRUE)
}

# stats::cor(x, method = "kendall", use = "everything") with no y and a column
# holding NA reads an uninitialised standard deviation for that column (in
# cov_na_1(), R's src/library/stats/src/cov.c, xm[] is only filled for columns
# without NA, and `xm[j] == 0` is then tested for every j < i), so whether it
# warns "the standard deviation is zero" changes from call to call. A column is
# constant exactly when its ranks are, so the warning stats means to give is the
# one Spearman gives on the same input (where xm[] of an NA column is NA).
kendall_warning_is_random <- function(x, y, method, use) {
  is.null(y) &&
    identical(match.arg(method, c("pearson", "kendall", "spearman")), "kendall") &&
    identical(pmatch(use, c("all.obs", "complete.obs", "pairwise.complete.obs",
                            "everything", "na.or.complete")), 4L) &&
    anyNA(x)
}

# Compares gpu_cor() with stats::cor() on the same input, once per backend:
# values to `tol` absolute, NA/NaN pattern, shape (scalar, vector or matrix),
# dimnames, attributes, warnings and errors. stats is called once.
expect_same_as_stats_cor <- function(x, y = NULL, method = "pearson", use = "everything",
                                     backend = c("cpu", "auto"), info = "",
                                     precision = "double", tol = 1e-10) {
  want <- capture_conditions(stats::cor(x, y, use = use, method = method))
  if (kendall_warning_is_random(x, y, method, use) && is.null(want$error)) {
    want$warnings <- capture_conditions(
      stats::cor(x, y, use = use, method = "spearman"))$warnings
  }
  for (b in backend) {
    what <- sprintf("gpu_cor(method = \"%s\", use = \"%s\", backend = \"%s\", precision = \"%s\")%s",
                    method, use, b, precision, if (is.null(y)) "" else " with y")
    got <- capture_conditions(
      gpucor::gpu_cor(x, y, method = method, use = use, backend = b, precision = precision)
    )
    if (!expect_same_error(got, want, what, info)) next
    g <- got$value
    w <- want$value
    expect_abs_equal(g, w, tol, what, info)
    expect(identical(dimnames(g), dimnames(w)),
           sprintf("%s: dimnames differ: got %s, stats %s. %s", what,
                   deparse(dimnames(g)), deparse(dimnames(w)), info))
    expect(identical(sort(names(attributes(g))), sort(names(attributes(w)))),
           sprintf("%s: attributes differ: got {%s}, stats {%s}. %s", what,
                   toString(names(attributes(g))), toString(names(attributes(w))), info))
    expect(all(abs(g) <= 1, na.rm = TRUE),
           sprintf("%s: a correlation lies outside [-1, 1]. %s", what, info))
    expect_same_warnings(got, want, what, info)
  }
  invisible(NULL)
}

# The attributes stats::dist() sets, apart from `call` (which names the
# function called).
dist_attrs <- c("Size", "Labels", "Diag", "Upper", "method", "p")

# Compares gpu_dist() with stats::dist() for the six stats metrics: values to
# relative `tol` (both as a whole, like expect_equal, and element by element),
# NA/NaN/Inf pattern, attributes, class, warnings and errors.
expect_same_as_stats_dist <- function(x, method = "euclidean", p = 2, diag = FALSE,
                                      upper = FALSE, backend = c("cpu", "auto"),
                                      info = "", precision = "double", tol = 1e-12) {
  want <- capture_conditions(stats::dist(x, method = method, diag = diag, upper = upper, p = p))
  for (b in backend) {
    what <- sprintf("gpu_dist(method = \"%s\", p = %s, backend = \"%s\", precision = \"%s\")",
                    method, format(p), b, precision)
    got <- capture_conditions(
      gpucor::gpu_dist(x, method = method, p = p, diag = diag, upper = upper,
                       backend = b, precision = precision)
    )
    if (!expect_same_error(got, want, what, info)) next
    g <- got$value
    w <- want$value
    expect_s3_class(g, "dist")
    for (a in dist_attrs) {
      expect(identical(attr(g, a), attr(w, a)),
             sprintf("%s: attribute %s differs: got %s, stats %s. %s", what, a,
                     deparse(attr(g, a)), deparse(attr(w, a)), info))
    }
    expect(is.call(attr(g, "call")), sprintf("%s: no 'call' attribute. %s", what, info))
    gv <- as.vector(unclass(g))
    wv <- as.vector(unclass(w))
    expect(is.double(gv), sprintf("%s: values are %s, not double. %s", what, typeof(gv), info))
    expect(length(gv) == length(wv),
           sprintf("%s: length %d, stats %d. %s", what, length(gv), length(wv), info))
    if (length(gv) != length(wv)) next
    expect_equal(gv, wv, tolerance = tol, info = paste(what, info))
    expect(identical(is.na(gv), is.na(wv)) && identical(is.nan(gv), is.nan(wv)) &&
             identical(is.infinite(gv), is.infinite(wv)),
           sprintf("%s: NA/NaN/Inf pattern differs from stats at %s. %s", what,
                   toString(head(which(is.na(gv) != is.na(wv) | is.nan(gv) != is.nan(wv) |
                                         is.infinite(gv) != is.infinite(wv)))), info))
    ok <- is.finite(gv) & is.finite(wv)
    rel <- abs(gv[ok] - wv[ok]) / pmax(abs(wv[ok]), 1e-300)
    worst <- if (length(rel)) which.max(rel) else NA
    expect(!length(rel) || max(rel) <= tol,
           sprintf("%s: element %d differs by relative %.3g: got %.17g, stats %.17g. %s", what,
                   which(ok)[worst], rel[worst], gv[ok][worst], wv[ok][worst], info))
    expect_same_warnings(got, want, what, info)
  }
  invisible(NULL)
}

# Evaluates `code` with options set, restoring them afterwards.
with_options <- function(opts, code) {
  old <- options(opts)
  on.exit(options(old))
  force(code)
}

cor_methods <- c("pearson", "spearman", "kendall")
cor_uses <- c("everything", "all.obs", "complete.obs", "na.or.complete",
              "pairwise.complete.obs")
stats_dist_methods <- c("euclidean", "maximum", "manhattan", "canberra", "binary",
                        "minkowski")
cor_dist_methods <- c("correlation", "abscorrelation", "spearman", "kendall")

# The backends to compare on this machine: the CPU engine always, the GPU
# engine (explicitly, whatever the problem size) when one is usable.
test_backends <- function() {
  c("cpu", if (isTRUE(as.vector(gpucor::gpu_available()))) "gpu")
}

# Evaluates `code` with environment variables set (NA: unset), restoring
# them afterwards.
with_envvars <- function(vars, code) {
  old <- Sys.getenv(names(vars), unset = NA, names = TRUE)
  set <- function(v) for (k in names(v)) {
    if (is.na(v[[k]])) Sys.unsetenv(k) else do.call(Sys.setenv, stats::setNames(list(v[[k]]), k))
  }
  set(vars)
  on.exit(set(old))
  force(code)
}

# A started BiocParallel::SnowParam(n), stopped when the calling test ends.
local_snow <- function(n, env = parent.frame()) {
  p <- BiocParallel::SnowParam(n)
  BiocParallel::bpstart(p)
  withr::defer(BiocParallel::bpstop(p), envir = env)
  p
}

# WGCNA's blockwise functions (test-blockwise.R, test-consensus.R), called
# inside with_wgcna(), because of two facts about them:
# - blockwiseModules() needs WGCNA attached: its reassignment step calls
#   match.fun("cor"), which looks the name up from the global environment,
#   where without library(WGCNA) it finds stats::cor (an error on its
#   weights.x argument).  with_wgcna() attaches it for the call and
#   detaches what it attached.
# - Most of its run time is WGCNA::collectGarbage(), which repeats gc()
#   until the heap is stable (about 1.5 s a call with WGCNA loaded, six
#   calls a run).  gc() changes no result, so with_wgcna() replaces it by a
#   no-op for the call, to keep the tests' run time small.

with_wgcna <- function(expr) {
  before <- search()
  suppressPackageStartupMessages(library("WGCNA", character.only = TRUE))
  ns <- asNamespace("WGCNA")
  gc_fun <- get("collectGarbage", envir = ns)
  unlockBinding("collectGarbage", ns)
  assign("collectGarbage", function() invisible(NULL), envir = ns)
  on.exit({
    assign("collectGarbage", gc_fun, envir = ns)
    lockBinding("collectGarbage", ns)
    for (p in setdiff(search(), before)) detach(p, character.only = TRUE)
  })
  expr
}
