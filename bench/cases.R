# bench/cases.R -- the runner that bench/edges.R and bench/paths.R share:
# each case in its own R process, so that its peak host memory (VmHWM) is
# its own; one table.  A case is a function returning list(case = label,
# t = seconds, ...); extra(r) formats the table's last column from it.
hwm <- function() {
  s <- readLines("/proc/self/status")
  as.numeric(sub("[^0-9]*([0-9]+).*", "\\1", grep("^VmHWM", s, value = TRUE))) / 1024
}
tm <- function(expr) system.time(expr)[["elapsed"]]

# args: the script's arguments ("--one <case>", case names, "cpu", or none
# for 'default'); extra_name: the header of the extra column.
run_cases <- function(script, cases, args, default, cpu, extra_name, extra) {
  if (length(args) >= 2 && args[1] == "--one") {
    r <- cases[[args[2]]]()
    cat(sprintf("%-62s %9.3f %12s %9.0f\n", r$case, r$t, extra(r), hwm()))
    quit(save = "no")
  }
  todo <- if (length(args)) args else default
  if (identical(todo, "cpu")) todo <- cpu
  cat(sprintf("%s; %s\n", format(Sys.time(), "%Y-%m-%d"),
              if (isTRUE(as.vector(gpucor::gpu_available()))) gpucor::gpu_info()$name else "no GPU"))
  cat(sprintf("%-62s %9s %12s %9s\n", "case", "seconds", extra_name, "VmHWM MB"))
  for (k in todo) system2(file.path(R.home("bin"), "Rscript"), c(script, "--one", k))
}
