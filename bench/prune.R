# ARACNE, CLR and MRNET: gpucor against parmigene 1.1.0, each case in its
# own R process (VmHWM its own), parmigene with OMP_NUM_THREADS = all cores.
#   Rscript bench/prune.R            (every case; the GPU ones need a GPU)
#   Rscript bench/prune.R cpu        (the n = 2000 cases, no GPU)
#   Rscript bench/prune.R --one <case>
# The input: a random symmetric "MI" matrix (uniform on [0, 0.5), 0 on the
# diagonal).  The last column counts the zeros of the result, so that the
# lines of one n can be compared.
Sys.setenv(OMP_NUM_THREADS = parallel::detectCores())
suppressPackageStartupMessages(library(gpucor))
a <- commandArgs(TRUE)
source("bench/cases.R")
mi_of <- function(n) {
  set.seed(1)
  m <- matrix(runif(n * n, 0, 0.5), n)
  m[lower.tri(m)] <- t(m)[lower.tri(m)]
  diag(m) <- 0
  m
}
case <- function(label, n, f) {
  force(n)
  function() {
    mi <- mi_of(n)
    invisible(f(mi[1:100, 1:100]))   # warm-up (a GPU context, the code)
    t <- tm(r <- f(mi))
    list(case = sprintf("%s, n = %d", label, n), t = t, zeros = sum(r == 0))
  }
}
thr <- sprintf("%d threads", parallel::detectCores())
cases <- list()
for (n in c(2000, 5000)) {
  cases[[paste0("aracne_cpu", n)]] <- case(sprintf("gpu_aracne_a cpu (%s)", thr), n,
                                          function(m) gpu_aracne_a(m, backend = "cpu"))
  cases[[paste0("aracne_gpu", n)]] <- case("gpu_aracne_a gpu", n,
                                          function(m) gpu_aracne_a(m, backend = "gpu"))
  cases[[paste0("aracne_parmigene", n)]] <- case(sprintf("  parmigene::aracne.a (%s)", thr), n,
                                                function(m) parmigene::aracne.a(m))
}
cases$aracne_gpu20000 <- case("gpu_aracne_a gpu", 20000,
                              function(m) gpu_aracne_a(m, backend = "gpu"))
# from data past minet's 65536 variables (not in the default list): the MI
# made on the GPU (gpu_knnmi()'s kernels, 300 samples) into the matrix that
# ARACNE prunes there, only the result copied to host memory.  The label
# gives the peak host memory (VmHWM, read before the zeros are counted, a
# column at a time) and its ratio to the result's 8 p^2 bytes: about 1 (x
# and the staging buffers besides), where the MI through host memory took 2.
zeros <- function(r) {
  z <- 0
  for (j in seq_len(ncol(r))) {
    z <- z + sum(r[, j] == 0)
    # R defers collecting a column's temporaries in proportion to the live
    # heap (+17 GB beside a 39 GB result): the table's VmHWM then
    # measured R's garbage, not the call
    if (j %% 2000L == 0L) gc(verbose = FALSE)
  }
  z
}
cases$aracne_x <- function() {
  p <- as.integer(Sys.getenv("ARACNE_X_P", "70000"))
  set.seed(1); x <- matrix(rnorm(p * 300), p)
  invisible(gpu_aracne_a(x = x[1:50, ], backend = "gpu"))
  t <- tm(r <- gpu_aracne_a(x = x, backend = "gpu"))
  peak <- hwm()
  list(case = sprintf("gpu_aracne_a(x =) gpu, %d x 300 (peak %.1f GB, %.2f x result)", p,
                      peak / 1024, peak / (8 * as.double(p)^2 / 2^20)),
       t = t, zeros = zeros(r))
}
cases$clr_cpu2000 <- case(sprintf("gpu_clr cpu (%s)", thr), 2000,
                          function(m) gpu_clr(m, backend = "cpu"))
cases$clr_gpu2000 <- case("gpu_clr gpu", 2000, function(m) gpu_clr(m, backend = "gpu"))
cases$clr_parmigene2000 <- case(sprintf("  parmigene::clr (%s)", thr), 2000,
                                function(m) parmigene::clr(m))
cases$mrnet_cpu2000 <- case(sprintf("gpu_mrnet cpu (%s)", thr), 2000,
                            function(m) gpu_mrnet(m, backend = "cpu"))
cases$mrnet_gpu2000 <- case("gpu_mrnet gpu", 2000, function(m) gpu_mrnet(m, backend = "gpu"))
cases$mrnet_parmigene2000 <- case(sprintf("  parmigene::mrnet (%s)", thr), 2000,
                                  function(m) parmigene::mrnet(m))
cpu <- c("aracne_cpu2000", "aracne_parmigene2000", "clr_cpu2000", "clr_parmigene2000",
         "mrnet_cpu2000", "mrnet_parmigene2000")
run_cases("bench/prune.R", cases, a,
          c("aracne_cpu2000", "aracne_gpu2000", "aracne_parmigene2000",
            "aracne_cpu5000", "aracne_gpu5000", "aracne_parmigene5000", "aracne_gpu20000",
            "clr_cpu2000", "clr_gpu2000", "clr_parmigene2000",
            "mrnet_cpu2000", "mrnet_gpu2000", "mrnet_parmigene2000"),
          cpu, "zeros", function(r) sprintf("%.0f", r$zeros))
