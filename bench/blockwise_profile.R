# Where gpu_blockwise_modules() spends its time on ALL: the whole call with
# gpucor's default threads and with one thread, then Rprof (by total) of
# the default.
suppressPackageStartupMessages(library(gpucor))
x <- t(readRDS(".all-exprs.rds"))
invisible(gpu_tom(x[, 1:50]))
for (th in list(NULL, 1L, 4L)) {
  options(gpucor.threads = th)
  t <- system.time(r <- gpu_blockwise_modules(x, maxBlockSize = ncol(x), verbose = 0))
  cat("threads", if (is.null(th)) "default" else th, ":", t[1:3], "\n")
}
options(gpucor.threads = NULL)
Rprof(tf <- tempfile(), interval = 0.005)
r <- gpu_blockwise_modules(x, maxBlockSize = ncol(x), verbose = 0)
Rprof(NULL)
s <- summaryRprof(tf)$by.total
print(head(s[!grepl("^(\"try|\"doTry|\"withCalling|\"suppress|\"eval\"|\"FUN\")", rownames(s)), ], 30))
