# Where the time of a dense GPU result goes: the runner's own clocks
# (attr "timing": waiting for the device, committing panels to R memory,
# the whole run) beside the call's elapsed time.
#   Rscript bench/profile_dense.R [vars ...]     (default 20000)
suppressPackageStartupMessages(library(gpucor))
options(gpucor.profile = TRUE)
nv <- as.numeric(commandArgs(TRUE)); if (!length(nv)) nv <- 20000
set.seed(1)
for (p in nv) {
  x <- matrix(rnorm(300 * p), 300)
  invisible(gpu_cor(x[, 1:100], backend = "gpu"))
  for (rep in 1:3) {
    el <- system.time(r <- gpu_cor(x, backend = "gpu"))[["elapsed"]]
    tm <- attr(r, "timing")
    cat(sprintf("pearson %d^2: elapsed %.3f  run %.3f  wait %.3f  commit %.3f  (%.1f GB/s)\n",
                p, el, tm[3], tm[1], tm[2], 8 * p^2 / el / 1e9))
    rm(r); invisible(gc())
  }
}
