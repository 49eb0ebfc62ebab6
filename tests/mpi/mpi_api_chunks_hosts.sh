#!/bin/sh
# tests/mpi/mpi_api_chunks across real hosts: three network namespaces with
# their own host names, joined by a bridge, Open MPI over TCP between them
# (bench/hosts/lib.sh), so that the ranks are on three nodes and a rank with
# nothing left on its node asks a rank of another node for a share
# (src/api/api_chunk_wire.c).  Twice: one rank a host (every sample that
# moves crosses hosts, the rank asked is the one slowed), and four ranks on
# three hosts, two on the last (the rank asked may be the slowed rank's
# neighbour, which answers from its node's words; the ranks wait asleep,
# OMNIBATCH_WAIT=sleep, the wire napping between its looks).  The rank that
# sleeps inside its step is the last, so samples must cross nodes; the
# program checks every sample of every step done once, the gradient exact
# (1e-12 double, 1e-6 float), every sample once an epoch, samples taken
# from another node (OB_CHUNKS_NODES=3 makes it check that it saw three
# nodes), and the calls out of order, disagreement and a parked rank; a
# time limit makes a hang fail.  Every namespace, link and bridge made is
# removed, also on failure.  Open MPI's mpirun or MPICH's mpiexec (hydra),
# as configure found (MPIRUN, MPIRUN_FAMILY).  Skipped (77) without root or
# ip netns, or with another launcher.
set -eu
srcdir=${top_srcdir:-.}
builddir=${top_builddir:-.}
prog=$builddir/tests/mpi/mpi_api_chunks
mpirun=${MPIRUN:-mpirun}
family=${MPIRUN_FAMILY:-openmpi}
case $family in
openmpi | hydra) ;;
*)
    echo "mpi_api_chunks_hosts: MPIRUN_FAMILY '$family': the hosts are launched with Open MPI's mpirun or hydra: skipped"
    exit 77
    ;;
esac
[ -x "$prog" ] || { echo "mpi_api_chunks_hosts: $prog not built" >&2; exit 99; }

cannot() {
    echo "mpi_api_chunks_hosts: cannot make network namespaces here ($*): skipped"
    exit 77
}
# shellcheck source=bench/hosts/lib.sh
. "$srcdir/bench/hosts/lib.sh"
hosts_can_make "$mpirun"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/chunks-hosts.XXXXXX")
cleanup() {
    rc=$?
    trap - EXIT INT TERM HUP
    hosts_kill_tree $$
    hosts_remove
    rm -rf "$tmp"
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

tag=obc$$
hosts_make 3 "$tmp" "$tag"

# run NAME LIST NP [VAR=value...]: the program on the hosts of LIST
# (host:slots, which both launchers read).
run() {
    name=$1 list=$2 np=$3
    shift 3
    envs=
    for kv in CK_FORK=no OB_CHUNKS_NODES=3 "$@"; do
        if [ hydra = "$family" ]; then envs="$envs -genv ${kv%%=*} ${kv#*=}"; else envs="$envs -x $kv"; fi
    done
    echo "== $name: $np ranks on $list ($family)"
    rc=0
    launch=hosts_mpirun_on
    [ hydra = "$family" ] && launch=hosts_hydra_on
    # shellcheck disable=SC2086
    $launch "${OB_MPI_TIMEOUT:-90}" "$list" "$np" "$mpirun" $envs "$prog" >"$tmp/$name.out" 2>&1 || rc=$?
    cat "$tmp/$name.out"
    case $rc in
    0) ;;
    124 | 137) echo "FAIL: $name: no end within ${OB_MPI_TIMEOUT:-90} s (a hang)" >&2; exit 1 ;;
    *) echo "FAIL: $name: exit $rc" >&2; exit 1 ;;
    esac
    # The program printed what crossed nodes; three nodes, some samples.
    grep -Eq "^chunks: $np ranks on 3 node\(s\), [0-9]+ samples taken, [1-9][0-9]* of them from another node" \
        "$tmp/$name.out" || { echo "FAIL: $name: no line saying samples crossed nodes" >&2; exit 1; }
}
run one-a-host obhost0:1,obhost1:1,obhost2:1 3
run two-on-one obhost0:1,obhost1:1,obhost2:2 4 OMNIBATCH_WAIT=sleep

# Nothing of ours is left behind.
hosts_remove
left=$(ip netns list 2>/dev/null | grep -c "^$tag-" || true)
[ 0 -eq "$left" ] || { echo "FAIL: $left namespaces left behind" >&2; exit 1; }
if ip link show 2>/dev/null | grep -q " $tag"; then
    echo "FAIL: links left behind: $(ip link show | grep " $tag")" >&2
    exit 1
fi
echo "mpi_api_chunks_hosts: both runs right; namespaces, links and bridge removed"
