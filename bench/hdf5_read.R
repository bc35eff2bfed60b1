# bench/hdf5_read.R -- gpu_cor() / gpu_dist() of an on-disk input against
# reading the file once plus the in-memory call (issue 37).
#
#   Rscript bench/hdf5_read.R            every case, each in a fresh Rscript
#   Rscript bench/hdf5_read.R make       only write the files
#
# Files (in GPUCOR_BENCH_DIR, default tempdir(); kept and reused): an
# N x P matrix of rnorm (default 800000 x 50, 320 MB of doubles) written by
# HDF5Array::writeHDF5Array() at its default deflate level, with chunks of
# 16384 rows x all columns ("rows") and of all rows x 1 column ("cols").
# Cases (a fresh Rscript each, so VmHWM of /proc/self/status is the case's
# peak): "read once" is as.matrix() of the HDF5Matrix plus the in-memory
# call; "gpucor" is the same call on the HDF5Matrix.  gpu_cor(h) is of the
# P columns; gpu_dist(t(h), "correlation") of the P columns as items (the
# tall matrix's other orientation, read by rows of t(h)).  BUDGET cases set
# options(gpucor.block_memory) below the input's size (default 128 MiB: the
# blocked path), and say how many reads of the file's chunks that made.
# BLOCKED=0 leaves the BUDGET cases out.  DelayedArray's block size: BLOCK
# (default 8e6, as in the issue's report).
# BACKEND: "cpu" (default) or "gpu".
args <- commandArgs(TRUE)
dir <- Sys.getenv("GPUCOR_BENCH_DIR", tempdir())
N <- as.integer(Sys.getenv("N", "800000"))
P <- as.integer(Sys.getenv("P", "50"))
BLOCK <- as.numeric(Sys.getenv("BLOCK", "8e6"))
BUDGET <- as.numeric(Sys.getenv("BUDGET", 2^27))
BACKEND <- Sys.getenv("BACKEND", "cpu")
file_of <- function(layout) file.path(dir, sprintf("read_%d_%d_%s.h5", N, P, layout))

make <- function() {
  suppressMessages(library(HDF5Array))
  if (all(file.exists(file_of(c("rows", "cols"))))) return(invisible())
  set.seed(1)
  x <- matrix(rnorm(as.double(N) * P), N, P, dimnames = list(NULL, paste0("v", 1:P)))
  writeHDF5Array(x, file_of("rows"), "x", chunkdim = c(min(N, 16384L), P), with.dimnames = TRUE)
  writeHDF5Array(x, file_of("cols"), "x", chunkdim = c(N, 1L), with.dimnames = TRUE)
  invisible()
}

# One case in this process: prints "seconds peak_GB reads identical".
one <- function(layout, fun, how, budget) {
  suppressMessages({library(gpucor); library(HDF5Array)})
  suppressMessages(setAutoBlockSize(BLOCK))
  h <- HDF5Array(file_of(layout), "x")
  if (fun == "dist") h <- t(h)
  call <- function(v) if (fun == "cor") gpu_cor(v, backend = BACKEND)
                      else gpu_dist(v, "correlation", backend = BACKEND)
  hwm <- function() as.numeric(gsub("[^0-9]", "", grep("^VmHWM", readLines("/proc/self/status"),
                                                        value = TRUE))) / 2^20
  invisible(gpucor:::.count_reads())
  base <- hwm()
  if (budget > 0) options(gpucor.block_memory = budget)
  k0 <- gpucor:::.count_reads()
  t <- system.time(r <- if (how == "read once") call(as.matrix(h)) else call(h))[["elapsed"]]
  k <- gpucor:::.count_reads() - k0
  peak <- hwm()
  # the check that the result is the in-memory call's (not timed)
  same <- NA
  if (how == "gpucor") {
    options(gpucor.block_memory = NULL)
    same <- identical(r, call(as.matrix(h)))
  }
  cat(sprintf("%.2f %.3f %.3f %d %s\n", t, peak, base, as.integer(k), same))
}

if (length(args) == 5L && args[1L] == "one") {
  one(args[2L], args[3L], args[4L], as.numeric(args[5L]))
  quit(save = "no")
}
make()
if (length(args) && args[1L] == "make") quit(save = "no")
script <- normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE)))
cases <- expand.grid(how = c("read once", "gpucor"), layout = c("rows", "cols"),
                     fun = c("cor", "dist"), budget = 0, stringsAsFactors = FALSE)
if (Sys.getenv("BLOCKED", "1") != "0")
  cases <- rbind(cases, data.frame(how = "gpucor", layout = c("rows", "cols"), fun = "cor",
                                   budget = BUDGET),
                 data.frame(how = "gpucor", layout = "cols", fun = "dist", budget = BUDGET))
cases <- cases[order(cases$fun, cases$layout, cases$budget), c("fun", "layout", "budget", "how")]
cat(sprintf("%d x %d doubles (%.0f MB), DelayedArray block size %.0f MB, backend %s; %s; load %s\n",
            N, P, 8 * as.double(N) * P / 1e6, BLOCK / 1e6, BACKEND, format(Sys.time(), tz = "UTC"),
            sub(".*load average: ", "", system("uptime", intern = TRUE))))
out <- NULL
for (i in seq_len(nrow(cases))) {
  cs <- cases[i, ]
  res <- system2(file.path(R.home("bin"), "Rscript"),
                 c(shQuote(script), "one", cs$layout, cs$fun, shQuote(cs$how), cs$budget),
                 stdout = TRUE)
  v <- strsplit(tail(res, 1L), " ")[[1L]]
  out <- rbind(out, data.frame(cs, seconds = as.numeric(v[1L]), peak_GB = as.numeric(v[2L]),
                               start_GB = as.numeric(v[3L]), reads = as.integer(v[4L]),
                               identical = v[5L], stringsAsFactors = FALSE))
}
# the ratio of each gpucor case to "read once" of the same call and layout
key <- paste(out$fun, out$layout)
once <- out$seconds[out$how == "read once"][match(key, key[out$how == "read once"])]
out$ratio <- round(out$seconds / once, 2)
out$budget <- ifelse(out$budget > 0, sprintf("%.0f MiB", out$budget / 2^20), "auto")
out$fun <- ifelse(out$fun == "cor", "gpu_cor(h)", "gpu_dist(t(h), 'correlation')")
print(out, row.names = FALSE)
