# Shared by bench/blockwise.R and bench/consensus.R: their data, their peak
# memory and their two sides, each in its own R process.

# Peak host memory of this process (VmHWM), in MB.
hwm <- function() {
  s <- readLines("/proc/self/status")
  as.numeric(sub("[^0-9]*([0-9]+).*", "\\1", grep("^VmHWM", s, value = TRUE))) / 1024
}

# The ALL data, samples x genes (t(exprs(ALL)), 128 x 12625): from
# .all-exprs.rds in the working directory (the GPU machine's copy, made
# where ALL is installed with
# saveRDS(Biobase::exprs(ALL::ALL), ".all-exprs.rds", compress = "xz")), in
# ../main (the main checkout) or $ALL_EXPRS, else from the ALL package,
# else simulated planted modules of the same size; its 'genes' most
# variable genes (in their order) when fewer than all.  Attribute "source":
# "ALL" or "simulated".
all_data <- function(genes) {
  rds <- c(Sys.getenv("ALL_EXPRS"), ".all-exprs.rds", "../main/.all-exprs.rds")
  rds <- rds[nzchar(rds)]
  rds <- rds[file.exists(rds)]
  x <- if (length(rds)) {
    structure(t(readRDS(rds[1])), source = "ALL")
  } else if (requireNamespace("ALL", quietly = TRUE) &&
             requireNamespace("Biobase", quietly = TRUE)) {
    e <- new.env()
    utils::data("ALL", package = "ALL", envir = e)
    structure(t(Biobase::exprs(e$ALL)), source = "ALL")
  } else {
    # 128 x 12625: 12 modules from latent factors, 40% unassigned genes
    set.seed(38)
    n <- 128
    p <- 12625
    f <- matrix(rnorm(n * 12), n, 12)
    mod <- sample(0:12, p, TRUE, prob = c(0.4, rep(0.05, 12)))
    load <- runif(p, 0.3, 0.9) * sample(c(-1, 1), p, TRUE)
    x <- matrix(rnorm(n * p), n, p)
    for (j in which(mod > 0)) x[, j] <- load[j] * f[, mod[j]] + sqrt(1 - load[j]^2) * x[, j]
    dimnames(x) <- list(paste0("s", 1:n), paste0("g", 1:p))
    structure(x, source = "simulated")
  }
  if (genes < ncol(x)) {
    src <- attr(x, "source")
    v <- apply(x, 2, stats::var)
    x <- x[, sort(order(v, decreasing = TRUE)[seq_len(genes)])]
    attr(x, "source") <- src
  }
  x
}

# Runs 'script --one <tool> genes threads <file>' for gpucor, then WGCNA,
# each in its own R process; their saved results, by tool.
run_sides <- function(script, genes, threads) {
  out <- list()
  for (tool in c("gpucor", "wgcna")) {
    f <- tempfile(fileext = ".rds")
    system2(file.path(R.home("bin"), "Rscript"), c(script, "--one", tool, genes, threads, f))
    out[[tool]] <- readRDS(f)
  }
  out
}
