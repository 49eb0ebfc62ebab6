#!/bin/sh
# A rank under a real CPU quota (tests/mpi/mpi_api_quota.c): rank 1 in a
# cgroup of 0.2 core (v1 cpu.cfs_quota_us or v2 cpu.max, whichever is
# writable), rank 0 free; the controller must give rank 1 at most LEAST of
# the global batch of 100 at the end (the best plan gives it 1; the equal
# plan 50).  Then a quota resized mid-run, as a platform resizes a
# container: both ranks at 0.5 core, most of the CPU in the compute (0.2 ms
# a sample, 2 ms of update), until rank 1 cuts its own quota to 0.1 core
# before step CHANGE_AT of CHANGE_STEPS; the best plan then gives rank 1 10
# of 100, and it must hold at most CHANGE_MOST at the end.  The quota is
# read again every second; read once at omnibatch_create, the plan stayed
# near 50/50 and the step took 110-130 ms instead of 40.  Skipped (77)
# where no cgroup cpu controller is writable (not
# root, a container), and on a launcher that does not say each rank's number.
# Both ranks' groups weigh far more than other processes (v1 cpu.shares, v2
# cpu.weight): under `make -j2 check` another test's ranks may poll on both
# cores (MPICH's, 64 of them in mpi_api_dist), and rank 0 got 1/27 of a core,
# less than rank 1's quota, so the quota was not what made rank 1 slow.
set -eu
prog="${top_builddir:-.}/tests/mpi/mpi_api_quota"
LEAST=10
STEPS=80
CHANGE_STEPS=100
CHANGE_AT=40
CHANGE_MOST=20
v1=/sys/fs/cgroup/cpu
v2=/sys/fs/cgroup
group=
if [ -d "$v1" ] && [ -w "$v1" ] && [ -f "$v1/cpu.cfs_quota_us" ]; then
    kind=v1; group=$v1/omnibatch-test-quota.$$
elif [ -f "$v2/cgroup.subtree_control" ] && grep -qw cpu "$v2/cgroup.subtree_control" 2>/dev/null \
    && [ -w "$v2" ]; then
    kind=v2; group=$v2/omnibatch-test-quota.$$
fi
if [ -z "$group" ] || ! mkdir "$group" 2>/dev/null; then
    echo "mpi_api_quota: no writable cgroup cpu controller here: skipped"
    exit 77
fi
free=$group.free
dir=$(mktemp -d "${TMPDIR:-/tmp}/ob-quota.XXXXXX")
cleanup() {
    for g in "$group" "$free"; do
        for pid in $(cat "$g/cgroup.procs" 2>/dev/null); do
            kill -KILL "$pid" 2>/dev/null || true
        done
    done
    sleep 1
    rmdir "$group" "$free" 2>/dev/null || true
    rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP
mkdir "$free" || { echo "FAIL: cannot make $free"; exit 1; }
# quota_line US: what a quota file takes for US microseconds a 100 ms period
# (-1: none).
if [ v1 = "$kind" ]; then
    qfile=cpu.cfs_quota_us
    quota_line() { echo "$1"; }
    echo 100000 > "$group/cpu.cfs_period_us" && echo 100000 > "$free/cpu.cfs_period_us"
    echo 262144 > "$group/cpu.shares" && echo 262144 > "$free/cpu.shares"
else
    qfile=cpu.max
    quota_line() { if [ "$1" -lt 0 ]; then echo "max 100000"; else echo "$1 100000"; fi; }
    echo 10000 > "$group/cpu.weight" && echo 10000 > "$free/cpu.weight"
fi
# Rank 1 joins the quota's group, rank 0 the other, then each runs the program.
cat > "$dir/join" <<JOIN
#!/bin/sh
r=\${OMPI_COMM_WORLD_RANK:-\${PMI_RANK:-}}
[ -n "\$r" ] || { echo "mpi_api_quota: the launcher does not say the rank" >&2; exit 3; }
if [ 1 = "\$r" ]; then g="$group"; else g="$free"; fi
echo \$\$ > "\$g/cgroup.procs" || exit 1
exec "\$@"
JOIN
chmod +x "$dir/join"
# run WHAT US1 US0 STEPS MOST [ARGS]: the quotas of rank 1 and rank 0 at the
# start, the program with STEPS and ARGS; rank 1's batch at the end must be
# at most MOST.
run() {
    what=$1
    quota_line "$2" > "$group/$qfile"
    quota_line "$3" > "$free/$qfile"
    steps=$4
    most=$5
    shift 5
    rc=0
    "${top_srcdir:-.}/tests/mpirun.sh" 2 "$dir/join" "$prog" "$steps" "$@" > "$dir/out" 2>&1 || rc=$?
    cat "$dir/out"
    if grep -q "the launcher does not say the rank" "$dir/out"; then
        echo "mpi_api_quota: skipped"
        exit 77
    fi
    [ 0 -eq "$rc" ] || { echo "FAIL: mpi_api_quota ($what) exited $rc"; exit 1; }
    b1=$(sed -n 's/^plan: [0-9]* \([0-9]*\)$/\1/p' "$dir/out")
    [ -n "$b1" ] || { echo "FAIL: no plan line ($what)"; exit 1; }
    # Asked as "within the bound", so that a b1 test(1) cannot read fails too.
    if ! [ "$b1" -le "$most" ]; then
        echo "FAIL: $what: rank 1 holds $b1 of 100 samples at the end (expected at most $most)"
        exit 1
    fi
    echo "mpi_api_quota: $what: rank 1 holds $b1 of 100 samples (at most $most)"
}
# chunks WHAT US1 CHECK: the chunked steps (mpi_api_quota chunks), rank 1 at
# US1 microseconds a period, rank 0 free, on a fixed plan of 90 and 10
# samples of 0.5 ms of CPU each; CHECK judges the samples rank 1 took from
# rank 0 ($taken of $all).
chunks() {
    what=$1
    quota_line "$2" > "$group/$qfile"
    quota_line -1 > "$free/$qfile"
    rc=0
    "${top_srcdir:-.}/tests/mpirun.sh" 2 "$dir/join" "$prog" chunks "$CHUNK_STEPS" > "$dir/out" 2>&1 || rc=$?
    cat "$dir/out"
    [ 0 -eq "$rc" ] || { echo "FAIL: mpi_api_quota ($what) exited $rc"; exit 1; }
    taken=$(sed -n 's/^taken: \([0-9]*\) of [0-9]*$/\1/p' "$dir/out")
    all=$(sed -n 's/^taken: [0-9]* of \([0-9]*\)$/\1/p' "$dir/out")
    own=$(sed -n 's/^own chunks: \([0-9]*\) in [0-9]* steps$/\1/p' "$dir/out")
    counted=$(sed -n 's/^own chunks: [0-9]* in \([0-9]*\) steps$/\1/p' "$dir/out")
    [ -n "$taken" ] && [ -n "$all" ] && [ -n "$own" ] && [ -n "$counted" ] \
        || { echo "FAIL: no taken or own chunks line ($what)"; exit 1; }
    if ! eval "$3"; then
        echo "FAIL: $what: rank 1 took $taken of the $all samples from rank 0, and worked its own range in $own chunks in $counted steps"
        exit 1
    fi
    echo "mpi_api_quota: $what: rank 1 took $taken of the $all samples from rank 0, its own range in $own chunks in $counted steps"
}
run "rank 1 at 0.2 core, rank 0 free" 20000 -1 "$STEPS" "$LEAST"
# At 0.1 core rank 1's own 5 ms a step of about 45 ms spend its quota: a
# share of rank 0's tail would be held when the kernel stops it (90 ms), so
# it takes only the tail of a rank 0 stalled on its chunk (at most 2.5%: a
# whole tail or two where another test's processes held rank 0 off its
# core for 60 ms; it took shares before, 383 of 4000 samples, 9.6%), and it
# works its own 10 samples in halving chunks from all 10 (5, 3, 1, 1 at a
# floor of 1; one chunk where its measured chunk cost raised the floor), at
# most 5 a step (one granule at a time before, 387 chunks in 40 steps).  At 0.5 core it has budget to spare and
# takes shares (at least 5%; 698 of 4000).  At a whole core rank 1 polls in
# its waits and spends all of it, which is not being throttled: it is not
# busy and takes shares (at least 10%; 1562 of 4000, and 156 when any
# quota spent made a rank busy), its own range in sixteenths (400 chunks in
# 40 steps; 160 then).
CHUNK_STEPS=45
chunks "chunks, rank 1 at 0.1 core" 10000 '[ $((40 * taken)) -le "$all" ] && [ "$own" -le $((5 * counted)) ]'
chunks "chunks, rank 1 at 0.5 core" 50000 '[ $((100 * taken)) -ge $((5 * all)) ]'
chunks "chunks, rank 1 at 1 core" 100000 '[ $((10 * taken)) -ge "$all" ]'
run "both at 0.5 core, rank 1 at 0.1 from step $CHANGE_AT" 50000 50000 "$CHANGE_STEPS" "$CHANGE_MOST" \
    "$group/$qfile" "$CHANGE_AT" "$(quota_line 10000)" 0.2 2
