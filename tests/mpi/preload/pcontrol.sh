# MPI_Pcontrol(0) stops measuring and MPI_Pcontrol(1) resumes: with 30
# steps and the layer off for steps 10 to 19, the trace holds steps 1-9
# (step 9 was whole when it stopped) and 21-29 (step 20 starts unseen).
ob_run "$np" OMNIBATCH_TRACE="$work/trace.csv" OMNIBATCH_REPORT_FILE="$work/report.txt" -- \
    "$tests/mpi_straggler" 30 1 blocking pcontrol || fail "the program failed"
grep -q "results right" "$work/out" || fail "wrong results under the preload"
r=0
while [ $r -lt "$np" ]; do
    rows=$(ob_trace_rows "$work/trace.csv" $r)
    [ "$rows" -eq 18 ] || fail "trace: rank $r has $rows rows, expected 18"
    r=$((r + 1))
done
grep -q "^omnibatch: report: 2 ranks, 16 measured steps per rank (after 2 warm-up)" "$work/report.txt" \
    || fail "the report does not count 16 measured steps"
