# bench/property.R -- the randomized property test (tests/testthat/test-property.R)
# for several block seeds, each failure's message in full, and a line per seed.
# Usage: Rscript bench/property.R [scale] [seed ...]
#   scale: GPUCOR_PROPERTY_CASES (1 = the CI's 1300 gpu_cor + 1000 gpu_dist cases)
# Run by tools/device.sh property (PROP_SCALE, PROP_SEEDS) on the GPU machine,
# where every case also runs on the GPU.
args <- commandArgs(TRUE)
scale <- if (length(args)) args[1] else "1"
seeds <- if (length(args) > 1) args[-1] else "1"
suppressMessages({library(testthat); library(gpucor)})
cat(sprintf("gpu_available: %s\n", isTRUE(as.vector(gpu_available()))))
out <- Sys.getenv("OUT", tempdir())
for (s in seeds) {
  Sys.setenv(GPUCOR_PROPERTY_CASES = scale, GPUCOR_TEST_SEED = s)
  t0 <- proc.time()[["elapsed"]]
  rep <- ListReporter$new()
  test_file("tests/testthat/test-property.R", package = "gpucor",
            load_package = "installed", reporter = rep)
  res <- rep$get_results()
  msgs <- unlist(lapply(res, function(t) vapply(Filter(function(e)
    inherits(e, c("expectation_failure", "expectation_error")), t$results),
    conditionMessage, "")))
  npass <- sum(unlist(lapply(res, function(t) vapply(t$results, inherits, NA, "expectation_success"))))
  writeLines(msgs, file.path(out, sprintf("property-%s.log", s)))
  cat(sprintf("seed %s, scale %s: %d passed, %d failed, %.0f s\n", s, scale, npass,
              length(msgs), proc.time()[["elapsed"]] - t0))
  if (length(msgs)) cat(substr(head(msgs, 12), 1, 600), sep = "\n---\n")
}
