# tools/dist_file_smoke.R -- gpu_dist(output = gpu_hdf5()) of the
# correlation distances on the GPU (whole columns, cor.cu's
# dev_problem.tri = 0): against the 'dist' in memory on the GPU, and the
# CPU's file, for every correlation metric, with and without NA, double
# and single, one and two workers on GPU 0, small panels; then one timed
# case, 20000 x 300 "correlation" (3.2 GB) to a file, GPU against CPU.
# SMALL=1: the comparisons only, small (for compute-sanitizer).
suppressMessages(library(gpucor))
small <- nzchar(Sys.getenv("SMALL"))
set.seed(1)
n <- if (small) 60 else 700
x <- matrix(rnorm(n * 30), n, 30)
x[5, ] <- 2                                  # zero sd: the warning
x[7, ] <- x[6, ] * (1 + 1e-12)               # a near duplicate
xn <- x
xn[sample(length(x), n)] <- NA
f <- tempfile(fileext = ".h5")
k <- 0
back <- function(r) unname(as.matrix(r))
cat(sprintf("%-44s %10s %10s %s\n", "case", "max|file-mem|", "vs CPU", "symmetric / warning"))
for (d in list(x, xn)) for (m in c("correlation", "abscorrelation", "spearman", "kendall", "cosine"))
  for (pr in c("double", "single")) for (dev in list(0L, c(0L, 0L))) for (slab in c(0, 7)) {
    if (small && (pr == "single" || slab == 0)) next
    old <- options(gpucor.gpu_slab = slab)
    k <- k + 1
    w1 <- tryCatch(gpu_dist(d, m, backend = "gpu", precision = pr, devices = dev),
                   warning = conditionMessage)
    w2 <- tryCatch(gpu_dist(d, m, backend = "gpu", precision = pr, devices = dev,
                            output = gpu_hdf5(f, paste0("w", k))), warning = conditionMessage)
    mem <- back(suppressWarnings(gpu_dist(d, m, backend = "gpu", precision = pr, devices = dev)))
    got <- back(suppressWarnings(gpu_dist(d, m, backend = "gpu", precision = pr, devices = dev,
                                          output = gpu_hdf5(f, paste0("d", k)))))
    cpu <- back(suppressWarnings(gpu_dist(d, m, backend = "cpu", precision = pr,
                                          output = gpu_hdf5(f, paste0("c", k)))))
    options(old)
    same_na <- identical(is.na(got), is.na(mem))
    dm <- if (same_na) max(abs(got - mem), na.rm = TRUE) else NA
    dc <- max(abs(got - cpu), na.rm = TRUE)
    cat(sprintf("%-44s %10.2e %10.2e %s %s%s\n",
                sprintf("%s, NA %s, %s, %d worker(s), slab %d", m, anyNA(d), pr, length(dev), slab),
                dm, dc, identical(got, t(got)),
                identical(is.character(w1), is.character(w2)) &&
                  (!is.character(w1) || identical(w1, w2)),
                if (!same_na) " NA PATTERN DIFFERS" else ""))
  }
unlink(f)
if (!small) {
  set.seed(2)
  y <- matrix(rnorm(20000 * 300), 20000)
  invisible(gpu_dist(y[1:100, ], "correlation", backend = "gpu"))
  for (b in c("gpu", "cpu")) {
    f <- tempfile(fileext = ".h5")
    t <- system.time(r <- gpu_dist(y, "correlation", backend = b, output = gpu_hdf5(f, "d")))
    cat(sprintf("20000 x 300 correlation to a file (3.2 GB), %s: %.2f s\n", b, t[["elapsed"]]))
    if (b == "gpu") g <- as.matrix(r[1:50, 1:50]) else
      cat("GPU and CPU files, 50 x 50 corner: max difference",
          format(max(abs(g - as.matrix(r[1:50, 1:50])))), "\n")
    unlink(f)
  }
}
cat("dist_file_smoke done\n")
