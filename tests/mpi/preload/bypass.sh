# A program whose MPI calls bypass the layer (it calls PMPI_Init itself, as
# a binding that goes to the MPI library's internals would -- MPICH's
# mpi_f08): the results stay right, and the layer says so once, at exit,
# instead of staying silent.
ob_run "$np" OMNIBATCH_TRACE="$work/trace.csv" -- "$tests/mpi_bypass" || fail "the program failed"
grep -q "results right" "$work/out" || fail "wrong results under the preload"
lines=$(grep -c "^omnibatch: warning: this process ran MPI, but its MPI_Init did not pass through the preloaded layer" "$work/err" || true)
[ "$lines" -eq 1 ] || fail "expected one line saying the layer was bypassed, got $lines"
grep "^omnibatch:" "$work/err"
