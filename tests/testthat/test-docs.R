# Issue 15, part 4: help pages are written in markdown (DESCRIPTION's
# Roxygen field) and render with links, not literal [pkg::fun()] text.

test_that("help pages render, with links", {
  db <- tools::Rd_db("gpucor")
  expect_true(length(db) >= 4)
  for (nm in names(db)) {
    txt <- utils::capture.output(tools::Rd2txt(db[[nm]], out = stdout()))
    expect_false(any(grepl("\\[[A-Za-z.]+::[A-Za-z._]+\\(\\)\\]", txt)), label = nm)
    expect_false(any(grepl("`", txt, fixed = TRUE)), label = paste(nm, "(raw backticks)"))
    # issue 32: an escape written twice ("90\\% ...") shows its backslash;
    # a section title with a colon in it ("amap::Dist") is cut there and
    # its rest starts the section as ":Dist:"
    expect_false(any(grepl("\\", txt, fixed = TRUE)), label = paste(nm, "(stray backslash)"))
    expect_false(any(grepl("^\\s*:[A-Za-z._]+:", txt)), label = paste(nm, "(cut section title)"))
  }
  rd <- paste(as.character(db[["gpu_cor.Rd"]]), collapse = "")
  expect_match(rd, "\\link[stats:cor]", fixed = TRUE)
  # ?gpucor_options is a name; ?"gpucor-options" still finds the page
  expect_true(length(utils::help("gpucor_options", package = "gpucor")) == 1L)
  expect_true(length(utils::help("gpucor-options", package = "gpucor")) == 1L)
})
