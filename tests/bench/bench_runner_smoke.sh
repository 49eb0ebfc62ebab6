#!/bin/sh
# bench/run.sh end to end in --quick mode on a small generated data set
# (never the real one): it must exit 0 and print the table, the targets and
# where its output is.  The figures are never checked (machines are noisy,
# and a few steps on tiny batches mean nothing); the arithmetic behind them
# is tested by the hetsgd and simulate suites.
set -eu
srcdir=${top_srcdir:-.}
builddir=${top_builddir:-.}
runner="$srcdir/bench/run.sh"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bench-runner.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM

fail() {
    echo "FAIL: $*" >&2
    [ -f "$tmp/out" ] && cat "$tmp/out" >&2
    exit 1
}

"$builddir/tests/bench/hetsgd_mkdata" "$tmp/data" 512 128 || fail "generating the data set"

# One static and one dynamic scenario; overhead at its smallest.
# The quota scenario's script speaks Open MPI's mpirun only.
no_quota=""
[ openmpi = "${OB_MPI_FAMILY:-openmpi}" ] || no_quota=--no-quota
# shellcheck disable=SC2086
sh "$runner" --builddir "$builddir" --quick --data "$tmp/data" --out "$tmp/out.d" \
    --scenarios headline,ramp --no-simulate $no_quota >"$tmp/out" 2>&1 || fail "the runner exited non-zero"

grep -q '^scenario  *speeds  *steps  *omb/orc  *(pred)  *omb/stat  *OL/orc  *TTA o/s  *acc pts (last)  *recover  *overrun$' \
    "$tmp/out" || fail "no table header"
for s in headline ramp; do
    grep -q "^$s " "$tmp/out" || fail "no table row for $s"
done
# Policies that did not run are NA, and the table says why.
awk '$1 == "ramp" && $6 == "NA" && $7 == "NA" { ok = 1 } END { exit !ok }' "$tmp/out" ||
    fail "ramp: static and omnilearn columns are not NA"
grep -q "^NA in omb/stat, acc pts, static: static does not run in ramp " "$tmp/out" || fail "no reason for the NA columns"
# The static scenarios have no recovery; the ramp's changes are counted.
awk '$1 == "headline" && $(NF - 1) == "-" { ok = 1 } END { exit !ok }' "$tmp/out" || fail "headline shows a recovery"
grep -q '^ramp .* ([0-9]*/[1-9][0-9]*) ' "$tmp/out" || fail "ramp: no count of speed changes"
# --emulate cost (the default): one calibration per scenario, its cost given to every run.
for s in headline ramp; do
    grep -q "^bench: $s: cost [0-9.e+-]*,[0-9.e+-]*,[0-9.e+-]* (seconds per step, per sample, per chunk after a step's first)$" "$tmp/out" ||
        fail "$s: no calibrated cost line"
done
[ "$(grep -c ' emulate=cost$' "$tmp/out.d/summary.txt")" -eq "$(wc -l <"$tmp/out.d/summary.txt")" ] ||
    fail "a run did not emulate from the calibrated cost"

# The balance table: one row per scenario, every measured balance >= 1 (max t_i over a weighted
# mean of the t_i), the recoveries of omnibatch, the oracle and the model.
grep -q '^scenario  *static  *omnibatch  *oracle  *omnilearn  *omnibatch  *oracle  *omnibatch model$' "$tmp/out" ||
    fail "no balance table header"
awk '$1 == "headline" && NF == 11 && $6 ~ /^(never|[0-9]+)$/ && $7 == "(start)" { ok = 1 } END { exit !ok }' \
    "$tmp/out" || fail "balance table: no headline row with the recovery from the start"
awk '$1 == "ramp" && NF == 11 && $2 == "NA" && $5 == "NA" && $7 ~ /^[(][0-9]+[/][1-9][0-9]*[)]$/ { ok = 1 } END { exit !ok }' \
    "$tmp/out" || fail "balance table: no ramp row with static and omnilearn NA and counted changes"
awk '($1 == "headline" || $1 == "ramp") && NF == 11 { for (i = 2; i <= 5; i++) if ($i != "NA" && !($i >= 1)) bad = 1 }
     END { exit bad }' "$tmp/out" || fail "balance table: a measured balance below 1"

# The chunks policy: its table (a row per scenario), the side-by-side figures of the ramp's
# changes, its targets; the ramp's changes land half-way into their steps, for every policy.
grep -q '^chunks  *chk/orc  *chk/omb  *chk/stat  *omb/orc  *first step  *recover  *moved  *chunks  *calls$' "$tmp/out" ||
    fail "no chunks table"
awk '$1 == "headline" && NF == 12 && $6 == "-" && $8 == "-" { ok = 1 } END { exit !ok }' "$tmp/out" ||
    fail "chunks table: no headline row (no change, no recovery)"
awk '$1 == "ramp" && NF == 14 && $4 == "NA" && $9 ~ /^[(][0-9]+[/]6[)]$/ { ok = 1 } END { exit !ok }' "$tmp/out" ||
    fail "chunks table: no ramp row with the recovery of its 6 changes"
grep -q '^scenario=ramp rep=1 vs=chunks vsorc_recover_initial=.* vsorc_step_recover_changes=6 .* vsorc_first_steps=[0-9.;]* vsorc_first_step_worst=[0-9.]*$' \
    "$tmp/out.d/recovery.txt" || fail "recovery.txt: no side-by-side figures of chunks in the ramp"
grep -q '^scenario=ramp rep=1 vsorc_recover_initial=.* vsorc_step_recover_changes=6 ' "$tmp/out.d/recovery.txt" ||
    fail "recovery.txt: no step times side by side for omnibatch in the ramp"
[ "$(grep -c '^scenario=ramp .* schedule=ramp .* change_at=0.5 ' "$tmp/out.d/summary.txt")" -eq 3 ] ||
    fail "the ramp's policies did not all change speeds inside the step"
for t in "chunks: vanish mean step <= 1.05x the clairvoyant oracle: not measured" \
         "chunks: jitter mean step <= 1.05x the per-step oracle: not measured"; do
    grep -qF "  $t" "$tmp/out" || fail "no line '$t'"
done
for t in 'chunks: ramp and transient, every speed change within 5% of the oracle in <= 1 step (step times side by side)' \
         'chunks: static scenarios <= 1.01x oracle' \
         "chunks: stealing's cost with no noise, chunks / omnibatch <= 1.01 (static scenarios)"; do
    grep -F "  $t: " "$tmp/out" | grep -q ': \(met\|MISSED\): ' || fail "no verdict for target '$t'"
done

grep -q '^targets:$' "$tmp/out" || fail "no targets"
# The quota scenario (cgroup CPU quotas), or the line saying why not.
if [ -z "$no_quota" ]; then
    grep -Eq '^(quota: omnibatch steady step [0-9.]+ ms; omnibatch/static|hetsgd/run.sh: no writable cgroup)' "$tmp/out" ||
        fail "no quota scenario line"
fi
for t in 'steady step <= 1.05x oracle (static scenarios)' \
         'recovery within 5% of oracle in <= 5 steps' \
         'time to 50% accuracy >= 1.8x faster than static (1,1,0.5,0.25)' \
         'final accuracy within 0.3 points of static' \
         'overhead <= 1% at 8 B'; do
    grep -F "  $t: " "$tmp/out" | grep -q ': \(met\|MISSED\): ' || fail "no verdict for target '$t'"
done
# The verdicts say what they are judged on.
grep -F '  steady step <= 1.05x oracle (static scenarios): ' "$tmp/out" |
    grep -q 'measured omnibatch / oracle (median of 1 run(s)): headline [0-9.]*; the model (pred, not judged): ' ||
    fail "steady step: not judged on the measured ratio"
grep -F '  recovery within 5% of oracle in <= 5 steps: ' "$tmp/out" |
    grep -qF '(balance over that of the oracle at the same steps <= 1.05 for 3 steps); on the balance alone (<= 1.05): omnibatch ' ||
    fail "recovery: not judged side by side with the oracle"
# The side-by-side recovery of every dynamic scenario that ran both policies: the ramp's 6 changes.
grep -q '^scenario=ramp rep=1 vsorc_recover_initial=-\{0,1\}[0-9]* vsorc_recover_changes=6 vsorc_recover_worst=-\{0,1\}[0-9]* ' \
    "$tmp/out.d/recovery.txt" || fail "recovery.txt: no side-by-side recovery of the ramp"
grep -F '  final accuracy within 0.3 points of static: ' "$tmp/out" |
    grep -q 'points, mean of the [1-9][0-9]* evaluations from step [0-9]* on (static [0-9.]*%); the last evaluation alone ' ||
    fail "final accuracy: not judged on the mean of the last evaluations"
grep -q '^overhead: preload / plain MPI_Allreduce float at 8 B ' "$tmp/out" || fail "no overhead line"
grep -q '^simulate: not run (--no-simulate)$' "$tmp/out" || fail "no simulate line"
grep -q '^plot: ' "$tmp/out" || fail "no plot line"
# With gnuplot, both headline PNGs: the omnibatch run, and the policies side by side.
if [ -n "${GNUPLOT:-}" ] || command -v gnuplot >/dev/null 2>&1; then
    for png in headline-omnibatch.png headline-compare.png; do
        grep -q "^plot: $tmp/out.d/$png " "$tmp/out" || fail "no plot line for $png"
        [ -s "$tmp/out.d/$png" ] || fail "$png not drawn"
    done
else
    echo "bench_runner_smoke: no gnuplot: the plots are not checked"
fi
grep -q "^traces (CSV per run), logs and summaries: $tmp/out.d/runs$" "$tmp/out" || fail "no traces line"
# Every run left its trace and one summary line: headline 5 policies, ramp 3.
[ "$(wc -l <"$tmp/out.d/summary.txt")" -eq 8 ] || fail "expected 8 summary lines"
[ -s "$tmp/out.d/runs/ramp.chunks.r1.csv" ] || fail "no ramp chunks trace"
[ -s "$tmp/out.d/runs/headline.omnibatch.r1.csv" ] || fail "no headline omnibatch trace"

# --cost and --batch: that cost for every run (no calibration), that global batch.
sh "$runner" --builddir "$builddir" --quick --data "$tmp/data" --out "$tmp/given.d" --scenarios ramp \
    --policies oracle,chunks --batch 96 --cost 0,2e-05,3e-05 --no-overhead --no-simulate --no-quota \
    >"$tmp/out" 2>&1 || fail "the runner with --cost and --batch exited non-zero"
grep -q "^bench: ramp: cost 0,2e-05,3e-05 (given: seconds per step, per sample, per chunk after a step's first)$" \
    "$tmp/out" || fail "--cost: no line of the cost given"
grep -q '^bench: 4 ranks .*from the cost given), quick mode, global batch 96, ' "$tmp/out" ||
    fail "--batch: not in the header"
[ ! -e "$tmp/given.d/runs/ramp.calibrate.log" ] || fail "--cost: a calibration ran"
[ "$(grep -c ' batch=96 .* chunk_cost_s=3e-05 .* emulate=cost$' "$tmp/given.d/summary.txt")" -eq 2 ] ||
    fail "--cost, --batch: the runs did not get them"

# A failed run names its command and shows its output; the exit is non-zero.
rm "$tmp/data/t10k-labels-idx1-ubyte.gz"
printf 'not an IDX file' | gzip >"$tmp/data/t10k-labels-idx1-ubyte.gz"
# The calibration is the first run (--emulate cost), the first policy's with --emulate cpu.
for emulate in cost cpu; do
    if sh "$runner" --builddir "$builddir" --quick --data "$tmp/data" --out "$tmp/out.d" \
        --scenarios hl2 --no-overhead --no-simulate --emulate "$emulate" >"$tmp/out" 2>&1; then
        fail "a broken data set was accepted"
    fi
    what="hl2 calibration"
    [ cpu = "$emulate" ] && what="hl2/static run 1"
    grep -q "^bench/run.sh: $what failed (exit [1-9][0-9]*): .*/hetsgd --data " "$tmp/out" ||
        fail "--emulate $emulate: the failed command is not named"
    grep -q '^  | hetsgd: .*t10k-labels' "$tmp/out" || fail "the failed run's output is not shown"
done

# Nonsense options: one line, exit 2, nothing run.
for bad in "--repeat 0" "--scenarios hl3" "--quick --full" "--slowdown 0.5" "--emulate both" "--change-at 1" \
    "--policies fastest" "--quick --scenarios jitter --policies omnilearn" "--batch 8" "--batch 9000" "--cost 1,2" \
    "--cost 0,1e-5,2e-5 --emulate cpu" "--frobnicate"; do
    rc=0
    # shellcheck disable=SC2086
    sh "$runner" --builddir "$builddir" --out "$tmp/bad.d" $bad >"$tmp/out" 2>&1 || rc=$?
    [ 2 -eq "$rc" ] || fail "'$bad': exit $rc, expected 2"
    [ 1 -eq "$(wc -l <"$tmp/out")" ] && grep -q '^bench/run.sh: ' "$tmp/out" || fail "'$bad': not one line"
    # Nothing unpacked either (a data set left in the build tree fails distcheck).
    [ ! -e "$tmp/bad.d/data" ] || fail "'$bad': the data were unpacked before the option was refused"
done
echo "bench_runner_smoke: ok"
