#!/bin/sh
# bench/hosts/run.sh: omnibatch across several hosts, for real, on one machine.
#
# As root, builds N network namespaces, each with its own host name (a UTS
# namespace) and its own /etc/hosts (a mount namespace), joined by veth pairs
# on a bridge with a private /24 of their own, and launches Open MPI across
# them over TCP: mpirun runs in the first namespace, and its rsh agent is a
# small wrapper that enters the namespace of the host named (ip netns exec).
# Three cases, each with hetsgd (static and omnibatch, side by side) and the
# preload on an unmodified program (tests/mpi/mpi_straggler):
#   equal      equal hosts
#   slowcpu    the last host computes at half speed (hetsgd --speeds; the
#              unmodified program's slow rank)
#   slowlink   the last host's link is rate-limited both ways (tc tbf)
# It prints one table: static and omnibatch steady step time, their ratio,
# and the verdict of omnibatch's report (for hetsgd's static run, and for
# the unmodified program).  With --repeat N each case runs N pairs, the
# order of static and omnibatch swapped each time, and the table gives the
# medians and the median of the pairs' ratios with their range: on a shared
# machine two runs of the same split differ by more than the 2% a slow link
# is judged on.
# The slow CPU case runs the oracle (the split that knows the speeds) and
# the chunked step (hetsgd --policy chunks: each step worked in chunks that
# move to a free rank, across hosts through requests answered between
# chunks) beside static and omnibatch, the four policies' order rotated in
# each repetition, all four emulating one cost calibrated on the hosts
# (hetsgd --calibrate, then --cost), and all four waiting asleep
# (OMNIBATCH_WAIT=sleep: the chunked step waits inside its last chunk
# call, where hetsgd's own wait cannot keep its waiting ranks off the cores
# a slower rank computes on; the gradient's allreduce polling on a crowded
# machine took 13-40 ms against 11-15 asleep, so all four reduce alike).  A
# second table gives each repetition's steady steps, chunks/oracle and
# omnibatch/oracle, the share of the step's samples that moved (one rank a
# host: every one crossed hosts) and the chunks per rank and step, then the
# median chunks/oracle with its range against the target (<= 1.05).
# Everything it made (namespaces, links, bridge, qdiscs, files, processes)
# is removed on exit, also on failure.
#
# Where namespaces cannot be made (not root, no ip/unshare/tc, no
# permission) it says so in one line and exits 0, with nothing measured
# (77 with --smoke, so that make check counts a skip).
#
# Usage: bench/hosts/run.sh [options]
#   --builddir DIR   the build (default: $top_builddir or .)
#   --hosts N        hosts (namespaces), 2 to 8 (default 3)
#   --rate R         the slow link's rate, as tc reads it (default 100mbit)
#   --steps N        hetsgd steps per run (default 60)
#   --batch N        hetsgd's global batch, from the hosts' number to the data's
#                    4096 samples (default 256; --smoke: 64, of 512): beside a
#                    larger plan a chunk's fixed part weighs less
#   --cases LIST     of equal,slowcpu,slowlink (default all)
#   --repeat N       pairs of runs per case, 1 to 20 (default 3; --smoke: 2)
#   --chunk-floor N  OMNIBATCH_CHUNK_FLOOR of the chunked step's runs: least samples
#                    of a chunk (default 0: the library's own, B / (32 P))
#   --cost A,B,C     the slow CPU case's cost instead of calibrating it (hetsgd
#                    --cost: seconds a step, a sample, a chunk after a step's
#                    first), so that two builds' runs emulate one cost
#   --slowdown X     hetsgd's emulation slowdown, the same for every run (default 10:
#                    three ranks computing at once on a shared 2-core machine ran
#                    4-8x their CPU time, so a smaller one measures the crowding)
#   --smoke          a short check that the hosts work: one tiny run per case
#   --out DIR        keep the runs' outputs there (default: a temporary directory)
#   --data DIR       Fashion-MNIST IDX files (default /usr/share/datasets/fashion-mnist)
#   --help           this text
# Environment: MPIRUN (default mpirun).
set -eu

die() {
    echo "bench-hosts: $*" >&2
    exit 2
}
need_value() {
    [ $# -ge 2 ] || die "$1 needs a value (see --help)"
}

srcdir=$(cd "$(dirname "$0")/../.." && pwd)
builddir=${top_builddir:-.}
hosts=3
rate=100mbit
steps=60
batch=
cases="equal,slowcpu,slowlink"
repeat=
smoke=no
slowdown=10
chunk_floor=0
out=
data=/usr/share/datasets/fashion-mnist
given_cost=
while [ $# -gt 0 ]; do
    case $1 in
    --builddir) need_value "$@"; builddir=$2; shift 2 ;;
    --hosts) need_value "$@"; hosts=$2; shift 2 ;;
    --rate) need_value "$@"; rate=$2; shift 2 ;;
    --steps) need_value "$@"; steps=$2; shift 2 ;;
    --batch) need_value "$@"; batch=$2; shift 2 ;;
    --cases) need_value "$@"; cases=$2; shift 2 ;;
    --repeat) need_value "$@"; repeat=$2; shift 2 ;;
    --smoke) smoke=yes; shift ;;
    --slowdown) need_value "$@"; slowdown=$2; shift 2 ;;
    --chunk-floor) need_value "$@"; chunk_floor=$2; shift 2 ;;
    --cost) need_value "$@"; given_cost=$2; shift 2 ;;
    --out) need_value "$@"; out=$2; shift 2 ;;
    --data) need_value "$@"; data=$2; shift 2 ;;
    -h|--help) sed -n '2,/^set -eu/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown option '$1' (see --help)" ;;
    esac
done
case $hosts in
[2-8]) ;;
*) die "--hosts '$hosts': expected an integer from 2 to 8" ;;
esac
[ -n "$repeat" ] || { [ yes = "$smoke" ] && repeat=2 || repeat=3; }
case $repeat in
[1-9] | 1[0-9] | 20) ;;
*) die "--repeat '$repeat': expected an integer from 1 to 20" ;;
esac
case $steps in
''|*[!0-9]*) die "--steps '$steps': expected an integer from 20 to 100000" ;;
esac
[ "$steps" -ge 20 ] && [ "$steps" -le 100000 ] || die "--steps '$steps': expected an integer from 20 to 100000"
subset=4096
[ yes = "$smoke" ] && subset=512
[ -n "$batch" ] || { [ yes = "$smoke" ] && batch=64 || batch=256; }
case $batch in
''|*[!0-9]*) die "--batch '$batch': expected an integer from $hosts to $subset" ;;
esac
[ "$batch" -ge "$hosts" ] && [ "$batch" -le "$subset" ] || die "--batch '$batch': expected an integer from $hosts to $subset"
case $chunk_floor in
''|*[!0-9]*) die "--chunk-floor '$chunk_floor': expected an integer from 0 to the global batch" ;;
esac
num='[0-9]+(\.[0-9]*)?([eE][-+]?[0-9]+)?'
[ -z "$given_cost" ] || echo "$given_cost" | grep -Eq "^$num,$num,$num\$" \
    || die "--cost '$given_cost': expected three numbers A,B,C (seconds a step, a sample, a chunk)"
echo "$rate" | grep -Eq '^[0-9]+(\.[0-9]+)?([kmg]?bit|[kmg]?bps)$' \
    || die "--rate '$rate': expected a rate as tc reads it, e.g. 100mbit"
for c in $(echo "$cases" | tr ',' ' '); do
    case $c in
    equal|slowcpu|slowlink) ;;
    *) die "--cases: unknown case '$c' (expected some of equal,slowcpu,slowlink)" ;;
    esac
done
awk -v x="$slowdown" 'BEGIN { exit !(x + 0 >= 1 && x + 0 <= 1000) }' </dev/null 2>/dev/null \
    && echo "$slowdown" | grep -Eq '^[0-9]+(\.[0-9]+)?$' || die "--slowdown '$slowdown': expected a number from 1 to 1000"
builddir=$(cd "$builddir" 2>/dev/null && pwd) || die "--builddir: not a directory"
hetsgd=$builddir/bench/hetsgd/hetsgd
straggler=$builddir/tests/mpi/mpi_straggler
lib=$builddir/.libs/libomnibatch.so
for f in "$hetsgd" "$straggler"; do
    [ -x "$f" ] || die "$f not built (run make and make check's programs: make -C $builddir check TESTS=)"
done
[ -f "$lib" ] || die "$lib not built (run make first)"
mpirun=${MPIRUN:-mpirun}

skip_rc=0
[ yes = "$smoke" ] && skip_rc=77
cannot() {
    echo "bench-hosts: cannot make network namespaces here ($*): nothing measured"
    exit "$skip_rc"
}
# shellcheck source=bench/hosts/lib.sh
. "$srcdir/bench/hosts/lib.sh"
hosts_can_make "$mpirun"

# ------------------------------------------------------------- what we make
work=$(mktemp -d "${TMPDIR:-/tmp}/bench-hosts.XXXXXX")
cleanup() {
    rc=$?
    trap - EXIT INT TERM HUP
    hosts_kill_tree $$
    hosts_remove
    rm -rf "$work"
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

hosts_make "$hosts" "$work" "obh$$"
last=$((hosts - 1))
subnet=$hosts_subnet

# A run as host 0: mpirun over TCP on our /24 only, one rank per host.
mpi_run() {
    limit=$1; shift
    hosts_mpirun "$limit" "$hosts" "$mpirun" -x OMNIBATCH_REPORT=json "$@"
}

slow_link() {
    # Both directions of the last host's link: out of its eth0, and out of
    # the bridge's port toward it.
    for spec in "ip netns exec $(hosts_ns "$last") tc qdisc replace dev eth0" "tc qdisc replace dev $(hosts_port "$last")"; do
        # shellcheck disable=SC2086
        $spec root tbf rate "$rate" burst 64kb latency 100ms || die "tc tbf failed on the last host's link"
    done
}
fast_link() {
    ip netns exec "$(hosts_ns "$last")" tc qdisc del dev eth0 root 2>/dev/null || true
    tc qdisc del dev "$(hosts_port "$last")" root 2>/dev/null || true
}

# ------------------------------------------------------------- the runs
if [ yes = "$smoke" ]; then
    steps=20
    targs="--subset $subset --batch $batch --max-steps $steps --warmup 5 --slowdown $slowdown"
    ssteps=24
else
    targs="--subset $subset --batch $batch --max-steps $steps --warmup $((steps / 4)) --slowdown $slowdown"
    ssteps=$((steps * 2))
fi
[ -n "$out" ] && { mkdir -p "$out" || die "--out '$out': cannot create it"; }
keep=${out:-$work}

# chunks_verdict: the slow CPU case's medians under its rows, and the
# target's line: chunks/oracle on the median, samples moved in every run.
chunks_verdict() {
    awk 'NR > 1 { for (i = 2; i <= 9; i++) v[i, NR - 1] = $i; n = NR - 1 }
         function med(i,   a, j, m, t, x, y) {
             m = 0
             for (j = 1; j <= n; j++) a[++m] = v[i, j] + 0
             for (x = 1; x <= m; x++) for (y = x + 1; y <= m; y++) if (a[y] < a[x]) { t = a[x]; a[x] = a[y]; a[y] = t }
             return m % 2 ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2
         }
         function lo(i,   j, r) { r = v[i, 1] + 0; for (j = 2; j <= n; j++) if (v[i, j] + 0 < r) r = v[i, j] + 0; return r }
         function hi(i,   j, r) { r = v[i, 1] + 0; for (j = 2; j <= n; j++) if (v[i, j] + 0 > r) r = v[i, j] + 0; return r }
         END {
             if (n == 0) exit
             printf "%-6s %10.2f %13.2f %10.2f %10.2f %14.3f %17.3f %7.2f %11.1f\n", "median", med(2), med(3),
                    med(4), med(5), med(6), med(7), med(8), med(9)
             moved = 1
             for (j = 1; j <= n; j++) if (v[8, j] + 0 <= 0) moved = 0
             printf "chunks/oracle: median %.3f (range %.3f-%.3f) over %d repetition(s): target <= 1.05: %s; " \
                    "samples moved across hosts in %s run (median %.2f%% of the step)\n", med(6), lo(6), hi(6), n,
                    (med(6) <= 1.05 ? "met" : "MISSED"), (moved ? "every" : "NOT every"), med(8)
         }' "$work/chunks" > "$work/chunks.end"
    cat "$work/chunks.end" >> "$work/chunks"
}

# verdict FILE: the verdict of the JSON report in FILE, and the host it names.
verdict() {
    v=$(sed -n 's/^  "verdict": "\([^"]*\)".*/\1/p' "$1" | head -1)
    h=$(sed -n 's/^  "slow_link_host": "\([^"]*\)".*/\1/p' "$1" | head -1)
    s=$(sed -n 's/^  "slowest_host": "\([^"]*\)".*/\1/p' "$1" | head -1)
    c=$(sed -n 's/^  "starved_hosts": \[\(.*\)\],*$/\1/p' "$1" | head -1 | tr -d '"')
    case $v in
    communication-bound) echo "$v${h:+ (slow link: $h)}" ;;
    compute-imbalanced) echo "$v${s:+ (slowest: $s)}${c:+ (starved: $c)}" ;;
    cpu-starved) echo "$v${c:+ (starved: $c)}" ;;
    '') echo "none" ;;
    *) echo "$v" ;;
    esac
}
steady_ms() {
    sed -n 's/.*steady_step_s=\([0-9.e+-]*\).*/\1/p' "$1" | tail -1 | awk '{ printf "%.2f", 1e3 * $1 }'
}
# median: of the numbers on standard input, one per line.
median() {
    sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "NA"; else if (NR % 2) print v[(NR + 1) / 2];
                                        else printf "%.3f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
# hetsgd_run CASE POLICY K: one hetsgd run into $keep/CASE-POLICY.K.*, with
# $cost_args and $penv (the slow CPU case's settings, the header) where set.
hetsgd_run() {
    f=$keep/$1-$2.$3
    fenv=$penv
    [ chunks = "$2" ] && fenv="$fenv -x OMNIBATCH_CHUNK_FLOOR=$chunk_floor"
    # shellcheck disable=SC2086
    if ! mpi_run 600 -x OMNIBATCH_REPORT_FILE="$f.json" $fenv "$hetsgd" --policy "$2" \
        ${speeds:+--speeds "$speeds"} --data "$data" $targs $cost_args --summary "$f.summary" \
        > "$f.out" 2>&1; then
        tail -5 "$f.out" >&2
        die "case $1: hetsgd --policy $2 failed (output: $f.out)"
    fi
}

# rotate K WORDS...: the words from the ((K - 1) mod count)-th on, then the
# ones before (K = 1: as given; two words: swapped in even repetitions).
rotate() {
    _k=$1
    shift
    _n=$(( (_k - 1) % $# ))
    while [ "$_n" -gt 0 ]; do
        _w=$1
        shift
        set -- "$@" "$_w"
        _n=$((_n - 1))
    done
    echo "$*"
}
# summary_key FILE KEY: KEY's value in the summary FILE's last line.
summary_key() {
    sed -n "s/.* $2=\([^ ]*\).*/\1/p" "$1" | tail -1
}
# calibrate CASE: the cost every policy of CASE emulates, --cost's or hetsgd's
# --calibrate on the hosts, into $cost_args (and $chunks_cost, for the
# table's heading).
calibrate() {
    f=$keep/$1-calibrate
    if [ -n "$given_cost" ]; then
        cost_args="--cost $given_cost"
        chunks_cost=$given_cost
        return 0
    fi
    # shellcheck disable=SC2086
    if ! mpi_run 300 "$hetsgd" ${speeds:+--speeds "$speeds"} --data "$data" $targs --calibrate > "$f.out" 2>&1; then
        tail -5 "$f.out" >&2
        die "case $1: hetsgd --calibrate failed (output: $f.out)"
    fi
    cost=$(sed -n 's/^hetsgd: cost \([^ ]*\)$/\1/p' "$f.out")
    [ -n "$cost" ] || die "case $1: hetsgd --calibrate printed no cost (output: $f.out)"
    cost_args="--cost $cost"
    chunks_cost=$cost
}
# chunks_row K: repetition K of the slow CPU case's four policies, one row of
# $work/chunks (steady ms of each, chunks/oracle, omnibatch/oracle, moved
# share in %, chunks per rank and step).
chunks_row() {
    ch=$keep/slowcpu-chunks.$1.summary
    awk -v k="$1" -v s="$(steady_ms "$keep/slowcpu-static.$1.summary")" \
        -v o="$(steady_ms "$keep/slowcpu-omnibatch.$1.summary")" -v q="$(steady_ms "$keep/slowcpu-oracle.$1.summary")" \
        -v c="$(steady_ms "$ch")" \
        -v m="$(summary_key "$ch" moved_share)" -v n="$(summary_key "$ch" chunks_per_step)" \
        'BEGIN { printf "%-6s %10s %13s %10s %10s %14.3f %17.3f %7.2f %11.1f\n", k, s, o, q, c,
                        (q > 0 ? c / q : 0), (q > 0 ? o / q : 0), 100 * m, n }' >> "$work/chunks"
}

printf '%-9s %11s %13s %7s %13s  %-44s %s\n' case static_ms omnibatch_ms ratio "ratio_range" \
    "verdict (hetsgd, static run)" "verdict (unmodified program)" > "$work/table"
printf '%-6s %10s %13s %10s %10s %14s %17s %7s %11s\n' rep static_ms omnibatch_ms oracle_ms chunks_ms \
    chunks/oracle omnibatch/oracle moved% chunks/step > "$work/chunks"
for c in $(echo "$cases" | tr ',' ' '); do
    speeds=
    slow=-1
    cost_args=
    penv=
    policies="static omnibatch"
    fast_link
    case $c in
    slowcpu)
        speeds=$(i=0; while [ "$i" -lt "$hosts" ]; do [ "$i" = "$last" ] && printf '0.5' || printf '1,'; i=$((i + 1)); done)
        slow=$last
        policies="static omnibatch oracle chunks"
        penv="-x OMNIBATCH_WAIT=sleep"
        calibrate "$c" ;;
    slowlink) slow_link ;;
    esac
    : > "$work/ratios"
    k=1
    while [ "$k" -le "$repeat" ]; do
        # Interleaved: the policies' order rotated in each repetition.
        # shellcheck disable=SC2086
        for policy in $(rotate "$k" $policies); do
            hetsgd_run "$c" "$policy" "$k"
        done
        st=$(steady_ms "$keep/$c-static.$k.summary")
        ob=$(steady_ms "$keep/$c-omnibatch.$k.summary")
        echo "$st $ob" >> "$work/ratios"
        if [ slowcpu = "$c" ]; then chunks_row "$k"; fi
        k=$((k + 1))
    done
    f=$keep/$c-unmodified
    if ! mpi_run 300 -x LD_PRELOAD="$lib" -x OMNIBATCH_REPORT_FILE="$f.json" "$straggler" "$ssteps" "$slow" \
        > "$f.out" 2>&1; then
        tail -5 "$f.out" >&2
        die "case $c: the unmodified program failed (output: $f.out)"
    fi
    grep -q "results right" "$f.out" || die "case $c: the unmodified program's results are wrong under the preload"
    st=$(awk '{ print $1 }' "$work/ratios" | median)
    ob=$(awk '{ print $2 }' "$work/ratios" | median)
    awk '$1 > 0 { printf "%.3f\n", $2 / $1 }' "$work/ratios" > "$work/ratio"
    ratio=$(median < "$work/ratio")
    range=$(sort -g "$work/ratio" | awk 'NR == 1 { lo = $1 } { hi = $1 } END { if (NR) printf "%.3f-%.3f", lo, hi; else print "NA" }')
    printf '%-9s %11s %13s %7s %13s  %-44s %s\n' "$c" "$st" "$ob" "$ratio" "$range" \
        "$(verdict "$keep/$c-static.1.json")" "$(verdict "$f.json")" >> "$work/table"
    if [ slowcpu = "$c" ]; then chunks_verdict; fi
done
fast_link
echo "bench-hosts: $hosts hosts (network namespaces obhost0..obhost$last on $subnet.0/24, Open MPI over TCP);" \
    "slow CPU: obhost$last at half speed; slow link: obhost$last at $rate both ways; hetsgd slowdown $slowdown," \
    "global batch $batch;" \
    "$repeat pair(s) per case, interleaved: medians, ratio = median of omnibatch/static per pair"
cat "$work/table"
if [ "$(wc -l < "$work/chunks")" -gt 1 ]; then
    echo "bench-hosts: slow CPU, the chunked step beside static, omnibatch and the oracle: every policy emulating" \
        "the cost ${given_cost:+given, not }calibrated on the hosts (--cost $chunks_cost s: per step, per sample, per chunk after a step's first);" \
        "every policy with OMNIBATCH_WAIT=sleep; chunks with OMNIBATCH_CHUNK_FLOOR=$chunk_floor (0: B / (32 P));" \
        "the policies' order rotated in each repetition"
    cat "$work/chunks"
fi
[ -n "$out" ] && echo "bench-hosts: outputs in $out"
exit 0
