#!/bin/sh
# bench/simulate end to end at tiny sizes: it must finish, print one row per
# scenario and rank count, and write a summary with the same runs; and its
# false-change count, each side's changes at the levels asked for.  The
# figures themselves are never checked here (the Check suites test the
# arithmetic; the controller's own suites test the controller).
set -eu
builddir=${top_builddir:-.}
work=$(mktemp -d "${TMPDIR:-/tmp}/ob-simulate-smoke.XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM
fail() { echo "simulate_smoke: $*"; exit 1; }

"$builddir/bench/simulate/simulate" --ranks 4,16 --steps 40 --big-steps 40 --epoch 10 \
    --summary "$work/summary.json" >"$work/out" 2>&1 || { cat "$work/out"; fail "simulate failed"; }
cat "$work/out"

grep -q '^scenario  *P  *plan  *steps  *cmp-mean  *cmp-max  *coll  *cmax  *KB  *lat-mean  *settle  *conv  *chg  *steady  *floor  *nf-stdy  *nf-set  *static  *recover' "$work/out" \
    || fail "no table header"
# Both planners side by side: today's allgather (one collective) and the distributed decision.
for sc in uniform bimodal hl2 hl4 hl8 slow10 vanish; do
    for p in 4 16; do
        for pl in cen dist; do
            awk -v sc="$sc" -v p="$p" -v pl="$pl" '
                $1 == sc && $2 == p && $3 == pl && $4 == 40 && $7 + 0 >= 1 && $8 >= $7 && $14 + 0 >= 1 \
                    && $15 + 0 >= 1 && $16 + 0 >= 1 && $17 + 0 >= 1 && $18 + 0 >= 1 { found = 1 }
                END { exit !found }' "$work/out" || fail "no $pl row for $sc at P=$p (or a ratio below 1)"
        done
    done
done
awk '$3 == "cen" && ($7 != "1.0" || $8 != 1) { bad = 1 } END { exit bad }' "$work/out" || fail "the allgather design shows more than one collective"
# static scenarios have no recovery figure; change scenarios have one
awk '$1 == "hl4" && $2 == 4 && $19 == "-" { ok = 1 } END { exit !ok }' "$work/out" || fail "hl4 shows a recovery"
awk '$1 == "slow10" && $2 == 4 && $19 != "-" { ok = 1 } END { exit !ok }' "$work/out" || fail "slow10 lacks a recovery"

s=$work/summary.json
grep -q '"benchmark": "simulate"' "$s" || fail "summary lacks the benchmark name"
n=$(grep -c '"scenario": ' "$s" || true)
[ "$n" -eq 28 ] || fail "summary has $n runs, expected 28"
n=$(grep -c '"planner": "distributed"' "$s" || true)
[ "$n" -eq 14 ] || fail "summary has $n distributed runs, expected 14"

# a bad option is one clear line and a non-zero exit
if "$builddir/bench/simulate/simulate" --noise 2 >"$work/bad" 2>&1; then
    fail "--noise 2 was accepted"
fi
grep -q "^simulate: --noise='2': expected" "$work/bad" || fail "no clear line for a bad --noise"
# --false-changes counts each side's changes; --levels moves the detector's levels.  A level of 3
# on one side confirms noise there as changes (a non-zero exit: false changes were found), 100 on
# the other none.
for side in slow fast; do
    if [ slow = "$side" ]; then lv=3,100; else lv=100,3; fi
    rc=0
    "$builddir/bench/simulate/simulate" --false-changes 2000 --ranks 64 --levels "$lv" >"$work/fc" 2>&1 || rc=$?
    cat "$work/fc"
    [ 1 -eq "$rc" ] || fail "--false-changes at levels $lv: exit $rc, expected 1 (changes found)"
    awk -v side="$side" '/^false changes: P=64: [0-9]+ in 2000 steps/ {
            n = $4; split($0, a, "; "); split(a[2], b, " ")
            slow = b[1]; fast = b[3]
            if (n > 0 && n == slow + fast && ((side == "slow" && fast == 0) || (side == "fast" && slow == 0))) ok = 1 }
        END { exit !ok }' "$work/fc" || fail "levels $lv: not every change on the $side side"
done
# The library's levels at 65,536 ranks, one step.
"$builddir/bench/simulate/simulate" --false-changes 1 --ranks 65536 >"$work/fc" 2>&1 || fail "--false-changes 1 failed"
grep -q "^false changes: P=65536: 0 in 1 steps .*(levels 14 slow, 21 fast)" "$work/fc" || { cat "$work/fc"; fail "not the library's levels at 65,536 ranks"; }
for bad in "--levels 3" "--levels 3," "--levels ,3" "--levels 3,4x" "--spikes 0.1" "--spikes 0.1,0.5"; do
    # shellcheck disable=SC2086
    if "$builddir/bench/simulate/simulate" --false-changes 10 $bad >"$work/bad" 2>&1; then
        fail "$bad was accepted"
    fi
    opt=${bad%% *}
    grep -q "^simulate: $opt='${bad#* }': expected " "$work/bad" || { cat "$work/bad"; fail "no clear line for $bad"; }
done
# --steal on: each step also worked in chunks with stealing, beside the plan alone, against the
# per-step oracle.  A step where a sample was not done exactly once fails the run; the summary
# counts the samples found done once, which must be every sample of every step.  The per-step
# oracle is a lower bound: no step with stealing is below it.
"$builddir/bench/simulate/simulate" --ranks 64 --steps 40 --epoch 10 --planner central --node-size 8 \
    --scenarios uniform,hl4,slow10 --steal on --summary "$work/steal.json" >"$work/steal" 2>&1 \
    || { cat "$work/steal"; fail "simulate --steal on failed"; }
cat "$work/steal"
grep -q '^scenario .* wall-s  *steal  *plain  *static  *ev-stl  *ev-pln  *moved  *chunks  *pfloor$' "$work/steal" \
    || fail "no stealing columns in the header"
for sc in uniform hl4 slow10; do
    awk -v sc="$sc" '$1 == sc && $2 == 64 && NF == 31 && $24 + 0 >= 1 && $24 + 0 <= $25 + 0 && $26 + 0 >= 1 \
            && $29 + 0 > 0 && $30 + 0 >= 1 && $31 + 0 >= 1 { found = 1 }
        END { exit !found }' "$work/steal" || fail "no stealing row for $sc (or steal below the oracle or above the plan)"
done
awk '$1 == "uniform" && $27 == "-" { u = 1 } $1 == "slow10" && $27 + 0 >= 1 { s = 1 } END { exit !(u && s) }' \
    "$work/steal" || fail "the event's step with stealing: not shown for slow10 alone"
n=$(grep -c '"steal_samples_once": 163840,' "$work/steal.json" || true)
[ "$n" -eq 3 ] || fail "$n runs with every sample of 40 steps of B=4096 done once, expected 3"
grep -q '"steal": {"node_size": 8, ' "$work/steal.json" || fail "summary lacks the stealing settings"
# --steal off is the table without stealing, the same figures (the measured times aside).
"$builddir/bench/simulate/simulate" --ranks 16 --steps 40 --epoch 10 --scenarios hl4,vanish >"$work/none" 2>&1 \
    || fail "simulate failed"
"$builddir/bench/simulate/simulate" --ranks 16 --steps 40 --epoch 10 --scenarios hl4,vanish --steal off \
    >"$work/off" 2>&1 || fail "simulate --steal off failed"
figures() { awk '$2 == 16 { $5 = $6 = $10 = $23 = "t"; print }' "$1"; }
[ -n "$(figures "$work/off")" ] || fail "no rows with --steal off"
[ "$(figures "$work/off")" = "$(figures "$work/none")" ] || fail "--steal off changed the table"
if "$builddir/bench/simulate/simulate" --steal maybe >"$work/bad" 2>&1; then
    fail "--steal maybe was accepted"
fi
grep -q "^simulate: --steal='maybe': expected on or off" "$work/bad" || { cat "$work/bad"; fail "no clear line for a bad --steal"; }
echo "simulate_smoke: ok"
