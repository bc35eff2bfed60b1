# Several GPUs on one compute-bound call (issue 9's target: Kendall, 50000
# observations x 2000 variables, devices = "all" on the 2-GPU machine, at
# least 1.8x one GPU of that machine, the same values).  Prints one table.
#   Rscript bench/devices.R [obs] [vars] [devices]
# devices: "all" (default) or ordinals such as "0,0" (two workers on GPU 0:
# the coordinator's overhead on a one-GPU machine, not a speed-up).
suppressPackageStartupMessages(library(gpucor))
a <- commandArgs(TRUE)
n <- if (length(a) >= 1) as.numeric(a[1]) else 50000
p <- if (length(a) >= 2) as.numeric(a[2]) else 2000
devs <- if (length(a) >= 3 && a[3] != "all") as.integer(strsplit(a[3], ",")[[1]]) else "all"
stopifnot(gpu_available())
info <- gpu_info()
cat(sprintf("%s, %d visible: %s\n", format(Sys.time(), "%Y-%m-%d"), info$device_count,
            paste(info$devices$name, collapse = ", ")))
set.seed(1)
x <- matrix(rnorm(n * p), n)
invisible(gpu_cor(x[1:100, 1:10], method = "kendall", backend = "gpu", devices = devs))
t1 <- system.time(r1 <- gpu_cor(x, method = "kendall", backend = "gpu", devices = 0L))[["elapsed"]]
tn <- system.time(rn <- gpu_cor(x, method = "kendall", backend = "gpu", devices = devs))[["elapsed"]]
cat(sprintf("%-34s %8s %8s %8s %s\n", "case", "1 GPU", "devices", "speed-up", "identical"))
cat(sprintf("%-34s %8.2f %8.2f %8.2f %s\n",
            sprintf("kendall %g obs x %g vars", n, p), t1, tn, t1 / tn, identical(r1, rn)))
cat(sprintf("devices = %s\n", paste(deparse(devs), collapse = "")))
