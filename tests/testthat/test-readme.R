# The README's Usage block runs top to bottom as written (issue 32: its last
# line once stopped with an error).  The README is found beside the tests
# in a source tree, and in R CMD check's unpacked sources.

readme_usage <- function() {
  for (f in c(testthat::test_path("..", "..", "README.md"),
              file.path("..", "..", "00_pkg_src", "gpucor", "README.md")))
    if (file.exists(f)) {
      md <- readLines(f, warn = FALSE)
      at <- grep("^## Usage", md)
      if (!length(at)) return(NULL)
      start <- at[1] + which(md[-seq_len(at[1])] == "```r")[1]
      end <- start + which(md[-seq_len(start)] == "```")[1]
      return(md[(start + 1):(end - 1)])
    }
  NULL
}

test_that("the README's Usage block runs top to bottom", {
  code <- readme_usage()
  if (is.null(code)) skip("README.md not found beside the tests")
  expect_gt(length(code), 5)
  set.seed(1)
  env <- new.env(parent = globalenv())
  expect_no_error(suppressWarnings(eval(parse(text = code), envir = env)))
  # it got to the end, and the results are what the comments say
  expect_true(is.matrix(env$b) && all(dim(env$b) == ncol(env$x)))
  expect_s3_class(env$hc, "hclust")
  expect_s3_class(env$e, "data.frame")
})
