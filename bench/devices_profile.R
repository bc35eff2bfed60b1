# Where the 2-GPU Kendall time goes: one GPU and devices = "all", with the
# panel width the planner picks and with panels forced (gpucor.gpu_slab).
#   Rscript bench/devices_profile.R [obs] [vars]
suppressPackageStartupMessages(library(gpucor))
a <- commandArgs(TRUE)
n <- if (length(a) >= 1) as.numeric(a[1]) else 20000
p <- if (length(a) >= 2) as.numeric(a[2]) else 2000
set.seed(1)
x <- matrix(rnorm(n * p), n)
invisible(gpu_cor(x[1:100, 1:10], method = "kendall", backend = "gpu", devices = "all"))
options(gpucor.profile = TRUE)
ref <- NULL
for (slab in c(0, p / 2, p / 4)) for (devs in list(0L, "all")) {
  options(gpucor.gpu_slab = slab)
  t <- system.time(r <- gpu_cor(x, method = "kendall", backend = "gpu", devices = devs))[["elapsed"]]
  tm <- attr(r, "timing")
  attributes(r) <- list(dim = dim(r))
  if (is.null(ref)) ref <- r
  cat(sprintf("slab %5g devices %-4s %7.2f s  identical %s  timing %s\n", slab,
              paste(devs, collapse = ","), t, identical(r, ref),
              paste(sprintf("%.2f", tm), collapse = " ")))
}
