#!/bin/sh
# bench/hetsgd/async.sh: synchronous and asynchronous training side by side
# (make bench-async; options through BENCH_ASYNC_FLAGS).
#
#   bench/hetsgd/async.sh [options]
#
# Five policies, the same seed, model (hetsgd's MLP), data (Fashion-MNIST)
# and emulated cluster at each level:
#   sync-static      hetsgd --policy static: equal shares, 4 ranks (--workers)
#   sync-omnibatch   hetsgd --policy omnibatch: the synchronous controller, 4 ranks
#   async-static     hetsgd --mode async --policy static: a parameter server (rank 0)
#                    and 4 workers (--workers) with equal batches
#   async-omnilearn  --mode async --policy omnilearn: OmniLearn's rule on each worker's
#                    mean compute once per epoch, 20% dead-band, batches in [16, 96]
#   async-omnibatch  --mode async --policy omnibatch: the server's batch scaling
#                    (equal push rates)
# Levels: hl1 hl2 hl4 hl8 (OmniLearn's heterogeneity levels, speeds 12,12,12,12 /
# 12,12,8,16 / 9,9,6,24 / 6,6,4,32 of the workers, repeated for 8), ramp (its dynamic schedule,
# HL1>2>4>8>4>2>1 over the run), emulated from one cost measured at the start
# (hetsgd --calibrate, given to every run as --cost); and quota: no emulation,
# each worker in a cgroup of its own with a real CPU quota (--quota, 0.4,0.4,0.2,0.1
# of a core; the server's group has none), sync-static, sync-omnibatch,
# async-static and async-omnibatch (skipped with a line where no cgroup cpu
# controller is writable).
#
# Every run trains the same epochs and keeps its model every --eval-every
# global batches of samples, evaluated after training (hetsgd --eval-after;
# the asynchronous mode always does so), so the training clock holds no
# evaluation and a quota pays for none.  Each level runs its policies one
# after the other for each seed 1..--repeat, in an order rotated per seed.
# Then bench/hetsgd/async_table.py prints, per level and policy, medians over
# the seeds with the spread: the test accuracy at 25, 50, 75 and 100% of the
# shortest median training time (T_eq), the time to --target, the accuracy at
# T_eq, every worker's staleness (mean, p99), updates and samples per second,
# the server's busy fraction, the pushes dropped and lost; the ratios of async
# omnibatch's time to the target to the others', per seed; and the targets.
#
# Options:
#   --builddir DIR   the build (default: $top_builddir or .)
#   --out DIR        outputs (default: BUILDDIR/bench/out-async); runs/ is replaced
#   --data DIR       Fashion-MNIST IDX files (default /usr/share/datasets/fashion-mnist)
#   --levels LIST    of hl1,hl2,hl4,hl8,ramp,quota (default all; with --workers 8 all but quota)
#   --policies LIST  of the five above (default all)
#   --repeat N       seeds 1..N (default 3)
#   --epochs N       epochs of every run (default 3)
#   --batch B        the global batch, also the async workers' batches' sum (default 256)
#   --workers N      4 or 8: the synchronous ranks and the asynchronous workers (default 4;
#                    8 repeats each level's speeds, so its heterogeneity level is the same,
#                    and doubles the default slowdown; the quota level needs 4)
#   --max-global-batch N  async omnibatch: the most its workers' batches may sum to where
#                    a worker at its least batch cannot keep the others' push rate
#                    (hetsgd --max-global-batch; default 0: --batch)
#   --lr X           learning rate (default 0.1)
#   --momentum X     the synchronous runs' momentum (default 0.9)
#   --async-momentum X  the asynchronous runs' (default 0.5: asynchrony adds momentum of its
#                    own, and 0.9 with 4 workers does not train)
#   --eval-every K   keep the model every K global batches of samples (default 20)
#   --slowdown X     the emulation's slowdown (default 3 x workers / online processors, at least 1)
#   --quota LIST     the workers' CPU quotas, each in (0, 1] of a core (default 0.4,0.4,0.2,0.1)
#   --timeout S      seconds each run (and the calibration) may take before it is stopped and
#                    counted failed (default 1800; tests/mpirun.sh's own default, 120, is a
#                    test's, shorter than a benchmark run on a loaded machine)
#   --quick          a smoke run: tiny, one seed, figures meaningless
#   --help           this text
# Environment: MPIRUN, PYTHON (the table's interpreter, default python3).
# Exit status: 0 when every run succeeded (missed targets included), 1 when one
# failed (its output's end printed), 2 for a bad option.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
srcdir=$(cd "$here/../.." && pwd)
builddir=${top_builddir:-.}
out=
data=/usr/share/datasets/fashion-mnist
levels=
policies="sync-static,sync-omnibatch,async-static,async-omnilearn,async-omnibatch"
repeat=3
epochs=3
batch=256
workers=4
lr=0.1
momentum=0.9
amomentum=0.5
maxgb=0
every=20
slowdown=
quota=0.4,0.4,0.2,0.1
timeout=1800
quick=no

die() { echo "bench/hetsgd/async.sh: $*" >&2; exit 2; }
need() { [ $# -ge 2 ] || die "$1 needs a value (see --help)"; }
whole() {
    case $2 in ''|*[!0-9]*) die "$1 '$2': expected a whole number from $3 to $4" ;; esac
    [ "$2" -ge "$3" ] && [ "$2" -le "$4" ] || die "$1 '$2': expected a whole number from $3 to $4"
}
real() {
    awk -v x="$2" -v lo="$3" -v hi="$4" 'BEGIN { exit !(x ~ /^[0-9]*[.]?[0-9]+$/ && x + 0 >= lo && x + 0 <= hi) }' \
        || die "$1 '$2': expected a number in [$3, $4]"
}
while [ $# -gt 0 ]; do
    case $1 in
    --builddir) need "$@"; builddir=$2; shift 2 ;;
    --out) need "$@"; out=$2; shift 2 ;;
    --data) need "$@"; data=$2; shift 2 ;;
    --levels) need "$@"; [ -n "$2" ] || die "--levels '': expected a list of hl1,hl2,hl4,hl8,ramp,quota"
        levels=$2; shift 2 ;;
    --policies) need "$@"; policies=$2; shift 2 ;;
    --repeat) need "$@"; whole "$1" "$2" 1 99; repeat=$2; shift 2 ;;
    --epochs) need "$@"; whole "$1" "$2" 1 1000; epochs=$2; shift 2 ;;
    --batch) need "$@"; whole "$1" "$2" 16 8192; batch=$2; shift 2 ;;
    --workers) need "$@"; case $2 in 4|8) workers=$2 ;; *) die "--workers '$2': expected 4 or 8" ;; esac; shift 2 ;;
    --lr) need "$@"; real "$1" "$2" 0.000001 10; lr=$2; shift 2 ;;
    --momentum) need "$@"; real "$1" "$2" 0 0.999; momentum=$2; shift 2 ;;
    --async-momentum) need "$@"; real "$1" "$2" 0 0.999; amomentum=$2; shift 2 ;;
    --max-global-batch) need "$@"; whole "$1" "$2" 0 100000000; maxgb=$2; shift 2 ;;
    --eval-every) need "$@"; whole "$1" "$2" 1 100000; every=$2; shift 2 ;;
    --slowdown) need "$@"; real "$1" "$2" 1 1000; slowdown=$2; shift 2 ;;
    --quota) need "$@"; quota=$2; shift 2 ;;
    --timeout) need "$@"; whole "$1" "$2" 1 86400; timeout=$2; shift 2 ;;
    --quick) quick=yes; shift ;;
    -h|--help) sed -n '2,/^set -eu/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown option '$1' (see --help)" ;;
    esac
done
if [ -z "$levels" ]; then
    levels=hl1,hl2,hl4,hl8,ramp,quota
    [ 4 = "$workers" ] || levels=hl1,hl2,hl4,hl8,ramp
fi
for l in $(echo "$levels" | tr ',' ' '); do
    case $l in hl1|hl2|hl4|hl8|ramp|quota) ;; *) die "--levels: unknown level '$l' (expected hl1,hl2,hl4,hl8,ramp,quota)" ;; esac
done
for p in $(echo "$policies" | tr ',' ' '); do
    case $p in sync-static|sync-omnibatch|async-static|async-omnilearn|async-omnibatch) ;;
    *) die "--policies: unknown policy '$p' (expected sync-static,sync-omnibatch,async-static,async-omnilearn,async-omnibatch)" ;;
    esac
done
if [ 4 != "$workers" ] && echo ",$levels," | grep -q ',quota,'; then
    die "--levels quota with --workers $workers: the quota level has 4 workers (--quota gives four quotas)"
fi
echo "$quota" | grep -Eq '^(0?\.[0-9]+|1(\.0*)?)(,(0?\.[0-9]+|1(\.0*)?)){3}$' \
    || die "--quota '$quota': expected four numbers in (0, 1] separated by commas (one per worker)"
builddir=$(cd "$builddir" 2>/dev/null && pwd) || die "--builddir: not a directory"
hetsgd=$builddir/bench/hetsgd/hetsgd
[ -x "$hetsgd" ] || die "$hetsgd not built (run make first)"
out=${out:-$builddir/bench/out-async}
runs=$out/runs
rm -rf "$runs"
mkdir -p "$runs" || die "--out '$out': cannot create it"
python=${PYTHON:-python3}
command -v "$python" >/dev/null 2>&1 || die "no $python to build the table (set PYTHON)"
if [ -z "$slowdown" ]; then
    slowdown=$(awk -v n="$(getconf _NPROCESSORS_ONLN)" -v w="$workers" 'BEGIN { s = 3 * w / n; printf "%g", s < 1 ? 1 : s }')
fi
data_args=
if [ yes = "$quick" ]; then
    repeat=1
    data_args="--subset 512"
    epochs=1
    every=2
    batch=64
fi
common="--batch $batch --epochs $epochs --lr $lr --eval-every $every --target 0.85 --data $data $data_args"
mpirun_sh=$srcdir/tests/mpirun.sh
# tests/mpirun.sh stops its command after OB_MPI_TIMEOUT seconds.
OB_MPI_TIMEOUT=$timeout
export OB_MPI_TIMEOUT
launch=

# run LEVEL POLICY SEED NP [hetsgd options]: one run, its summary line tagged.
failed=0
run() {
    level=$1 policy=$2 seed=$3 np=$4
    shift 4
    tag=$runs/$level.$policy.s$seed
    case $policy in
    sync-*) set -- --policy "${policy#sync-}" --momentum "$momentum" --eval-after "$@" ;;
    async-omnibatch) set -- --mode async --policy omnibatch --momentum "$amomentum" --max-global-batch "$maxgb" "$@" ;;
    async-*) set -- --mode async --policy "${policy#async-}" --momentum "$amomentum" "$@" ;;
    esac
    # In the background and waited for: a signal to this script is acted on at once.
    # shellcheck disable=SC2086
    "$mpirun_sh" "$np" $launch "$hetsgd" $common --seed "$seed" \
        --summary "$tag.summary" --curve "$tag.csv" "$@" > "$tag.out" 2>&1 &
    rc=0
    wait $! || rc=$?
    if [ "$rc" -ne 0 ]; then
        why="exit status $rc"
        case $rc in 124|137) why="stopped after --timeout $timeout s" ;; esac
        echo "async: $level $policy seed $seed FAILED, $why (output: $tag.out):" >&2
        tail -5 "$tag.out" >&2
        failed=1
        return 0
    fi
    echo "level=$level policy=$policy seed=$seed $(cat "$tag.summary")" >> "$runs/summary.txt"
    sed -n 's/.*time_to_target_s=\([^ ]*\).*train_s=\([^ ]*\).*/\1 \2/p' "$tag.summary" |
        awk -v l="$level" -v p="$policy" -v s="$seed" '{ printf "async: %s %s seed %s: time to 0.85 %s s, training %s s\n", l, p, s, ($1 < 0 ? "NA" : $1), $2 }'
}

# run_level LEVEL NP_ARGS...: every policy for every seed, the order rotated per seed.
run_level() {
    level=$1
    shift
    list=$(echo "$policies" | tr ',' ' ')
    [ quota = "$level" ] && list=$(echo "$list" | tr ' ' '\n' | grep -v '^async-omnilearn$' | tr '\n' ' ')
    n=$(echo "$list" | wc -w)
    seed=1
    while [ "$seed" -le "$repeat" ]; do
        k=0
        while [ "$k" -lt "$n" ]; do
            i=$(( (k + seed - 1) % n + 1 ))
            p=$(echo "$list" | tr -s ' ' '\n' | grep -v '^$' | sed -n "${i}p")
            case $p in sync-*) np=$workers ;; *) np=$((workers + 1)) ;; esac
            if [ quota = "$level" ]; then
                quota_run "$p" "$seed" "$np"
            else
                launch=
                run "$level" "$p" "$seed" "$np" $level_args --slowdown "$slowdown" --cost "$cost"
            fi
            k=$((k + 1))
        done
        seed=$((seed + 1))
    done
}

# ---- the real CPU quotas ---------------------------------------------------------------
group=
quota_setup() {
    v1=/sys/fs/cgroup/cpu
    if [ -d "$v1" ] && [ -w "$v1" ] && [ -f "$v1/cpu.cfs_quota_us" ] && mkdir "$v1/omnibatch-async.$$" 2>/dev/null; then
        group=$v1/omnibatch-async.$$
        qfile=cpu.cfs_quota_us
    elif [ -f /sys/fs/cgroup/cgroup.subtree_control ] && grep -qw cpu /sys/fs/cgroup/cgroup.subtree_control 2>/dev/null \
        && mkdir /sys/fs/cgroup/omnibatch-async.$$ 2>/dev/null; then
        group=/sys/fs/cgroup/omnibatch-async.$$
        echo "+cpu" > "$group/cgroup.subtree_control" 2>/dev/null || true
        qfile=cpu.max
    else
        return 1
    fi
    for r in 0 1 2 3 4; do
        mkdir "$group/rank$r" || return 1
    done
    cat > "$runs/join" <<EOF
#!/bin/sh
r=\${OMPI_COMM_WORLD_RANK:-\${PMI_RANK:?neither Open MPI nor a PMI launcher}}
echo \$\$ > "$group/rank\$r/cgroup.procs" || exit 1
exec "\$@"
EOF
    chmod +x "$runs/join"
}
# set_quotas Q0 Q1 ...: rank r's quota of a core (0: none).
set_quotas() {
    r=0
    for q in "$@"; do
        if [ cpu.cfs_quota_us = "$qfile" ]; then
            us=$(awk -v q="$q" 'BEGIN { printf "%d", (q > 0 ? q * 100000 : -1) }')
            echo 100000 > "$group/rank$r/cpu.cfs_period_us"
            echo "$us" > "$group/rank$r/cpu.cfs_quota_us"
        else
            us=$(awk -v q="$q" 'BEGIN { if (q > 0) printf "%d 100000", (q * 100000); else print "max 100000" }')
            echo "$us" > "$group/rank$r/cpu.max"
        fi
        r=$((r + 1))
    done
}
# shellcheck source=bench/hetsgd/cgroup.sh
. "$here/cgroup.sh"
quota_cleanup() {
    cgroup_release "$group"
}
trap quota_cleanup EXIT
trap 'exit 130' INT TERM HUP
quota_run() {
    p=$1 seed=$2 np=$3
    qs=$(echo "$quota" | tr ',' ' ')
    # shellcheck disable=SC2086
    case $p in sync-*) set_quotas $qs 0 ;; *) set_quotas 0 $qs ;; esac
    # Each rank joins its group first; the synchronous ranks wait asleep in the gradient
    # allreduce (polling would spend the quota of every rank that waits).
    launch=$runs/join
    export OB_MPIRUN_ENV="OMNIBATCH_WAIT=sleep ${OB_MPIRUN_ENV:-}"
    case $p in
    sync-*) run quota "$p" "$seed" "$np" --slowdown 1 --no-own-wait ;;
    *) run quota "$p" "$seed" "$np" --slowdown 1 ;;
    esac
    OB_MPIRUN_ENV=${OB_MPIRUN_ENV#OMNIBATCH_WAIT=sleep }
    launch=
}

# ---- the emulated levels -------------------------------------------------------------------
# speeds LIST: the four workers' speeds, once for 4 workers, twice for 8.
speeds() {
    if [ 8 = "$workers" ]; then echo "$1,$1"; else echo "$1"; fi
}
echo "async: levels $levels, policies $policies, $workers workers, seeds 1..$repeat, $epochs epochs, batch $batch, lr $lr," \
    "momentum $momentum (sync) / $amomentum (async), the model kept every $every global batches, slowdown $slowdown"
cost=
for level in $(echo "$levels" | tr ',' ' '); do
    case $level in
    hl1) level_args="--speeds $(speeds 12,12,12,12)" ;;
    hl2) level_args="--speeds $(speeds 12,12,8,16)" ;;
    hl4) level_args="--speeds $(speeds 9,9,6,24)" ;;
    hl8) level_args="--speeds $(speeds 6,6,4,32)" ;;
    ramp) level_args="--schedule ramp" ;;
    quota) level_args= ;;
    esac
    if [ quota = "$level" ]; then
        if ! quota_setup; then
            echo "async: quota: no writable cgroup cpu controller here: the quota level is not measured"
            continue
        fi
        echo "async: quota: workers' CPU quotas $quota of a core (the server's group has none), no emulation"
    elif [ -z "$cost" ]; then
        rc=0
        # shellcheck disable=SC2086
        "$mpirun_sh" 4 "$hetsgd" --calibrate $common --slowdown "$slowdown" > "$runs/calibrate.out" 2>&1 || rc=$?
        cost=$(sed -n 's/^hetsgd: cost \(.*\)$/\1/p' "$runs/calibrate.out")
        if [ -z "$cost" ]; then
            why="exit status $rc"
            case $rc in 124|137) why="stopped after --timeout $timeout s" ;; esac
            echo "async: the calibration FAILED, $why:" >&2
            tail -5 "$runs/calibrate.out" >&2
            exit 1
        fi
        echo "async: cost $cost (CPU seconds per step, per sample), every emulated run"
    fi
    run_level "$level"
done
[ -s "$runs/summary.txt" ] || { echo "async: no run succeeded" >&2; exit 1; }
echo
"$python" "$here/async_table.py" --target 0.85 "$runs" | tee "$out/table.txt"
echo "async: outputs in $out (runs/: each run's output, summary and curve)"
exit "$failed"
