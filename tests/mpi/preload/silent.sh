# A program that never trains leaves no report: a preloaded MPI code that
# makes no gradient allreduce, and a program linked with the library that
# only prints its --help (bench/hetsgd).  Asked for with OMNIBATCH_REPORT,
# the report still comes, and says that nothing was measured.
ob_run "$np" -- "$tests/mpi_straggler" 0 1 || fail "the program failed"
grep -q "results right" "$work/out" || fail "wrong results under the preload"
grep -q "omnibatch" "$work/err" "$work/out" && fail "the library spoke though nothing was measured"

ob_run "$np" OMNIBATCH_REPORT=text -- "$tests/mpi_straggler" 0 1 || fail "the program failed"
grep -q "^omnibatch: report: $np ranks" "$work/err" || fail "OMNIBATCH_REPORT=text given, but no report"
grep -q "no training step measured" "$work/err" || fail "the report does not say nothing was measured"

hetsgd=$top_builddir/bench/hetsgd/hetsgd
[ -x "$hetsgd" ] || skip "bench/hetsgd/hetsgd is not built"
OB_PRELOAD="" ob_run 1 -- "$hetsgd" --help || fail "hetsgd --help failed"
grep -q -i "usage" "$work/out" "$work/err" || fail "hetsgd --help printed no usage"
grep -q "omnibatch: report" "$work/out" "$work/err" && fail "hetsgd --help printed a report"
exit 0
