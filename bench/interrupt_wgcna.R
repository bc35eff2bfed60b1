# Ctrl-C during the WGCNA family's long runs: SIGINT (what Ctrl-C sends)
# after a second must stop gpu_tom() and gpu_bicor()'s pairwise pass at the
# next tile or panel, raise R's interrupt and leave the session usable.
#   Rscript bench/interrupt_wgcna.R cpu|gpu   (tools/device.sh interrupt-wgcna: gpu)
suppressPackageStartupMessages(library(gpucor))
be <- commandArgs(TRUE)[1]
if (is.na(be)) be <- "cpu"
set.seed(1)
big <- if (be == "gpu") 45000 else 6000
x <- matrix(rnorm(300 * big), 300)
xn <- matrix(rnorm(200 * 1500), 200); xn[sample(length(xn), 3000)] <- NA
invisible(gpu_tom(x[, 1:200], backend = be))
kick <- function() system(sprintf("(sleep 1; kill -INT %d) &", Sys.getpid()))
run <- function(label, expr) {
  kick()
  t0 <- Sys.time()
  r <- tryCatch(expr, interrupt = function(e) "interrupted")
  cat(sprintf("%-40s %s after %.2f s\n", label, if (identical(r, "interrupted")) r else "completed",
              as.numeric(Sys.time() - t0, units = "secs")))
}
run(sprintf("gpu_tom, 300 x %d (%s)", big, be), gpu_tom(x, backend = be))
run(sprintf("gpu_tom(dist = TRUE), 300 x %d (%s)", big, be), gpu_tom(x, dist = TRUE, backend = be))
run("gpu_bicor pairwise NA pairs, 200 x 1500", gpu_bicor(xn, use = "p", backend = be))
# the session goes on, and gives the right answer
y <- x[, 1:50]
ok <- isTRUE(all.equal(gpu_tom(y, backend = be), gpu_tom(y, backend = "cpu"), tolerance = 1e-12))
cat(sprintf("after the interrupts: a TOM is %s\n", if (ok) "right" else "WRONG"))
