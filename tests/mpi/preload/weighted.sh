# Sourced: gradient weighting in preload mode on $np ranks with the code's
# convention $convention (divide: the preload default; mean: set by
# OMNIBATCH_CONVENTION).  The program gets unequal batches from the API
# through the run-time lookup and reduces with plain MPI; the results must
# match a one-process reference over the same global batch (checked by the
# program), and the report must show the batches the API published.
# Weighting begins once the per-step pattern (4 gradient allreduces, given
# so that it is known after 32 calls) is fixed; the program checks that the
# steps before come back unweighted and that allreduces which are not the
# step's gradient (MPI_COMM_SELF, a split communicator, a metric between
# MPI_Pcontrol(0) and (1)) come back unchanged.
set -- OMNIBATCH_WEIGHT=on OMNIBATCH_CALLS_PER_STEP=4 OMNIBATCH_REPORT_FILE="$work/report.txt"
if [ "$convention" = mean ]; then
    set -- "$@" OMNIBATCH_CONVENTION=mean
fi
ob_run "$np" "$@" -- "$tests/mpi_weighted" "$convention" 20 || fail "the weighted run failed"
grep -q "results right" "$work/out" || fail "weighted results differ from the reference"
grep -q "OMNIBATCH_WEIGHT is on but no omnibatch context" "$work/err" && fail "the layer did not see the API's step"
# Rank i ran (i + 1) shares of 60 / (np (np + 1) / 2) samples: rank 0's batch in the table.
share=$((60 / (np * (np + 1) / 2)))
grep -Eq "^ +0 +[^ ]+ +[0-9]+ +[0-9]+ +$share\.0 " "$work/report.txt" || fail "the report lacks rank 0's batch $share"
cat "$work/out"
