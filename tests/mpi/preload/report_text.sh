# The text report on stderr, 2 ranks, non-blocking buckets: rank 1 is slow.
ob_run "$np" -- "$tests/mpi_straggler" 24 1 nonblocking || fail "the program failed"
grep -q "results right" "$work/out" || fail "wrong results under the preload"
[ "$(grep -c '^omnibatch: report: 2 ranks' "$work/err")" -eq 1 ] || fail "expected one report on stderr"
grep -Eq '^  rank 1 \(host [^)]+\) is the straggler: it computes [0-9.]+x as long as the fastest; rank 0 waits [0-9]+% of its step$' \
    "$work/err" || fail "the report does not name rank 1 as the straggler"
grep -q "shares of the global batch" "$work/err" || fail "no split in shares without OMNIBATCH_GLOBAL_BATCH"
cat "$work/err"
