#!/bin/sh
# bench/hetsgd/async_table.py (make bench-async's table and targets) on
# made-up runs whose figures are known: the accuracy at a time is the last
# evaluation at or before it, times to the target and their medians over
# seeds (a run that never reaches it counts as infinite), the paired ratios,
# the staleness spread, lost pushes, and the verdicts on each side.
set -eu
srcdir=${top_srcdir:-.}
py=${PYTHON:-python3}
command -v "$py" >/dev/null 2>&1 || { echo "check_async_table: no $py: skipped"; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/async-table.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
fail() {
    echo "FAIL: check_async_table: $*" >&2
    [ -f "$tmp/table" ] && cat "$tmp/table" >&2
    exit 1
}

# run LEVEL POLICY SEED TRAIN_S "t:acc t:acc ..." [key=value ...]: a summary line and its curve.
run() {
    l=$1 p=$2 s=$3 train=$4 points=$5
    shift 5
    echo "level=$l policy=$p seed=$s train_s=$train samples=1000 epochs=2 $*" >>"$tmp/summary.txt"
    {
        echo "train_s,samples,test_acc"
        for x in $points; do
            echo "${x%%:*},0,${x#*:}"
        done
    } >"$tmp/$l.$p.s$s.csv"
}
a="updates=90 pushes=100 dropped=10 updates_per_s=9 busy_fraction=0.25 stale_p99=5,6,7,8 stale_max=9,9,9,9"
# hl8: async-omnibatch reaches 0.85 at 40 and 50 s (median 45), async-static at 80 and never
# (median inf), omnilearn at 60 and 70; T_eq is omnibatch's 100 s.
run hl8 async-omnibatch 1 100 "0:0.1 40:0.86 100:0.87" "$a stale_mean=3,3,3,3.3"
run hl8 async-omnibatch 2 100 "0:0.1 50:0.85 100:0.88" "$a stale_mean=3,3.1,3,3"
run hl8 async-static 1 120 "0:0.1 80:0.85 120:0.86" "updates=100 pushes=100 dropped=0 updates_per_s=9 busy_fraction=0.2 stale_mean=1,2,4,8 stale_p99=1,2,4,8 stale_max=1,2,4,8"
run hl8 async-static 2 120 "0:0.1 80:0.84 120:0.84" "updates=100 pushes=100 dropped=0 updates_per_s=9 busy_fraction=0.2 stale_mean=1,2,4,8 stale_p99=1,2,4,8 stale_max=1,2,4,8"
run hl8 async-omnilearn 1 110 "0:0.1 60:0.85 110:0.9" "$a stale_mean=2,2,2,2"
run hl8 async-omnilearn 2 110 "0:0.1 70:0.85 110:0.9" "$a stale_mean=2,2,2,2"
run hl8 sync-static 1 200 "0:0.1 150:0.86"
run hl8 sync-static 2 200 "0:0.1 150:0.86"
# hl4: a lost push (pushes 100, updates 90, dropped 5), a staleness spread of 2, and equal
# batches sooner and better.
run hl4 async-omnibatch 1 50 "0:0.1 10:0.86 50:0.87" "updates=90 pushes=100 dropped=5 updates_per_s=9 busy_fraction=0.2 stale_mean=2,4,3,3 stale_p99=1,1,1,1 stale_max=1,1,1,1"
run hl4 async-static 1 50 "0:0.1 5:0.86 50:0.9" "updates=100 pushes=100 dropped=0 updates_per_s=9 busy_fraction=0.2 stale_mean=1,1,1,1 stale_p99=1,1,1,1 stale_max=1,1,1,1 speeds=9,9,6,24,9,9,6,24"

"$py" "$srcdir/bench/hetsgd/async_table.py" --target 0.85 "$tmp" >"$tmp/table" 2>&1 || fail "the table exited non-zero"
grep -q '^== hl8 (6,6,4,32): T_eq 100.0 s' "$tmp/table" || fail "hl8: no header with T_eq 100 s"
# The runs' own speeds where they give them (8 workers, async.sh --workers 8).
grep -q '^== hl4 (9,9,6,24,9,9,6,24): T_eq 50.0 s' "$tmp/table" || fail "hl4: the header does not give the runs' 8 speeds"
# Times to 0.85: medians 45, inf (NA), 65, 150; the range of each.
grep -q '^  async-omnibatch .*  45.0 (40.0-50.0)  0.8750 (0.8700-0.8800)' "$tmp/table" || fail "hl8 async-omnibatch row"
grep -q '^  async-static .*  NA (80.0-NA)  0.8450 (0.8400-0.8500)' "$tmp/table" || fail "hl8 async-static row"
grep -q '^  async-omnilearn .*  65.0 (60.0-70.0)' "$tmp/table" || fail "hl8 async-omnilearn row"
# The accuracy at 25% of T_eq (25 s): 0.1 for every run; at 50% (50 s) omnibatch's 0.86 and 0.85.
grep -q '^  async-omnibatch   0.1000  0.8550  0.8550  0.8750 ' "$tmp/table" || fail "hl8 accuracy at fixed times"
# Ratios per seed: 40/80 and 50/inf -> 0.5 and 0 -> median 0.25; to omnilearn 40/60, 50/70.
grep -q 'async-omnibatch / async-static    time to 0.85: 0.250 (0.000-0.500 per seed)' "$tmp/table" || fail "ratio to async-static"
grep -q 'async-omnibatch / async-omnilearn time to 0.85: 0.690 (0.667-0.714 per seed)' "$tmp/table" || fail "ratio to async-omnilearn"
grep -q 'staleness mean 3.00,3.05,3.00,3.15 p99 5,6,7,8: largest/least 1.07 (1.03-1.10)' "$tmp/table" ||
    fail "async-omnibatch's staleness line"
grep -q 'async-static     staleness mean 1.00,2.00,4.00,8.00 .*largest/least 8.00' "$tmp/table" || fail "async-static's staleness"
grep -q '^target: hl8: async-omnibatch reaches the target sooner than async-static (45.0 vs NA s): met; accuracy at equal time 0.8750 vs 0.8450: met$' \
    "$tmp/table" || fail "hl8 verdict against async-static"
grep -q '^target: hl8: async-omnibatch reaches the target sooner than async-omnilearn (45.0 vs 65.0 s): met; accuracy at equal time 0.8750 vs 0.8500: met$' \
    "$tmp/table" || fail "hl8 verdict against async-omnilearn"
grep -q '^target: hl8: async-omnibatch.s per-worker mean staleness within 1.5x: 1.07: met; pushes lost: 0$' "$tmp/table" ||
    fail "hl8 staleness verdict"
grep -q '^target: hl4: async-omnibatch.s per-worker mean staleness within 1.5x: 2.00: MISSED; pushes lost: 5$' "$tmp/table" ||
    fail "hl4: the spread and the lost pushes"
grep -q '^target: hl4: async-omnibatch reaches the target sooner than async-static (10.0 vs 5.0 s): MISSED; accuracy at equal time 0.8700 vs 0.9000: MISSED$' \
    "$tmp/table" || fail "hl4: the verdicts when equal batches win"
# No runs: one line, non-zero.
if "$py" "$srcdir/bench/hetsgd/async_table.py" "$tmp/none" >"$tmp/err" 2>&1; then
    fail "no runs directory accepted"
fi
grep -q 'no runs' "$tmp/err" || fail "no runs: no line saying so"
echo "check_async_table: the table's figures and verdicts as expected"
