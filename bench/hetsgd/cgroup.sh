# shellcheck shell=sh
# bench/hetsgd/cgroup.sh: sourced by the scripts that put ranks in CPU-quota
# cgroups of their own (bench/hetsgd/run.sh, bench/hetsgd/async.sh).
#
# cgroup_release GROUP: the processes still in GROUP/rank* (a run cut short:
# ours) stopped, then those groups and GROUP removed.  Nothing outside GROUP
# is touched; an empty GROUP is nothing to do.
cgroup_release() {
    [ -n "$1" ] || return 0
    for cg_rank in "$1"/rank*; do
        [ -d "$cg_rank" ] || continue
        for cg_pid in $(cat "$cg_rank/cgroup.procs" 2>/dev/null); do
            kill -KILL "$cg_pid" 2>/dev/null || true
        done
    done
    sleep 1
    for cg_rank in "$1"/rank*; do
        [ -d "$cg_rank" ] && rmdir "$cg_rank" 2>/dev/null || true
    done
    rmdir "$1" 2>/dev/null || true
}
