#!/bin/sh
# The training benchmark end to end on 4 ranks: a few steps of each policy on
# a small generated data set (never the real one), checking that the run
# exits 0 and prints its lines, trace and summary.  No timing is asserted.
set -eu
srcdir=${top_srcdir:-.}
builddir=${top_builddir:-.}
bin="$builddir/bench/hetsgd/hetsgd"
run="$srcdir/tests/mpirun.sh"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/hetsgd-np4.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM

fail() {
    echo "FAIL: $*" >&2
    [ -f "$tmp/out" ] && cat "$tmp/out" >&2
    exit 1
}

"$builddir/tests/bench/hetsgd_mkdata" "$tmp/data" 512 128 || fail "generating the data set"

# 512 samples, batch 64: 8 steps per epoch, 2 epochs.  OmniLearn re-plans
# once; the oracle follows the ramp schedule and re-plans at each change.
common="--data $tmp/data --batch 64 --epochs 2 --lr 0.1 --eval-every 3 --target 0.5"
for policy in static omnibatch oracle omnilearn chunks; do
    if [ oracle = "$policy" ]; then
        hetero="--schedule ramp"
    else
        hetero="--speeds 1,1,0.5,0.25"
    fi
    # shellcheck disable=SC2086
    "$run" 4 "$bin" $common $hetero --policy "$policy" --trace "$tmp/$policy.csv" \
        --summary "$tmp/summary.txt" >"$tmp/out" 2>&1 || fail "$policy run exited non-zero"
    grep -q "^hetsgd: 4 ranks, policy $policy" "$tmp/out" || fail "$policy: no setup line"
    grep -q "^hetsgd: epoch 1/2 loss [0-9.]* test_acc [0-9.]* train_s" "$tmp/out" || fail "$policy: no epoch 1 line"
    grep -q "^hetsgd: epoch 2/2 " "$tmp/out" || fail "$policy: no epoch 2 line"
    grep -q "^hetsgd: time to test accuracy 0.50: " "$tmp/out" || fail "$policy: no time-to-target line"
    grep -q "^hetsgd: mean steady step " "$tmp/out" || fail "$policy: no step-time line"
    grep -q "^hetsgd: final test accuracy " "$tmp/out" || fail "$policy: no final line"
    grep -q "^hetsgd: summary policy=$policy ranks=4 " "$tmp/out" || fail "$policy: no summary line"
    # A header and one row per step (16) and rank (4).
    [ "$(wc -l <"$tmp/$policy.csv")" -eq 65 ] || fail "$policy: trace has $(wc -l <"$tmp/$policy.csv") lines, expected 65"
    head -1 "$tmp/$policy.csv" |
        grep -q '^step,rank,policy,batch,compute_s,step_s,speed,cpu_s,step_cpu_s,taken,given,chunks,chunk_call_s,late_s$' ||
        fail "$policy: trace header"
    # Every step's batches sum to the global batch.
    awk -F, 'NR > 1 { s[$1] += $4 } END { for (k in s) if (s[k] != 64) exit 1 }' "$tmp/$policy.csv" ||
        fail "$policy: a step's batches do not sum to 64"
    [ omnilearn != "$policy" ] || grep -q "omnilearn after epoch 1: published plan " "$tmp/out" ||
        fail "omnilearn: no re-plan line"
done
grep -q "schedule=ramp" "$tmp/summary.txt" || fail "oracle: the ramp is not in the summary"
# chunks: the steps worked in chunks.  Each step's samples taken from other ranks are the samples
# given by others; every rank that did samples did them in chunks; with speeds 1,1,0.5,0.25 and
# the controller's equal first plan, the fast ranks took samples from the slow ones.
awk -F, 'NR > 1 { t[$1] += $10; g[$1] += $11; if ($4 > 0 && $12 < 1) bad = 1 }
         END { for (k in t) if (t[k] != g[k]) bad = 1; exit bad }' "$tmp/chunks.csv" ||
    fail "chunks: a step's samples taken differ from those given, or samples done outside a chunk"
awk -F, 'NR > 1 && $10 > 0 && ($2 == 0 || $2 == 1) { moved = 1 } END { exit !moved }' "$tmp/chunks.csv" ||
    fail "chunks: the fast ranks took no sample"
awk -F, 'NR > 1 && $1 > 0 && policy != "chunks" { if ($10 != 0 || $11 != 0 || $12 != 0) bad = 1 }
         END { exit bad }' policy=omnibatch "$tmp/omnibatch.csv" || fail "omnibatch: chunks in a run without them"
grep -q "^policy=chunks .* chunks_per_step=[1-9][0-9.]* moved_share=0[.][0-9]*[1-9][0-9]* moved_steps=[1-9]" \
    "$tmp/summary.txt" || fail "chunks: the summary shows no chunks or no moved samples"
# --calibrate: the cost of a step and of a chunk after a step's first, and a chunk's pass per sample
# at sizes from 1 up.
"$run" 2 "$bin" --data "$tmp/data" --batch 64 --calibrate >"$tmp/out" 2>&1 || fail "--calibrate exited non-zero"
grep -q '^hetsgd: cost [0-9.e+-]*,[0-9.e+-]*,[0-9.e+-]*$' "$tmp/out" || fail "--calibrate: no cost line A,B,C"
grep -q "^hetsgd: a chunk's pass on warm caches, CPU us per sample (C + B n over n): n=1 [0-9.]* n=4 [0-9.]*" "$tmp/out" ||
    fail "--calibrate: no line of the chunks' passes"
# The jitter, its changes inside the step (--change-at), and chunks under both.
"$run" 4 "$bin" --data "$tmp/data" --batch 64 --epochs 1 --lr 0.1 --schedule jitter --change-at 0.5 \
    --policy chunks --cost 0.0001,1e-5,5e-5 --summary "$tmp/inside.txt" --trace "$tmp/inside.csv" >"$tmp/out" 2>&1 ||
    fail "chunks under the jitter with --change-at 0.5 exited non-zero"
grep -q "^hetsgd: speed changes land 0.5 of the way into their step " "$tmp/out" || fail "jitter: no change-at line"
grep -q "^hetsgd: chunks: each step worked in chunks .* costs 5e-05 s + its samples' (--cost)$" "$tmp/out" ||
    fail "jitter: no chunks line with the chunk cost of --cost"
grep -q "^hetsgd: chunks: [0-9.]* chunks per rank and step; " "$tmp/out" || fail "jitter: no chunk figures"
awk -F, 'NR > 1 { s[$1] += $4 } END { for (k in s) if (s[k] != 64) exit 1 }' "$tmp/inside.csv" ||
    fail "jitter: a step's samples done do not sum to 64"
# Every step of the jitter has speeds of its own.
awk -F, 'NR > 1 && $2 == 0 { if (NR > 2 && $7 == last) same++; last = $7 } END { exit same > 2 }' "$tmp/inside.csv" ||
    fail "jitter: rank 0's speed stayed the same from step to step"
grep -q " schedule=jitter .* change_at=0.5 " "$tmp/inside.txt" || fail "jitter: not in the summary"
# Under the ramp the oracle's rank 3 (the fast role) gets more than rank 2 at step 8 (HL8).
awk -F, '$1 == 8 && $2 == 2 { b2 = $4 } $1 == 8 && $2 == 3 { b3 = $4 } END { exit !(b3 > b2) }' \
    "$tmp/oracle.csv" || fail "oracle: no larger batch for the fast rank under HL8"
[ "$(wc -l <"$tmp/summary.txt")" -eq 5 ] || fail "summary file: expected 5 lines"
for key in policy ranks speeds schedule batch steps time_to_target_s final_acc final_acc_mean \
           final_acc_evals mean_step_s steady_step_s balance_steady balance_recover_initial \
           balance_recover_unrecovered pred_ratio_oracle model_recover_initial; do
    [ "$(grep -c " $key=\|^$key=" "$tmp/summary.txt")" -eq 5 ] || fail "summary file: key $key missing"
done
# The measured balance is max t_i over a weighted mean of the t_i: never below 1.  The smoothed
# final accuracy averages accuracies: within [0, 1].
awk '{ for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
       if (!(v["balance_steady"] >= 1) || !(v["final_acc_mean"] >= 0 && v["final_acc_mean"] <= 1)) bad = 1 }
     END { exit bad }' "$tmp/summary.txt" || fail "summary file: balance_steady < 1 or final_acc_mean outside [0, 1]"

# A training set smaller than each rank's slice of the test set (--subset in
# make bench's quick mode): the buffers are sized for both.
"$builddir/tests/bench/hetsgd_mkdata" "$tmp/wide" 64 4096 || fail "generating the wide data set"
"$run" 4 "$bin" --data "$tmp/wide" --batch 16 --epochs 1 --lr 0.1 --policy static >"$tmp/out" 2>&1 ||
    fail "a training set smaller than the test slice of a rank"
grep -q "^hetsgd: final test accuracy " "$tmp/out" || fail "wide data set: no final line"

# --last-eval-only (the quota scenario): no evaluation before the last step,
# whatever --eval-every says; the last one still gives the final accuracy.
"$run" 4 "$bin" --data "$tmp/data" --batch 64 --epochs 2 --eval-every 3 --last-eval-only --policy omnibatch \
    --summary "$tmp/last.txt" >"$tmp/out" 2>&1 || fail "--last-eval-only run exited non-zero"
grep -q "^hetsgd: epoch 1/2 loss [0-9.]* test_acc - train_s" "$tmp/out" || fail "--last-eval-only: epoch 1 was evaluated"
grep -q "^hetsgd: epoch 2/2 loss [0-9.]* test_acc [0-9.]* train_s" "$tmp/out" || fail "--last-eval-only: the last epoch was not"
grep -q " final_acc_evals=1 " "$tmp/last.txt" || fail "--last-eval-only: expected exactly 1 evaluation"

# Mistakes: one line naming the option, a non-zero exit, before any step;
# reported once however many ranks make it.
if "$run" 4 "$bin" --data "$tmp/data" --speeds 1,1,1 >"$tmp/out" 2>&1; then
    fail "3 speeds for 4 ranks were accepted"
fi
[ "$(grep -c "^hetsgd: --speeds has 3 entries: expected one per rank (4)$" "$tmp/out")" -eq 1 ] ||
    fail "bad --speeds: not exactly one clear line"
# The same checks in a single process (MPI singleton): quicker to start.
if timeout 60 "$bin" --data "$tmp/data" --policy fastest >"$tmp/out" 2>&1; then
    fail "a bad --policy was accepted"
fi
grep -q "^hetsgd: --policy 'fastest': expected static, omnibatch, oracle, omnilearn or chunks$" "$tmp/out" ||
    fail "bad --policy: no clear line"
if timeout 60 "$bin" --data "$tmp/nowhere" >"$tmp/out" 2>&1; then
    fail "a missing data directory was accepted"
fi
grep -q "apt-get install dataset-fashion-mnist" "$tmp/out" || fail "missing data: package not named"
echo "hetsgd_np4: all policies ran"
