# Sourced: the API's own record allgather (OMNIBATCH_PERIOD=1: every step)
# in a code that reduces with plain MPI.  Rank 1 reaches each exchange
# 40 ms late (it spends them after its reduction); the others wait for it
# there.  That wait is not their compute: rank 1 is the straggler, and
# rank 0's compute stays near its 2 ms, well below the 40 ms it waits (the
# bound, half of that wait, leaves room for a loaded machine's sleeps).
ob_run "$np" OMNIBATCH_PERIOD=1 OMNIBATCH_TRACE="$work/trace.csv" -- \
    "$tests/mpi_late_exchange" 30 1 40 || fail "the program failed"
grep -q "results right" "$work/out" || fail "wrong results under the preload"
grep -Eq '^  rank 1 \(host [^)]+\) is the straggler' "$work/err" \
    || fail "the report does not name rank 1, the late one, as the straggler"
c0=$(ob_trace_mean "$work/trace.csv" 0 4) || fail "no trace row of rank 0"
awk -v c="$c0" 'BEGIN { exit !(c < 0.020) }' \
    || fail "rank 0's mean compute $c0 s holds its wait in the exchange (it computes 0.002 s)"
cat "$work/err"
