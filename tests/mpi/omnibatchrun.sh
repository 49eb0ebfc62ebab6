#!/bin/sh
# The launcher (scripts/omnibatchrun): every OMNIBATCH_* variable of the
# caller reaches every rank, with the library preloaded there, and
# --report/--trace land where they say; run with the launcher configure
# found (Open MPI's -x or MPICH's -genvlist).
set -eu
top_srcdir=${top_srcdir:-.}
top_builddir=${top_builddir:-.}
run=$top_builddir/scripts/omnibatchrun
lib=$(cd "$top_builddir" && pwd)/.libs/lib${OB_LIBNAME:-omnibatch}.so
work=$(mktemp -d "${TMPDIR:-/tmp}/omnibatch-run.XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() {
    for f in "$work"/out "$work"/err "$work"/report.txt; do
        [ -f "$f" ] && { echo "--- $(basename "$f")"; cat "$f"; }
    done
    echo "FAIL: omnibatchrun: $*" >&2
    exit 1
}
# The small machine's flags (oversubscription, root) as the tests use them.
flags=$(sh "$top_srcdir/tests/mpirun.sh" --print-flags)
np=3

"$run" --help >"$work/out" || fail "--help failed"
grep -q "^Usage: omnibatchrun" "$work/out" || fail "--help printed no usage"
"$run" --report >"$work/out" 2>"$work/err" && fail "--report without FILE was accepted"
grep -q "^omnibatchrun: --report needs a FILE" "$work/err" || fail "no line on the missing FILE"

# Forwarding: each rank prints what it was given (a value with a comma and
# one only the caller has), and whether the library is in its preload.
# shellcheck disable=SC2086,SC2016
OMNIBATCH_WARMUP=3 OMNIBATCH_CALLER_ONLY="a,b" timeout 120 "$run" --library "$lib" \
    --trace "$work/t.csv" -np $np $flags \
    sh -c 'echo "rank:$OMNIBATCH_WARMUP:$OMNIBATCH_CALLER_ONLY:$OMNIBATCH_TRACE:$LD_PRELOAD"' \
    >"$work/out" 2>"$work/err" || fail "the launcher failed"
n=$(grep -c "^rank:3:a,b:$work/t.csv:$lib" "$work/out" || true)
[ "$n" -eq $np ] || fail "$n of $np ranks got the caller's OMNIBATCH_* and the preload"

# A real run: report and trace where the options say, the warm-up of the
# caller's environment in the report.
steps=16
# shellcheck disable=SC2086
OMNIBATCH_WARMUP=3 timeout 120 "$run" --library "$lib" --report "$work/report.txt" \
    --trace "$work/trace.csv" -np $np $flags "$top_builddir/tests/mpi/mpi_straggler" $steps 1 \
    >"$work/out" 2>"$work/err" || fail "the training run failed"
grep -q "results right" "$work/out" || fail "wrong results under the launcher"
grep -q "^omnibatch: report: $np ranks, .* (after 3 warm-up)" "$work/report.txt" \
    || fail "no report in --report's file, or OMNIBATCH_WARMUP=3 did not reach the ranks"
r=0
while [ $r -lt $np ]; do
    rows=$(awk -F, -v r=$r 'NR > 1 && $2 == r { n++ } END { print n + 0 }' "$work/trace.csv")
    [ "$rows" -gt 0 ] || fail "trace: no rows of rank $r"
    r=$((r + 1))
done
cat "$work/report.txt"
