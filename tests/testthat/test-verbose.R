# verbose = TRUE (or WGCNA's level > 0) names, in a message, the function,
# the engine that ran (the CPU engine and its threads, or the GPU by number
# and name) and, where there is a choice, the path.  Every exported function
# with a 'verbose' argument has a case here (the first test checks that).

# messages of a call, its printed output dropped
verbose_lines <- function(expr) {
  msgs <- character()
  utils::capture.output(withCallingHandlers(
    suppressWarnings(expr),
    message = function(m) {
      msgs <<- c(msgs, conditionMessage(m))
      invokeRestart("muffleMessage")
    }))
  trimws(unlist(strsplit(msgs, "\n", fixed = TRUE)))
}

# the line of 'fun' that names the engine of backend b
engine_pattern <- function(fun, b)
  paste0("^", fun, ": ", if (b == "cpu") "CPU engine, [0-9]+ threads?" else
    "GPU engine on GPU [0-9]+ \\(")

set.seed(3701)
vx <- matrix(rnorm(40 * 30), 40, dimnames = list(NULL, paste0("g", 1:30)))
vw <- abs(cor(vx)); diag(vw) <- 0
vmi <- gpucor::gpu_knnmi(vx, backend = "cpu")
vtree <- stats::hclust(as.dist(1 - cor(vx)), "average")

# name = list(call of backend b (function(b)), path pattern or NULL,
# the backends it takes: "both", or "cpu" for the functions that always run
# on the CPU engine)
verbose_cases <- list(
  gpu_cor = list(function(b) gpu_cor(vx, backend = b, verbose = TRUE)),
  gpu_cov = list(function(b) gpu_cov(vx, backend = b, verbose = TRUE)),
  gpu_dist = list(function(b) gpu_dist(t(vx), backend = b, verbose = TRUE)),
  gpu_cor_edges = list(function(b) gpu_cor_edges(vx, top_k = 3, backend = b, verbose = TRUE)),
  gpu_knn = list(function(b) gpu_knn(t(vx), 3, backend = b, verbose = TRUE)),
  gpu_range = list(function(b) gpu_range(t(vx), 8, backend = b, verbose = TRUE)),
  gpu_hclust = list(function(b) gpu_hclust(x = t(vx), method = "average", backend = b,
                                           verbose = TRUE), "nearest-neighbour chain"),
  gpu_knnmi = list(function(b) gpu_knnmi(vx, backend = b, verbose = TRUE)),
  gpu_build_mim = list(function(b) gpu_build_mim(vx, backend = b, verbose = TRUE)),
  gpu_aracne_a = list(function(b) gpu_aracne_a(vmi, backend = b, verbose = TRUE)),
  gpu_aracne_m = list(function(b) gpu_aracne_m(vmi, backend = b, verbose = TRUE)),
  gpu_clr = list(function(b) gpu_clr(vmi, backend = b, verbose = TRUE)),
  gpu_mrnet = list(function(b) gpu_mrnet(vmi, backend = b, verbose = TRUE)),
  gpu_shortest_paths = list(function(b) gpu_shortest_paths(vw, "one_minus", 0.1, backend = b,
                                                           verbose = TRUE)),
  gpu_network_metrics = list(function(b) gpu_network_metrics(vw, "one_minus", 0.1, backend = b,
                                                             verbose = TRUE)),
  gpu_degree_centrality = list(function(b) gpu_degree_centrality(vx, 0.2, backend = b,
                                                                 verbose = TRUE)),
  gpu_brain_metrics = list(function(b) gpu_brain_metrics(vw, threshold = 0.2, verbose = TRUE),
                           NULL, "cpu"),
  gpu_bicor = list(function(b) gpu_bicor(vx, backend = b, verbose = TRUE)),
  gpu_adjacency = list(function(b) gpu_adjacency(vx, backend = b, verbose = TRUE)),
  gpu_soft_threshold = list(function(b) gpu_soft_threshold(vx, powerVector = 1:3, backend = b,
                                                           verbose = 1)),
  gpu_tom = list(function(b) gpu_tom(vx, backend = b, verbose = TRUE)),
  gpu_cor_shrink = list(function(b) gpu_cor_shrink(vx, backend = b, verbose = 2)),
  gpu_pcor_shrink = list(function(b) gpu_pcor_shrink(vx, backend = b, verbose = 2)),
  gpu_blockwise_modules = list(function(b) gpu_blockwise_modules(vx, minModuleSize = 3,
                                                                 backend = b, verbose = 1)),
  gpu_blockwise_consensus_modules = list(function(b) gpu_blockwise_consensus_modules(
    list(list(data = vx[1:20, ]), list(data = vx[21:40, ])), minModuleSize = 3,
    saveIndividualTOMs = FALSE, backend = b, verbose = 1)),
  gpu_cutree_dynamic = list(function(b) gpu_cutree_dynamic(
    vtree, distM = as.matrix(as.dist(1 - cor(vx))), minClusterSize = 3, verbose = 1),
    "method \"hybrid\"", "cpu"),
  gpu_module_eigengenes = list(function(b) gpu_module_eigengenes(vx, rep(1:3, 10), verbose = 1),
                               "compiled pass", "cpu"),
  gpu_merge_close_modules = list(function(b) gpu_merge_close_modules(vx, rep(1:3, 10),
                                                                     verbose = 1),
                                 "the eigengenes", "cpu")
)

test_that("every exported function with a 'verbose' argument has a case", {
  ns <- asNamespace("gpucor")
  has <- Filter(function(f) "verbose" %in% names(formals(get(f, ns))),
                getNamespaceExports("gpucor"))
  expect_setequal(names(verbose_cases), has)
})

test_that("verbose names the engine (and the path) that ran, on each backend", {
  for (b in test_backends()) for (f in names(verbose_cases)) {
    cs <- c(verbose_cases[[f]], list(NULL, NULL))
    if (b == "gpu" && identical(cs[[3L]], "cpu")) next
    lines <- verbose_lines(cs[[1L]](b))
    # the blockwise functions report the steps they call (gpu_tom, gpu_hclust)
    who <- if (grepl("^gpu_blockwise", f)) "gpu_(tom|hclust)" else f
    expect_true(any(grepl(engine_pattern(who, b), lines)),
                info = paste(b, f, "said:", paste(lines, collapse = " | ")))
    if (!is.null(cs[[2L]]))
      expect_true(any(grepl(cs[[2L]], lines, fixed = TRUE)),
                  info = paste(b, f, "path, said:", paste(lines, collapse = " | ")))
  }
})

test_that("verbose names the paths that differ: hclust's algorithm and input, cutree's method", {
  d <- dist(t(vx))
  expect_match(verbose_lines(gpu_hclust(d, "average", backend = "cpu", verbose = TRUE)),
               "^gpu_hclust: CPU engine.*nearest-neighbour chain, from 'd'")
  expect_match(verbose_lines(gpu_hclust(d, "centroid", backend = "cpu", verbose = TRUE)),
               "stats' nearest-neighbour list")
  expect_match(verbose_lines(gpu_hclust(x = t(vx), method = "single", backend = "cpu",
                                        verbose = TRUE)),
               "distances of 'x' by gpu_dist\\(\\)")
  expect_match(verbose_lines(gpu_cutree_dynamic(vtree, method = "tree", minClusterSize = 3,
                                                verbose = 1)),
               "^gpu_cutree_dynamic: CPU engine, 1 thread \\(method \"tree\"")
  # gpu_cov's line is its own, not gpu_cor's
  got <- verbose_lines(gpu_cov(vx, backend = "cpu", verbose = TRUE))
  expect_false(any(grepl("^gpu_cor:", got)))
  # lambda 1 (the identity) makes no engine call, and says so
  expect_match(verbose_lines(gpu_cor_shrink(vx, lambda = 1, verbose = 2)),
               "^gpu_cor_shrink: no engine call \\(lambda = 1")
  if ("gpu" %in% test_backends())
    expect_match(verbose_lines(gpu_hclust(x = t(vx), method = "average", backend = "gpu",
                                          verbose = TRUE)),
                 "^gpu_hclust: GPU engine.*distances of 'x' on the device")
})

test_that("verbose = FALSE and WGCNA's level 0 say nothing of the engine", {
  expect_false(any(grepl("engine", verbose_lines(gpu_cor(vx, backend = "cpu", verbose = FALSE)))))
  expect_false(any(grepl("engine", verbose_lines(
    gpu_cutree_dynamic(vtree, distM = as.matrix(as.dist(1 - cor(vx))), minClusterSize = 3,
                       verbose = 0)))))
  expect_false(any(grepl("engine", verbose_lines(
    gpu_module_eigengenes(vx, rep(1:3, 10), verbose = 0)))))
  expect_false(any(grepl("engine", verbose_lines(
    gpu_pcor_shrink(vx, verbose = FALSE)))))
})
