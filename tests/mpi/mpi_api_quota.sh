#!/bin/sh
# A rank under a real CPU quota (tests/mpi/mpi_api_quota.c): rank 1 in a
# cgroup of 0.2 core (v1 cpu.cfs_quota_us or v2 cpu.max, whichever is
# writable), rank 0 free; the controller must give rank 1 at most LEAST of
# the global batch of 100 at the end (the best plan gives it 1; the equal
# plan 50).  Skipped (77) where no cgroup cpu controller is writable (not
# root, a container), and on a launcher that does not say each rank's number.
# Both ranks' groups weigh far more than other processes (v1 cpu.shares, v2
# cpu.weight): under `make -j2 check` another test's ranks may poll on both
# cores (MPICH's, 64 of them in mpi_api_dist), and rank 0 got 1/27 of a core,
# less than rank 1's quota, so the quota was not what made rank 1 slow.
set -eu
prog="${top_builddir:-.}/tests/mpi/mpi_api_quota"
LEAST=10
STEPS=80
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
if [ v1 = "$kind" ]; then
    echo 100000 > "$group/cpu.cfs_period_us" && echo 20000 > "$group/cpu.cfs_quota_us"
    echo 262144 > "$group/cpu.shares" && echo 262144 > "$free/cpu.shares"
else
    echo "20000 100000" > "$group/cpu.max"
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
rc=0
"${top_srcdir:-.}/tests/mpirun.sh" 2 "$dir/join" "$prog" "$STEPS" > "$dir/out" 2>&1 || rc=$?
cat "$dir/out"
if grep -q "the launcher does not say the rank" "$dir/out"; then
    echo "mpi_api_quota: skipped"
    exit 77
fi
[ 0 -eq "$rc" ] || { echo "FAIL: mpi_api_quota exited $rc"; exit 1; }
b1=$(sed -n 's/^plan: [0-9]* \([0-9]*\)$/\1/p' "$dir/out")
[ -n "$b1" ] || { echo "FAIL: no plan line"; exit 1; }
if [ "$b1" -gt "$LEAST" ]; then
    echo "FAIL: the rank under a 0.2-core quota holds $b1 of 100 samples at the end (expected at most $LEAST)"
    exit 1
fi
echo "mpi_api_quota: the rank under a 0.2-core quota holds $b1 of 100 samples (at most $LEAST)"
