#!/bin/sh
# The standard comparison: omnibatch against static, oracle and OmniLearn on
# 4 emulated heterogeneous ranks, in one table, checked against the targets.
#
#   bench/run.sh [options]          (or: make bench BENCH_FLAGS='options')
#
# Scenarios (bench/hetsgd/hetsgd under mpirun, 4 ranks):
#   headline   speeds 1,1,0.5,0.25: training to the target accuracy (85%)
#   hl2 hl4 hl8  OmniLearn's levels, relative speeds 12,12,8,16 / 9,9,6,24 /
#              6,6,4,32: a fixed number of steps on a subset of the data
#   ramp transient vanish  dynamic speeds (hetsgd --schedule): omnibatch, the
#              oracle and omnilearn (static too with --full)
# The policies of a scenario run one after the other, in an order rotated at
# each repetition, so that machine noise drifting over time hits all alike;
# with --repeat N each ratio is the median of the N paired ratios.  Then one
# line from bench/overhead/run.sh (preload / plain at 8 B, instructions per
# intercepted call) and one from bench/simulate (steady / oracle at the
# largest P).  The run ends with the table, the measured balance of every
# policy (max_i t_i / T*, T* = B / sum_i b_i/t_i, from each step's batches and
# compute times: no cost model), the targets (met / missed), the plot of the
# headline omnibatch run and where the traces are.  The targets are judged on
# measurements: the steady step time omnibatch / oracle, the recovery after a
# change of omnibatch's measured balance side by side with the oracle's at the
# same steps (recovery.txt), and the final accuracy averaged over the last
# evaluations; the oracle's calibrated model is shown, not judged.
#
# Options:
#   --builddir DIR   the build (default: $top_builddir or .)
#   --out DIR        output directory (default: BUILDDIR/bench/out); the run
#                    replaces DIR/runs and the files it writes at the top
#   --data DIR       Fashion-MNIST IDX files (default /usr/share/datasets/fashion-mnist);
#                    gzip'd files are unpacked once into OUT/data
#   --quick          a smoke run: few steps, tiny batches, figures meaningless
#   --full           longer runs, every policy in every scenario, 3 repetitions
#   --repeat N       repetitions of each scenario (default 1; --full 3)
#   --scenarios LIST of headline,hl2,hl4,hl8,ramp,transient,vanish (default all)
#   --slowdown X     the emulation's slowdown, the same for every run
#                    (default 12 / online processors, at least 1: 6 on 2 cores)
#   --no-overhead    skip bench/overhead/run.sh
#   --no-simulate    skip bench/simulate
#   --help           this text
# Environment: MPIRUN (the launcher tests/mpirun.sh uses), GNUPLOT, VALGRIND.
# Exit status: 0 when every run succeeded (missed targets included), 1 when a
# run failed (its command and the end of its output are printed), 2 for a
# bad option.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
srcdir=$(cd "$here/.." && pwd)
builddir=${top_builddir:-.}
out=
data=/usr/share/datasets/fashion-mnist
mode=default
repeat=
scenarios=
slowdown=
overhead=yes
simulate=yes
all_scenarios="headline hl2 hl4 hl8 ramp transient vanish"
NP=4

die() { echo "bench/run.sh: $*" >&2; exit 2; }
need_value() { [ "$#" -ge 2 ] || die "$1: missing value"; }
is_uint() { case $1 in ''|*[!0-9]*) return 1 ;; *) return 0 ;; esac; }

while [ "$#" -gt 0 ]; do
    case $1 in
    --builddir) need_value "$@"; builddir=$2; shift 2 ;;
    --out) need_value "$@"; out=$2; shift 2 ;;
    --data) need_value "$@"; data=$2; shift 2 ;;
    --quick|--full)
        [ default = "$mode" ] || [ "--$mode" = "$1" ] || die "--quick and --full exclude each other"
        mode=${1#--}; shift ;;
    --repeat) need_value "$@"; repeat=$2; shift 2 ;;
    --scenarios) need_value "$@"; scenarios=$2; shift 2 ;;
    --slowdown) need_value "$@"; slowdown=$2; shift 2 ;;
    --no-overhead) overhead=no; shift ;;
    --no-simulate) simulate=no; shift ;;
    -h|--help) sed -n '2,/^set -eu/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown option '$1' (see --help)" ;;
    esac
done

if [ -n "$repeat" ]; then
    is_uint "$repeat" && [ "$repeat" -ge 1 ] && [ "$repeat" -le 99 ] ||
        die "--repeat '$repeat': expected an integer from 1 to 99"
elif [ full = "$mode" ]; then
    repeat=3
else
    repeat=1
fi
if [ -n "$scenarios" ]; then
    list=$(echo "$scenarios" | tr ',' ' ')
    [ -n "$(echo "$list" | tr -d ' ')" ] || die "--scenarios '$scenarios': expected a comma-separated list"
    seen=" "
    for s in $list; do
        case " $all_scenarios " in
        *" $s "*) ;;
        *) die "--scenarios: unknown scenario '$s' (expected some of $(echo $all_scenarios | tr ' ' ','))" ;;
        esac
        case $seen in *" $s "*) die "--scenarios: '$s' is listed twice" ;; esac
        seen="$seen$s "
    done
    scenarios=$list
else
    scenarios=$all_scenarios
fi
ncpu=$(getconf _NPROCESSORS_ONLN 2>/dev/null || nproc 2>/dev/null || echo 1)
if [ -n "$slowdown" ]; then
    awk -v s="$slowdown" 'BEGIN { exit !(s == s + 0 && s + 0 >= 1 && s + 0 <= 1000) }' ||
        die "--slowdown '$slowdown': expected a number from 1 to 1000"
else
    # 4 ranks at speeds 1,1,1,1 demand 4 cores; on a shared 2-core machine a
    # slowdown of 6 kept the emulation's overruns near 2% while other jobs ran.
    slowdown=$(awk -v n="$ncpu" 'BEGIN { s = 12 / (n > 0 ? n : 1); printf "%g", (s < 1 ? 1 : s) }')
fi

[ -d "$builddir" ] || die "--builddir '$builddir': not a directory"
builddir=$(cd "$builddir" && pwd)
hetsgd=$builddir/bench/hetsgd/hetsgd
[ -x "$hetsgd" ] || die "$hetsgd not built (run make first, or give --builddir)"
[ -n "$out" ] || out=$builddir/bench/out
mkdir -p "$out" 2>/dev/null || die "--out '$out': cannot create it"
out=$(cd "$out" && pwd)
launcher=$srcdir/tests/mpirun.sh
plotgp=$srcdir/bench/hetsgd/plot.gp

# The data: a directory with the four IDX files, gzip'd or not.  Each run
# would otherwise unpack 26 MB on every rank, about a second per run here.
idx_names="train-images-idx3-ubyte train-labels-idx1-ubyte t10k-images-idx3-ubyte t10k-labels-idx1-ubyte"
for n in $idx_names; do
    [ -f "$data/$n" ] || [ -f "$data/$n.gz" ] ||
        die "--data '$data': no $n[.gz] there (apt-get install dataset-fashion-mnist, or give --data DIR)"
done
unpacked=yes
for n in $idx_names; do [ -f "$data/$n" ] || unpacked=no; done
if [ no = "$unpacked" ]; then
    # The cache is valid while the sources keep their path, size and time.
    data=$(cd "$data" && pwd)
    stamp=$(cd "$data" && for n in $idx_names; do
        if [ -f "$n" ]; then f=$n; else f=$n.gz; fi
        echo "$data/$f $(wc -c <"$f") $(date -r "$f" +%s.%N)"
    done)
    mkdir -p "$out/data"
    if [ "$stamp" != "$(cat "$out/data/source" 2>/dev/null || true)" ]; then
        rm -f "$out/data/source"
        for n in $idx_names; do
            if [ -f "$data/$n" ]; then
                cp "$data/$n" "$out/data/$n.tmp"
            else
                gzip -dc "$data/$n.gz" >"$out/data/$n.tmp" || die "cannot unpack $data/$n.gz into $out/data"
            fi
            mv "$out/data/$n.tmp" "$out/data/$n"
        done
        echo "$stamp" >"$out/data/source"
    fi
    data=$out/data
fi

# Settings of each mode.  The headline trains to the target accuracy; the
# others run a fixed number of steps (there the time-to-accuracy is NA).
case $mode in
quick)
    timeout=120
    common="--batch 64 --lr 0.1"
    head_args="--epochs 2 --subset 512 --eval-every 2 --target 0.5"
    level_args="--max-steps 8 --subset 256 --warmup 2"
    dyn_args="--max-steps 14 --subset 512 --warmup 2"
    dyn_policies="omnibatch oracle"
    ov_args="--rounds 2 --scale 0.02 --max-bytes 8 --no-callgrind --max-seconds 5"
    sim_args="--ranks 4,64 --steps 40 --big-steps 40 --epoch 10"
    ;;
default)
    timeout=600
    common="--batch 1024"
    head_args="--epochs 4 --max-steps 200 --eval-every 10"
    level_args="--epochs 16 --max-steps 80 --subset 5120 --warmup 20"
    dyn_args="--max-steps 105 --warmup 0"
    dyn_policies="omnibatch oracle omnilearn"
    ov_args="--rounds 4 --max-seconds 12 --max-bytes 8 --cg-bytes 8"
    sim_args="--ranks 65536 --big-steps 120"
    ;;
full)
    timeout=1800
    common="--batch 1024"
    head_args="--epochs 8 --eval-every 10"
    level_args="--max-steps 120 --subset 10240 --warmup 30"
    dyn_args="--max-steps 210 --warmup 0"
    dyn_policies="static omnibatch oracle omnilearn"
    ov_args="--rounds 8 --max-seconds 60"
    sim_args=""
    ;;
esac

# scenario_setup NAME: the scenario's hetsgd arguments and policies.
scenario_setup() {
    policies="static omnibatch oracle omnilearn"
    case $1 in
    headline) args="--speeds 1,1,0.5,0.25 $head_args" ;;
    hl2) args="--speeds 12,12,8,16 $level_args" ;;
    hl4) args="--speeds 9,9,6,24 $level_args" ;;
    hl8) args="--speeds 6,6,4,32 $level_args" ;;
    ramp) args="--schedule ramp $dyn_args"; policies=$dyn_policies ;;
    transient) args="--schedule transient $dyn_args"; policies=$dyn_policies ;;
    vanish) args="--schedule vanish $dyn_args"; policies=$dyn_policies ;;
    esac
}

# rotate N WORDS...: the words starting at the Nth (0-based), wrapping around.
rotate() {
    k=$1; shift
    n=$#
    i=0
    res=
    while [ "$i" -lt "$n" ]; do
        j=$(( (i + k) % n + 1 ))
        eval "res=\"\$res \${$j}\""
        i=$((i + 1))
    done
    echo $res
}

# fail_run WHAT RC LOG COMMAND...: the failure, the end of its output, exit 1.
fail_run() {
    what=$1; rc=$2; log=$3; shift 3
    echo "bench/run.sh: $what failed (exit $rc): $*" >&2
    echo "bench/run.sh: last lines of $log:" >&2
    tail -n 25 "$log" | sed 's/^/  | /' >&2
    exit 1
}

runs=$out/runs
rm -rf "$runs"
mkdir -p "$runs"
rm -f "$out/summary.txt" "$out/table.txt" "$out/overhead.json" "$out/overhead.log" \
      "$out/simulate.json" "$out/simulate.log" "$out/headline-omnibatch.png" "$out/plot.log"
start_all=$(date +%s)
total=0
for s in $scenarios; do
    scenario_setup "$s"
    total=$((total + repeat * $(echo $policies | wc -w)))
done

echo "bench: $NP ranks (emulated speeds, slowdown $slowdown on $ncpu online processors), $mode mode," \
     "$repeat repetition(s), scenarios: $(echo $scenarios | tr ' ' ',')"
echo "bench: data $data; output in $out"
done_runs=0
for s in $scenarios; do
    scenario_setup "$s"
    rep=1
    while [ "$rep" -le "$repeat" ]; do
        # shellcheck disable=SC2086
        for p in $(rotate $((rep - 1)) $policies); do
            done_runs=$((done_runs + 1))
            base=$runs/$s.$p.r$rep
            t0=$(date +%s)
            rc=0
            # shellcheck disable=SC2086
            set -- "$hetsgd" --data "$data" $common $args --policy "$p" --slowdown "$slowdown" \
                --trace "$base.csv" --summary "$base.summary"
            OB_MPI_TIMEOUT=${OB_MPI_TIMEOUT:-$timeout} "$launcher" "$NP" "$@" >"$base.log" 2>&1 || rc=$?
            [ 0 -eq "$rc" ] || fail_run "$s/$p run $rep" "$rc" "$base.log" "$launcher" "$NP" "$@"
            [ 1 -eq "$(wc -l <"$base.summary" 2>/dev/null || echo 0)" ] ||
                fail_run "$s/$p run $rep (no summary line)" 0 "$base.log" "$launcher" "$NP" "$@"
            printf 'scenario=%s rep=%s %s\n' "$s" "$rep" "$(cat "$base.summary")" >>"$out/summary.txt"
            echo "bench: [$done_runs/$total] $s $p (run $rep): $(($(date +%s) - t0)) s"
        done
        rep=$((rep + 1))
    done
done

# Recovery side by side (bench/hetsgd/recovery): in each dynamic scenario and
# repetition, per step, omnibatch's measured balance over the oracle's at the
# same step (same speeds, seed and data order), each a median of 3 steps
# within one phase; a change is recovered at the first step from which this
# ratio stays <= 1.05 for 3 steps.  Timing noise both runs see cancels out.
: >"$out/recovery.txt"
for s in $scenarios; do
    case $s in ramp|transient|vanish) ;; *) continue ;; esac
    rep=1
    while [ "$rep" -le "$repeat" ]; do
        ob=$runs/$s.omnibatch.r$rep.csv
        orc=$runs/$s.oracle.r$rep.csv
        if [ -f "$ob" ] && [ -f "$orc" ]; then
            figures=$("$builddir/bench/hetsgd/recovery" "$ob" "$orc") ||
                die "bench/hetsgd/recovery $ob $orc failed"
            echo "scenario=$s rep=$rep $figures" >>"$out/recovery.txt"
        fi
        rep=$((rep + 1))
    done
done

if [ yes = "$overhead" ]; then
    echo "bench: bench/overhead/run.sh $ov_args"
    t0=$(date +%s)
    rc=0
    # shellcheck disable=SC2086
    set -- sh "$srcdir/bench/overhead/run.sh" --builddir "$builddir" $ov_args --summary "$out/overhead.json"
    "$@" >"$out/overhead.log" 2>&1 || rc=$?
    [ 0 -eq "$rc" ] || fail_run "overhead" "$rc" "$out/overhead.log" "$@"
    echo "bench: overhead: $(($(date +%s) - t0)) s"
fi
if [ yes = "$simulate" ]; then
    echo "bench: bench/simulate/simulate $sim_args"
    t0=$(date +%s)
    rc=0
    # shellcheck disable=SC2086
    set -- "$builddir/bench/simulate/simulate" $sim_args --summary "$out/simulate.json"
    "$@" >"$out/simulate.log" 2>&1 || rc=$?
    [ 0 -eq "$rc" ] || fail_run "simulate" "$rc" "$out/simulate.log" "$@"
    echo "bench: simulate: $(($(date +%s) - t0)) s"
fi

# The plot of the headline omnibatch run.
plot_line=
headline_trace=$runs/headline.omnibatch.r1.csv
if [ -f "$headline_trace" ]; then
    gp=${GNUPLOT:-}
    [ -n "$gp" ] || gp=$(command -v gnuplot || true)
    if [ -z "$gp" ]; then
        plot_line="plot: gnuplot not found (apt-get install gnuplot-nox), so no PNG; trace: $headline_trace"
    elif "$gp" -e "trace='$headline_trace'; out='$out/headline-omnibatch.png'" "$plotgp" \
            >"$out/plot.log" 2>&1; then
        plot_line="plot: $out/headline-omnibatch.png (per-rank batch, compute and step time of the headline omnibatch run)"
    else
        plot_line="plot: gnuplot failed (see $out/plot.log); trace: $headline_trace"
    fi
fi
elapsed=$(($(date +%s) - start_all))

# The table and the targets, from the summaries (one key=value line per run)
# and the two JSON summaries (one record per line).
set -- "$out/summary.txt" "$out/recovery.txt"
[ ! -f "$out/overhead.json" ] || set -- "$@" "$out/overhead.json"
[ ! -f "$out/simulate.json" ] || set -- "$@" "$out/simulate.json"
awk -v mode="$mode" -v repeat="$repeat" -v order="$(echo $scenarios)" \
    -v overhead="$overhead" -v simulate="$simulate" '
function med(a, n,    i, j, t) {
    for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
function isnum(x) { return x ~ /^[-+]?([0-9]+[.]?[0-9]*|[.][0-9]+)([eE][-+]?[0-9]+)?$/ }
# The median over repetitions of v(num) / v(den) (or v(num) - v(den) when diff).
function paired(s, num, den, key, diff,    r, n, a, x, y) {
    n = 0
    for (r = 1; r <= repeat; r++) {
        x = v[s, num, r, key]; y = v[s, den, r, key]
        if (isnum(x) && isnum(y) && (diff || y + 0 > 0)) a[++n] = diff ? x - y : x / y
    }
    return n ? med(a, n) : "NA"
}
function single(s, pol, key,    r, n, a, x) {
    n = 0
    for (r = 1; r <= repeat; r++) { x = v[s, pol, r, key]; if (isnum(x)) a[++n] = x }
    return n ? med(a, n) : "NA"
}
function fmt(x, f) { return isnum(x) ? sprintf(f, x) : x }
function recovery(s, pol, prefix, tag,    r, w, worst, unrec, chg, any, init, never) {
    worst = -1; unrec = 0; chg = 0; any = 0; init = -1; never = 0
    for (r = 1; r <= repeat; r++) {
        if (!((s, pol, r, prefix "_worst") in v)) continue
        any = 1
        w = v[s, pol, r, prefix "_worst"] + 0; if (w > worst) worst = w
        unrec += v[s, pol, r, prefix "_unrecovered"]; chg += v[s, pol, r, prefix "_changes"]
        w = v[s, pol, r, prefix "_initial"] + 0; if (w < 0) never = 1; else if (w > init) init = w
    }
    rec_worst[s, tag] = worst; rec_chg[s, tag] = chg; rec_unrec[s, tag] = unrec
    if (!any) return "NA"
    if (!dynamic[s]) return (never ? "never" : init) " (start)"
    if (chg == 0) return "no change"
    return (worst >= 0 ? worst : "never") " (" (chg - unrec) "/" chg ")"
}
function jget(line, key,    m) {
    if (!match(line, "\"" key "\": *(\"[^\"]*\"|[^,}]*)")) return ""
    m = substr(line, RSTART, RLENGTH); sub(/^"[^"]*": */, "", m); gsub(/"/, "", m)
    return m
}
FILENAME ~ /recovery\.txt$/ {
    for (i = 1; i <= NF; i++) { k = $i; sub(/=.*/, "", k); val = $i; sub(/^[^=]*=/, "", val); kv2[k] = val }
    for (k in kv2) v[kv2["scenario"], "vs-oracle", kv2["rep"], k] = kv2[k]
    delete kv2
    next
}
FILENAME ~ /summary\.txt$/ {
    delete kv
    for (i = 1; i <= NF; i++) { k = $i; sub(/=.*/, "", k); val = $i; sub(/^[^=]*=/, "", val); kv[k] = val }
    s = kv["scenario"]; p = kv["policy"]; r = kv["rep"]
    for (k in kv) v[s, p, r, k] = kv[k]
    ran[s, p] = 1
    if (isnum(kv["overrun_share"]) && kv["overrun_share"] + 0 > over[s]) over[s] = kv["overrun_share"] + 0
    steps[s] = kv["steps"]
    if (s == "headline") target = kv["target"]
    next
}
FILENAME ~ /overhead\.json$/ {
    if (jget($0, "op") != "" && jget($0, "bytes") == 8 && jget($0, "ratio") != "") {
        nov++
        if (jget($0, "ratio") + 0 > ov_worst + 0 || nov == 1) {
            ov_worst = jget($0, "ratio"); ov_worst_at = jget($0, "op") " " jget($0, "type")
            ov_worst_plain = jget($0, "plain"); ov_worst_pre = jget($0, "preload")
            ov_worst_lo = jget($0, "ratio_min"); ov_worst_hi = jget($0, "ratio_max")
        }
        if (jget($0, "op") == "allreduce" && jget($0, "type") == "float") {
            ov_ar = jget($0, "ratio"); ov_lo = jget($0, "ratio_min"); ov_hi = jget($0, "ratio_max")
            ov_plain = jget($0, "plain"); ov_pre = jget($0, "preload")
        }
    }
    if (jget($0, "interposition") != "") {
        k = jget($0, "op") " " jget($0, "type"); ins[k] = jget($0, "interposition"); ins_class[k] = jget($0, "class")
    }
    if (jget($0, "interposing") != "") ov_interposing = jget($0, "interposing")
    next
}
FILENAME ~ /simulate\.json$/ {
    if (jget($0, "scenario") != "") {
        P = jget($0, "ranks") + 0
        if (P > simP) { simP = P; nsim = 0; sim_worst = 0 }
        if (P == simP) {
            sc = jget($0, "scenario"); x = jget($0, "steady_over_oracle"); y = jget($0, "omnilearn_steady_over_oracle")
            sim_list = (nsim++ ? sim_list " " : "") sc " " sprintf("%.3f", x)
            if (x + 0 > sim_worst) { sim_worst = x + 0; sim_worst_at = sc }
            if (y + 0 > ol_worst) { ol_worst = y + 0; ol_worst_at = sc }
        }
    }
    next
}
END {
    if (target == "") target = 0.85
    rc_worst = -1; ra_worst = -1; ro_worst = -1; rm_worst = -1
    n = split(order, scen, " ")
    dynamic["ramp"] = dynamic["transient"] = dynamic["vanish"] = 1
    label["headline"] = "1,1,0.5,0.25"; label["hl2"] = "12,12,8,16"; label["hl4"] = "9,9,6,24"
    label["hl8"] = "6,6,4,32"; label["ramp"] = "HL1>2>4>8>4>2>1"; label["transient"] = "1,1,1,1 +2-5x"
    label["vanish"] = "1,1,1,1 1->1/20"
    printf "%-9s %-16s %5s  %7s %6s  %8s  %7s  %8s  %-14s  %-12s %7s\n", "scenario", "speeds", "steps",
           "omb/orc", "(pred)", "omb/stat", "OL/orc", "TTA o/s", "acc pts (last)", "recover", "overrun"
    na_policy = na_tta = 0
    for (i = 1; i <= n; i++) {
        s = scen[i]
        oo = paired(s, "omnibatch", "oracle", "steady_step_s", 0)
        pr = single(s, "omnibatch", "pred_ratio_oracle")
        os = paired(s, "omnibatch", "static", "steady_step_s", 0)
        lo = paired(s, "omnilearn", "oracle", "steady_step_s", 0)
        tt = paired(s, "omnibatch", "static", "time_to_target_s", 0)
        ad = paired(s, "omnibatch", "static", "final_acc_mean", 1)
        a1 = paired(s, "omnibatch", "static", "final_acc", 1)
        if (isnum(ad)) ad *= 100
        if (isnum(a1)) a1 *= 100
        acc = isnum(ad) ? sprintf("%+.2f (%+.2f)", ad, a1) : "NA"
        if (!ran[s, "static"]) no_static = no_static (no_static == "" ? "" : ", ") s
        if (!ran[s, "omnilearn"]) no_ol = no_ol (no_ol == "" ? "" : ", ") s
        if (s != "headline") na_tta = 1
        # Recovery: side by side with the oracle (the judge); on the absolute
        # balance for omnibatch and for the oracle; and by the model.
        rec[s, "vsorc"] = recovery(s, "vs-oracle", "vsorc_recover", "vsorc")
        rec[s, "omnibatch"] = recovery(s, "omnibatch", "balance_recover", "omnibatch")
        rec[s, "oracle"] = recovery(s, "oracle", "balance_recover", "oracle")
        rec[s, "model"] = recovery(s, "omnibatch", "model_recover", "model")
        if (dynamic[s]) {
            if (rec_chg[s, "vsorc"] > 0) {
                rc_chg += rec_chg[s, "vsorc"]; rc_unrec += rec_unrec[s, "vsorc"]
                for (r = 1; r <= repeat; r++) rc_late += v[s, "vs-oracle", r, "vsorc_recover_over10"]
                if (rec_worst[s, "vsorc"] > rc_worst) { rc_worst = rec_worst[s, "vsorc"]; rc_worst_at = s }
            }
            if (rec_chg[s, "omnibatch"] > 0) {
                ra_chg += rec_chg[s, "omnibatch"]; ra_unrec += rec_unrec[s, "omnibatch"]
                if (rec_worst[s, "omnibatch"] > ra_worst) { ra_worst = rec_worst[s, "omnibatch"]; ra_worst_at = s }
            }
            if (rec_chg[s, "oracle"] > 0) {
                ro_chg += rec_chg[s, "oracle"]; ro_unrec += rec_unrec[s, "oracle"]
                if (rec_worst[s, "oracle"] > ro_worst) { ro_worst = rec_worst[s, "oracle"]; ro_worst_at = s }
            }
            if (rec_chg[s, "model"] > 0) {
                rm_chg += rec_chg[s, "model"]; rm_unrec += rec_unrec[s, "model"]
                if (rec_worst[s, "model"] > rm_worst) { rm_worst = rec_worst[s, "model"]; rm_worst_at = s }
            }
        }
        if (s == "headline" && isnum(tt)) tta_headline = tt
        if (s == "headline" && isnum(ad)) { acc_headline = ad; acc_last = a1 }
        if (s == "headline") {
            fa_static = single(s, "static", "final_acc_mean")
            fa_evals = single(s, "static", "final_acc_evals"); fa_from = single(s, "static", "final_acc_from_step")
        }
        # The verdict uses the measured ratio: the model (pred) rests on a
        # calibration that a crowded machine makes a few per cent wrong.
        if (!dynamic[s] && isnum(oo)) {
            nstatic++
            if (oo + 0 > st_worst + 0 || nstatic == 1) { st_worst = oo; st_worst_at = s }
            st_meas = st_meas (nstatic > 1 ? ", " : "") s " " fmt(oo, "%.3f")
            st_pred = st_pred (nstatic > 1 ? ", " : "") s " " fmt(pr, "%.3f")
            st_bal = st_bal (nstatic > 1 ? ", " : "") s " " fmt(single(s, "omnibatch", "balance_steady"), "%.3f") \
                     "/" fmt(single(s, "oracle", "balance_steady"), "%.3f")
        }
        printf "%-9s %-16s %5s  %7s %6s  %8s  %7s  %8s  %-14s  %-12s %6s%%\n", s, label[s], steps[s],
               fmt(oo, "%.3f"), "(" fmt(pr, "%.3f") ")", fmt(os, "%.3f"), fmt(lo, "%.3f"), fmt(tt, "%.3f"),
               acc, dynamic[s] ? rec[s, "vsorc"] : "-", fmt(100 * over[s], "%.1f")
        if (over[s] > 0.05) crowded = crowded (crowded == "" ? "" : ", ") s
    }

    # The measured balance of every policy, and the recoveries side by side.
    printf "\n%-9s  %-40s  %s\n", "balance", "max t_i / T*, mean over the steady steps", \
           "steps until within 5% (measured; model)"
    printf "%-9s  %8s %9s %8s %9s    %-14s %-14s %-14s\n", "scenario", "static", "omnibatch", "oracle", "omnilearn",
           "omnibatch", "oracle", "omnibatch model"
    for (i = 1; i <= n; i++) {
        s = scen[i]
        printf "%-9s  %8s %9s %8s %9s    %-14s %-14s %-14s\n", s,
               fmt(single(s, "static", "balance_steady"), "%.3f"), fmt(single(s, "omnibatch", "balance_steady"), "%.3f"),
               fmt(single(s, "oracle", "balance_steady"), "%.3f"), fmt(single(s, "omnilearn", "balance_steady"), "%.3f"),
               rec[s, "omnibatch"], rec[s, "oracle"], rec[s, "model"]
    }

    print ""
    print "omb/orc: steady step time omnibatch / oracle, measured (median over " repeat " run(s)); the step-time"
    print "  target is judged on it."
    print "(pred): the same predicted by the model the oracle plans with: the cost calibrated before"
    print "  training x the true speeds.  Information only: on a crowded machine the real cost per"
    print "  sample and per step differs from the calibration (by rank and by load), so the split of"
    print "  the oracle can be a few % off the best and omnibatch, which learns from measurements,"
    print "  can beat it (omb/orc < 1)."
    print "omb/stat, OL/orc: steady step time omnibatch / static, omnilearn / oracle, measured."
    print "TTA o/s: time to test accuracy " target ", omnibatch / static."
    print "acc pts: final test accuracy, omnibatch - static, in points: the mean of the evaluations of"
    print "  the last steps (hetsgd --final-evals), then (last) that of the last evaluation alone, which"
    print "  moves by tenths of a point from one evaluation to the next."
    print "balance: per step, T* = B / sum_i b_i/t_i from the batch b_i and compute time t_i of each rank"
    print "  (emulation included): the step time with the work spread by the measured throughputs."
    print "  max t_i / T* is 1 when all ranks finish together; its mean includes timing noise, whose"
    print "  level the oracle column shows.  T* is exact for a cost proportional to the batch;"
    print "  with a fixed cost per step it is off by a fraction of the imbalance (hetsgd README)."
    print "recover: the most steps any speed change took until omnibatch was within 5% of the oracle:"
    print "  its balance over that of the oracle at the same steps, each a median of 3 steps, <= 1.05 for"
    print "  3 steps (changes recovered / changes).  In the balance table, the same on the balance"
    print "  alone (<= 1.05, which timing noise can deny even the oracle); (start): from step 0;"
    print "  model: judged by the model (plan within 5% of the oracle plan)."
    print "overrun: the largest share of steps whose real compute outlasted the emulated step."
    if (no_static != "") print "NA in omb/stat, acc pts, static: static does not run in " no_static " (--full runs it)."
    if (no_ol != "") print "NA in OL/orc, omnilearn: omnilearn does not run in " no_ol " (--full runs it)."
    if (na_tta) print "NA in TTA: only the headline trains to the target; the others run a fixed, short number of steps."
    print "-: no speed change in a static scenario."
    if (crowded != "") print "warning: more than 5% of the steps overran in " crowded ": those step times partly measure the machine (try a larger --slowdown)"
    if (mode == "quick") print "note: --quick: tiny data and few steps, the figures are not meaningful."

    if (overhead == "yes") {
        printf "\noverhead: preload / plain MPI_Allreduce float at 8 B %s (min..max %s..%s; plain %.3f us, preload %.3f us);", \
               fmt(ov_ar, "%.3f"), fmt(ov_lo, "%.3f"), fmt(ov_hi, "%.3f"), ov_plain, ov_pre
        line = ""
        split("allreduce float,allreduce int,iallreduce float,iallreduce int", kinds, ",")
        for (j = 1; j <= 4; j++) {
            k = kinds[j]
            if (k in ins) line = line (line == "" ? "" : ", ") k " (" ins_class[k] ") " sprintf("%.0f", ins[k])
        }
        if (line == "") line = "not measured"
        print " instructions per intercepted call: " line
    } else {
        print "\noverhead: not run (--no-overhead)"
    }
    if (simulate == "yes" && simP > 0) {
        printf "simulate: P = %d, steady step / oracle: %s; omnilearn worst %.3f (%s)\n", simP, sim_list, ol_worst, ol_worst_at
    } else if (simulate != "yes") {
        print "simulate: not run (--no-simulate)"
    }

    print "\ntargets:"
    # 1. steady step time in the static scenarios, measured
    if (nstatic == 0) {
        print "  steady step <= 1.05x oracle (static scenarios): not measured (no static scenario ran)"
    } else {
        printf "  steady step <= 1.05x oracle (static scenarios): %s: worst %.3f (%s), measured omnibatch / oracle (median of %d run(s)): %s; the model (pred, not judged): %s; measured balance omnibatch/oracle: %s\n", \
               (st_worst + 0 <= 1.05 ? "met" : "MISSED"), st_worst, st_worst_at, repeat, st_meas, st_pred, st_bal
    }
    # 2. recovery, side by side with the oracle; the absolute balance and the model beside
    if (rc_chg == 0) {
        print "  recovery within 5% of oracle in <= 10 steps: not measured (no dynamic scenario ran with omnibatch and oracle)"
    } else {
        if (rc_unrec == 0 && rc_worst <= 10) {
            printf "  recovery within 5%% of oracle in <= 10 steps: met: worst %d steps (%s), %d changes", rc_worst, rc_worst_at, rc_chg
        } else {
            printf "  recovery within 5%% of oracle in <= 10 steps: MISSED: %d of %d changes not recovered in <= 10 steps (%d not before the next change or the end)", rc_unrec + rc_late, rc_chg, rc_unrec
            if (rc_worst >= 0) printf "; worst recovered %d steps (%s)", rc_worst, rc_worst_at
        }
        printf " (balance over that of the oracle at the same steps <= 1.05 for 3 steps)"
        if (ra_chg > 0) {
            printf "; on the balance alone (<= 1.05): omnibatch %d of %d not recovered", ra_unrec, ra_chg
            if (ra_worst >= 0) printf ", worst %d steps (%s)", ra_worst, ra_worst_at
        }
        if (ro_chg > 0) {
            printf ", the oracle %d of %d not recovered", ro_unrec, ro_chg
            if (ro_worst >= 0) printf ", worst %d steps (%s)", ro_worst, ro_worst_at
        }
        if (rm_chg > 0) {
            printf "; the model (not judged): %d of %d not recovered", rm_unrec, rm_chg
            if (rm_worst >= 0) printf ", worst %d steps (%s)", rm_worst, rm_worst_at
        }
        print ""
    }
    # 3. time to accuracy
    tname = sprintf("time to %g%% accuracy >= 1.8x faster than static (1,1,0.5,0.25)", 100 * target)
    if (!ran["headline", "omnibatch"] || !ran["headline", "static"]) {
        print "  " tname ": not measured (the headline scenario did not run)"
    } else if (!isnum(tta_headline)) {
        print "  " tname ": MISSED: the target accuracy was not reached by " (isnum(single("headline", "static", "time_to_target_s")) ? "omnibatch" : "static") " in " steps["headline"] " steps"
    } else if (1 / tta_headline >= 1.8) {
        printf "  %s: met: %.2fx\n", tname, 1 / tta_headline
    } else {
        printf "  %s: MISSED: %.2fx (omnibatch step / static %s)\n", tname, 1 / tta_headline, fmt(paired("headline", "omnibatch", "static", "steady_step_s", 0), "%.3f")
    }
    # 4. final accuracy, smoothed over the last evaluations
    if (!isnum(acc_headline)) {
        print "  final accuracy within 0.3 points of static: not measured (the headline scenario did not run)"
    } else {
        printf "  final accuracy within 0.3 points of static: %s: %+.2f points, mean of the %s evaluations from step %s on (static %.2f%%); the last evaluation alone %+.2f\n", \
               (acc_headline >= -0.3 && acc_headline <= 0.3 ? "met" : "MISSED"), acc_headline, fa_evals, fa_from, 100 * fa_static, acc_last
    }
    # 5. overhead
    if (overhead != "yes" || !isnum(ov_worst)) {
        print "  overhead <= 1% at 8 B: not measured" (overhead != "yes" ? " (--no-overhead)" : "")
    } else if (ov_worst + 0 <= 1.01) {
        printf "  overhead <= 1%% at 8 B: met: %+.1f%% (%s, the worst of %d kinds at 8 B)\n", 100 * (ov_worst - 1), ov_worst_at, nov
    } else {
        printf "  overhead <= 1%% at 8 B: MISSED: %+.1f%% (%s, the worst of %d kinds at 8 B: the median of the per-round ratios, which spread %.3f..%.3f); the median calls: plain %.3f us, preload %.3f us (%+.0f ns, %+.1f%%)", \
               100 * (ov_worst - 1), ov_worst_at, nov, ov_worst_lo, ov_worst_hi, ov_worst_plain, ov_worst_pre, \
               1000 * (ov_worst_pre - ov_worst_plain), 100 * (ov_worst_pre / ov_worst_plain - 1)
        if (ov_interposing == "false") printf "; note: the library did not interpose (noise only)"
        print ""
    }
}' "$@" >"$out/table.txt" || { echo "bench/run.sh: building the table failed" >&2; exit 1; }

echo
cat "$out/table.txt"
echo
[ -z "$plot_line" ] || echo "$plot_line"
echo "traces (CSV per run), logs and summaries: $runs"
echo "summaries (one line per run): $out/summary.txt; table: $out/table.txt"
echo "bench: finished in $elapsed s"
