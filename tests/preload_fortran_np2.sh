#!/bin/sh
# A Fortran program (mpif.h and the mpi module) under the preload: its
# allreduces, blocking and non-blocking, reach the layer (4 per step, every
# step in the trace) and its results stay right.
. "${top_srcdir:-.}/tests/preload_lib.sh"
steps=24
ob_run 2 OMNIBATCH_TRACE="$work/trace.csv" OMNIBATCH_REPORT_FILE="$work/report.txt" -- \
    "$tests/mpi_fortran" $steps || fail "the Fortran program failed"
grep -q "results right" "$work/out" || fail "wrong results under the preload"
grep -q " 4 gradient allreduces per step (detected)$" "$work/report.txt" \
    || fail "the layer did not see the Fortran allreduces"
for r in 0 1; do
    rows=$(ob_trace_rows "$work/trace.csv" $r)
    [ "$rows" -eq $((steps - 1)) ] || fail "trace: rank $r has $rows rows, expected $((steps - 1))"
done
cat "$work/report.txt"
