#!/bin/sh
# bench/hetsgd/run.sh --quota in --smoke mode: four ranks, each in a cgroup
# with its CPU quota (a 20 ms period), static, omnibatch and chunks, on a generated
# data set, two pairs (--repeat 2).  Checks the lines it prints (each
# pair's, and the median and spread of the pairs' ratios, against the pairs'
# printed ratios) and that its cgroups are gone afterwards, that --mca
# replaces the script's own value of a parameter, and that a period the
# kernel would refuse, a --repeat of 0, or a launcher other than Open MPI's,
# is named before anything runs.  No timing is asserted.  Skipped (77)
# without a writable cgroup cpu controller.
set -eu
# The script passes Open MPI's mpirun flags (and its TCP and rsh setup).
if [ openmpi != "${OB_MPI_FAMILY:-openmpi}" ]; then
    echo "quota_smoke: the script runs Open MPI; this is a ${OB_MPI_FAMILY} build: skipped"
    exit 77
fi
srcdir=${top_srcdir:-.}
builddir=${top_builddir:-.}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/quota-smoke.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM

fail() {
    echo "FAIL: $*" >&2
    [ -f "$tmp/out" ] && cat "$tmp/out" >&2
    exit 1
}

rc=0
sh "$srcdir/bench/hetsgd/run.sh" --builddir "$builddir" --quota 0.4,0.1 --period 5000 >"$tmp/out" 2>&1 || rc=$?
[ 2 -eq "$rc" ] || fail "a 0.1 quota of a 5 ms period (500 us): exit $rc, expected 2"
grep -q "^hetsgd/run.sh: --period 5000: quota 0.1 of it is under 1000 us" "$tmp/out" || fail "no line naming --period"
"$builddir/tests/bench/hetsgd_mkdata" "$tmp/data" 512 128 || fail "generating the data set"
rc=0
MPIRUN=true sh "$srcdir/bench/hetsgd/run.sh" --builddir "$builddir" --quota 0.5,0.5 >"$tmp/out" 2>&1 || rc=$?
[ 2 -eq "$rc" ] || fail "MPIRUN=true: exit $rc, expected 2"
grep -q "^hetsgd/run.sh: MPIRUN='true': not Open MPI's mpirun" "$tmp/out" || fail "no line naming MPIRUN"
rc=0
sh "$srcdir/bench/hetsgd/run.sh" --builddir "$builddir" --quota 0.5,0.5 --repeat 0 >"$tmp/out" 2>&1 || rc=$?
[ 2 -eq "$rc" ] || fail "--repeat 0: exit $rc, expected 2"
grep -q "^hetsgd/run.sh: --repeat '0': expected an integer from 1 to 99" "$tmp/out" || fail "no line naming --repeat"
# Two pairs: each pair's lines, then the median and spread of their ratios;
# OB_MPIRUN_ENV reaches every rank (OMNIBATCH_DEBUG=1 logs the chunked step's setup).
rc=0
OB_MPIRUN_ENV="OMNIBATCH_DEBUG=1" sh "$srcdir/bench/hetsgd/run.sh" --builddir "$builddir" --quota 0.5,0.5,0.25,0.2 \
    --smoke --period 20000 --mca btl=vader,self --repeat 2 --data "$tmp/data" --out "$tmp/runs" >"$tmp/out" 2>&1 || rc=$?
[ 77 -eq "$rc" ] && { cat "$tmp/out"; exit 77; }
[ 0 -eq "$rc" ] || fail "bench/hetsgd/run.sh --quota --smoke exited $rc"
grep -q "^quota: 4 ranks, CPU quota 0.5,0.5,0.25,0.2 of a core .*global batch 64, OMNIBATCH_WAIT=sleep" "$tmp/out" \
    || fail "no setup line"
grep -q "^quota: 4 ranks, .*, period 20000 us)" "$tmp/out" || fail "the setup line does not say the period"
grep -q ", Open MPI: --mca btl_vader_single_copy_mechanism none --mca btl vader,self, evaluated after the last step only$" "$tmp/out" \
    || fail "the setup line does not show --mca btl=vader,self in place of the script's btl"
grep -Eq "^quota: static steady step [0-9.]+ ms; its report: [a-z-]+, predicted now" "$tmp/out" || fail "no static line"
grep -Eq "^quota: CPU per sample \(the least of the runs'\) [0-9.e+-]+(,[0-9.e+-]+){3} ms, CPU per step outside the compute \(least\) [0-9.]+(,[0-9.]+){3} ms, reduction \(least\) [0-9.]+ ms$" \
    "$tmp/out" || fail "no line of the limit's figures"
grep -Eq "^quota: the static report's predicted step [0-9.]+ ms \(.*not a bound\); limit \(the quotas' CPU\) [0-9.]+ ms$" \
    "$tmp/out" || fail "no limits line"
grep -Eq "^quota: omnibatch steady step [0-9.]+ ms; omnibatch/static [0-9.]+; limit [0-9.]+ ms, limit/static [0-9.]+; omnibatch/limit [0-9.]+ \(target <= 1.10: (met|MISSED)\)$" \
    "$tmp/out" || fail "no omnibatch line"
grep -Eq "^quota: chunks steady step [0-9.]+ ms; chunks/static [0-9.]+; chunks/omnibatch [0-9.]+; chunks/limit [0-9.]+ \(target <= 1.10: (met|MISSED)\); [0-9.]+% of the samples moved$" \
    "$tmp/out" || fail "no chunks line"
grep -Eq "^quota: omnibatch asked the quotas for [0-9.]+ ms a step \(rank [0-3]: mean step CPU / quota\); its steady step is [0-9.]+x that" \
    "$tmp/out" || fail "no line of what omnibatch asked of the quotas"
[ 4 -eq "$(grep -c 'steps in chunks' "$tmp/runs/pair1/quota-chunks.out")" ] ||
    fail "OB_MPIRUN_ENV=OMNIBATCH_DEBUG=1 did not reach the 4 ranks of the chunks run"
for k in 1 2; do
    grep -q "^quota: pair $k of 2 (outputs in $tmp/runs/pair$k):$" "$tmp/out" || fail "no line opening pair $k"
    [ -s "$tmp/runs/pair$k/quota-omnibatch.csv" ] && [ -s "$tmp/runs/pair$k/quota-static.csv" ] \
        || fail "pair $k: no traces in $tmp/runs/pair$k"
done
[ 2 -eq "$(grep -c "^quota: omnibatch steady step" "$tmp/out")" ] || fail "not one omnibatch line per pair"
[ 2 -eq "$(grep -c "^quota: chunks steady step" "$tmp/out")" ] || fail "not one chunks line per pair"
grep -Eq "^quota: over 2 pairs: chunks/static median [0-9.]+ \(2 pairs, [0-9.]+-[0-9.]+\); chunks/limit median [0-9.]+ \(2 pairs, [0-9.]+-[0-9.]+; target <= 1.10 on the median: (met|MISSED)\)$" \
    "$tmp/out" || fail "no line of the chunks' medians over the pairs"
# The summary's medians are those of the pairs' printed ratios (two: their mean).
sed -n 's/^quota: omnibatch steady step .*; omnibatch\/static \([0-9.]*\); .*; omnibatch\/limit \([0-9.]*\) (.*/\1 \2/p' \
    "$tmp/out" > "$tmp/pairs"
line=$(grep "^quota: over 2 pairs: omnibatch/" "$tmp/out") || fail "no line of the pairs' medians"
echo "$line" | grep -Eq "^quota: over 2 pairs: omnibatch/static median [0-9.]+ \(2 pairs, [0-9.]+-[0-9.]+\); omnibatch/limit median [0-9.]+ \(2 pairs, [0-9.]+-[0-9.]+; target <= 1.10 on the median: (met|MISSED)\)$" \
    || fail "the pairs' line: $line"
awk -v line="$line" '{ s[NR] = $1; l[NR] = $2 }
    END {
        split(line, w, " ")
        ms = w[7]; ml = w[13]
        lo = l[1] < l[2] ? l[1] : l[2]; hi = l[1] < l[2] ? l[2] : l[1]
        span = sprintf("%.3f-%.3f;", lo, hi)
        if (NR != 2 || (ms - (s[1] + s[2]) / 2) ^ 2 > 4e-6 || (ml - (l[1] + l[2]) / 2) ^ 2 > 4e-6 || w[16] != span) {
            printf "pairs %s/%s %s/%s, printed medians %s %s, spread %s\n", s[1], l[1], s[2], l[2], ms, ml, w[16]
            exit 1
        }
    }' "$tmp/pairs" || fail "the medians are not those of the pairs"
# Outside --smoke --steps is the run's length, however few samples an epoch
# has (here 2 steps; hetsgd's 8 epochs would end it at 16), and the Open MPI
# parameters are the script's own choice of the single-copy transfer.
"$builddir/tests/bench/hetsgd_mkdata" "$tmp/data8k" 8192 128 || fail "generating the data set of 8192"
rc=0
sh "$srcdir/bench/hetsgd/run.sh" --builddir "$builddir" --quota 0.5,0.5,0.25,0.2 --period 20000 \
    --policies omnibatch --steps 20 --batch 4096 --data "$tmp/data8k" --out "$tmp/long" >"$tmp/out" 2>&1 || rc=$?
[ 0 -eq "$rc" ] || fail "bench/hetsgd/run.sh --quota --steps 20 exited $rc"
last=$(tail -1 "$tmp/long/quota-omnibatch.csv" | cut -d, -f1)
[ 19 = "$last" ] || fail "--steps 20: the trace's last step is $last, expected 19"
# Without a static run: the steady step, and why there is no limit.
grep -Eq "^quota: omnibatch steady step [0-9.]+ ms; no static run, so no limit and no ratios" "$tmp/out" ||
    fail "--policies omnibatch: no line of its steady step"
grep -Eq "^quota: 4 ranks, .*global batch 4096, OMNIBATCH_WAIT=sleep, Open MPI: --mca btl self,vader --mca btl_vader_single_copy_mechanism (cma|none), evaluated after the last step only$" \
    "$tmp/out" || fail "the setup line of a run without --mca"
if grep -q "btl_vader_single_copy_mechanism none" "$tmp/out"; then
    grep -q "^quota: the single-copy transfer (CMA) fails here" "$tmp/out" || fail "no line saying why not CMA"
fi
ls -d /sys/fs/cgroup/cpu/omnibatch-quota.* /sys/fs/cgroup/omnibatch-quota.* 2>/dev/null && fail "cgroups left behind"
cat "$tmp/out"
