# bench/incumbents.R -- issue 37: on the CPU engine (backend = "cpu", 2
# threads), every exported gpucor function against the function a user
# would otherwise call, at a moderate size each, in one table:
#   function, incumbent, size, incumbent s, gpucor s, ratio (incumbent s /
#   gpucor s: above 1 gpucor is faster), same (identical, or the largest
#   absolute difference of the values).
# Each case times the incumbent and gpucor interleaved (A B A B A B) and
# keeps the minimum of the three runs of each: the machine is shared, and
# the minimum is the run least disturbed by others (one round only where
# the incumbent takes more than 10 s).  The load average is
# printed at the start and at the end.  The incumbents get their threads
# where they have them (WGCNA nThreads = 2 / allowWGCNAThreads(2),
# BiocNeighbors BPPARAM = MulticoreParam(2)); gpucor gets
# options(gpucor.threads = 2).
#   Rscript bench/incumbents.R [case-name-pattern]
suppressMessages({
  library(gpucor); library(WGCNA); library(igraph); library(BiocNeighbors)
  library(BiocParallel); library(fastcluster); library(dynamicTreeCut)
  library(corpcor); library(parmigene)
})
options(gpucor.threads = 2L, gpucor.backend = "cpu", gpucor.verbose = FALSE, width = 200,
        stringsAsFactors = FALSE)
invisible(capture.output(allowWGCNAThreads(2)))
only <- commandArgs(TRUE)
load <- function() paste(scan("/proc/loadavg", what = "", quiet = TRUE)[1:3], collapse = " ")
cat(sprintf("bench/incumbents.R, %s, %s, %d cores, gpucor %s (%s), load average %s\n",
            format(Sys.time(), "%Y-%m-%d %H:%M %Z"), R.version.string, parallel::detectCores(),
            packageVersion("gpucor"), if (gpu_info()$built_with_cuda) "CUDA build" else "CPU-only build",
            load()))
t_start <- proc.time()[["elapsed"]]

rows <- list()
quiet <- function(expr) {
  v <- NULL
  invisible(capture.output(suppressMessages(suppressWarnings(v <- expr))))
  v
}
elapsed <- function(f) {
  t0 <- proc.time()[["elapsed"]]
  v <- quiet(f())
  list(v = v, t = proc.time()[["elapsed"]] - t0)
}
# 'same(a, b)' says how the two results compare; reps = 3 interleaved runs
case <- function(fun, incumbent, size, inc, ours, same = max_diff, reps = 3L) {
  name <- paste(fun, incumbent)
  if (length(only) && !any(vapply(only, grepl, NA, x = name, fixed = TRUE))) return(invisible())
  ti <- to <- Inf
  sm <- tryCatch({
    for (r in seq_len(reps)) {
      a <- elapsed(inc); ti <- min(ti, a$t)
      b <- elapsed(ours); to <- min(to, b$t)
      if (ti > 10) break       # an incumbent of more than 10 s: one round
    }
    same(a$v, b$v)
  }, error = function(e) paste("error:", conditionMessage(e)))
  rows[[length(rows) + 1L]] <<- data.frame(
    `function` = fun, incumbent = incumbent, size = size, incumbent_s = round(ti, 3),
    gpucor_s = round(to, 3), ratio = round(ti / to, 2), same = sm, check.names = FALSE)
  cat(sprintf("  %-28s %-42s %8.3f %8.3f\n", fun, incumbent, ti, to))
}
# identical, or the largest absolute difference
max_diff <- function(a, b) {
  if (is.data.frame(a)) a <- as.matrix(a)
  if (is.data.frame(b)) b <- as.matrix(b)
  a <- unclass(a); b <- unclass(b)
  attributes(a) <- attributes(b) <- NULL
  if (length(a) != length(b)) return(sprintf("lengths %d / %d", length(a), length(b)))
  if (identical(a, b)) return("identical")
  if (!identical(is.na(a), is.na(b))) return("NA differ")
  sprintf("%.1e", max(abs(a - b), na.rm = TRUE))
}
same_tree <- function(a, b)
  if (!identical(a$merge, b$merge)) "merge differs" else
    if (identical(a$height, b$height)) "identical" else
      sprintf("same merges, heights %s", max_diff(a$height, b$height))
same_labels <- function(a, b) if (identical(as.vector(a), as.vector(b))) "identical" else
  sprintf("%d labels differ", sum(as.vector(a) != as.vector(b)))

set.seed(37)
x500 <- matrix(rnorm(500 * 2000), 500)
cat("correlation and distance\n")
case("gpu_cor", "stats::cor pearson", "500 x 2000",
     function() cor(x500), function() gpu_cor(x500))
case("gpu_cor", "WGCNA::cor pearson, 2 thr", "500 x 2000",
     function() WGCNA::cor(x500, nThreads = 2), function() gpu_cor(x500))
x1000 <- x500[, 1:1000]
case("gpu_cor", "stats::cor spearman", "500 x 1000",
     function() cor(x1000, method = "spearman"), function() gpu_cor(x1000, method = "spearman"))
xk <- matrix(rnorm(200 * 80), 200)
case("gpu_cor", "stats::cor kendall", "200 x 80",
     function() cor(xk, method = "kendall"), function() gpu_cor(xk, method = "kendall"))
xna <- x500[, 1:1000]; xna[sample(length(xna), 0.05 * length(xna))] <- NA
case("gpu_cor", "stats::cor pairwise, 5% NA", "500 x 1000",
     function() cor(xna, use = "pairwise"), function() gpu_cor(xna, use = "pairwise"))
case("gpu_cor", "WGCNA::cor pairwise, 5% NA, 2 thr", "500 x 1000",
     function() WGCNA::cor(xna, use = "p", nThreads = 2), function() gpu_cor(xna, use = "pairwise"))
case("gpu_cov", "stats::cov", "500 x 2000",
     function() cov(x500), function() gpu_cov(x500))
xd <- matrix(rnorm(2000 * 500), 2000)
case("gpu_dist", "stats::dist euclidean", "2000 x 500",
     function() dist(xd), function() gpu_dist(xd))
case("gpu_dist", "stats::dist manhattan", "2000 x 500",
     function() dist(xd, "manhattan"), function() gpu_dist(xd, "manhattan"))

cat("WGCNA\n")
case("gpu_bicor", "WGCNA::bicor, 2 thr", "500 x 2000",
     function() WGCNA::bicor(x500, nThreads = 2), function() gpu_bicor(x500))
x100 <- matrix(rnorm(100 * 1500), 100)
case("gpu_adjacency", "WGCNA::adjacency (power 6)", "100 x 1500",
     function() adjacency(x100, power = 6), function() gpu_adjacency(x100, power = 6))
case("gpu_soft_threshold", "WGCNA::pickSoftThreshold", "100 x 1500",
     function() pickSoftThreshold(x100, verbose = 0)$fitIndices,
     function() gpu_soft_threshold(x100)$fitIndices)
case("gpu_tom", "WGCNA::TOMsimilarityFromExpr, 2 thr", "100 x 1500",
     function() TOMsimilarityFromExpr(x100, nThreads = 2, verbose = 0),
     function() gpu_tom(x100))
# modules: a simulated expression with 6 modules of 80 genes and 320 others
sim_modules <- function(n = 40, p = 800, k = 6, m = 80) {
  eig <- matrix(rnorm(n * k), n)
  x <- matrix(rnorm(n * p), n)
  for (j in seq_len(k)) {
    cols <- (j - 1) * m + seq_len(m)
    x[, cols] <- eig[, j] %o% runif(m, 0.6, 0.9) + x[, cols] * 0.6
  }
  x
}
xm <- sim_modules()
# gpucor keeps the eigengenes of a matrix it has seen (this session's
# cache): each timed call starts without them, as a first call does
no_cache <- function() assign("tabs", NULL, envir = gpucor:::.me_cache)
case("gpu_blockwise_modules", "WGCNA::blockwiseModules, 2 thr", "40 x 800",
     function() blockwiseModules(xm, maxBlockSize = 5000, nThreads = 2, verbose = 0)$colors,
     function() { no_cache(); gpu_blockwise_modules(xm, maxBlockSize = 5000, verbose = 0)$colors },
     same = same_labels)
colors_m <- quiet(gpu_blockwise_modules(xm, maxBlockSize = 5000, verbose = 0)$colors)
xe8 <- matrix(rnorm(100 * 5000), 100)
colors_e <- sample(0:30, 5000, TRUE)
case("gpu_module_eigengenes", "WGCNA::moduleEigengenes", "100 x 5000, 30 modules",
     function() moduleEigengenes(xe8, colors_e)$eigengenes,
     function() { no_cache(); gpu_module_eigengenes(xe8, colors_e)$eigengenes })
case("gpu_merge_close_modules", "WGCNA::mergeCloseModules", "100 x 5000, 30 modules",
     function() mergeCloseModules(xe8, colors_e, cutHeight = 0.25, verbose = 0)$colors,
     function() { no_cache(); gpu_merge_close_modules(xe8, colors_e, cutHeight = 0.25,
                                                      verbose = 0)$colors },
     same = same_labels)
xs <- list(list(data = xm[1:20, ]), list(data = xm[21:40, ]))
case("gpu_blockwise_consensus_modules", "WGCNA::blockwiseConsensusModules", "2 x 20 x 800",
     function() blockwiseConsensusModules(xs, maxBlockSize = 5000, nThreads = 2,
                                          saveIndividualTOMs = FALSE, verbose = 0)$colors,
     function() { no_cache(); gpu_blockwise_consensus_modules(xs, maxBlockSize = 5000,
                                                saveIndividualTOMs = FALSE, verbose = 0)$colors },
     same = same_labels)

cat("clustering\n")
xh <- matrix(rnorm(3000 * 50), 3000)   # no ties: one valid tree
dh <- dist(xh)
case("gpu_hclust", "fastcluster::hclust(d) average", "d of 3000",
     function() fastcluster::hclust(dh, "average"), function() gpu_hclust(dh, "average"),
     same = same_tree)
case("gpu_hclust", "stats::hclust(d) average", "d of 3000",
     function() stats::hclust(dh, "average"), function() gpu_hclust(dh, "average"),
     same = same_tree)
case("gpu_hclust", "fastcluster::hclust(d) complete", "d of 3000",
     function() fastcluster::hclust(dh, "complete"), function() gpu_hclust(dh, "complete"),
     same = same_tree)
case("gpu_hclust", "dist + fastcluster::hclust average", "x 3000 x 50",
     function() fastcluster::hclust(dist(xh), "average"),
     function() gpu_hclust(x = xh, method = "average"), same = same_tree)
case("gpu_hclust", "fastcluster::hclust.vector single", "x 3000 x 50",
     function() fastcluster::hclust.vector(xh, "single"),
     function() gpu_hclust(x = xh, method = "single"), same = same_tree)
case("gpu_hclust", "fastcluster::hclust.vector ward", "x 3000 x 50",
     function() fastcluster::hclust.vector(xh, "ward"),
     function() gpu_hclust(x = xh, method = "ward.D2"), same = same_tree)
xc <- sim_modules(40, 1500, 8, 100)
dc <- as.dist(1 - cor(xc))
tree <- fastcluster::hclust(dc, "average")
dcm <- as.matrix(dc)
case("gpu_cutree_dynamic", "dynamicTreeCut::cutreeDynamic hybrid", "1500 genes",
     function() cutreeDynamic(tree, distM = dcm, minClusterSize = 20, verbose = 0),
     function() gpu_cutree_dynamic(tree, distM = dcm, minClusterSize = 20, verbose = 0),
     same = same_labels)
case("gpu_cutree_dynamic", "dynamicTreeCut::cutreeDynamic tree", "1500 genes",
     function() cutreeDynamic(tree, method = "tree", minClusterSize = 20, verbose = 0),
     function() gpu_cutree_dynamic(tree, method = "tree", minClusterSize = 20, verbose = 0),
     same = same_labels)

cat("networks\n")
xg <- matrix(rnorm(40 * 800), 40)
wg <- abs(cor(xg)); diag(wg) <- 0
wg[wg < 0.3] <- 0
g <- graph_from_adjacency_matrix(1 - wg, mode = "undirected", weighted = TRUE, diag = FALSE)
g <- delete_edges(g, E(g)[E(g)$weight == 1])
wl <- wg; wl[wg > 0] <- 1 - wg[wg > 0]      # lengths, 0 = no edge
case("gpu_shortest_paths", "igraph::distances (Dijkstra)",
     sprintf("%d vertices, %d edges", vcount(g), ecount(g)),
     function() unname(distances(g)),
     function() unname(gpu_shortest_paths(wg, weights = "one_minus", threshold = 0.3)))
case("gpu_shortest_paths", "igraph::distances of the graph", "the same graph",
     function() unname(distances(g)), function() unname(gpu_shortest_paths(g)))
igraph_metrics <- function(g) {
  D <- distances(g); diag(D) <- NA
  fin <- is.finite(D)
  list(cpl = mean(D[fin]), ge = mean(1 / D, na.rm = TRUE),
       ecc = apply(ifelse(fin, D, 0), 1, max, na.rm = TRUE))
}
case("gpu_network_metrics", "igraph::distances + R (cpl, eff, ecc)", "the same graph",
     function() unlist(igraph_metrics(g)),
     function() {
       m <- gpu_network_metrics(wg, weights = "one_minus", threshold = 0.3,
                                metrics = c("char_path_length", "global_efficiency",
                                            "eccentricity"))
       c(m$char_path_length, m$global_efficiency, m$eccentricity)
     })
xe <- matrix(rnorm(300 * 3000), 300)
edges_of <- function(r, t) {
  w <- which(abs(r) >= t & upper.tri(r), arr.ind = TRUE)
  w[order(w[, 2], w[, 1]), , drop = FALSE]
}
case("gpu_cor_edges", "WGCNA::cor 2 thr + which(abs(r) >= 0.25)", "300 x 3000",
     function() nrow(edges_of(WGCNA::cor(xe, nThreads = 2), 0.25)),
     function() nrow(gpu_cor_edges(xe, threshold = 0.25)))
case("gpu_cor_edges", "stats::cor + which(abs(r) >= 0.25)", "300 x 3000",
     function() nrow(edges_of(cor(xe), 0.25)),
     function() nrow(gpu_cor_edges(xe, threshold = 0.25)))

cat("neighbours\n")
xn <- matrix(rnorm(8000 * 30), 8000)
# i.i.d. Gaussian: the hard case for KMKNN's pruning
case("gpu_knn", "BiocNeighbors::findKNN Kmknn, 2 cores", "8000 x 30, k = 15, gaussian",
     function() findKNN(xn, k = 15, BNPARAM = KmknnParam(), BPPARAM = MulticoreParam(2))$index,
     function() gpu_knn(xn, k = 15)$index, same = same_labels)
# clustered points, as cells in PC space are
cl <- sample(20, 10000, TRUE)
xcl <- matrix(rnorm(20 * 30, sd = 4), 20)[cl, ] + matrix(rnorm(10000 * 30), 10000)
case("gpu_knn", "BiocNeighbors::findKNN Kmknn, 2 cores", "10000 x 30, k = 15, 20 clusters",
     function() findKNN(xcl, k = 15, BNPARAM = KmknnParam(), BPPARAM = MulticoreParam(2))$index,
     function() gpu_knn(xcl, k = 15)$index, same = same_labels)
case("gpu_range", "BiocNeighbors::findNeighbors Kmknn, 2 cores", "10000 x 30, 20 clusters",
     # findNeighbors() counts the row itself, gpu_range() does not
     function() lengths(findNeighbors(xcl, threshold = 4, BNPARAM = KmknnParam(),
                                      BPPARAM = MulticoreParam(2))$index) - 1L,
     function() lengths(gpu_range(xcl, threshold = 4)$index))

cat("shrinkage and mutual information\n")
xp <- matrix(rnorm(100 * 1000), 100)
case("gpu_pcor_shrink", "corpcor::pcor.shrink", "100 x 1000",
     function() pcor.shrink(xp, verbose = FALSE), function() gpu_pcor_shrink(xp, verbose = FALSE))
case("gpu_cor_shrink", "corpcor::cor.shrink", "100 x 1000",
     function() cor.shrink(xp, verbose = FALSE), function() gpu_cor_shrink(xp, verbose = FALSE))
xmi <- matrix(rnorm(200 * 150), 200)
# variables in rows, as parmigene: 200 variables of 150 samples
case("gpu_knnmi", "parmigene::knnmi.all", "200 x 150, k = 3",
     function() knnmi.all(xmi, k = 3, noise = 0), function() gpu_knnmi(xmi, k = 3))
mi <- quiet(gpu_build_mim(matrix(rnorm(100 * 2000), 100)))   # a mutual-information matrix
case("gpu_aracne_a", "parmigene::aracne.a", "MI of 2000",
     function() aracne.a(mi, 0.05), function() gpu_aracne_a(mi, 0.05))
case("gpu_aracne_m", "parmigene::aracne.m", "MI of 2000",
     function() aracne.m(mi, 0.15), function() gpu_aracne_m(mi, 0.15))
case("gpu_clr", "parmigene::clr", "MI of 2000",
     function() clr(mi), function() gpu_clr(mi))
case("gpu_mrnet", "parmigene::mrnet", "MI of 2000",
     function() mrnet(mi), function() gpu_mrnet(mi))
# minet is not installed here: build.mim's Spearman estimator is
# -log(1 - rho^2) / 2 of stats::cor (minet's own code)
case("gpu_build_mim", "-log(1 - cor(x, 'spearman')^2) / 2 (minet's build.mim)", "500 x 1000",
     function() {
       r <- cor(x1000, method = "spearman")
       m <- -0.5 * log(1 - r^2); diag(m) <- 0; m
     }, function() gpu_build_mim(x1000))

cat("BiocParallel on this machine (each against the call without BPPARAM)\n")
snow <- SnowParam(2); bpstart(snow)
invisible(quiet(gpu_cor(x500[, 1:100], BPPARAM = snow)))
case("gpu_cor BPPARAM = SnowParam(2)", "gpu_cor without BPPARAM", "500 x 2000",
     function() gpu_cor(x500), function() gpu_cor(x500, BPPARAM = snow))
case("gpu_cor BPPARAM = MulticoreParam(2)", "gpu_cor without BPPARAM", "500 x 2000",
     function() gpu_cor(x500), function() gpu_cor(x500, BPPARAM = MulticoreParam(2)))
case("gpu_dist BPPARAM = SnowParam(2)", "gpu_dist without BPPARAM", "2000 x 500",
     function() gpu_dist(xd), function() gpu_dist(xd, BPPARAM = snow))
case("gpu_dist BPPARAM = MulticoreParam(2)", "gpu_dist without BPPARAM", "2000 x 500",
     function() gpu_dist(xd), function() gpu_dist(xd, BPPARAM = MulticoreParam(2)))
case("gpu_cor_edges BPPARAM = SnowParam(2)", "gpu_cor_edges without BPPARAM", "300 x 3000",
     function() gpu_cor_edges(xe, top_k = 10), function() gpu_cor_edges(xe, top_k = 10, BPPARAM = snow))
bpstop(snow)

cat(sprintf("\n%d cases, %.0f s in all; load average at the end %s\n", length(rows),
            proc.time()[["elapsed"]] - t_start, load()))
tab <- do.call(rbind, rows)
print(tab, row.names = FALSE, right = FALSE)
