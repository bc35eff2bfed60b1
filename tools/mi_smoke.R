# tools/mi_smoke.R -- issue 34's GPU paths, small, each against the CPU:
# the shrinkage estimates' prepared columns (dense and selected), minet's
# Gaussian MI epilogue, the Kraskov MI producer (knnmi.cu; with y = and
# output = too), ARACNE's max-min tiles, CLR, MRNET and the three from the
# data with the MI made on the device (prune.cu), in double and (where
# there is one) single precision.  Prints one line per case and "mi: N ok,
# M differ"; tools/device.sh's sanitize-mi runs it under compute-sanitizer
# (memcheck with the leak check, then racecheck).
suppressMessages(library(gpucor))
set.seed(11)
ok <- 0; bad <- 0
same <- function(what, a, b, tol = 1e-10) {
  a <- unclass(a); b <- unclass(b); attributes(a) <- NULL; attributes(b) <- NULL
  d <- if (length(a) != length(b)) Inf else max(c(0, abs(a - b)), na.rm = TRUE)
  good <- is.finite(d) && d <= tol && identical(is.na(a), is.na(b))
  cat(sprintf("%-40s %s (max diff %.2g)\n", what, if (good) "ok" else "DIFFERS", d))
  if (good) ok <<- ok + 1 else bad <<- bad + 1
}
run <- function(f) list(gpu = suppressWarnings(f("gpu")), cpu = suppressWarnings(f("cpu")))
x <- matrix(rnorm(30 * 150), 30); x[, 2] <- x[, 1] + rnorm(30, sd = 0.2)
r <- run(function(b) gpu_pcor_shrink(x, verbose = FALSE, backend = b)); same("pcor.shrink dense", r$gpu, r$cpu)
r <- run(function(b) gpu_cor_shrink(x, verbose = FALSE, backend = b, precision = "single"))
same("cor.shrink dense, single", r$gpu, r$cpu, 1e-5)
r <- run(function(b) gpu_cor_edges(x, method = "pcor.shrink", top_k = 3, backend = b))
same("pcor.shrink edges top_k", r$gpu$cor, r$cpu$cor)
for (e in c("pearson", "spearman", "kendall")) {
  r <- run(function(b) gpu_build_mim(x, e, backend = b)); same(paste("build.mim", e), r$gpu, r$cpu)
}
v <- matrix(rnorm(70 * 40), 70)           # 70 variables (rows) x 40 samples
for (k in c(2, 3, 5, 6, 7, 8, 10)) {   # 7: the block kernel with its list in local memory
  r <- run(function(b) gpu_knnmi(v, k = k, backend = b)); same(paste("knnmi k =", k), r$gpu, r$cpu, 1e-12)
}
w <- matrix(rnorm(20 * 40), 20); w[3, ] <- v[5, ]   # 20 more rows of the same samples
r <- run(function(b) gpu_knnmi(v, y = w, backend = b)); same("knnmi y =", r$gpu, r$cpu, 0)
if (gpucor:::.hdf5_ok()) { r <- run(function(b) gpu_knnmi(v, output = gpu_hdf5(tempfile(fileext = ".h5"), "mi"), backend = b)); same("knnmi output =", as.matrix(r$gpu), as.matrix(r$cpu), 0) }
mi <- gpu_knnmi(v, backend = "cpu")
s <- matrix(sample(c(0, 0.1, 0.2, 0.3), 150^2, TRUE), 150); s <- pmax(s, t(s))
for (m in list(mi, s)) {
  r <- run(function(b) gpu_aracne_a(m, backend = b)); same("aracne.a", r$gpu, r$cpu, 0)
  r <- run(function(b) gpu_aracne_m(m, backend = b)); same("aracne.m", r$gpu, r$cpu, 0)
  op <- options(gpucor.gpu_slab = 4L)   # the decisions in bands of 64 columns
  r <- run(function(b) gpu_aracne_a(m, backend = b)); same("aracne.a, bands", r$gpu, r$cpu, 0)
  options(op)
  r <- run(function(b) gpu_clr(m, backend = b)); same("clr", r$gpu, r$cpu, 0)
  r <- run(function(b) gpu_mrnet(m, backend = b)); same("mrnet", r$gpu, r$cpu, 0)
  op <- options(gpucor.gpu_slab = 7L)   # MRNET's targets in batches, the result in bands
  r <- run(function(b) gpu_mrnet(m, backend = b)); same("mrnet, batches", r$gpu, r$cpu, 0)
  options(op)
}
r <- run(function(b) gpu_aracne_a(x = v, backend = b)); same("aracne.a from x (MI on the device)", r$gpu, r$cpu, 0)
r <- run(function(b) gpu_aracne_m(x = v, backend = b)); same("aracne.m from x (MI on the device)", r$gpu, r$cpu, 0)
r <- run(function(b) gpu_clr(x = v, backend = b)); same("clr from x (MI on the device)", r$gpu, r$cpu, 0)
r <- run(function(b) gpu_mrnet(x = v, backend = b)); same("mrnet from x (MI on the device)", r$gpu, r$cpu, 0)
op <- options(gpucor.gpu_slab = 9L)     # the MI in panels of 9 columns
r <- run(function(b) gpu_aracne_m(x = v, backend = b)); same("aracne.m from x, panels", r$gpu, r$cpu, 0)
options(op)
r <- run(function(b) gpu_aracne_a(x = v[, 1:36], k = 34, backend = b))   # k > 32: a thread per pair
same("aracne.a from x, k = 34", r$gpu, r$cpu, 0)
cat(sprintf("mi: %d ok, %d differ\n", ok, bad))
