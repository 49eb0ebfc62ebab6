# The trace streams: rows reach OMNIBATCH_TRACE while the run goes, so a run
# that is killed keeps every row written up to shortly before, and never a
# broken one.  Two kills: SIGKILL of one rank (the launcher then ends the
# others), and SIGTERM to mpirun.  Before, the trace was written only at
# MPI_Finalize and a killed run left none.
steps=100000          # far more than the run lives

# descendants PID: every process below PID.
descendants() {
    for child in $(pgrep -P "$1"); do
        echo "$child"
        descendants "$child"
    done
}

# ranks_of PID: the program's processes below PID (under Open MPI the
# launcher's children; under MPICH's hydra a proxy's, one level further).
ranks_of() {
    for p in $(descendants "$1"); do
        [ "$(cat /proc/"$p"/comm 2>/dev/null)" = mpi_straggler ] && echo "$p"
    done
}

# rows_of RANK: complete data rows of one rank.
rows_of() {
    awk -F, -v r="$1" 'NR > 1 && $2 == r { n++ } END { print n + 0 }' "$work/trace.csv"
}

# killed_run SIGNAL WHO: start the run, wait until every rank's rows are
# in the file, send SIGNAL to WHO (rank: one rank's process; mpirun), and
# check what the file holds once everything has ended.
killed_run() {
    rm -f "$work/trace.csv"
    OB_MPIRUN_ENV="OMNIBATCH_TRACE=$work/trace.csv OMNIBATCH_REPORT=off" \
        sh "$top_srcdir/tests/mpirun.sh" "$np" "$tests/mpi_straggler" $steps 1 \
        >"$work/out" 2>"$work/err" &
    launcher=$!
    waited=0
    until [ -s "$work/trace.csv" ] && [ "$(rows_of 0)" -gt 0 ] && [ "$(rows_of $((np - 1)))" -gt 0 ]; do
        sleep 1
        waited=$((waited + 1))
        if [ $waited -gt 60 ]; then
            # mpirun ends its ranks on SIGTERM; then the time limit's wrapper.
            # shellcheck disable=SC2046
            kill -TERM $(pgrep -P "$launcher") 2>/dev/null || true
            # shellcheck disable=SC2046
            kill -KILL $(ranks_of "$launcher") 2>/dev/null || true
            wait "$launcher" || true
            fail "$1: no row of every rank reached the trace within 60 s of running"
        fi
    done
    mpirun_pid=$(pgrep -P "$launcher" | head -n 1)
    [ -n "$mpirun_pid" ] || fail "$1: mpirun not found"
    ranks=$(ranks_of "$mpirun_pid")
    [ "$(echo "$ranks" | wc -w)" -eq "$np" ] || fail "$1: found $(echo "$ranks" | wc -w) rank processes, expected $np"
    if [ "$2" = rank ]; then
        # A rank itself, not a launcher's proxy (killing hydra's proxy
        # orphaned every rank, which then ran on).
        victim=$(echo "$ranks" | tail -n 1)
    else
        victim=$mpirun_pid
    fi
    [ -n "$victim" ] || fail "$1: no process to kill"
    before=$(($(wc -l <"$work/trace.csv") - 1))
    kill "-$1" "$victim"
    wait "$launcher" || true
    # Every rank of the run ends with it: none left running on its own.
    left=
    for _ in $(seq 1 15); do
        left=
        for p in $ranks; do
            [ -d "/proc/$p" ] && [ "$(cat /proc/"$p"/comm 2>/dev/null)" = mpi_straggler ] && left="$left $p"
        done
        [ -z "$left" ] && break
        sleep 1
    done
    if [ -n "$left" ]; then
        # shellcheck disable=SC2086
        kill -KILL $left 2>/dev/null || true
        fail "$1 to $2: rank processes$left still ran 15 s after the launcher ended"
    fi
    head -n 1 "$work/trace.csv" | grep -qx "step,rank,batch,compute_s,blocked_s,reduction_s,waiting_s,time_s,host,cpu_s,involuntary_switches,off_cpu_s,throttled_s,taken,given" || fail "$1: trace header"
    after=$(($(wc -l <"$work/trace.csv") - 1))
    [ "$after" -ge "$before" ] || fail "$1: the trace lost rows ($before before the kill, $after after)"
    # Whole rows only: nine fields, the file ending in a newline.
    broken=$(awk -F, 'NR > 1 && !(NF == 15 && $1 ~ /^[0-9]+$/ && $2 ~ /^[0-9]+$/ && $5 ~ /^[0-9.e+-]+$/) { n++ } END { print n + 0 }' "$work/trace.csv")
    [ "$broken" -eq 0 ] || fail "$1: $broken broken rows"
    [ "$(tail -c 1 "$work/trace.csv" | od -An -c | tr -d ' ')" = '\n' ] || fail "$1: the trace ends mid-row"
    echo "$1 to $2: $after rows kept ($before when it was sent), rank 0 $(rows_of 0), rank $((np - 1)) $(rows_of $((np - 1)))"
}

killed_run KILL rank
killed_run TERM mpirun
exit 0
