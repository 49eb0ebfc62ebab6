# The trace streams: rows reach OMNIBATCH_TRACE while the run goes, so a run
# that is killed keeps every row written up to shortly before, and never a
# broken one.  Two kills: SIGKILL of one rank (the launcher then ends the
# others), and SIGTERM to mpirun.  Before, the trace was written only at
# MPI_Finalize and a killed run left none.
steps=100000          # far more than the run lives

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
            wait "$launcher" || true
            fail "$1: no row of every rank reached the trace within 60 s of running"
        fi
    done
    mpirun_pid=$(pgrep -P "$launcher" | head -n 1)
    [ -n "$mpirun_pid" ] || fail "$1: mpirun not found"
    if [ "$2" = rank ]; then
        victim=$(pgrep -P "$mpirun_pid" | tail -n 1)
    else
        victim=$mpirun_pid
    fi
    [ -n "$victim" ] || fail "$1: no process to kill"
    before=$(($(wc -l <"$work/trace.csv") - 1))
    kill "-$1" "$victim"
    wait "$launcher" || true
    head -n 1 "$work/trace.csv" | grep -qx "step,rank,batch,compute_s,blocked_s,reduction_s,waiting_s,time_s,host" || fail "$1: trace header"
    after=$(($(wc -l <"$work/trace.csv") - 1))
    [ "$after" -ge "$before" ] || fail "$1: the trace lost rows ($before before the kill, $after after)"
    # Whole rows only: nine fields, the file ending in a newline.
    broken=$(awk -F, 'NR > 1 && !(NF == 9 && $1 ~ /^[0-9]+$/ && $2 ~ /^[0-9]+$/ && $5 ~ /^[0-9.e+-]+$/) { n++ } END { print n + 0 }' "$work/trace.csv")
    [ "$broken" -eq 0 ] || fail "$1: $broken broken rows"
    [ "$(tail -c 1 "$work/trace.csv" | od -An -c | tr -d ' ')" = '\n' ] || fail "$1: the trace ends mid-row"
    echo "$1 to $2: $after rows kept ($before when it was sent), rank 0 $(rows_of 0), rank $((np - 1)) $(rows_of $((np - 1)))"
}

killed_run KILL rank
killed_run TERM mpirun
exit 0
