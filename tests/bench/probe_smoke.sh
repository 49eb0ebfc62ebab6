#!/bin/sh
# make bench-probe in --smoke mode (bench/probe/run.sh): one steal's cost on
# each transport, in a node with Open MPI (and MPICH where it is installed)
# and across network-namespace hosts (where root can make them), with the
# hosts' own TCP round trip without MPI beside them.  Checks
# that every case has its row, that each row is well formed (the median
# within the range of the repetitions' medians, the samples counted), that
# a run that cannot be made says so in a line, that nothing the script made
# is left behind, and that bad input gets one line naming it.  No timing is
# asserted.
set -eu
srcdir=${top_srcdir:-.}
builddir=${top_builddir:-.}
probe=$builddir/bench/probe/steal_probe
tmp=$(mktemp -d "${TMPDIR:-/tmp}/probe-smoke.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM

fail() {
    echo "FAIL: $*" >&2
    [ -f "$tmp/out" ] && cat "$tmp/out" >&2
    exit 1
}
[ -x "$probe" ] || fail "$probe not built"

# Bad input: one line naming the option or the ranks, and a failure.
rc=0
sh "$srcdir/tests/mpirun.sh" 2 "$probe" --busy 0 > "$tmp/bad" 2>&1 || rc=$?
[ 0 -ne "$rc" ] || fail "steal_probe --busy 0 succeeded"
grep -q "^steal_probe: --busy '0': expected a comma list" "$tmp/bad" || { cat "$tmp/bad" >&2; fail "no line for --busy 0"; }
rc=0
sh "$srcdir/tests/mpirun.sh" 3 "$probe" --parts c > "$tmp/bad" 2>&1 || rc=$?
[ 0 -ne "$rc" ] || fail "steal_probe on 3 ranks succeeded"
grep -q "^steal_probe: ranks 3: expected exactly 2" "$tmp/bad" || { cat "$tmp/bad" >&2; fail "no line for 3 ranks"; }
rc=0
sh "$srcdir/bench/probe/run.sh" --builddir "$builddir" --repeat 0 > "$tmp/bad" 2>&1 || rc=$?
[ 2 -eq "$rc" ] && grep -q "^bench-probe: --repeat '0': expected an integer from 1 to 20" "$tmp/bad" \
    || { cat "$tmp/bad" >&2; fail "run.sh --repeat 0: rc $rc"; }

before=$(ip netns list 2>/dev/null | grep -c '^obp' || true)
rc=0
sh "$srcdir/bench/probe/run.sh" --builddir "$builddir" --smoke --out "$tmp/runs" > "$tmp/out" 2>&1 || rc=$?
[ 0 -eq "$rc" ] || fail "bench/probe/run.sh --smoke exited $rc"
after=$(ip netns list 2>/dev/null | grep -c '^obp' || true)
[ "$before" = "$after" ] || fail "namespaces left behind: $(ip netns list | grep '^obp')"
if ip link show 2>/dev/null | grep -q ' obp[0-9]*br'; then
    fail "a bridge was left behind"
fi

# The table has its columns' line, once, before the rows.
[ 1 = "$(grep -c '^mpi  *where  *part  *transport ' "$tmp/out")" ] || fail "not one line of column names"

# row MPI WHERE PART TRANSPORT OP TARGET: the row exists, once, and is well
# formed: --smoke runs 2 repetitions of 20 samples (3 with a compute period).
row() {
    line=$(awk -v m="$1" -v w="$2" -v p="$3" -v t="$4" -v o="$5" -v g="$6" \
        '$1 == m && $2 == w && $3 == p && $4 == t && $5 == o && $6 == g' "$tmp/out")
    [ -n "$line" ] || fail "no row: $*"
    [ 1 = "$(echo "$line" | wc -l)" ] || fail "more than one row: $*"
    case $6 in
    busy-* | chunks-*) n=6 ;;
    *) n=40 ;;
    esac
    echo "$line" | awk -v n="$n" '{
        split($8, r, "-")
        ok = ($7 ~ /^[0-9]+\.[0-9]+$/) && ($9 ~ /^[0-9]+\.[0-9]+$/) && ($10 == n) \
             && (r[1] + 0 <= $7 + 0) && ($7 + 0 <= r[2] + 0)
        exit !ok }' || fail "malformed row (expected n $n, median within the range): $line"
    echo "$line"
}
# The RMA rows with a compute period say whether the atomic needed the target.
rma_rows() {
    for op in cas+flush fop+flush; do
        row "$1" "$2" b "$3" "$op" waits-in-mpi > /dev/null
        row "$1" "$2" b "$3" "$op" busy-1ms | grep -Eq 'progress-without-target=(yes|no)$' \
            || fail "$1 $2 $3 $op busy-1ms: no verdict"
    done
}
shm_rows() {
    for t in owner-idle owner-advancing; do
        row "$1" node a shm-atomic load+cas "$t" | grep -Eq 'lost-cas/steal=[0-9.]+$' \
            || fail "$1 $t: no count of lost swaps"
    done
}
two_sided_rows() {
    row "$1" "$2" c isend-irecv round-trip answers-at-once > /dev/null
    row "$1" "$2" c isend-irecv round-trip chunks-1ms | grep -q 'half-chunk+rtt=' \
        || fail "$1 $2 chunks-1ms: no expected latency"
}

shm_rows openmpi
rma_rows openmpi node rma:sm
two_sided_rows openmpi node
rma_rows openmpi node rma:pt2pt
if grep -q '^mpich: MPICH' "$tmp/out"; then
    shm_rows mpich
    rma_rows mpich node "$(awk '$1 == "mpich" && $3 == "b" { print $4; exit }' "$tmp/out")"
    two_sided_rows mpich node
else
    grep -q '^bench-probe: mpich: .*left out' "$tmp/out" || fail "no MPICH rows and no line saying why"
fi
if grep -q '^hosts: ' "$tmp/out"; then
    grep -q '^hosts: part a skipped' "$tmp/out" && ! grep -q '^openmpi hosts a ' "$tmp/out" \
        || fail "across hosts: part a not skipped with a line"
    # Open MPI's own choice across TCP: rows, or a line saying why not.
    if ! grep -q '^hosts: part b skipped: MPI_Win_allocate failed' "$tmp/out"; then
        rma_rows openmpi hosts "$(awk '$1 == "openmpi" && $2 == "hosts" && $3 == "b" && $4 !~ /pt2pt/ { print $4; exit }' "$tmp/out")"
    fi
    two_sided_rows openmpi hosts
    rma_rows openmpi hosts rma:pt2pt
    # osc/ucx over TCP: rows, or a line saying why not.
    if ! grep -q '^hosts-ucx: part b skipped' "$tmp/out"; then
        rma_rows openmpi hosts rma:ucx
    fi
    # The hosts' own round trip without MPI, before and after the MPI runs.
    if [ -x /usr/bin/python3 ]; then
        for t in at-once-before at-once-after; do
            row none hosts - tcp-socket round-trip "$t" > /dev/null
        done
    else
        grep -q '^bench-probe: hosts: no /usr/bin/python3' "$tmp/out" || fail "no TCP rows and no line saying why"
    fi
else
    grep -q '^bench-probe: hosts: cannot make network namespaces here' "$tmp/out" \
        || fail "no rows across hosts and no line saying why"
fi
cat "$tmp/out"
