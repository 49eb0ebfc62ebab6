# A Fortran program (mpif.h and the mpi module) under the preload: its
# allreduces, blocking and non-blocking, reach the layer (4 per step, every
# step in the trace) and its results stay right.
[ -x "$tests/mpi_fortran" ] || skip "no Fortran MPI compiler (mpifort) was found by configure"
steps=24
ob_run "$np" OMNIBATCH_TRACE="$work/trace.csv" OMNIBATCH_REPORT_FILE="$work/report.txt" -- \
    "$tests/mpi_fortran" $steps || fail "the Fortran program failed"
grep -q "results right" "$work/out" || fail "wrong results under the preload"
grep -q " 4 gradient allreduces per step (detected)$" "$work/report.txt" \
    || fail "the layer did not see the Fortran allreduces"
r=0
while [ $r -lt "$np" ]; do
    rows=$(ob_trace_rows "$work/trace.csv" $r)
    [ "$rows" -eq $((steps - 1)) ] || fail "trace: rank $r has $rows rows, expected $((steps - 1))"
    r=$((r + 1))
done
cat "$work/report.txt"
