# gpucor's options, each read and validated in one place (.opt): a value
# that makes no sense stops the call with an error naming the option and
# what it accepts, instead of a coercion warning on every call or being
# ignored.  The options are documented in ?gpucor_options (R/backend.R).

.flag_opt <- function(v) if (is.logical(v) && length(v) == 1L && !is.na(v)) v

.count_opt <- function(v)
  if (is.numeric(v) && length(v) == 1L && is.finite(v) && v >= 0 && v == floor(v)) as.double(v)

# A size in bytes: a number, or a string with a unit ("8GB", "512 MiB").
.size_units <- c(B = 1, KB = 1e3, MB = 1e6, GB = 1e9, TB = 1e12,
                 KIB = 2^10, MIB = 2^20, GIB = 2^30, TIB = 2^40)
.parse_size <- function(v) {
  if (is.numeric(v) && length(v) == 1L && is.finite(v) && v >= 0) return(as.double(v))
  if (!is.character(v) || length(v) != 1L || is.na(v)) return(NULL)
  m <- regmatches(v, regexec("^\\s*([0-9]*\\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\\s*([A-Za-z]*)\\s*$", v))[[1L]]
  if (length(m) != 3L) return(NULL)
  unit <- toupper(m[3L])
  if (!nzchar(unit)) unit <- "B"
  if (!unit %in% names(.size_units)) return(NULL)
  as.double(m[2L]) * .size_units[[unit]]
}

# GPU ordinals (CUDA's, from 0; one may repeat) or "all" (-1 for the engine).
.devices_opt <- function(v) {
  if (identical(v, "all")) return(-1L)
  if (is.numeric(v) && length(v) >= 1L && length(v) <= 16L && all(is.finite(v)) &&
      all(v >= 0) && all(v == floor(v)) && all(v < .Machine$integer.max)) as.integer(v)
}
.devices_accepts <- "\"all\" or GPU ordinals (whole numbers from 0, as gpu_info()$devices lists them; at most 16)"

.gpucor_option_specs <- list(
  gpucor.backend = list(default = "auto", accepts = "\"auto\", \"cpu\" or \"gpu\"",
    parse = function(v) if (is.character(v) && length(v) == 1L && v %in% c("auto", "cpu", "gpu")) v),
  gpucor.threads = list(default = NULL, accepts = "a positive whole number",
    parse = function(v) if (!is.null(n <- .count_opt(v)) && n >= 1) n),
  gpucor.gpu_memory = list(default = 0, accepts = paste(
    "a size in bytes: a number, or a string such as \"8GB\" or \"512 MiB\"",
    "(units B, KB, MB, GB, TB, KiB, MiB, GiB, TiB); 0 for the memory free"),
    parse = .parse_size),
  gpucor.gpu_min_work = list(default = NULL, accepts = "a non-negative number",
    parse = function(v) if (is.numeric(v) && length(v) == 1L && !is.na(v) && v >= 0) as.double(v)),
  gpucor.devices = list(default = 0L, accepts = .devices_accepts, parse = .devices_opt),
  gpucor.gpu_slab = list(default = 0, accepts = "a non-negative whole number (0: automatic)",
    parse = .count_opt),
  gpucor.cpu_tile = list(default = 0, accepts = "a non-negative whole number (0: automatic)",
    parse = .count_opt),
  gpucor.progress = list(default = TRUE, accepts = "TRUE, FALSE or \"always\"",
    parse = function(v) if (identical(v, "always")) v else .flag_opt(v)),
  gpucor.profile = list(default = FALSE, accepts = "TRUE or FALSE", parse = .flag_opt),
  gpucor.memory_guard = list(default = TRUE, accepts = "TRUE or FALSE", parse = .flag_opt),
  gpucor.hdf5_buffer = list(default = 2^29, accepts = paste(
    "a non-negative number of bytes or a size string such as \"256 MiB\""),
    parse = .parse_size),
  gpucor.block_memory = list(default = NULL, accepts = paste(
    "a positive number of bytes or a size string such as \"4 GiB\"; NULL for automatic"),
    parse = function(v) if (!is.null(b <- .parse_size(v)) && b > 0) b),
  gpucor.bp_file_bytes = list(default = 2^23, accepts = paste(
    "a non-negative number of bytes, a size string such as \"64 MiB\", or Inf"),
    parse = function(v) if (identical(v, Inf)) Inf else .parse_size(v)),
  gpucor.verbose = list(default = FALSE, accepts = "TRUE or FALSE", parse = .flag_opt))

# The value of option 'name', validated; its default when unset.
.opt <- function(name) {
  spec <- .gpucor_option_specs[[name]]
  v <- getOption(name)
  if (is.null(v)) return(spec$default)
  out <- spec$parse(v)
  if (is.null(out))
    stop(sprintf("option '%s' must be %s, not %s", name, spec$accepts,
                 paste(deparse(v, width.cutoff = 60L), collapse = " ")), call. = FALSE)
  out
}

# The 'devices' argument (default: option gpucor.devices), for the engine.
.check_devices <- function(devices) {
  out <- .devices_opt(devices)
  if (is.null(out)) stop("'devices' must be ", .devices_accepts, call. = FALSE)
  out
}

# The arguments the user functions share, checked in the caller's frame:
# verbose, devices, precision (matched), and output and BPPARAM where the
# function has them.
.check_common <- function(env = parent.frame()) {
  env$verbose <- .check_verbose(env$verbose)
  env$devices <- .check_devices(env$devices)
  if (!is.null(env$precision))
    env$precision <- match.arg(env$precision, c("double", "single"))
  if (exists("output", envir = env, inherits = FALSE))
    env$output <- .check_output(env$output)
  if (!is.null(env$BPPARAM)) .bp_check(env$BPPARAM)
  invisible()
}

# The 'verbose' argument (default: option gpucor.verbose): TRUE or FALSE,
# or a number as WGCNA's levels (0 quiet; 1, 2, ... TRUE), so that a call
# written for WGCNA runs.
.check_verbose <- function(verbose) {
  if (is.numeric(verbose) && length(verbose) == 1L && !is.na(verbose)) return(verbose > 0)
  if (is.null(.flag_opt(verbose)))
    stop("'verbose' must be TRUE or FALSE (or a number: WGCNA's levels, 0 for FALSE)",
         call. = FALSE)
  verbose
}

# The engine's warning flags of results xs (their attributes "sd0" and
# "nonfinite"): c(sd0, nonfinite), each TRUE when any result has it.
.engine_flags <- function(xs) {
  any_of <- function(a) any(vapply(xs, function(r) isTRUE(attr(r, a)), NA))
  c(sd0 = any_of("sd0"), nonfinite = any_of("nonfinite"))
}

# What verbose = TRUE says after an engine call: which engine ran, where,
# on how many threads or in which precision, and how long it took.
# One engine call, 'value' being the .Call itself (evaluated here, once):
# when it fails on the GPU, gpu_available()'s cached answer is dropped
# (.gpu_forget()); with 'verbose', what ran and for how long
# (report(seconds, threads), threads the result's attribute; by default
# .engine_report()).  The value is returned as the .Call made it: it is the value
# of a promise, which R (reference counts) does not copy when the caller
# then changes its attributes (tracemem() shows no copy).
.engine_call <- function(value, fun, backend, precision = "double", devices = 0L,
                         verbose = FALSE, report = NULL) {
  ok <- FALSE
  if (identical(backend, "gpu")) on.exit(if (!ok) .gpu_forget())
  t0 <- proc.time()[["elapsed"]]
  force(value)
  ok <- TRUE
  if (verbose) {
    s <- proc.time()[["elapsed"]] - t0
    if (is.null(report)) .engine_report(fun, attr(value, "threads"), precision, s, devices)
    else report(s, attr(value, "threads"))
  }
  value
}

# The report of a step that runs on the CPU engine whatever the backend
# (the tree cut, the eigengenes), for .engine_call(report =): its team is
# the result's "threads" attribute where the step sets one, else 'threads'.
.cpu_report <- function(fun, note = NULL, threads = .threads())
  function(s, th) .engine_report(fun, if (is.null(th)) threads else th, "double", s,
                                 cpu_note = note)

# 'threads' is the CPU engine's team size (NULL when the GPU ran).
# 'note' is said of a GPU run, 'cpu_note' of a CPU run.
.engine_report <- function(fun, threads, precision, seconds, devices = 0L, note = NULL,
                           cpu_note = NULL) {
  what <- if (is.null(threads)) {
    tab <- gpu_info()$devices
    ids <- if (identical(devices, -1L)) tab$id else devices
    sprintf("GPU engine on %s, %s precision",
            paste(sprintf("GPU %d (%s)", ids, tab$name[match(ids, tab$id)]), collapse = ", "),
            precision)
  } else {
    sprintf("CPU engine, %d thread%s", threads, if (threads == 1L) "" else "s")
  }
  if (is.null(threads)) cpu_note <- NULL else note <- NULL
  message(sprintf("%s: %s%s, %.3f s", fun, what,
                  if (!is.null(c(note, cpu_note))) paste0(" (", c(note, cpu_note), ")") else "",
                  seconds))
}
