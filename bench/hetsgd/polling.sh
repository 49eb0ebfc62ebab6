#!/bin/sh
# bench/hetsgd/polling.sh: what Open MPI's busy polling costs a throttled rank.
#
# Two ranks of tests/mpi/mpi_straggler STEPS 1 (rank 1 computes ten times
# longer; rank 0 waits for it in MPI_Allreduce, about 25 ms a step); rank 0
# runs in a cgroup of its own with a CPU quota of QUOTA of one core (cgroup
# v1 cpu controller), or none.  Four runs: quota and no quota, each with
# Open MPI's default polling and with --mca mpi_yield_when_idle 1.  Prints
# rank 0's user and system CPU seconds, its wall seconds and how often its
# quota ran out.  As root; without a writable /sys/fs/cgroup/cpu it says so
# and exits 0.
#
# Usage: bench/hetsgd/polling.sh [--builddir DIR] [--steps N] [--quota Q]
set -eu
builddir=${top_builddir:-.}
steps=100
quota=0.1
while [ $# -gt 0 ]; do
    case $1 in
    --builddir) builddir=$2; shift 2 ;;
    --steps) steps=$2; shift 2 ;;
    --quota) quota=$2; shift 2 ;;
    -h|--help) sed -n '2,/^set -eu/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "polling.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
    esac
done
case $steps in ''|*[!0-9]*) echo "polling.sh: --steps '$steps': expected an integer" >&2; exit 2 ;; esac
awk -v q="$quota" 'BEGIN { exit !(q > 0.001 && q <= 1) }' || { echo "polling.sh: --quota '$quota': expected a number in (0.001, 1]" >&2; exit 2; }
prog=$(cd "$builddir" && pwd)/tests/mpi/mpi_straggler
[ -x "$prog" ] || { echo "polling.sh: $prog not built (make check TESTS= builds it)" >&2; exit 2; }
cg=/sys/fs/cgroup/cpu
if ! [ -w "$cg" ] || ! [ -f "$cg/cpu.cfs_quota_us" ]; then
    echo "polling.sh: no writable cgroup v1 cpu controller at $cg: nothing measured"
    exit 0
fi
g=$cg/omnibatch-polling.$$
work=$(mktemp -d "${TMPDIR:-/tmp}/polling.XXXXXX")
trap 'for p in $(cat "$g/cgroup.procs" 2>/dev/null); do kill -KILL "$p" 2>/dev/null || true; done; sleep 1; rmdir "$g" 2>/dev/null || true; rm -rf "$work"' EXIT
trap 'exit 130' INT TERM HUP
mkdir "$g"
echo 100000 > "$g/cpu.cfs_period_us"
cat > "$work/join" <<EOT
#!/bin/sh
[ "\$OMPI_COMM_WORLD_RANK" = 0 ] && echo \$\$ > "$g/cgroup.procs"
t0=\$(date +%s.%N)
"\$@"
t1=\$(date +%s.%N)
times > "$work/times.\$OMPI_COMM_WORLD_RANK"
echo "\$t0 \$t1" >> "$work/times.\$OMPI_COMM_WORLD_RANK"
EOT
chmod +x "$work/join"
printf '%-12s %-26s %8s %8s %8s %10s %12s\n' "rank 0" "polling" "user_s" "sys_s" "wall_s" "throttled" "throttled_s"
for q in "$quota" none; do
    for yield in 0 1; do
        if [ none = "$q" ]; then
            echo -1 > "$g/cpu.cfs_quota_us"
        else
            awk -v q="$q" 'BEGIN { printf "%d\n", q * 100000 }' > "$g/cpu.cfs_quota_us"
        fi
        n0=$(awk '$1 == "nr_throttled" { print $2 }' "$g/cpu.stat")
        t0=$(awk '$1 == "throttled_time" { print $2 }' "$g/cpu.stat")
        timeout 600 mpirun -np 2 --oversubscribe --allow-run-as-root --bind-to none --mca btl self,vader \
            --mca btl_vader_single_copy_mechanism none --mca mpi_yield_when_idle "$yield" \
            "$work/join" "$prog" "$steps" 1 > "$work/out" 2>&1 || { cat "$work/out" >&2; exit 1; }
        n1=$(awk '$1 == "nr_throttled" { print $2 }' "$g/cpu.stat")
        t1=$(awk '$1 == "throttled_time" { print $2 }' "$g/cpu.stat")
        sed -n 2,3p "$work/times.0" | tr '\n' ' ' | awk -v q="$q" -v y="$yield" -v n=$((n1 - n0)) -v t="$t1" -v tz="$t0" '{
            split($1, a, "m"); sub(/s$/, "", a[2]); u = 60 * a[1] + a[2]
            split($2, b, "m"); sub(/s$/, "", b[2]); s = 60 * b[1] + b[2]
            printf "%-12s %-26s %8.2f %8.2f %8.2f %10d %12.2f\n", q == "none" ? "no quota" : q " core",
                y ? "mpi_yield_when_idle 1" : "default (busy polling)", u, s, $4 - $3, n, (t - tz) * 1e-9 }'
    done
done
