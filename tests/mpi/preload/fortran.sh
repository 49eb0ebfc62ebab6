# A Fortran program under the preload: its allreduces, blocking and
# non-blocking, reach the layer (4 per step, every step in the trace) and
# its results stay right.  program=mpi_fortran (mpif.h and the mpi module,
# the default) or mpi_fortran_f08 (the mpi_f08 module, Open MPI builds).
program=${program:-mpi_fortran}
[ -x "$tests/$program" ] || skip "$program not built (needs mpifort; mpi_f08: an Open MPI build)"
steps=24
ob_run "$np" OMNIBATCH_TRACE="$work/trace.csv" OMNIBATCH_REPORT_FILE="$work/report.txt" -- \
    "$tests/$program" $steps || fail "the Fortran program failed"
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
