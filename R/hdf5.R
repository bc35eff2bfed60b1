#' Write a result to an HDF5 file instead of memory
#'
#' `gpu_hdf5()` describes where a result goes when it is given as the
#' `output` argument of [gpu_cor()], [gpu_dist()], [gpu_bicor()],
#' [gpu_adjacency()], [gpu_tom()] or [gpu_knnmi()]: the engine writes the
#' p x q matrix to an HDF5 dataset band of columns after band of columns as
#' they are made (a writer thread behind the engine, so computing and
#' writing overlap), and the result is never whole in memory.  The call then
#' returns `HDF5Array::HDF5Array(filepath, name)`: a `DelayedMatrix` with the
#' result's dimnames (written beside the dataset as HDF5Array's
#' `h5writeDimnames()` writes them).
#'
#' The dataset is written under the name `"<name>.incomplete"` and renamed
#' when it is whole.  An error (a full disk, a path that cannot be written)
#' or an interrupt deletes it, and deletes the file too when the call
#' created it, so a dataset called `name` is always complete.  An existing
#' file is opened for writing; an existing dataset of that name is an error.
#'
#' A `dist` result is written as its full n x n matrix, diagonal 0, which
#' is what `DelayedArray` consumers read (`gpu_tom(dist = TRUE)`: the matrix
#' of 1 - TOM).  What the functions do to a result after the engine in
#' memory (`gpu_bicor()`'s pairs with missing values recomputed on their
#' common rows, the `NA` rows and columns of constant genes, an adjacency's
#' diagonal) is done to each band of columns before it is written, with
#' the same values.  With `type = "float"`, R's `NA`
#' is read back as `NaN` (HDF5's floats have no `NA`; both are `is.na()`).
#'
#' The chunks are blocks of whole columns by default, `chunkdim =
#' c(nrow, k)` with k the columns that make about 64 MB of doubles, the
#' bands the engine writes; each band is then written directly as one
#' chunk, and with `level > 0` several bands are compressed at once, one
#' thread each.  Other `chunkdim`s are taken as they are, written through
#' HDF5's own chunking (slower; compressed by one thread).  On the CPU
#' engine a symmetric result's pairs above the diagonal are computed again
#' (the mirror of the pairs below), so writing it costs about twice the
#' arithmetic of `gpu_cor()` in memory; the GPU computes whole columns in
#' either case.
#'
#' With `BPPARAM` ([gpu_cor()], [gpu_dist()] and [gpu_knnmi()]),
#' BiocParallel's workers write at once, and HDF5 allows one writer a
#' file: each worker writes
#' its ranges of columns to files of their own beside `filepath`, named
#' `"<filepath>.<name>.part<k>.h5"`, and `name` in `filepath` is then made
#' a virtual dataset (HDF5's VDS) of those parts, read as one matrix by
#' HDF5Array (and by any HDF5 1.10 reader).  The part files must stay
#' beside `filepath` (moved together, the dataset still reads them); a
#' part missing reads as `NA`.  An existing part file is an error; a
#' failure removes them all.  Across cluster nodes the folder must be on a
#' filesystem every node sees.
#'
#' Requires a gpucor built with HDF5 (`configure` finds `libhdf5-dev`, or
#' Bioconductor's Rhdf5lib) and the Bioconductor package HDF5Array.
#'
#' @param filepath the HDF5 file (created when absent).
#' @param name the dataset's name in it (groups in `"a/b"` are created).
#' @param chunkdim `NULL` (default: whole columns, as above), or the chunk's
#'   rows and columns (each capped at the result's).
#' @param level the deflate level, 0 (none, default) to 9.
#' @param type `"double"` (default) or `"float"`: what the file stores.
#' @return An object of class `"gpucor_hdf5"`, for the `output` argument.
#' @seealso [gpu_cor()], [gpu_dist()], [gpu_bicor()], [gpu_adjacency()], [gpu_tom()],
#'   [HDF5Array::HDF5Array()]
#' @examples
#' if (gpucor:::.hdf5_ok()) {
#'   x <- matrix(rnorm(2000), 20, 100)
#'   f <- tempfile(fileext = ".h5")
#'   r <- gpu_cor(x, output = gpu_hdf5(f, "cor"))
#'   r
#'   all.equal(as.matrix(r), cor(x))
#'   unlink(f)
#' }
#' @export
gpu_hdf5 <- function(filepath, name, chunkdim = NULL, level = 0L,
                     type = c("double", "float")) {
  if (!is.character(filepath) || length(filepath) != 1L || is.na(filepath) ||
      !nzchar(filepath))
    stop("'filepath' must be a single file name")
  if (!is.character(name) || length(name) != 1L || is.na(name) || !nzchar(name))
    stop("'name' must be a single dataset name")
  if (!is.null(chunkdim) &&
      (!is.numeric(chunkdim) || length(chunkdim) != 2L || anyNA(chunkdim) ||
       any(chunkdim < 1) || any(chunkdim != round(chunkdim))))
    stop("'chunkdim' must be NULL or two positive whole numbers")
  if (!is.numeric(level) || length(level) != 1L || is.na(level) || level < 0 ||
      level > 9 || level != round(level))
    stop("'level' must be a whole number from 0 to 9")
  type <- match.arg(type)
  if (!.Call(C_gpucor_hdf5_available))
    stop("gpucor was built without HDF5, so it cannot write HDF5 files: install ",
         "the HDF5 library's headers (Debian/Ubuntu: libhdf5-dev) and reinstall gpucor")
  if (!requireNamespace("HDF5Array", quietly = TRUE))
    stop("gpu_hdf5() returns the result as an HDF5Array: install the Bioconductor ",
         "package HDF5Array")
  structure(list(path = path.expand(filepath), name = sub("^/+", "", name),
                 chunkdim = if (!is.null(chunkdim)) as.double(chunkdim),
                 level = as.integer(level), float = type == "float"),
            class = "gpucor_hdf5")
}

#' @export
print.gpucor_hdf5 <- function(x, ...) {
  cat(sprintf("gpu_hdf5: dataset '%s' of %s (%s%s%s)\n", x$name, x$path,
              if (x$float) "float" else "double",
              if (x$level > 0) sprintf(", deflate level %d", x$level) else "",
              if (!is.null(x$chunkdim)) sprintf(", chunks %s", paste(x$chunkdim, collapse = " x "))
              else ""))
  invisible(x)
}

# Whether gpu_hdf5() can be used here (the examples and tests ask).
.hdf5_ok <- function() {
  isTRUE(.Call(C_gpucor_hdf5_available)) && requireNamespace("HDF5Array", quietly = TRUE)
}

# A checked 'output' argument (NULL stays NULL).
.check_output <- function(output) {
  if (!is.null(output) && !inherits(output, "gpucor_hdf5"))
    stop("'output' must be NULL or made by gpu_hdf5()")
  output
}

# What crosses .Call for a p x q result: the file, the dataset, the chunk
# (rows, columns of the result), how much memory of complete bands may
# wait for the writer, the steps after the engine (.hdf5_post(), or NULL),
# and the window: NULL, or c(from, to), the columns [from, to) (0-based)
# that make the dataset (a BiocParallel worker's range; the engine then
# runs the tiles or panels that meet it).
.hdf5_spec <- function(output, p, q, post = NULL, window = NULL) {
  w <- if (is.null(window)) q else window[2L] - window[1L]
  chunk <- output$chunkdim
  if (is.null(chunk)) {
    # whole columns, about 2^23 values a chunk (64 MiB of doubles, the
    # GPU's panel size): with HDF5Array's 2^20 (8 MiB) one writer thread
    # wrote half as fast (bench/hdf5.R, H100: 10.2 s of writing for 20 GB,
    # against 5.2 s); reads of a few columns read those columns only
    # (uncompressed chunks larger than HDF5's chunk cache are read in part)
    rows <- min(max(p, 1), 2^23)
    chunk <- c(rows, max(1, min(w, floor(2^23 / rows))))
  }
  chunk <- pmax(1, pmin(chunk, c(max(p, 1), max(w, 1))))
  list(path = output$path, name = output$name, chunk = as.double(chunk),
       level = output$level, float = output$float,
       cap = as.double(.opt("gpucor.hdf5_buffer")), post = post,
       window = if (!is.null(window)) as.double(window))
}

# gpu_cor()/gpu_dist() with 'output' and BPPARAM: HDF5 has one writer a
# file, so each range of columns of the jobs (.bp_shares()) is written by
# its worker to a file of its own beside output's,
# "<file>.<name>.part<k>.h5" (k: the ranges in column order), as dataset
# 'name' of those columns; then output's dataset is made a virtual dataset
# (HDF5 1.10's VDS) over the parts, which HDF5Array reads as one.
# (Dotted names: no argument in '...' matches them partially.)
# .part(ranges, device, specs, ...) runs the engine on each of its ranges
# with specs[[as.character(from)]] and returns the engine's results (with
# their flags); on any failure the parts go.  Returns c(sd0, nonfinite), each TRUE when a worker's was,
# with attribute "parts": the part files, in column order (.hdf5_result()
# reads them).
.bp_hdf5 <- function(.output, .p, .q, .jobs, .bp, .part, ...) {
  output <- .output
  rg <- do.call(rbind, unlist(lapply(.jobs, `[[`, "ranges"), recursive = FALSE))
  rg <- rg[order(rg[, 1L]), , drop = FALSE]
  dir <- normalizePath(dirname(output$path), mustWork = FALSE)
  base <- sprintf("%s.%s.part%d.h5", basename(output$path),
                  gsub("[^A-Za-z0-9_.-]", "_", output$name), seq_len(nrow(rg)))
  files <- file.path(dir, base)
  there <- file.exists(files)
  if (any(there))
    stop(sprintf("the part file %s exists already (from an earlier run?): remove it, or ",
                 files[there][1L]), "choose another 'filepath' or 'name'", call. = FALSE)
  specs <- lapply(seq_len(nrow(rg)), function(k) {
    o <- output
    o$path <- files[k]
    .hdf5_spec(o, .p, .q, window = rg[k, ])
  })
  names(specs) <- as.character(rg[, 1L])
  done <- FALSE
  on.exit(if (!done) unlink(files))
  runs <- .bp_share_run(.jobs, .part, .bp, specs = specs, ...)
  .Call(C_gpucor_hdf5_virtual, output$path, output$name, as.double(c(.p, .q)),
        output$float, base, rep(output$name, length(base)), as.double(t(rg)))
  done <- TRUE
  structure(.engine_flags(unlist(runs, recursive = FALSE)), parts = files)
}

# One worker's ranges through .Call(fun, ..., spec) each, the spec of its
# range last (the engine option 'cols' comes from the spec's window): the
# engine's results (TRUE, with the flags as attributes).
.bp_file_ranges <- function(ranges, specs, call)
  lapply(seq(1L, length(ranges), by = 2L), function(a) call(specs[[as.character(ranges[a])]]))

# The steps R takes on a result in memory after the engine, for the file
# sink to take on each band of columns before it writes it (src/engine/
# file.h, gc_file_post), in this order: the epilogue 'epi' (an EPI_* code
# of src/engine/engine.h, as .epi_adjacency) with power 'beta'; NA in the
# rows na_row and the columns na_col (logical vectors, NULL: none); the
# diagonal set to 'diag' (NA: left); the epilogue 'epi2' (1L: 1 - x).
.hdf5_post <- function(epi = 0L, beta = 1, na_row = NULL, na_col = NULL, diag = NA_real_,
                       epi2 = 0L)
  list(epi = as.integer(epi), beta = as.double(beta),
       na_row = if (any(na_row)) as.logical(na_row),
       na_col = if (any(na_col)) as.logical(na_col), diag = as.double(diag),
       epi2 = as.integer(epi2))

# After the engine wrote the dataset: its dimnames beside it, and the
# DelayedMatrix that reads it.  A virtual dataset over part files
# (.bp_hdf5()) is read through them when this HDF5Array cannot open one
# (HDF5Array 1.26 cannot: rhdf5 does not know its layout): the parts bound
# by columns, with the dimnames.
.hdf5_result <- function(output, dimnames, parts = NULL) {
  named <- !is.null(dimnames) && !all(vapply(dimnames, is.null, logical(1)))
  if (named) HDF5Array::h5writeDimnames(dimnames, output$path, output$name)
  if (is.null(parts)) return(HDF5Array::HDF5Array(output$path, output$name))
  r <- tryCatch(HDF5Array::HDF5Array(output$path, output$name), error = function(e) NULL)
  if (!is.null(r)) return(r)
  r <- do.call(getExportedValue("BiocGenerics", "cbind"),
               lapply(parts, HDF5Array::HDF5Array, name = output$name))
  if (named) dimnames(r) <- dimnames
  r
}
