# Bounds that no split of OMNIBATCH_GLOBAL_BATCH over $np ranks can keep
# stop the run at init with one line naming the variable; bounds that can be
# kept are kept by the report's balanced split (before, the report proposed
# 12 samples for a straggler whatever OMNIBATCH_MIN_BATCH said).
prog="$tests/mpi_straggler"
for bad in "OMNIBATCH_MIN_BATCH=3 OMNIBATCH_GLOBAL_BATCH=8" \
           "OMNIBATCH_MAX_BATCH=1 OMNIBATCH_GLOBAL_BATCH=8" \
           "OMNIBATCH_GRANULARITY=16 OMNIBATCH_MAX_BATCH=16 OMNIBATCH_GLOBAL_BATCH=8"; do
    # shellcheck disable=SC2086
    if ob_run "$np" $bad -- "$prog" 5 1; then
        fail "$bad: the run succeeded"
    fi
    lines=$(grep -c '^omnibatch:' "$work/err" || true)
    [ "$lines" -eq 1 ] || fail "$bad: expected one omnibatch line, got $lines"
    name=${bad%%=*}
    value=${bad#*=}
    value=${value%% *}
    grep '^omnibatch:' "$work/err" | grep -q "$name='$value'.*OMNIBATCH_GLOBAL_BATCH=8" \
        || fail "$bad: the line does not name $name='$value' and the global batch"
    grep -q "mpi_straggler:" "$work/out" && fail "$bad: the program ran its steps"
    grep '^omnibatch:' "$work/err"
done

# Rank 2 straggles: unbounded, the split would give it about 12 of 256.
ob_run "$np" OMNIBATCH_GLOBAL_BATCH=256 OMNIBATCH_MIN_BATCH=40 OMNIBATCH_GRANULARITY=8 \
    OMNIBATCH_REPORT_FILE="$work/report.txt" -- "$prog" 30 2 blocking || fail "the bounded run failed"
split=$(sed -n 's/^  balanced split of the global batch 256://p' "$work/report.txt")
[ -n "$split" ] || fail "no balanced split in the report"
echo "split:$split"
# shellcheck disable=SC2086
set -- $split
[ $# -eq "$np" ] || fail "the split has $# batches, expected $np"
sum=0
for b in "$@"; do
    [ "$b" -ge 40 ] || fail "batch $b of the split is below OMNIBATCH_MIN_BATCH=40"
    [ $((b % 8)) -eq 0 ] || fail "batch $b of the split is not a multiple of OMNIBATCH_GRANULARITY=8"
    sum=$((sum + b))
done
[ "$sum" -eq 256 ] || fail "the split sums to $sum, not 256"
exit 0
