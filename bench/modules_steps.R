# The steps of a gpu_blockwise_modules()-like run on ALL, each timed, with
# gpucor's default threads and with 4: which step the thread count moves.
suppressPackageStartupMessages(library(gpucor))
x <- t(readRDS(".all-exprs.rds"))
invisible(gpu_tom(x[, 1:50]))
for (th in list(NULL, 4L, 1L)) {
  options(gpucor.threads = th)
  tm <- function(e) system.time(e)[["elapsed"]]
  t <- c(tom = tm(d <- gpu_tom(x, power = 6, dist = TRUE)),
         hclust = tm(tree <- gpu_hclust(d, method = "average")),
         cut = tm(mods <- gpu_cutree_dynamic(tree, distM = d, deepSplit = 2, cutHeight = 0.995,
                                            verbose = 0)),
         eigengenes = tm(me <- gpu_module_eigengenes(x, mods)$eigengenes),
         kME_one_call = tm(k <- gpu_cor(x, as.matrix(me), use = "p")),
         kME_per_module = tm(for (m in setdiff(unique(mods), 0))
           gpu_cor(x[, mods == m, drop = FALSE], me[, paste0("ME", m)], use = "p")),
         merge = tm(mg <- gpu_merge_close_modules(x, mods, cutHeight = 0.15, verbose = 0)))
  cat("threads", if (is.null(th)) "default" else th, "\n"); print(round(t, 3))
}
