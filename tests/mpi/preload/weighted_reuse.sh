# Sourced: a weighting verdict dies with its communicator.  The gradients
# are weighted on a duplicate of MPI_COMM_WORLD; the duplicate is freed and
# a split of MPI_COMM_WORLD gets its handle: the split's allreduces must
# come back as MPI sums them (checked by the program).
ob_run "$np" OMNIBATCH_WEIGHT=on OMNIBATCH_CALLS_PER_STEP=1 OMNIBATCH_REPORT=off -- \
    "$tests/mpi_weighted_reuse" 60 || fail "the run failed"
grep -q "results right" "$work/out" || fail "wrong results"
grep -q "split reuses the freed handle: yes" "$work/out" \
    || skip "this MPI gave the split a new handle: nothing to check"
cat "$work/out"
