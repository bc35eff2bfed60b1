# bench/bp_profile.R -- where gpu_knn(BPPARAM =)'s time goes beyond the
# engine's (400000 x 50, k = 15, one GPU): the input's serialization both
# ways, or its file (.bp_ship), one worker's part run in this process, the
# merge, the return.
suppressMessages(library(gpucor))
set.seed(1)
x <- matrix(rnorm(400000 * 50), 400000, 50)
invisible(gpu_knn(x[1:5000, ], 15, backend = "gpu"))
t <- function(e) round(system.time(e)[["elapsed"]], 2)
s <- NULL; p <- NULL; r <- NULL
cat("serialize x (xdr):", t(s <- serialize(x, NULL)), "s; unserialize:", t(unserialize(s)), "s\n")
sh <- NULL
cat("input to a file (.bp_ship):", t(sh <- gpucor:::.bp_ship(list(x = x), BiocParallel::SnowParam(2))),
    "s; read back:", t(gpucor:::.bp_unship(sh)), "s\n")
gpucor:::.bp_unlink(sh)
cat("engine alone (no BPPARAM):", t(gpu_knn(x, 15, backend = "gpu")), "s\n")
cat("one part, both ranges, in this process:",
    t(p <- gpucor:::.bp_knn_part(c(0, 2e5, 2e5, 4e5), 0L, x, 1L, 2, 15, FALSE, "gpu", "double")), "s\n")
cat("half the columns (one worker's share of two) in this process:",
    t(gpucor:::.bp_knn_part(c(0, 1e5, 3e5, 4e5), 0L, x, 1L, 2, 15, FALSE, "gpu", "double")), "s\n")
cat("serialize the part:", t(s <- serialize(p, NULL)), "s; unserialize:", t(unserialize(s)), "s\n")
d <- tempfile("gpucor-parts-"); dir.create(d)
cat("the part to a file (.bp_stash):", t(s <- gpucor:::.bp_stash(p, d, 2^23, 8L)), "s; read back:",
    t(gpucor:::.bp_unstash(s)), "s\n")
unlink(d, recursive = TRUE)
cat("merge in the main process:", t(r <- .Call(gpucor:::C_gpucor_knn, x, NULL, "euclidean", 2, 15, FALSE,
    gpucor:::.engine_opts("gpu", "double"), list(p))), "s\n")
