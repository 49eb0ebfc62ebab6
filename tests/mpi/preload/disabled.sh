# OMNIBATCH_ENABLE=off: pure passthrough, the layer says and writes nothing.
ob_run "$np" OMNIBATCH_ENABLE=off OMNIBATCH_TRACE="$work/trace.csv" -- \
    "$tests/mpi_straggler" 12 1 nonblocking || fail "the program failed"
grep -q "results right" "$work/out" || fail "wrong results under the preload"
grep -q "omnibatch" "$work/err" && fail "the layer spoke though disabled"
[ -e "$work/trace.csv" ] && fail "a trace was written though disabled"
exit 0
