# Expected values of gpu_dist() for the correlation and cosine distances,
# shared by test-dist.R, test-reproducers.R and test-property.R.

# What gpu_dist(x, method) should give for the correlation family: 1 - the
# pairwise-complete correlation between rows, in dist (lower triangle) order.
cor_dist_expected <- function(x, method) {
  m <- switch(method, correlation = , abscorrelation = "pearson", method)
  r <- stats::cor(t(x), use = "pairwise.complete.obs", method = m)
  if (method == "abscorrelation") r <- abs(r)
  stats::as.dist(1 - r)
}

# 1 - cosine similarity between rows, over the coordinates both rows observe,
# as capture_conditions() returns it: NA when the rows share no coordinate,
# and NA with the warning the correlation distances give for a constant row
# when either row is all zero on the shared coordinates -- and, as those do
# for data with NA (the diagonal of the pairwise correlation matrix), when a
# row is all zero on its own observed coordinates.
cosine_expected <- function(x) {
  n <- nrow(x)
  out <- numeric(0)
  zero <- FALSE
  for (j in seq_len(max(0L, n - 1L))) for (i in (j + 1L):n) {
    ok <- !is.na(x[i, ]) & !is.na(x[j, ])
    a <- x[i, ok]
    b <- x[j, ok]
    if (!any(ok)) {
      out <- c(out, NA)
    } else if (sum(a * a) == 0 || sum(b * b) == 0) {
      zero <- TRUE
      out <- c(out, NA)
    } else {
      out <- c(out, 1 - sum(a * b) / sqrt(sum(a * a) * sum(b * b)))
    }
  }
  if (anyNA(x)) {
    for (i in seq_len(n)) {
      a <- x[i, !is.na(x[i, ])]
      if (length(a) && all(a == 0)) zero <- TRUE
    }
  }
  list(value = out, error = NULL,
       warnings = if (zero) "the standard deviation is zero" else character())
}

# Compares gpu_dist(x, method) for a correlation or cosine metric with the
# expected values, to `tol` absolute, plus attributes and warnings.
expect_cor_dist <- function(x, method, backend = c("cpu", "auto"), info = "",
                            tol = 1e-10, diag = FALSE, upper = FALSE) {
  want <- if (method == "cosine") {
    cosine_expected(x)
  } else {
    capture_conditions(cor_dist_expected(x, method))
  }
  for (b in backend) {
    what <- sprintf("gpu_dist(method = \"%s\", backend = \"%s\")", method, b)
    got <- capture_conditions(
      gpucor::gpu_dist(x, method = method, diag = diag, upper = upper, backend = b)
    )
    if (!expect_same_error(got, want, what, info)) next
    g <- got$value
    expect_s3_class(g, "dist")
    expect_identical(attr(g, "Size"), nrow(x), info = paste(what, info))
    expect_identical(attr(g, "Labels"), rownames(x), info = paste(what, info))
    expect_identical(attr(g, "Diag"), diag, info = paste(what, info))
    expect_identical(attr(g, "Upper"), upper, info = paste(what, info))
    expect_identical(attr(g, "method"), method, info = paste(what, info))
    expect_null(attr(g, "p"))
    expect_abs_equal(as.vector(unclass(g)), as.vector(unclass(want$value)), tol, what, info)
    expect_same_warnings(got, want, what, info)
  }
  invisible(NULL)
}
