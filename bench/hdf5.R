# bench/hdf5.R -- gpu_cor(output = gpu_hdf5()) against the disk and the
# peer (issue 14): Rscript bench/hdf5.R <part> with part one of
#   write     gpu_cor(x, output = gpu_hdf5(f)) of 300 x P (fresh process:
#             its peak RSS is the call's), seconds to return and with the
#             file synced, GB/s of the result written
#   write-bp  the same with BPPARAM = SnowParam(W) (W default 2, workers
#             started first, every worker on GPU 0): each worker writes its
#             columns to part files, bound by a virtual dataset; seconds
#             (and with the parts synced), the main process's peak RSS, and
#             sampled blocks against the file of 'write' (run it first)
#   dd        dd of the same bytes to the same directory (page cache, and
#             with conv=fdatasync)
#   peer      HDF5Array::writeHDF5Array(gpu_cor(x)) at level 0 (the file
#             uncompressed, as ours) and at its default level on P2 columns
#   readback  the file read back with HDF5Array against gpu_cor(x) in
#             memory: 'identical' on sampled blocks
# Sizes: P (default 50000), P2 (default 10000); directory GPUCOR_BENCH_DIR
# (default tempdir()).  One line of "name value" per figure.
suppressMessages(library(gpucor))
part <- commandArgs(TRUE)[1]
# HDF5Array's namespace (DelayedArray, S4Vectors, ...) loads once a
# session, on the first gpu_hdf5(): 2 to 4 s, timed on its own
t_ns <- system.time(suppressMessages(requireNamespace("HDF5Array")))[["elapsed"]]
dir <- Sys.getenv("GPUCOR_BENCH_DIR", tempdir())
P <- as.integer(Sys.getenv("P", "50000"))
P2 <- as.integer(Sys.getenv("P2", "10000"))
n <- 300L
set.seed(1)
x <- matrix(rnorm(n * P), n, P)
f <- file.path(dir, "cor.h5")
gb <- 8 * as.double(P)^2 / 1e9
hwm <- function() {
  s <- grep("^VmHWM", readLines("/proc/self/status"), value = TRUE)
  as.numeric(gsub("[^0-9]", "", s)) / 2^20
}
say <- function(name, value) cat(sprintf("%-34s %s\n", name, value))
el <- function(expr) system.time(expr)[["elapsed"]]

if (part == "write") {
  unlink(f)
  say("input GB", sprintf("%.3f", 8 * n * as.double(P) / 1e9))
  say("HDF5Array namespace load s (once)", sprintf("%.2f", t_ns))
  say("peak RSS before GB", sprintf("%.3f", hwm()))
  # CHUNK_COLS: columns a chunk (a band) instead of the default ~8 MB
  cc <- as.numeric(Sys.getenv("CHUNK_COLS", "0"))
  t <- el(r <- gpu_cor(x, output = gpu_hdf5(f, "cor", chunkdim = if (cc > 0) c(P, cc)),
                       verbose = TRUE))
  ts <- el(system2("sync", f))
  say("result GB", sprintf("%.2f", gb))
  say("gpu_hdf5 s (to return)", sprintf("%.2f  (%.2f GB/s)", t, gb / t))
  say("gpu_hdf5 s (+ sync of the file)", sprintf("%.2f  (%.2f GB/s)", t + ts, gb / (t + ts)))
  say("peak RSS GB", sprintf("%.3f", hwm()))
  say("file GB", sprintf("%.2f", file.size(f) / 1e9))
  say("chunkdim", paste(HDF5Array::chunkdim(r), collapse = " x "))
} else if (part == "write-bp") {
  suppressMessages(library(BiocParallel))
  W <- as.integer(Sys.getenv("W", "2"))
  g <- file.path(dir, "corbp.h5")
  unlink(c(g, Sys.glob(paste0(g, ".*"))))
  bp <- SnowParam(W)
  tw <- el({bpstart(bp); invisible(gpu_cor(x[, 1:500], backend = "gpu", BPPARAM = bp))})
  t <- el(r <- gpu_cor(x, output = gpu_hdf5(g, "cor"), BPPARAM = bp, verbose = TRUE))
  parts <- Sys.glob(paste0(g, ".*"))
  ts <- el(system2("sync", c(g, parts)))
  bpstop(bp)
  say(sprintf("SnowParam(%d) start s", W), sprintf("%.2f", tw))
  say(sprintf("gpu_hdf5 BPPARAM %d s (to return)", W), sprintf("%.2f  (%.2f GB/s)", t, gb / t))
  say(sprintf("gpu_hdf5 BPPARAM %d s (+ sync)", W),
      sprintf("%.2f  (%.2f GB/s)", t + ts, gb / (t + ts)))
  say("main process peak RSS GB", sprintf("%.3f", hwm()))
  say("part files, GB", sprintf("%d, %.2f", length(parts), sum(file.size(parts)) / 1e9))
  if (file.exists(f)) {
    one <- HDF5Array::HDF5Array(f, "cor")
    set.seed(3)
    ok <- 0L
    for (k in 1:20) {
      i <- sort(sample(P, 300))
      j <- sort(sample(P, 100))
      ok <- ok + identical(as.matrix(r[i, j]), as.matrix(one[i, j]))
    }
    say("identical to the one-writer file", sprintf("%d of 20 sampled blocks", ok))
  }
  unlink(c(g, parts))
} else if (part == "write-float") {
  g <- file.path(dir, "corf.h5")
  unlink(g)
  t <- el(r <- gpu_cor(x, output = gpu_hdf5(g, "cor", type = "float")))
  ts <- el(system2("sync", g))
  say("gpu_hdf5 float s (+ sync)", sprintf("%.2f (%.2f)", t, t + ts))
  unlink(g)
} else if (part == "dd") {
  cnt <- ceiling(gb * 1e9 / 2^26)
  for (sync in c(FALSE, TRUE)) {
    g <- file.path(dir, "dd.bin")
    unlink(g)
    t <- el(system2("dd", c("if=/dev/zero", paste0("of=", g), "bs=64M", paste0("count=", cnt),
                           if (sync) "conv=fdatasync"), stdout = FALSE, stderr = FALSE))
    say(sprintf("dd s%s", if (sync) " (fdatasync)" else ""),
        sprintf("%.2f  (%.2f GB/s)", t, cnt * 2^26 / 1e9 / t))
    unlink(g)
  }
} else if (part == "peer") {
  g <- file.path(dir, "peer.h5")
  unlink(g)
  t1 <- el(m <- gpu_cor(x))
  t2 <- el(HDF5Array::writeHDF5Array(m, g, "cor", level = 0L, verbose = FALSE))
  ts <- el(system2("sync", g))
  say("peer gpu_cor in memory s", sprintf("%.2f", t1))
  say("peer writeHDF5Array level 0 s", sprintf("%.2f (+ sync %.2f)", t2, t2 + ts))
  say("peer total s", sprintf("%.2f  (%.2f GB/s)", t1 + t2 + ts, gb / (t1 + t2 + ts)))
  say("peer peak RSS GB", sprintf("%.3f", hwm()))
  rm(m)
  unlink(g)
  x2 <- x[, seq_len(P2)]
  g2 <- file.path(dir, "peer2.h5")
  h2 <- file.path(dir, "ours2.h5")
  unlink(c(g2, h2))
  tp <- el(HDF5Array::writeHDF5Array(gpu_cor(x2), g2, "cor", verbose = FALSE))
  to <- el(gpu_cor(x2, output = gpu_hdf5(h2, "cor", level = 6L)))
  say(sprintf("P2 = %d, level 6: peer s", P2), sprintf("%.2f", tp))
  say(sprintf("P2 = %d, level 6: gpu_hdf5 s", P2), sprintf("%.2f", to))
  say("P2 level 6 files MB (peer, ours)", sprintf("%.0f %.0f", file.size(g2) / 1e6,
                                                   file.size(h2) / 1e6))
  unlink(c(g2, h2))
} else if (part == "readback") {
  r <- HDF5Array::HDF5Array(f, "cor")
  m <- gpu_cor(x)
  set.seed(2)
  ok <- 0L
  for (k in 1:20) {
    i <- sort(sample(P, 500))
    j <- sort(sample(P, 200))
    ok <- ok + identical(as.matrix(r[i, j]), m[i, j])
  }
  cs <- seq(P - 99L, P)
  ok2 <- identical(as.matrix(r[, cs]), m[, cs])
  say("readback identical blocks", sprintf("%d of 20 (+ last 100 columns: %s)", ok, ok2))
  unlink(f)
}
