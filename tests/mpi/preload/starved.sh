# Issue 35: an unmodified trainer with a tiny step (tests/mpi/mpi_logreg:
# logistic regression on Fashion-MNIST, about 0.1 ms of compute a step, one
# MPI_Allreduce of doubles), its last rank in a cgroup of its own with a CPU
# quota of 0.1 core.  That rank is descheduled inside the allreduce, so
# every rank blocks about as long and the least blocked time holds its
# stalls: the report must name it starved of CPU, by its quota, never call
# the run communication-bound.  Another rank may be named beside it, starved
# by its neighbours (it waited for a CPU far longer than the usual rank):
# make -j2 check runs other tests on the same two cores, and the report
# says so when one lands beside a rank; only the last rank is starved by a
# quota.  Skipped where no cgroup cpu controller is
# writable (v1 under /sys/fs/cgroup/cpu, v2 with cpu in subtree_control) or
# the data set is missing.  The cgroup is removed on every way out.
data=${OB_FASHION_MNIST:-/usr/share/datasets/fashion-mnist}
steps=200
[ -f "$data/train-images-idx3-ubyte.gz" ] && [ -f "$data/train-labels-idx1-ubyte.gz" ] \
    || skip "no Fashion-MNIST in $data (Debian's dataset-fashion-mnist)"
v1=/sys/fs/cgroup/cpu
v2=/sys/fs/cgroup
if [ -w "$v1" ] && [ -f "$v1/cpu.cfs_quota_us" ]; then
    group=$v1/omnibatch-starved.$$
elif [ -w "$v2" ] && grep -qw cpu "$v2/cgroup.subtree_control" 2>/dev/null; then
    group=$v2/omnibatch-starved.$$
else
    skip "no writable cgroup cpu controller (v1 $v1/cpu.cfs_quota_us, v2 cpu in $v2/cgroup.subtree_control)"
fi
mkdir "$group" 2>/dev/null || skip "cannot create a cgroup under $(dirname "$group")"
# The group goes with the scratch directory, whatever ends the scenario; a
# process still in it (a run cut short) is ours.
starved_cleanup() {
    for pid in $(cat "$group/cgroup.procs" 2>/dev/null); do
        kill -KILL "$pid" 2>/dev/null || true
    done
    tries=0
    while [ -d "$group" ] && ! rmdir "$group" 2>/dev/null && [ "$tries" -lt 20 ]; do
        sleep 0.1
        tries=$((tries + 1))
    done
    rm -rf "$work"
}
trap starved_cleanup EXIT
# 0.1 core: 1 ms of every 10 ms period.
if [ -f "$group/cpu.cfs_quota_us" ]; then
    echo 10000 > "$group/cpu.cfs_period_us" && echo 1000 > "$group/cpu.cfs_quota_us" \
        || fail "cannot set the quota of $group"
else
    echo "1000 10000" > "$group/cpu.max" || fail "cannot set cpu.max of $group"
fi
cat > "$work/join" <<EOF
echo \$\$ > "$group/cgroup.procs" || exit 1
exec "\$@"
EOF
last=$((np - 1))
ob_run "$last" OMNIBATCH_REPORT_FILE="$work/report.txt" -- "$tests/mpi_logreg" "$data" "$steps" \
    : -np 1 sh "$work/join" "$tests/mpi_logreg" "$data" "$steps" || fail "the program failed"
grep -q "results right" "$work/out" || fail "wrong results under the preload"
[ -s "$work/report.txt" ] || fail "no report"
grep -q "communication-bound" "$work/report.txt" && fail "the report calls the starved run communication-bound"
# "rank 3 (host h) was starved" alone, or "ranks 1,3 (host h) were starved"
# with others starved by their neighbours.
grep -Eq "^  verdict: cpu-starved: (rank $last \(host [^)]+\) was starved of CPU: its stalls take|ranks ([0-9]+,)+$last \(host [^)]+\) were starved of CPU: the stalls of the most starved take) [0-9]+% of the step \([0-9.]+ s of [0-9.]+ s\), and every rank waits for them inside the reduction, whose transfer is [0-9.]+ s" \
    "$work/report.txt" || fail "the verdict does not name rank $last starved of CPU"
grep -Eq "^  starved of CPU: rank $last \(host [^)]+\): its cgroup's CPU quota of 0.1 cores stopped it in [0-9]+ of [0-9]+ periods" \
    "$work/report.txt" || fail "no evidence line of rank $last's quota"
[ "$(grep -c "^  starved of CPU: rank .*CPU quota" "$work/report.txt")" -eq 1 ] \
    || fail "ranks other than $last named starved by a quota"
# Any other rank named is named by its wait for a CPU, beyond the usual rank's.
others=$(grep '^  starved of CPU: rank' "$work/report.txt" | grep -v "^  starved of CPU: rank $last ") || true
if [ -n "$others" ]; then
    echo "$others" | grep -Evq "^  starved of CPU: rank [0-9]+ \(host [^)]+\): it waited for a CPU [0-9]+% of the time it was ready to run \(the median rank [0-9]+%\)" \
        && fail "a rank other than $last named starved without its wait for a CPU: $others"
fi
grep -q "^  what helps: a larger CPU quota (now, in cores: rank $last's 0.1); OMNIBATCH_WAIT=sleep" "$work/report.txt" \
    || fail "the report does not say what helps"
cat "$work/report.txt"
