# Ctrl-C while an entry copies a large input before its engine runs: the
# time from SIGINT (what Ctrl-C sends) to R's interrupt, for each call
# below, with the signal sent `after` seconds into the call (inside the
# copy of the input).  A child process sends it and writes the time it did
# so; the delay is the time the interrupt reached R minus that.  The
# session goes on afterwards, and a small call still gives stats' result.
#   Rscript bench/interrupt_copy.R [cpu|gpu] [n]      (n: gpu_hclust's objects, 30000)
suppressPackageStartupMessages(library(gpucor))
args <- commandArgs(TRUE)
be <- if (length(args) >= 1L) args[1] else "cpu"
n <- if (length(args) >= 2L) as.integer(args[2]) else 30000L
options(gpucor.progress = FALSE)
stamp <- tempfile()
kick <- function(after) {
  unlink(stamp)
  system(sprintf("(sleep %g; date +%%s.%%N > %s; kill -INT %d) &", after, stamp, Sys.getpid()))
}
now <- function() as.numeric(Sys.time())
run <- function(label, expr, after) {
  kick(after)
  t0 <- now()
  r <- tryCatch(expr, interrupt = function(e) now())
  t1 <- now()
  Sys.sleep(0.2)   # the stamp is written
  sent <- if (file.exists(stamp)) as.numeric(readLines(stamp)) else NA
  data.frame(call = label, outcome = if (is.numeric(r) && length(r) == 1L) "interrupted" else "completed",
             signal_at_s = round(sent - t0, 2), delay_s = round(if (is.numeric(r) && length(r) == 1L) r - sent else NA, 3),
             call_s = round(t1 - t0, 2))
}

set.seed(1)
# the distances of n objects: 3.6 GB at n = 30000 (made by the engine, fast)
d <- gpu_dist(matrix(rnorm(n * 2), n), backend = "cpu")
invisible(gc())
m <- 15000L   # n x n inputs: 1.8 GB
w <- as.matrix(gpu_dist(matrix(rnorm(m * 2), m), backend = "cpu"))
a <- exp(-w)  # an adjacency
invisible(gc())
# each call twice: the signal early (in the checks and the copy of the
# input) and later (in the copy, or in the engine's first steps)
tab <- do.call(rbind, lapply(c(0.5, 3), function(after) rbind(
  run(sprintf("gpu_hclust(d), n = %d (%s)", n, be), gpu_hclust(d, backend = be), after),
  run(sprintf("gpu_shortest_paths(w), n = %d (%s)", m, be), gpu_shortest_paths(w, backend = be), after),
  run(sprintf("gpu_tom(adjacency = a), n = %d (%s)", m, be), gpu_tom(adjacency = a, backend = be), after))))
print(tab, row.names = FALSE)
y <- matrix(rnorm(200), 40)
ok <- identical(gpu_hclust(dist(y), backend = be)$merge, hclust(dist(y))$merge)
cat(sprintf("after the interrupts: a small clustering is %s\n", if (ok) "right" else "WRONG"))
