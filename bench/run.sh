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
#              oracle and omnilearn (static too with --full); each change lands
#              half-way into its step (hetsgd --change-at 0.5, see --change-at)
#   jitter     FlexRR's stragglers, new speeds every step (hetsgd --schedule
#              jitter): static, omnibatch and the oracle, which knows each
#              step's speeds (the per-step oracle)
# Every scenario runs chunks too: omnibatch with each step worked in chunks
# that move to a free rank (hetsgd --policy chunks), in a table and targets
# of its own after the others.
# The policies of a scenario run one after the other, in an order rotated at
# each repetition, so that machine noise drifting over time hits all alike;
# with --repeat N each ratio is the median of the N paired ratios.  Then one
# line from bench/overhead/run.sh (preload / plain at 8 B, instructions per
# intercepted call) and one from bench/simulate (steady / oracle at the
# largest P), and the quota scenario (bench/hetsgd/run.sh --quota
# 0.4,0.4,0.2,0.1: each rank in a cgroup with that CPU quota of a core, no
# emulation; static and omnibatch beside the limit from each rank's measured
# CPU per sample and per step, its quota and the reduction, at the kernel's 100 ms quota period and at a
# 10 ms one (one period, 100 ms, in quick mode), --repeat N pairs of runs at each, with the
# median and spread of their ratios; skipped with a line where
# no cgroup cpu controller is writable).  The run ends with the table, the measured balance of every
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
#   --scenarios LIST of headline,hl2,hl4,hl8,ramp,transient,vanish,jitter (default all)
#   --policies LIST  run only these of each scenario's policies, of static,omnibatch,
#                    oracle,omnilearn,chunks (default all it has); a ratio whose
#                    policy did not run is NA
#   --change-at F    where a dynamic scenario's speed changes land in their step,
#                    F in [0, 1) of it (default 0.5; 0: at the step's start)
#   --slowdown X     the emulation's slowdown, the same for every run
#                    (default 12 / online processors, at least 1: 6 on 2 cores)
#   --batch N        the global batch of every scenario, 16 to 8192 (default
#                    1024; --quick 64, the quota scenario's smoke run too): a
#                    chunk's fixed part weighs less beside a larger plan
#   --cost A,B,C     with --emulate cost: this cost (seconds per step, per
#                    sample, per chunk after a step's first, as hetsgd
#                    --calibrate prints it) for every scenario, no calibration:
#                    runs of different builds or sessions emulate one cluster
#   --emulate cost|cpu  what an emulated step's length comes from.  cost (the
#                    default): a cost per step and per sample measured once per
#                    scenario (hetsgd --calibrate) and given to every policy's
#                    run (hetsgd --cost), so that all emulate the same cluster
#                    and a step's length follows its batch and speed alone;
#                    cpu: each step's own CPU time (ranks sharing cores then
#                    see their CPU time's jitter as changes of speed)
#   --no-overhead    skip bench/overhead/run.sh
#   --no-simulate    skip bench/simulate
#   --no-quota       skip the quota scenario
#   --help           this text
# Environment: MPIRUN (the launcher tests/mpirun.sh uses), GNUPLOT, VALGRIND, PYTHON
# (bench/table.py's interpreter, default python3).
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
only_policies=
slowdown=
emulate=cost
overhead=yes
simulate=yes
quota=yes
quota_list=0.4,0.4,0.2,0.1
all_scenarios="headline hl2 hl4 hl8 ramp transient vanish jitter"
change_at=0.5
batch=
fixed_cost=
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
    --policies) need_value "$@"; only_policies=$2; shift 2 ;;
    --slowdown) need_value "$@"; slowdown=$2; shift 2 ;;
    --change-at) need_value "$@"; change_at=$2; shift 2
        awk -v f="$change_at" 'BEGIN { exit !(f == f + 0 && f + 0 >= 0 && f + 0 < 1) }' ||
            die "--change-at '$change_at': expected a number in [0, 1)" ;;
    --batch) need_value "$@"; batch=$2; shift 2
        is_uint "$batch" && [ "$batch" -ge 16 ] && [ "$batch" -le 8192 ] ||
            die "--batch '$batch': expected an integer from 16 to 8192" ;;
    --cost) need_value "$@"; fixed_cost=$2; shift 2
        echo "$fixed_cost" | awk -F, '{ for (i = 1; i <= 3; i++) if (!($i == $i + 0 && $i + 0 >= 0 && $i + 0 < 10)) bad = 1 }
            END { exit NF != 3 || bad }' ||
            die "--cost '$fixed_cost': expected A,B,C, three numbers of seconds in [0, 10)" ;;
    --emulate) need_value "$@"; emulate=$2; shift 2
        case $emulate in cost|cpu) ;; *) die "--emulate '$emulate': expected cost or cpu" ;; esac ;;
    --no-overhead) overhead=no; shift ;;
    --no-simulate) simulate=no; shift ;;
    --no-quota) quota=no; shift ;;
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
if [ -n "$only_policies" ]; then
    list=$(echo "$only_policies" | tr ',' ' ')
    [ -n "$(echo "$list" | tr -d ' ')" ] || die "--policies '$only_policies': expected a comma-separated list"
    for p in $list; do
        case " static omnibatch oracle omnilearn chunks " in
        *" $p "*) ;;
        *) die "--policies: unknown policy '$p' (expected some of static,omnibatch,oracle,omnilearn,chunks)" ;;
        esac
    done
    only_policies=" $list "
fi
[ -z "$fixed_cost" ] || [ cost = "$emulate" ] || die "--cost '$fixed_cost': needs --emulate cost (cpu emulates each step's own CPU time)"
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
python=${PYTHON:-python3}
command -v "$python" >/dev/null 2>&1 || die "no $python to build the table (apt-get install python3, or set PYTHON)"
[ -n "$out" ] || out=$builddir/bench/out
mkdir -p "$out" 2>/dev/null || die "--out '$out': cannot create it"
out=$(cd "$out" && pwd)
launcher=$srcdir/tests/mpirun.sh
plotgp=$srcdir/bench/hetsgd/plot.gp
comparegp=$srcdir/bench/hetsgd/compare.gp

# Settings of each mode.  The headline trains to the target accuracy; the
# others run a fixed number of steps (there the time-to-accuracy is NA).
case $mode in
quick)
    timeout=120
    mode_batch=64
    common="--lr 0.1"
    head_args="--epochs 2 --subset 512 --eval-every 2 --target 0.5"
    level_args="--max-steps 8 --subset 256 --warmup 2"
    dyn_args="--max-steps 14 --subset 512 --warmup 2"
    dyn_policies="omnibatch oracle chunks"
    ov_args="--rounds 2 --scale 0.02 --max-bytes 8 --no-callgrind --max-seconds 5"
    sim_args="--ranks 4,64 --steps 40 --big-steps 40 --epoch 10"
    quota_args="--smoke"
    quota_periods="100000"
    ;;
default)
    timeout=600
    mode_batch=1024
    common=
    head_args="--epochs 4 --max-steps 200 --eval-every 10"
    level_args="--epochs 16 --max-steps 80 --subset 5120 --warmup 20"
    dyn_args="--max-steps 105 --warmup 0"
    dyn_policies="omnibatch oracle omnilearn chunks"
    ov_args="--rounds 4 --max-seconds 12 --max-bytes 8 --cg-bytes 8"
    sim_args="--ranks 65536 --big-steps 120"
    quota_args="--steps 80"
    quota_periods="100000 10000"
    ;;
full)
    timeout=1800
    mode_batch=1024
    common=
    head_args="--epochs 8 --eval-every 10"
    level_args="--max-steps 120 --subset 10240 --warmup 30"
    dyn_args="--max-steps 210 --warmup 0"
    dyn_policies="static omnibatch oracle omnilearn chunks"
    ov_args="--rounds 8 --max-seconds 60"
    sim_args=""
    quota_args="--steps 240"
    quota_periods="100000 10000"
    ;;
esac

[ -z "$batch" ] || quota_args="$quota_args --batch $batch"
batch=${batch:-$mode_batch}
common="--batch $batch $common"

# scenario_setup NAME: the scenario's hetsgd arguments and policies.
scenario_setup() {
    policies="static omnibatch oracle omnilearn chunks"
    inside="--change-at $change_at"
    [ 0 != "$(awk -v f="$change_at" 'BEGIN { print (f + 0 > 0) }')" ] || inside=
    case $1 in
    headline) args="--speeds 1,1,0.5,0.25 $head_args" ;;
    hl2) args="--speeds 12,12,8,16 $level_args" ;;
    hl4) args="--speeds 9,9,6,24 $level_args" ;;
    hl8) args="--speeds 6,6,4,32 $level_args" ;;
    ramp) args="--schedule ramp $inside $dyn_args"; policies=$dyn_policies ;;
    transient) args="--schedule transient $inside $dyn_args"; policies=$dyn_policies ;;
    vanish) args="--schedule vanish $inside $dyn_args"; policies=$dyn_policies ;;
    jitter) args="--schedule jitter $dyn_args"; policies="static omnibatch oracle chunks" ;;
    esac
    if [ -n "$only_policies" ]; then
        kept=
        for p in $policies; do
            case $only_policies in *" $p "*) kept="$kept $p" ;; esac
        done
        policies=$kept
    fi
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

total=0
for s in $scenarios; do
    scenario_setup "$s"
    total=$((total + repeat * $(echo $policies | wc -w)))
done
[ "$total" -gt 0 ] || die "--policies '$(echo $only_policies | tr ' ' ',')': none of them runs in the scenarios chosen"

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

runs=$out/runs
rm -rf "$runs"
mkdir -p "$runs"
rm -f "$out/summary.txt" "$out/table.txt" "$out/overhead.json" "$out/overhead.log" \
      "$out/simulate.json" "$out/simulate.log" "$out/headline-omnibatch.png" "$out/headline-compare.png" \
      "$out/plot.log"
start_all=$(date +%s)

echo "bench: $NP ranks (emulated speeds, slowdown $slowdown on $ncpu online processors, step lengths" \
     "from $(if [ -n "$fixed_cost" ]; then echo "the cost given"; elif [ cost = "$emulate" ]; then
             echo "a cost calibrated once per scenario"; else echo "each step's CPU time"; fi))," \
     "$mode mode, global batch $batch," \
     "$repeat repetition(s), scenarios: $(echo $scenarios | tr ' ' ',')"
echo "bench: data $data; output in $out"
done_runs=0
for s in $scenarios; do
    scenario_setup "$s"
    if [ -z "$policies" ]; then
        echo "bench: $s: none of --policies runs in it; skipped"
        continue
    fi
    cost_args=
    if [ -n "$fixed_cost" ]; then
        cost_args="--cost $fixed_cost"
        echo "bench: $s: cost $fixed_cost (given: seconds per step, per sample, per chunk after a step's first)"
    elif [ cost = "$emulate" ]; then
        # One calibration for every policy and repetition of the scenario.
        rc=0
        # shellcheck disable=SC2086
        set -- "$hetsgd" --data "$data" $common $args --slowdown "$slowdown" --calibrate
        OB_MPI_TIMEOUT=${OB_MPI_TIMEOUT:-$timeout} "$launcher" "$NP" "$@" >"$runs/$s.calibrate.log" 2>&1 || rc=$?
        [ 0 -eq "$rc" ] || fail_run "$s calibration" "$rc" "$runs/$s.calibrate.log" "$launcher" "$NP" "$@"
        cost=$(sed -n 's/^hetsgd: cost \([^ ]*\)$/\1/p' "$runs/$s.calibrate.log")
        [ -n "$cost" ] || fail_run "$s calibration (no cost line)" 0 "$runs/$s.calibrate.log" "$launcher" "$NP" "$@"
        cost_args="--cost $cost"
        echo "bench: $s: cost $cost (seconds per step, per sample, per chunk after a step's first)"
    fi
    rep=1
    while [ "$rep" -le "$repeat" ]; do
        # shellcheck disable=SC2086
        for p in $(rotate $((rep - 1)) $policies); do
            done_runs=$((done_runs + 1))
            base=$runs/$s.$p.r$rep
            t0=$(date +%s)
            rc=0
            # shellcheck disable=SC2086
            set -- "$hetsgd" --data "$data" $common $args --policy "$p" --slowdown "$slowdown" $cost_args \
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
# The same for chunks (vs=chunks), judged on the step times (its balance is 1
# by construction), with the step of each change itself.
: >"$out/recovery.txt"
for s in $scenarios; do
    case $s in ramp|transient|vanish) ;; *) continue ;; esac
    rep=1
    while [ "$rep" -le "$repeat" ]; do
        orc=$runs/$s.oracle.r$rep.csv
        for p in omnibatch chunks; do
            run_csv=$runs/$s.$p.r$rep.csv
            if [ -f "$run_csv" ] && [ -f "$orc" ]; then
                figures=$("$builddir/bench/hetsgd/recovery" "$run_csv" "$orc") ||
                    die "bench/hetsgd/recovery $run_csv $orc failed"
                vs=
                [ chunks != "$p" ] || vs="vs=chunks "
                echo "scenario=$s rep=$rep $vs$figures" >>"$out/recovery.txt"
            fi
        done
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
    set -- "$builddir/bench/simulate/simulate" $sim_args --planner auto --summary "$out/simulate.json"
    "$@" >"$out/simulate.log" 2>&1 || rc=$?
    [ 0 -eq "$rc" ] || fail_run "simulate" "$rc" "$out/simulate.log" "$@"
    echo "bench: simulate: $(($(date +%s) - t0)) s"
fi

: >"$out/quota.txt"
if [ yes = "$quota" ]; then
    # The kernel's (and container platforms') 100 ms period, where a rank out of quota stops
    # until its period ends, longer than the step; and a 10 ms one, where the quota acts as a rate.
    for qp in $quota_periods; do
        echo "bench: bench/hetsgd/run.sh --quota $quota_list --period $qp --repeat $repeat $quota_args"
        t0=$(date +%s)
        rc=0
        # shellcheck disable=SC2086
        set -- sh "$srcdir/bench/hetsgd/run.sh" --builddir "$builddir" --quota "$quota_list" --period "$qp" \
            --repeat "$repeat" $quota_args --data "$data" --out "$runs/quota-$qp"
        MPIRUN=${MPIRUN:-mpirun} "$@" >"$out/quota-$qp.log" 2>&1 || rc=$?
        [ 0 -eq "$rc" ] || fail_run "quota" "$rc" "$out/quota-$qp.log" "$@"
        grep '^quota: \|^hetsgd/run.sh: no writable' "$out/quota-$qp.log" | grep -v '^quota: outputs in' >>"$out/quota.txt" || true
        echo "bench: quota, period $qp us: $(($(date +%s) - t0)) s"
        ! grep -q '^hetsgd/run.sh: no writable' "$out/quota-$qp.log" || break
    done
fi

# The plots of the headline scenario: its omnibatch run, and static,
# omnibatch and the oracle side by side (bench/hetsgd/compare.gp).
plot_line=
compare_line=
headline_trace=$runs/headline.omnibatch.r1.csv
headline_what="headline scenario (speeds 1,1,0.5,0.25, slowdown $slowdown, $mode mode)"
if [ -f "$headline_trace" ]; then
    gp=${GNUPLOT:-}
    [ -n "$gp" ] || gp=$(command -v gnuplot || true)
    if [ -z "$gp" ]; then
        plot_line="plot: gnuplot not found (apt-get install gnuplot-nox), so no PNG; trace: $headline_trace"
    elif "$gp" -e "trace='$headline_trace'; out='$out/headline-omnibatch.png'; run='$headline_what, omnibatch'" \
            "$plotgp" >"$out/plot.log" 2>&1; then
        plot_line="plot: $out/headline-omnibatch.png (per-rank batch, compute and speed, and the step time of the headline omnibatch run)"
    else
        plot_line="plot: gnuplot failed (see $out/plot.log); trace: $headline_trace"
    fi
    static_trace=$runs/headline.static.r1.csv
    oracle_trace=$runs/headline.oracle.r1.csv
    if [ -n "$gp" ] && [ -f "$static_trace" ]; then
        with_oracle=""
        [ ! -f "$oracle_trace" ] || with_oracle="oracle='$oracle_trace'; "
        if "$gp" -e "static='$static_trace'; omnibatch='$headline_trace'; ${with_oracle}out='$out/headline-compare.png'; run='$headline_what'" \
                "$comparegp" >>"$out/plot.log" 2>&1; then
            compare_line="plot: $out/headline-compare.png (static, omnibatch${with_oracle:+ and the oracle} side by side: per-rank batch and step time, same axes)"
        else
            compare_line="plot: gnuplot failed on the side-by-side plot (see $out/plot.log)"
        fi
    fi
fi
elapsed=$(($(date +%s) - start_all))

# The table and the targets (bench/table.py), from the summaries (one
# key=value line per run) and the two JSON summaries (one record per line).
set -- "$out/summary.txt" "$out/recovery.txt"
[ ! -f "$out/overhead.json" ] || set -- "$@" "$out/overhead.json"
[ ! -f "$out/simulate.json" ] || set -- "$@" "$out/simulate.json"
flags=
[ yes = "$overhead" ] || flags="$flags --no-overhead"
[ yes = "$simulate" ] || flags="$flags --no-simulate"
[ -z "$only_policies" ] || flags="$flags --policies $(echo $only_policies | tr ' ' ',')"
# shellcheck disable=SC2086
"$python" "$srcdir/bench/table.py" --mode "$mode" --repeat "$repeat" --scenarios "$(echo $scenarios)" \
    $flags "$@" >"$out/table.txt" || { echo "bench/run.sh: building the table failed" >&2; exit 1; }

echo
cat "$out/table.txt"
if [ -s "$out/quota.txt" ]; then
    echo
    cat "$out/quota.txt"
fi
echo
[ -z "$plot_line" ] || echo "$plot_line"
[ -z "$compare_line" ] || echo "$compare_line"
echo "traces (CSV per run), logs and summaries: $runs"
echo "summaries (one line per run): $out/summary.txt; table: $out/table.txt"
echo "bench: finished in $elapsed s"
