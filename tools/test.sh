#!/bin/sh
# tools/test.sh -- the gpucor test suite as CI runs it (POSIX sh).
#
# Builds the source tarball (vignettes included), then runs
# R CMD check --as-cran --no-manual twice: once as configure chooses (the
# CUDA build where nvcc and cuBLAS are found) and once with
# GPUCOR_DISABLE_CUDA=1.  Fails if either check ends with an ERROR or a
# WARNING.  The last line printed is "N passed, M failed", summed over the
# testthat results of both checks.
#
#   R=/path/to/R sh tools/test.sh      use another R
#   GPUCOR_KEEP_CHECK=1                keep the check directories on success

set -u
R=${R:-R}
pkgdir=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/gpucor-test.XXXXXX") || exit 1

# Suggested packages (ALL, fastcluster) may be absent; tests and the
# vignette skip what they need.  No network look-ups: they only slow the
# check down and add NOTEs, never WARNINGs.
_R_CHECK_FORCE_SUGGESTS_=false
: "${_R_CHECK_CRAN_INCOMING_REMOTE_:=false}"
: "${_R_CHECK_TESTS_NLINES_:=0}"
export _R_CHECK_FORCE_SUGGESTS_ _R_CHECK_CRAN_INCOMING_REMOTE_ _R_CHECK_TESTS_NLINES_
if [ -z "${MAKEFLAGS:-}" ]; then
    MAKEFLAGS="-j$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 1)"
    export MAKEFLAGS
fi

echo "== R CMD build $pkgdir (in $work)"
# The build installs the package to make the vignettes: CPU-only there
# (no GPU here, and the CUDA build is the default check's, below), which
# saves one CUDA compile of several minutes.
if ! (cd "$work" && GPUCOR_DISABLE_CUDA=1 "$R" CMD build "$pkgdir"); then
    echo "tools/test.sh: R CMD build failed; logs in $work"
    exit 1
fi
tarball=$(ls "$work"/gpucor_*.tar.gz 2>/dev/null | head -n 1)
if [ -z "$tarball" ]; then
    echo "tools/test.sh: R CMD build made no tarball; logs in $work"
    exit 1
fi

failed_checks=0
passed=0
failed=0

# run_check LABEL [VAR=value ...]
run_check() {
    label=$1; shift
    out="$work/check-$label"
    mkdir -p "$out"
    echo "== R CMD check --as-cran --no-manual ($label${1:+, $*})"
    (cd "$work" && env "$@" "$R" CMD check --as-cran --no-manual --output="$out" "$tarball")
    rc=$?
    log="$out/gpucor.Rcheck/00check.log"
    status=$(sed -n 's/^Status: //p' "$log" 2>/dev/null | tail -n 1)
    build=$(grep '^gpucor: ' "$out/gpucor.Rcheck/00install.out" 2>/dev/null | tail -n 1)
    echo "-- check $label: ${build:-configure line not found}"
    echo "-- check $label: Status: ${status:-none} (exit $rc)"
    bad=0
    case "$status" in
        ""|*ERROR*|*WARNING*) bad=1 ;;
    esac
    [ "$rc" -eq 0 ] || bad=1
    failed_checks=$((failed_checks + bad))

    # testthat's summary: [ FAIL 0 | WARN 0 | SKIP 2 | PASS 123 ]
    summary=""
    for f in "$out"/gpucor.Rcheck/tests/testthat.Rout "$out"/gpucor.Rcheck/tests/testthat.Rout.fail; do
        [ -f "$f" ] || continue
        s=$(grep -E '\[ FAIL [0-9]+ \| WARN [0-9]+ \| SKIP [0-9]+ \| PASS [0-9]+ \]' "$f" | tail -n 1)
        [ -n "$s" ] && summary=$s
    done
    if [ -n "$summary" ]; then
        echo "-- check $label: testthat $summary"
        nf=$(echo "$summary" | sed 's/.*FAIL \([0-9]*\).*/\1/')
        np=$(echo "$summary" | sed 's/.*PASS \([0-9]*\).*/\1/')
        passed=$((passed + np))
        failed=$((failed + nf))
    else
        echo "-- check $label: no testthat summary found"
    fi
}

run_check default
run_check cpu GPUCOR_DISABLE_CUDA=1

if [ "$failed_checks" -gt 0 ] || [ "$failed" -gt 0 ]; then
    echo "tools/test.sh: $failed_checks check(s) with ERROR or WARNING; logs kept in $work"
    echo "$passed passed, $failed failed"
    exit 1
fi
if [ "${GPUCOR_KEEP_CHECK:-}" = 1 ]; then
    echo "tools/test.sh: logs kept in $work"
else
    rm -rf "$work"
fi
echo "$passed passed, $failed failed"
exit 0
