#!/bin/sh
# bench/hetsgd/async.sh (make bench-async) end to end in --quick mode on a
# small generated data set, one synchronous and one asynchronous policy at
# HL8: it must exit 0, print a row per policy, the asynchronous run's
# staleness line and the targets, with 4 workers and with 8 (--workers 8;
# a bad count gets one line); the figures are never checked (a few steps
# on tiny batches mean nothing; the table's arithmetic is
# check_async_table.sh's).  Then --timeout 1: the calibration is stopped and
# the runner exits 1 with a line saying so.
set -eu
srcdir=${top_srcdir:-.}
builddir=${top_builddir:-.}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/async-smoke.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
fail() {
    echo "FAIL: async_smoke: $*" >&2
    [ -f "$tmp/out" ] && cat "$tmp/out" >&2
    exit 1
}
"$builddir/tests/bench/hetsgd_mkdata" "$tmp/data" 512 128 || fail "generating the data set"
sh "$srcdir/bench/hetsgd/async.sh" --builddir "$builddir" --quick --data "$tmp/data" --out "$tmp/out.d" \
    --levels hl8 --policies sync-static,async-omnibatch >"$tmp/out" 2>&1 || fail "the runner exited non-zero"
grep -q '^== hl8 (6,6,4,32): T_eq ' "$tmp/out" || fail "no hl8 table"
grep -q '^  sync-static  ' "$tmp/out" || fail "no sync-static row"
grep -q '^  async-omnibatch  ' "$tmp/out" || fail "no async-omnibatch row"
grep -q '^  async-omnibatch  *staleness mean [0-9.,]* p99 [0-9,]*: largest/least ' "$tmp/out" ||
    fail "no staleness line"
grep -q "^target: hl8: async-omnibatch's per-worker mean staleness within 1.5x: .*pushes lost: 0$" "$tmp/out" ||
    fail "no staleness target, or a push lost"
[ "$(wc -l <"$tmp/out.d/runs/summary.txt")" -eq 2 ] || fail "not two runs in the summary"
# --workers 8: 8 synchronous ranks, a server and 8 workers, each level's speeds twice.
sh "$srcdir/bench/hetsgd/async.sh" --builddir "$builddir" --quick --data "$tmp/data" --out "$tmp/out.w" \
    --levels hl8 --policies sync-static,async-omnibatch --workers 8 >"$tmp/out" 2>&1 || fail "--workers 8: the runner exited non-zero"
grep -q '^== hl8 (6,6,4,32,6,6,4,32): T_eq ' "$tmp/out" || fail "--workers 8: no hl8 table with 8 speeds"
grep -q 'policy=static ranks=8 speeds=' "$tmp/out.w/runs/summary.txt" || fail "--workers 8: sync-static not on 8 ranks"
grep -q 'policy=omnibatch ranks=9 workers=8 ' "$tmp/out.w/runs/summary.txt" || fail "--workers 8: async not a server and 8 workers"
# rejected LINE ARGS...: async.sh ARGS exits 2 with LINE (a grep pattern) and runs nothing.
rejected() {
    line=$1
    shift
    rc=0
    sh "$srcdir/bench/hetsgd/async.sh" --builddir "$builddir" "$@" >"$tmp/out" 2>&1 || rc=$?
    [ "$rc" -eq 2 ] || fail "$*: exit status $rc, expected 2"
    grep -q "^bench/hetsgd/async.sh: $line" "$tmp/out" || fail "$*: no line '$line'"
}
rejected "--workers '6': expected 4 or 8$" --workers 6
rejected "--levels quota with --workers 8: the quota level has 4 workers" --workers 8 --levels hl4,quota
# --timeout reaches every mpirun (tests/mpirun.sh's own 120 s stopped benchmark runs on a
# loaded machine): one second stops the calibration, and the runner says so.  The
# launcher starts 5 s late, so that no machine is fast enough to finish within the second
# (a quiet one calibrated and trained --quick in under a second).
cat > "$tmp/late-mpirun" <<LATE
#!/bin/sh
sleep 5
exec "${MPIRUN:-mpirun}" "\$@"
LATE
chmod +x "$tmp/late-mpirun"
rc=0
MPIRUN=$tmp/late-mpirun sh "$srcdir/bench/hetsgd/async.sh" --builddir "$builddir" --quick --data "$tmp/data" \
    --out "$tmp/out.t" --levels hl8 --policies async-static --timeout 1 >"$tmp/out" 2>&1 || rc=$?
[ "$rc" -eq 1 ] || fail "--timeout 1: exit status $rc, expected 1"
grep -q '^async: the calibration FAILED, stopped after --timeout 1 s:' "$tmp/out" ||
    fail "--timeout 1: no line saying the calibration was stopped"
echo "async_smoke: bench/hetsgd/async.sh --quick ran and printed its table; --timeout stops a run"
