#!/bin/sh
# bench/hetsgd/run.sh: hetsgd with heterogeneity the operating system enforces.
#
#   bench/hetsgd/run.sh --quota 0.4,0.4,0.2,0.1 [options] [-- hetsgd options]
#
# Puts rank i in a cgroup of its own with CPU quota q_i of one core (cgroup
# v1: cpu.cfs_quota_us / cpu.cfs_period_us under /sys/fs/cgroup/cpu; v2:
# cpu.max, whichever is writable) instead of hetsgd's sleep emulation
# (every rank at speed 1, --slowdown 1: the emulation sleeps only when a
# rank computed faster than its CPU time, which a throttled rank never
# does), so the controller faces real throttling and real noise.  Runs
# static, omnibatch and chunks (omnibatch with each step worked in chunks
# that move to a free rank: a rank the kernel stopped inside the step gives
# its tail away) side by side and prints their steady step times,
# and beside them the limit: the least step T at which the quotas let the
# ranks compute the global batch B, each rank i at most
#   min((q_i T - F_i) / k_i, (T - R) / k_i)
# samples (its CPU budget in a step of T, less what the step costs it
# outside the compute, over its CPU per sample; and its compute at full
# speed in what the reduction leaves), with the measured figures: k_i the
# rank's CPU seconds per sample over the static run's steady steps (its
# trace's cpu_s), F_i the least CPU any steady step of either run cost it
# outside its compute (step_cpu_s - cpu_s: the library, the reduction's own
# CPU, the update), R the least time any steady step of either run spent in
# the reduction (the least time a rank was blocked, no rank throttled).
# It is a lower bound of the mean step (a rank's CPU over a run is at most
# its quota's share of the wall time), reached only if no step waits for
# a rank the kernel stopped.  The static run's report promises another
# figure, B / sum_i (b_i / c_i) + reduction + other, printed beside it: it
# is not a bound here (static's throttled ranks measure a compute and a
# reduction stretched by their stalls; omnibatch beat it in all 12 runs of
# docs/journal.md, by up to 1.76x).
# Both runs reduce with OMNIBATCH_WAIT=sleep by default
# (--wait): Open MPI's polling in a blocking allreduce would spend the
# quota of every rank that waits (bench/hetsgd/README.md).
# Without a writable cpu controller it says so in one line and exits 0
# (77 with --smoke).
#
# Options:
#   --quota LIST      CPU quota per rank, each in (0, 1] of one core (required)
#   --builddir DIR    the build (default: $top_builddir or .)
#   --out DIR         keep the runs' outputs there (default: a temporary directory)
#   --data DIR        Fashion-MNIST IDX files (default /usr/share/datasets/fashion-mnist)
#   --steps N         steps per run (default 80)
#   --policies LIST   of static,omnibatch,chunks (default all three); without
#                     static, the steady steps alone (the limit and the ratios
#                     are measured from its run)
#   --repeat N        N sets of runs, static, omnibatch then chunks, one after
#                     the other (default 1), each in DIR/pairK: each set's
#                     lines, then the median and the spread of their ratios
#                     (the machine's speed drifts from run to run, and the
#                     same code's omnibatch/limit spreads over 1.07-1.17)
#   --mca K=V         an Open MPI parameter for every run (repeatable), e.g.
#                     --mca mpi_yield_when_idle=1; it replaces the script's own
#                     value of K: btl=self,vader, and
#                     btl_vader_single_copy_mechanism=cma where a short run
#                     shows it works (none where it fails, and in --smoke)
#   --wait W          OMNIBATCH_WAIT of every rank: sleep (default) or poll
#   --batch B         global batch (default 1024)
#   --period US       the quota's period in microseconds, 1000-1000000
#                     (default 100000, the kernel's and container platforms'
#                     default); a rank that spends its quota early in a period
#                     stops until the period ends
#   --smoke           a tiny run: that the cgroups work, figures meaningless
#   --help            this text
# Environment: MPIRUN (default mpirun; Open MPI's); OB_MPIRUN_ENV="VAR=value ..." for
# every rank of every run (as tests/mpirun.sh), e.g. OMNIBATCH_DEBUG=2.
set -eu

die() {
    echo "hetsgd/run.sh: $*" >&2
    exit 2
}
need_value() {
    [ $# -ge 2 ] || die "$1 needs a value (see --help)"
}

builddir=${top_builddir:-.}
quota=
out=
data=/usr/share/datasets/fashion-mnist
steps=80
policies="static,omnibatch,chunks"
repeat=1
mca=
waitmode="sleep"
batch=1024
period=100000
smoke=no
while [ $# -gt 0 ]; do
    case $1 in
    --quota) need_value "$@"; quota=$2; shift 2 ;;
    --builddir) need_value "$@"; builddir=$2; shift 2 ;;
    --out) need_value "$@"; out=$2; shift 2 ;;
    --data) need_value "$@"; data=$2; shift 2 ;;
    --steps) need_value "$@"; steps=$2; shift 2 ;;
    --policies) need_value "$@"; policies=$2; shift 2 ;;
    --repeat) need_value "$@"; repeat=$2; shift 2 ;;
    --mca) need_value "$@"
        echo "$2" | grep -Eq '^[a-z_0-9]+=[^ ]+$' || die "--mca '$2': expected NAME=VALUE"
        mca="$mca $2"; shift 2 ;;
    --wait) need_value "$@"; waitmode=$2; shift 2 ;;
    --batch) need_value "$@"; batch=$2; shift 2 ;;
    --period) need_value "$@"; period=$2; shift 2 ;;
    --smoke) smoke=yes; shift ;;
    --) shift; break ;;
    -h|--help) sed -n '2,/^set -eu/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown option '$1' (see --help)" ;;
    esac
done
[ -n "$quota" ] || die "--quota is required, e.g. --quota 0.4,0.4,0.2,0.1"
echo "$quota" | grep -Eq '^(0?\.[0-9]+|1(\.0*)?)(,(0?\.[0-9]+|1(\.0*)?))+$' \
    || die "--quota '$quota': expected two or more numbers in (0, 1] separated by commas"
for q in $(echo "$quota" | tr ',' ' '); do
    awk -v q="$q" 'BEGIN { exit !(q > 0.001 && q <= 1) }' || die "--quota: $q: expected a number in (0.001, 1]"
done
case $period in
'' | *[!0-9]*) die "--period '$period': expected a whole number of microseconds in 1000-1000000" ;;
esac
[ "$period" -ge 1000 ] && [ "$period" -le 1000000 ] \
    || die "--period '$period': expected a whole number of microseconds in 1000-1000000"
for q in $(echo "$quota" | tr ',' ' '); do
    awk -v q="$q" -v p="$period" 'BEGIN { exit !(q * p >= 1000) }' \
        || die "--period $period: quota $q of it is under 1000 us, the kernel's least; use a longer period"
done
case $steps in
''|*[!0-9]*) die "--steps '$steps': expected an integer from 10 to 100000" ;;
esac
[ "$steps" -ge 10 ] && [ "$steps" -le 100000 ] || die "--steps '$steps': expected an integer from 10 to 100000"
case $repeat in
''|*[!0-9]*) die "--repeat '$repeat': expected an integer from 1 to 99" ;;
esac
[ "$repeat" -ge 1 ] && [ "$repeat" -le 99 ] || die "--repeat '$repeat': expected an integer from 1 to 99"
case $waitmode in
poll|sleep) ;;
*) die "--wait '$waitmode': expected sleep or poll" ;;
esac
case $batch in
''|*[!0-9]*) die "--batch '$batch': expected an integer from 16 to 8192" ;;
esac
[ "$batch" -ge 16 ] && [ "$batch" -le 8192 ] || die "--batch '$batch': expected an integer from 16 to 8192"
for p in $(echo "$policies" | tr ',' ' '); do
    case $p in
    static|omnibatch|chunks) ;;
    *) die "--policies: unknown policy '$p' (expected some of static,omnibatch,chunks)" ;;
    esac
done
builddir=$(cd "$builddir" 2>/dev/null && pwd) || die "--builddir: not a directory"
hetsgd=$builddir/bench/hetsgd/hetsgd
[ -x "$hetsgd" ] || die "$hetsgd not built (run make first)"
# Each rank joins its cgroup by OMPI_COMM_WORLD_RANK, and the runs pass
# their settings with -x: Open MPI's mpirun only.
case $("${MPIRUN:-mpirun}" --version 2>&1) in
*"Open MPI"* | *OpenRTE*) ;;
*) die "MPIRUN='${MPIRUN:-mpirun}': not Open MPI's mpirun (the quota runs need its -x and OMPI_COMM_WORLD_RANK)" ;;
esac
np=$(echo "$quota" | tr ',' '\n' | wc -l)
skip_rc=0
[ yes = "$smoke" ] && skip_rc=77

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=bench/hetsgd/cgroup.sh
. "$here/cgroup.sh"
# The cpu controller: v1 if writable, else v2 with cpu enabled for children.
v1=/sys/fs/cgroup/cpu
v2=/sys/fs/cgroup
group=
kind=
if [ -d "$v1" ] && [ -w "$v1" ] && [ -f "$v1/cpu.cfs_quota_us" ]; then
    kind=v1; group=$v1/omnibatch-quota.$$
elif [ -f "$v2/cgroup.subtree_control" ] && grep -qw cpu "$v2/cgroup.subtree_control" 2>/dev/null \
    && [ -w "$v2" ]; then
    kind=v2; group=$v2/omnibatch-quota.$$
fi
if [ -z "$kind" ] || ! mkdir "$group" 2>/dev/null; then
    echo "hetsgd/run.sh: no writable cgroup cpu controller here (v1 $v1, v2 cpu.max): nothing measured"
    exit "$skip_rc"
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/hetsgd-quota.XXXXXX")
# kill_tree PID: the processes this script started under PID, deepest first.
kill_tree() {
    for child in $(cat /proc/"$1"/task/*/children 2>/dev/null); do
        kill_tree "$child"
        kill -KILL "$child" 2>/dev/null || true
    done
}
cleanup() {
    rc=$?
    trap - EXIT INT TERM HUP
    kill_tree $$
    # Our groups only; a process still in one (a run cut short) is ours.
    cgroup_release "$group"
    rm -rf "$work"
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

[ v2 = "$kind" ] && echo "+cpu" > "$group/cgroup.subtree_control" 2>/dev/null || true
i=0
for q in $(echo "$quota" | tr ',' ' '); do
    g=$group/rank$i
    mkdir "$g" || die "cannot create $g"
    us=$(awk -v q="$q" -v p="$period" 'BEGIN { printf "%d", q * p }')
    if [ v1 = "$kind" ]; then
        echo "$period" > "$g/cpu.cfs_period_us" && echo "$us" > "$g/cpu.cfs_quota_us" \
            || die "cannot set the quota of $g"
    else
        echo "$us $period" > "$g/cpu.max" || die "cannot set cpu.max of $g"
    fi
    i=$((i + 1))
done
# Each rank joins its group and runs hetsgd; then it writes the CPU seconds
# hetsgd used (user + system, from the shell's times) and its start and end
# to cpu.rankR.
cat > "$work/join" <<EOF
#!/bin/sh
r=\${OMPI_COMM_WORLD_RANK:?not under Open MPI}
echo \$\$ > "$group/rank\$r/cgroup.procs" || exit 1
t0=\$(date +%s.%N)
"\$@"
rc=\$?
t1=\$(date +%s.%N)
times > "$work/times.rank\$r"
echo "\$(sed -n 2p "$work/times.rank\$r") \$t0 \$t1" > "$work/cpu.rank\$r"
exit \$rc
EOF
chmod +x "$work/join"

keep=${out:-$work}
[ -n "$out" ] && { mkdir -p "$out" || die "--out '$out': cannot create it"; }
# Evaluated after the last step only: an evaluation is off the training
# clock, but its CPU is paid out of the quota (a 0.1-core rank's quarter of the
# test set costs it a period's quota), and the next steps would pay for it.
if [ yes = "$smoke" ]; then
    batch=64
    warm=4
    hargs="--batch $batch --subset 512 --max-steps 12 --warmup $warm --last-eval-only"
else
    warm=$((steps / 4))
    # --max-steps ends the run: an epoch has a step at least (hetsgd's
    # default of 8 epochs would end it at 64 steps at batch 1024).
    hargs="--batch $batch --subset 8192 --epochs $steps --max-steps $steps --warmup $warm --last-eval-only"
fi

# The single-copy transfer (CMA: process_vm_readv), Open MPI's own default
# where the kernel allows it: a 940 KB gradient moves in one copy, 0.3 ms of
# CPU against 0.45 through the shared-memory queues, which a 0.1-core rank
# pays out of its quota. Containers often forbid the system call (Open MPI
# then prints "Read -1, expected ..."), so a short 2-rank run decides; the
# smoke run keeps the project's default, none. A --mca of it replaces either.
copy=none
case " $mca" in
*" btl_vader_single_copy_mechanism="*) smoke_or_given=yes ;;
*) smoke_or_given=$smoke ;;
esac
if [ yes != "$smoke_or_given" ]; then
    if timeout --signal=TERM --kill-after=5 60 "${MPIRUN:-mpirun}" -np 2 --oversubscribe --allow-run-as-root \
        --bind-to none --mca btl self,vader --mca btl_vader_single_copy_mechanism cma \
        "$hetsgd" --policy static --slowdown 1 --no-own-wait --data "$data" \
        --batch 64 --subset 512 --max-steps 3 --warmup 1 > "$work/cma.out" 2>&1 &&
        ! grep -q 'Read -1\|errno' "$work/cma.out"; then
        copy=cma
    else
        echo "quota: the single-copy transfer (CMA) fails here; the runs move data through the shared-memory queues" \
            "(btl_vader_single_copy_mechanism none; the trial's last line: $(tail -1 "$work/cma.out"))"
    fi
fi
# Open MPI's parameters: the script's own, each unless --mca gave its name,
# then those of --mca.
mcaflags=
for kv in btl=self,vader btl_vader_single_copy_mechanism=$copy; do
    case " $mca" in
    *" ${kv%%=*}="*) ;;
    *) mcaflags="$mcaflags --mca ${kv%%=*} ${kv#*=}" ;;
    esac
done
for kv in $mca; do
    mcaflags="$mcaflags --mca ${kv%%=*} ${kv#*=}"
done

steady() {
    sed -n 's/.*steady_step_s=\([0-9.e+-]*\).*/\1/p' "$1" | tail -1
}
# throttled R: "periods throttled_ns" of rank R's group so far.
throttled() {
    if [ v1 = "$kind" ]; then
        awk '$1 == "nr_throttled" { n = $2 } $1 == "throttled_time" { t = $2 } END { print n + 0, t + 0 }' \
            "$group/rank$1/cpu.stat"
    else
        awk '$1 == "nr_throttled" { n = $2 } $1 == "throttled_usec" { t = $2 * 1000 } END { print n + 0, t + 0 }' \
            "$group/rank$1/cpu.stat"
    fi
}
# cpu_share R: "CPU/wall" seconds of rank R's last run, the whole process
# ("0m1.23s 0m0.45s T0 T1").
cpu_share() {
    awk '{ s = 0; for (i = 1; i <= 2; i++) { split($i, a, "m"); sub(/s$/, "", a[2]); s += 60 * a[1] + a[2] }
           printf "%.2f/%.2f", s, $4 - $3 }' "$work/cpu.rank$1"
}
jnum() {
    sed -n "s/^  \"$2\": \([0-9.e+-]*\),.*/\1/p" "$1" | head -1
}
# OB_MPIRUN_ENV's variables, for every run's ranks.
envflags=
for kv in ${OB_MPIRUN_ENV:-}; do
    envflags="$envflags -x $kv"
done
# run_pair DIR [hetsgd options]: each policy once, its outputs in
# DIR/quota-POLICY.*
run_pair() {
    pair=$1
    shift
    for p in $(echo "$policies" | tr ',' ' '); do
        f=$pair/quota-$p
        i=0
        while [ "$i" -lt "$np" ]; do
            throttled "$i" > "$work/throttled0.rank$i"
            i=$((i + 1))
        done
        # In the background and waited for, so that a signal to this script is
        # acted on at once (the shell runs a trap only after a foreground command).
        # shellcheck disable=SC2086
        timeout --signal=TERM --kill-after=10 900 "${MPIRUN:-mpirun}" -np "$np" --oversubscribe \
            --allow-run-as-root --bind-to none $mcaflags $envflags -x OMNIBATCH_REPORT=json -x OMNIBATCH_REPORT_FILE="$f.json" -x OMNIBATCH_WAIT="$waitmode" \
            "$work/join" "$hetsgd" --policy "$p" --slowdown 1 --no-own-wait --data "$data" $hargs \
            --summary "$f.summary" \
            --trace "$f.csv" \
            "$@" > "$f.out" 2>&1 &
        if ! wait $!; then
            tail -5 "$f.out" >&2
            die "hetsgd --policy $p failed (output: $f.out)"
        fi
        # What each rank used of its quota: CPU seconds over the process's wall
        # time, and how often the quota ran out.
        line="quota: $p: per rank CPU s/wall s (quota), periods throttled, s throttled:"
        i=0
        for q in $(echo "$quota" | tr ',' ' '); do
            diff=$(echo "$(throttled "$i") $(cat "$work/throttled0.rank$i")" |
                awk '{ printf "%d %.2f", $1 - $3, ($2 - $4) * 1e-9 }')
            line="$line rank $i $(cpu_share "$i") ($q) $diff;"
            i=$((i + 1))
        done
        echo "$line" > "$f.cpu"
    done
}
echo "quota: $np ranks, CPU quota $quota of a core (cgroup $kind, period ${period} us), global batch $batch," \
    "OMNIBATCH_WAIT=$waitmode, Open MPI:$mcaflags, evaluated after the last step only"
# summarise DIR: the lines of one pair; DIR/ratios gets its omnibatch/static,
# omnibatch/limit, chunks/static and chunks/limit (NA where not measured).
summarise() {
    echo "NA NA" > "$1/ratios"
    echo "NA NA" > "$1/ratios.chunks"
    cat "$1"/quota-*.cpu 2>/dev/null || true
    if [ -f "$1/quota-static.summary" ]; then
        st=$(steady "$1/quota-static.summary")
        limit=$(jnum "$1/quota-static.json" predicted_step_time_s)
        now=$(jnum "$1/quota-static.json" predicted_now_s)
        red=$(jnum "$1/quota-static.json" reduction_s)
        verdict=$(sed -n 's/^  "verdict": "\([^"]*\)".*/\1/p' "$1/quota-static.json")
        echo "quota: static steady step $(awk -v x="$st" 'BEGIN { printf "%.2f", 1e3 * x }') ms; its report:" \
            "$verdict, predicted now $(awk -v x="$now" 'BEGIN { printf "%.2f", 1e3 * x }') ms," \
            "reduction $(awk -v x="$red" 'BEGIN { printf "%.2f", 1e3 * x }') ms"
        # The limit (the header): each rank's CPU seconds per sample k_i over a
        # run's steady steps, the least of the runs' (the machine's speed
        # drifts between runs, and a bound must take the faster); its CPU per
        # step outside the compute F_i and the reduction R, each the least over
        # the steady steps of all runs.
        kappa=$(awk -F, -v w="$warm" 'FNR > 1 && $1 >= w { c[FILENAME, $2] += $8; b[FILENAME, $2] += $4; f[FILENAME] = 1; n[$2] = 1 }
            END {
                for (r = 0; r in n; r++) {
                    k = 0
                    for (x in f) if (b[x, r] > 0 && (k == 0 || c[x, r] / b[x, r] < k)) k = c[x, r] / b[x, r]
                    printf "%s%.9g", (r ? "," : ""), k
                }
            }' "$1"/quota-*.csv)
        floors=$(awk -F, -v w="$warm" 'FNR > 1 && $1 >= w {
                f = $9 - $8; k = FILENAME SUBSEP $1
                if (!($2 in F) || f < F[$2]) F[$2] = f
                b = $6 - $5; if (!(k in least) || b < least[k]) least[k] = b
                if ($9 == "" || $9 <= 0) none = 1
            }
            END {
                R = -1; for (k in least) if (R < 0 || least[k] < R) R = least[k]
                if (none || R < 0) { print "NA"; exit }
                for (r = 0; r in F; r++) printf("%s%.9g", (r ? "," : ""), (F[r] > 0 ? F[r] : 0))
                printf " %.9g\n", R
            }' "$1"/quota-*.csv)
        qlimit=NA
        if [ NA != "$floors" ]; then
            qlimit=$(awk -v q="$quota" -v k="$kappa" -v f="${floors% *}" -v R="${floors#* }" -v B="$batch" 'BEGIN {
                n = split(q, qs, ","); split(k, ks, ","); split(f, fs, ",")
                for (i = 1; i <= n; i++) if (!(ks[i] > 0)) { print "NA"; exit }
                lo = R; hi = R + 1e-3
                while (cap(hi) < B && hi < 1e6) hi *= 2
                for (it = 0; it < 100; it++) { mid = (lo + hi) / 2; if (cap(mid) >= B) hi = mid; else lo = mid }
                printf "%.9g\n", hi
            }
            function cap(T,   i, s, a, b) {
                s = 0
                for (i = 1; i <= n; i++) {
                    a = (qs[i] * T - fs[i]) / ks[i]; b = (T - R) / ks[i]
                    a = a < b ? a : b; s += a > 0 ? a : 0
                }
                return s
            }')
            echo "quota: CPU per sample (the least of the runs') $(echo "$kappa" | awk -F, '{ for (i = 1; i <= NF; i++) printf "%s%.3g", (i > 1 ? "," : ""), $i * 1e3 }') ms," \
                "CPU per step outside the compute (least) $(echo "${floors% *}" | awk -F, '{ for (i = 1; i <= NF; i++) printf "%s%.2f", (i > 1 ? "," : ""), $i * 1e3 }') ms," \
                "reduction (least) $(awk -v x="${floors#* }" 'BEGIN { printf "%.2f", 1e3 * x }') ms"
        fi
        echo "quota: the static report's predicted step $(awk -v x="$limit" 'BEGIN { printf "%.2f", 1e3 * x }') ms" \
            "(its throughput and mean reduction, both stretched by throttling: not a bound);" \
            "limit (the quotas' CPU) $(awk -v x="$qlimit" 'BEGIN { if (x == "NA") print "NA"; else printf "%.2f ms", 1e3 * x }')"
        if [ -f "$1/quota-omnibatch.summary" ]; then
            ob=$(steady "$1/quota-omnibatch.summary")
            awk -v st="$st" -v ob="$ob" -v ql="$qlimit" 'BEGIN {
                if (ql == "NA") {
                    printf "quota: omnibatch steady step %.2f ms; omnibatch/static %.3f; no limit (a trace without the step CPU)\n", 1e3 * ob, ob / st
                    exit
                }
                printf "quota: omnibatch steady step %.2f ms; omnibatch/static %.3f; limit %.2f ms, limit/static %.3f; omnibatch/limit %.3f (target <= 1.10: %s)\n",
                    1e3 * ob, ob / st, 1e3 * ql, ql / st, ob / ql, ob / ql <= 1.10 ? "met" : "MISSED"
            }'
            awk -v st="$st" -v ob="$ob" -v ql="$qlimit" 'BEGIN {
                printf "%.9g %s\n", ob / st, ql == "NA" ? "NA" : sprintf("%.9g", ob / ql) }' > "$1/ratios"
            # What omnibatch's own split asked of the quotas: each rank's mean CPU
            # per steady step over its quota, the most of them. A steady step
            # above it waited for ranks the kernel stopped.
            awk -F, -v w="$warm" -v q="$quota" -v ob="$ob" 'BEGIN { split(q, qs, ",") }
                NR > 1 && $1 >= w && $9 > 0 { s[$2] += $9; n[$2]++ }
                END {
                    m = -1; for (r = 0; r in n; r++) { x = s[r] / n[r] / qs[r + 1]; if (x > m) { m = x; at = r } }
                    if (m <= 0) exit
                    printf "quota: omnibatch asked the quotas for %.2f ms a step (rank %d: mean step CPU / quota); its steady step is %.3fx that (above 1: waits for a rank the kernel stopped)\n",
                        1e3 * m, at, ob / m
                }' "$1/quota-omnibatch.csv"
        fi
        if [ -f "$1/quota-chunks.summary" ]; then
            chunks "$1" "$st" "$qlimit"
        fi
    else
        # --policies without static: the steady steps alone.
        for p in omnibatch chunks; do
            if [ -f "$1/quota-$p.summary" ]; then
                awk -v p="$p" -v x="$(steady "$1/quota-$p.summary")" 'BEGIN {
                    printf "quota: %s steady step %.2f ms; no static run, so no limit and no ratios (both are measured from it)\n", p, 1e3 * x }'
            fi
        done
    fi
    paste -d ' ' "$1/ratios" "$1/ratios.chunks" > "$1/ratios.all" && mv "$1/ratios.all" "$1/ratios"
    rm -f "$1/ratios.chunks"
}
# chunks DIR STATIC LIMIT: the chunks run's line beside static's steady step and the limit, with
# the samples that moved (its summary); DIR/ratios.chunks gets chunks/static and chunks/limit.
chunks() {
    ch=$(steady "$1/quota-chunks.summary")
    ob=NA
    [ ! -f "$1/quota-omnibatch.summary" ] || ob=$(steady "$1/quota-omnibatch.summary")
    moved=$(sed -n 's/.* moved_share=\([0-9.e+-]*\).*/\1/p' "$1/quota-chunks.summary" | tail -1)
    awk -v st="$2" -v ch="$ch" -v ob="$ob" -v ql="$3" -v moved="$moved" 'BEGIN {
        line = sprintf("quota: chunks steady step %.2f ms; chunks/static %.3f; chunks/omnibatch %s; ", 1e3 * ch, ch / st,
            ob == "NA" ? "NA" : sprintf("%.3f", ch / ob))
        if (ql == "NA")
            line = line "no limit (a trace without the step CPU)"
        else
            line = line sprintf("chunks/limit %.3f (target <= 1.10: %s)", ch / ql, ch / ql <= 1.10 ? "met" : "MISSED")
        printf "%s; %.1f%% of the samples moved\n", line, 100 * moved
    }'
    awk -v st="$2" -v ch="$ch" -v ql="$3" 'BEGIN {
        printf "%.9g %s\n", ch / st, ql == "NA" ? "NA" : sprintf("%.9g", ch / ql) }' > "$1/ratios.chunks"
}
if [ 1 -eq "$repeat" ]; then
    run_pair "$keep" "$@"
    summarise "$keep"
else
    k=1
    while [ "$k" -le "$repeat" ]; do
        mkdir -p "$keep/pair$k" || die "cannot create $keep/pair$k"
        run_pair "$keep/pair$k" "$@"
        echo "quota: pair $k of $repeat (outputs in $keep/pair$k):"
        summarise "$keep/pair$k"
        k=$((k + 1))
    done
    # The median and the spread of each ratio over the pairs, for omnibatch (columns 1 and 2 of
    # the ratios) and chunks (3 and 4).
    for who in omnibatch:1 chunks:3; do
        for k in $(seq 1 "$repeat"); do cat "$keep/pair$k/ratios"; done | awk -v n="$repeat" -v who="${who%:*}" -v c="${who#*:}" '
            function med(a, m,   i, j, t) {
                for (i = 2; i <= m; i++) for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
                return m % 2 ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2
            }
            $c != "NA" && $c != "" { s[++ns] = $c } $(c + 1) != "NA" && $(c + 1) != "" { l[++nl] = $(c + 1) }
            END {
                if (ns == 0) exit
                ms = med(s, ns)
                line = sprintf("quota: over %d pairs: %s/static median %.3f (%d pairs, %.3f-%.3f)", n, who, ms, ns, s[1], s[ns])
                if (nl > 0) {
                    ml = med(l, nl)
                    line = line sprintf("; %s/limit median %.3f (%d pairs, %.3f-%.3f; target <= 1.10 on the median: %s)",
                        who, ml, nl, l[1], l[nl], ml <= 1.10 ? "met" : "MISSED")
                }
                print line
            }'
    done
fi
[ -n "$out" ] && echo "quota: outputs in $out"
exit 0
