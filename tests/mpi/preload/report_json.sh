# The JSON report (OMNIBATCH_REPORT=json) of a 3-rank run whose buckets are
# reduced with MPI_Iallreduce and one MPI_Waitall: it must parse and name
# rank 1, the slow one.
ob_run "$np" OMNIBATCH_REPORT=json OMNIBATCH_REPORT_FILE="$work/report.json" -- \
    "$tests/mpi_straggler" 30 1 nonblocking || fail "the program failed"
grep -q "results right" "$work/out" || fail "wrong results under the preload"
"$tests/json_valid" "$work/report.json" || fail "the JSON report does not parse"
grep -q '"stragglers": \[1\]' "$work/report.json" || fail "rank 1 is not the straggler in the JSON report"
grep -q '"calls_per_step": 3,' "$work/report.json" || fail "3 allreduces per step not found"
grep -q '"speedup": [0-9]' "$work/report.json" || fail "no predicted speed-up"
cat "$work/report.json"
