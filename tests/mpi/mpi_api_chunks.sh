#!/bin/sh
# tests/mpi/mpi_api_chunks at 2, 3 and 4 ranks: a step worked in chunks
# (options.chunks; two tries at each size: test_waits_are_not_compute
# judges measured compute times), a rank slowed inside its step, samples taken from it,
# each exactly once; the exact gradient; calls out of order and bad settings.
# Then once more at 3 ranks with the trace and the report on: every chunked
# step's row says what the rank took and gave, the taken and the given sum
# alike and are not all 0, and the report has a line for each rank.
set -eu
srcdir=${top_srcdir:-.}
OB_API_TRIES=${OB_API_TRIES:-2} "${SHELL:-/bin/sh}" "$srcdir/tests/mpi/mpi_api_run.sh" mpi_api_chunks
tmp=$(mktemp -d "${TMPDIR:-/tmp}/chunks.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
echo "== trace and report at 3 ranks"
OB_API_TRIES=${OB_API_TRIES:-2} OB_API_NPS=3 OB_MPIRUN_ENV="OMNIBATCH_TRACE=$tmp/trace.csv OMNIBATCH_REPORT_FILE=$tmp/report.txt ${OB_MPIRUN_ENV:-}" \
    "${SHELL:-/bin/sh}" "$srcdir/tests/mpi/mpi_api_run.sh" mpi_api_chunks
head -n 1 "$tmp/trace.csv" | grep -q ',taken,given$' || { echo "FAIL: the trace has no taken,given columns" >&2; exit 1; }
# Rows of chunked steps have both numbers; their sums agree.
awk -F, 'NR > 1 && $14 != "" { rows++; taken += $14; given += $15 }
         END { printf "%d %d %d\n", rows, taken, given }' "$tmp/trace.csv" >"$tmp/sums"
read -r rows taken given <"$tmp/sums"
echo "trace: $rows chunked rows, $taken samples taken, $given given"
[ "$rows" -gt 0 ] || { echo "FAIL: no row of a chunked step in the trace" >&2; exit 1; }
[ "$taken" -gt 0 ] || { echo "FAIL: no sample taken in any row" >&2; exit 1; }
[ "$taken" -eq "$given" ] || { echo "FAIL: $taken taken but $given given" >&2; exit 1; }
n=$(grep -c '^  chunks: rank [0-2] ' "$tmp/report.txt" || true)
[ "$n" -eq 3 ] || { echo "FAIL: the report has $n chunks lines, expected 3:" >&2; cat "$tmp/report.txt" >&2; exit 1; }
