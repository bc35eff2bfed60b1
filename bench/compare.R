# Before/after benchmark of two gpucor builds, in one run: every case is
# timed in a fresh R process per build (bench/compare_case.R: one warm-up,
# median of BENCH_REPS runs), the two builds alternating, ROUNDS times; the
# table gives the median over the rounds and after / before.
#   Rscript bench/compare.R LIB_BEFORE LIB_AFTER PATTERN [ROUNDS]
# PATTERN selects cases by name (a regular expression: "^cpu", "^gpu").
args <- commandArgs(TRUE)
libs <- c(before = args[1], after = args[2])
pattern <- if (length(args) >= 3) args[3] else "."
rounds <- if (length(args) >= 4) as.integer(args[4]) else 2L
stopifnot(dir.exists(libs))
cases <- system2("Rscript", c("bench/compare_case.R", "list"), stdout = TRUE,
                 env = paste0("R_LIBS=", libs[["after"]]))
cases <- grep(pattern, cases, value = TRUE)
one <- function(lib, case) {
  out <- system2("Rscript", c("bench/compare_case.R", shQuote(case)), stdout = TRUE,
                 stderr = FALSE, env = paste0("R_LIBS=", lib))
  v <- suppressWarnings(as.numeric(tail(out, 1)))
  if (length(v) == 1) v else NA_real_
}
rows <- list()
for (cs in cases) {
  t <- matrix(NA_real_, rounds, 2, dimnames = list(NULL, names(libs)))
  for (r in seq_len(rounds)) for (b in if (r %% 2) 1:2 else 2:1) t[r, b] <- one(libs[[b]], cs)
  m <- apply(t, 2, median)
  rows[[cs]] <- data.frame(case = cs, before = round(m[[1]], 3), after = round(m[[2]], 3),
                           ratio = round(m[[2]] / m[[1]], 3))
  cat(sprintf("%-45s %8.3f %8.3f %6.3f\n", cs, m[[1]], m[[2]], m[[2]] / m[[1]]))
}
cat(sprintf("\n%s, %d rounds of BENCH_REPS = %s, before = %s, after = %s\n",
            format(Sys.time(), "%Y-%m-%d %H:%M"), rounds, Sys.getenv("BENCH_REPS", "3"),
            libs[["before"]], libs[["after"]]))
print(do.call(rbind, rows), row.names = FALSE)
