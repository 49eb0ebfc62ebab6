# A Fortran program on `use mpi_f08`, whose MPI calls bypass the layer:
# the results stay right, and the layer says so once, at exit, instead of
# staying silent (before: not a word, no report, no trace).
[ -x "$tests/mpi_fortran_f08" ] || skip "no mpifort with the mpi_f08 module"
ob_run "$np" OMNIBATCH_TRACE="$work/trace.csv" -- "$tests/mpi_fortran_f08" || fail "the program failed"
grep -q "results right" "$work/out" || fail "wrong results under the preload"
lines=$(grep -c "^omnibatch: warning: this process ran MPI, but its MPI_Init did not pass through the preloaded layer (Fortran's use mpi_f08 is not intercepted" "$work/err" || true)
[ "$lines" -eq 1 ] || fail "expected one line saying the layer was bypassed, got $lines"
grep "^omnibatch:" "$work/err"
