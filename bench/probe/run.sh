#!/bin/sh
# bench/probe/run.sh: what one steal costs on each transport a thief could
# use, in a node and across hosts, side by side in one table.
#
# bench/probe/steal_probe runs on two ranks (0 steals from 1; see its
# header): a) a compare-and-swap on a word of a shared window (GCC atomics),
# owner idle and owner advancing the same word; b) MPI_Compare_and_swap and
# MPI_Fetch_and_op under MPI_Win_lock_all while the target waits in MPI or
# computes 1 and 10 ms between MPI calls; c) a request and its reply, the
# target answering at once or between chunks of 0.1, 1 and 10 ms.  The runs:
#   node     Open MPI on this machine, a core each: a, b on osc/sm (what
#            Open MPI uses for a window on one node), c
#   pt2pt    Open MPI on this machine, b on osc/pt2pt (what Open MPI 4.1
#            has for a transport without remote atomics, such as TCP)
#   mpich    MPICH on this machine (OTHER_MPICC or mpicc.mpich, and
#            OTHER_MPIRUN or mpiexec.mpich): a, b, c
#   hosts    Open MPI over TCP between two hosts made of network namespaces
#            (bench/hosts/lib.sh; root): b with Open MPI's own choice of
#            component, then b on osc/pt2pt and on osc/ucx (UCX over TCP;
#            both left out by Debian's settings), and c; before and after them
#            the hosts' own TCP round trip without MPI (tcp_rtt.py), the
#            same polling, for what the network itself costs then
# A run that cannot be made (no MPICH, not root) is left out with one line.
# The table: per case the median of the repetitions' medians, their range,
# the 90th percentile of all samples, in microseconds.  The machine's load
# is printed before and after: every case that needs the target to run
# waits for the scheduler on a machine with more runnable processes than
# cores.  Everything made (namespaces, links, files, processes) is removed
# on exit, also on failure.
#
# Usage: bench/probe/run.sh [options]
#   --builddir DIR      the build (default: $top_builddir or .)
#   --runs LIST         of node,pt2pt,mpich,hosts (default all)
#   --repeat N          repetitions of every case, interleaved, 1 to 20
#                       (default 3; --smoke: 2)
#   --samples N         per repetition of the fast cases (default 300)
#   --slow-samples N    per repetition of the cases with a compute period (default 20)
#   --smoke             a short check that every run works: few samples,
#                       periods of 1 ms only
#   --out DIR           keep the runs' outputs there
#   --help              this text
# Environment: MPIRUN, MPIRUN_FAMILY (the build's launcher), OTHER_MPICC,
# OTHER_MPIRUN (the other MPI family's).
set -eu

die() {
    echo "bench-probe: $*" >&2
    exit 2
}
need_value() {
    [ $# -ge 2 ] || die "$1 needs a value (see --help)"
}
is_count() {
    case $1 in ''|*[!0-9]*) return 1 ;; esac
    [ "$1" -ge "$2" ] && [ "$1" -le "$3" ]
}

srcdir=$(cd "$(dirname "$0")/../.." && pwd)
builddir=${top_builddir:-.}
runs="node,pt2pt,mpich,hosts"
repeat=
samples=300
slow_samples=20
smoke=no
out=
while [ $# -gt 0 ]; do
    case $1 in
    --builddir) need_value "$@"; builddir=$2; shift 2 ;;
    --runs) need_value "$@"; runs=$2; shift 2 ;;
    --repeat) need_value "$@"; repeat=$2; shift 2 ;;
    --samples) need_value "$@"; samples=$2; shift 2 ;;
    --slow-samples) need_value "$@"; slow_samples=$2; shift 2 ;;
    --smoke) smoke=yes; shift ;;
    --out) need_value "$@"; out=$2; shift 2 ;;
    -h|--help) sed -n '2,/^set -eu/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown option '$1' (see --help)" ;;
    esac
done
[ -n "$repeat" ] || { [ yes = "$smoke" ] && repeat=2 || repeat=3; }
is_count "$repeat" 1 20 || die "--repeat '$repeat': expected an integer from 1 to 20"
is_count "$samples" 1 100000 || die "--samples '$samples': expected an integer from 1 to 100000"
is_count "$slow_samples" 1 10000 || die "--slow-samples '$slow_samples': expected an integer from 1 to 10000"
for r in $(echo "$runs" | tr ',' ' '); do
    case $r in
    node|pt2pt|mpich|hosts) ;;
    *) die "--runs: unknown run '$r' (expected some of node,pt2pt,mpich,hosts)" ;;
    esac
done
builddir=$(cd "$builddir" 2>/dev/null && pwd) || die "--builddir: not a directory"
built=$builddir/bench/probe/steal_probe
[ -x "$built" ] || die "$built not built (run make first)"
[ -n "$out" ] && { mkdir -p "$out" || die "--out '$out': cannot create it"; }

if [ yes = "$smoke" ]; then
    pargs="--repeat $repeat --samples 20 --slow-samples 3 --busy 1 --chunks 1"
else
    pargs="--repeat $repeat --samples $samples --slow-samples $slow_samples"
fi

# The build's MPI is one family; the other one's probe is built here.
mpirun=${MPIRUN:-mpirun}
family=${MPIRUN_FAMILY:-}
if [ -z "$family" ]; then
    case $("$mpirun" --version 2>&1) in
    *"Open MPI"* | *OpenRTE*) family=openmpi ;;
    *) family=hydra ;;
    esac
fi

# ------------------------------------------------------------- what we make
work=$(mktemp -d "${TMPDIR:-/tmp}/bench-probe.XXXXXX")
keep=${out:-$work}
: > "$work/notes"
: > "$work/rows"
: > "$work/headers"
cleanup() {
    rc=$?
    trap - EXIT INT TERM HUP
    hosts_kill_tree $$
    hosts_remove
    rm -rf "$work"
    exit "$rc"
}
# shellcheck source=bench/hosts/lib.sh
. "$srcdir/bench/hosts/lib.sh"
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

note() {
    echo "bench-probe: $*" >> "$work/notes"
}

# The other family's probe: PATH of a binary, or empty with a note.
build_other() {
    cc=$1
    command -v "$cc" >/dev/null 2>&1 || { note "$2: no $cc: left out"; return 0; }
    if "$cc" -O2 -I"$builddir" -I"$srcdir/bench/overhead" -o "$work/steal_probe.$2" \
        "$srcdir/bench/probe/steal_probe.c" "$srcdir/bench/overhead/stats.c" -lm > "$work/cc.$2" 2>&1; then
        echo "$work/steal_probe.$2"
    else
        note "$2: $cc cannot build the probe (output: $keep/cc.$2): left out"
        if [ -n "$out" ]; then cp "$work/cc.$2" "$out/"; fi
    fi
}
if [ openmpi = "$family" ]; then
    ompi_probe=$built
    ompi_run=$mpirun
    mpich_run=${OTHER_MPIRUN:-mpiexec.mpich}
    mpich_probe=$(build_other "${OTHER_MPICC:-mpicc.mpich}" mpich)
else
    mpich_probe=$built
    mpich_run=$mpirun
    ompi_run=${OTHER_MPIRUN:-mpirun.openmpi}
    ompi_probe=$(build_other "${OTHER_MPICC:-mpicc.openmpi}" openmpi)
fi

# collect NAME: the run's header lines and rows into the table's files.
collect() {
    sed -n "s/^steal_probe: /$1: /p" "$keep/$1.out" >> "$work/headers"
    grep -E '^(openmpi|mpich|other|none) ' "$keep/$1.out" >> "$work/rows" || true
    # The columns' line from the first run that has one (the TCP rows have none).
    if [ ! -s "$work/columns" ]; then
        grep -m 1 '^mpi ' "$keep/$1.out" > "$work/columns" || true
    fi
}
# node_launch LIMIT COMMAND...: on this machine, in the background and
# waited for, so that a signal to this script is acted on at once (as
# hosts_mpirun does across hosts).
node_launch() {
    limit=$1
    shift
    timeout --signal=TERM --kill-after=10 "$limit" "$@" &
    wait $!
}
# probe_run NAME node_launch|hosts_mpirun ARGS...: one run into $keep/NAME.out.
probe_run() {
    name=$1
    shift
    if "$@" > "$keep/$name.out" 2>&1; then
        collect "$name"
    else
        tail -5 "$keep/$name.out" >&2
        note "$name: the run failed (output: $keep/$name.out)"
    fi
}

ompi_node="--allow-run-as-root --oversubscribe --bind-to core:overload-allowed --mca btl self,vader \
--mca btl_vader_single_copy_mechanism none"
wants() {
    case ",$runs," in *",$1,"*) return 0 ;; esac
    return 1
}
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
# shellcheck disable=SC2086
if wants node; then
    if [ -n "$ompi_probe" ]; then
        probe_run node node_launch 300 "$ompi_run" -np 2 $ompi_node --mca osc sm "$ompi_probe" $pargs --rma sm
    else
        note "node: no Open MPI probe: left out"
    fi
fi
# shellcheck disable=SC2086
if wants pt2pt; then
    if [ -n "$ompi_probe" ]; then
        probe_run pt2pt node_launch 300 "$ompi_run" -np 2 $ompi_node --mca osc pt2pt "$ompi_probe" $pargs \
            --parts b --rma pt2pt
    else
        note "pt2pt: no Open MPI probe: left out"
    fi
fi
if wants mpich; then
    if [ -n "$mpich_probe" ] && command -v "$mpich_run" >/dev/null 2>&1; then
        device=$(mpichversion 2>/dev/null | sed -n 's/^MPICH Device:[[:space:]]*//p' | tr -cd 'a-z0-9' | cut -c1-8)
        # shellcheck disable=SC2086
        probe_run mpich node_launch 300 "$mpich_run" -n 2 -bind-to core "$mpich_probe" $pargs ${device:+--rma "$device"}
    elif [ -n "$mpich_probe" ]; then
        note "mpich: no $mpich_run: left out"
    fi
fi

# finish: the table, and the exit status.
finish() {
    echo "bench-probe: $(nproc) CPUs ($(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)," \
        "Linux $(uname -r)); load average $load_before before, $(cut -d' ' -f1-3 /proc/loadavg) after"
    cat "$work/headers" "$work/notes"
    if [ -s "$work/rows" ]; then
        cat "$work/columns" "$work/rows"
    fi
    [ -n "$out" ] && echo "bench-probe: outputs in $out"
    [ -s "$work/rows" ] || exit 1
    exit 0
}

# tcp_control LABEL: the hosts' own TCP round trip, without MPI
# (bench/probe/tcp_rtt.py), as one row of the table.
tcp_control() {
    py=/usr/bin/python3
    if [ ! -x "$py" ]; then
        note "hosts: no $py: no round trip without MPI"
        return 0
    fi
    [ yes = "$smoke" ] && n=20 || n=$samples
    ip netns exec "$(hosts_ns 1)" "$py" "$srcdir/bench/probe/tcp_rtt.py" server "$hosts_subnet.2" 47997 \
        > "$keep/tcp-$1.server" 2>&1 &
    server=$!
    probe_run "tcp-$1" node_launch 120 ip netns exec "$(hosts_ns 0)" "$py" "$srcdir/bench/probe/tcp_rtt.py" \
        client "$hosts_subnet.2" 47997 "$repeat" "$n" "$1"
    kill "$server" 2>/dev/null || true
    wait "$server" 2>/dev/null || true
}

# --------------------------------------------------------- across hosts
if wants hosts; then
    if [ -z "$ompi_probe" ]; then
        note "hosts: no Open MPI probe: left out"
        finish
    fi
    cannot() {
        note "hosts: cannot make network namespaces here ($*): left out"
        finish
    }
    hosts_can_make "$ompi_run"
    hosts_make 2 "$work" "obp$$"
    tcp_control at-once-before
    # shellcheck disable=SC2086
    probe_run hosts hosts_mpirun 300 2 "$ompi_run" "$ompi_probe" $pargs
    # shellcheck disable=SC2086
    probe_run hosts-pt2pt hosts_mpirun 300 2 "$ompi_run" --mca osc pt2pt "$ompi_probe" $pargs --parts b --rma pt2pt
    # shellcheck disable=SC2086
    probe_run hosts-ucx hosts_mpirun 300 2 "$ompi_run" --mca osc ucx -x UCX_TLS=tcp,self -x UCX_NET_DEVICES=eth0 \
        "$ompi_probe" $pargs --parts b --rma ucx
    tcp_control at-once-after
fi
finish
