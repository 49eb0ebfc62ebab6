# Threads under the preload ($level: multiple or serialized): the level asked for comes
# back unchanged, results stay right, and the background thread's gradient
# allreduces are the steps the layer reports.
steps=40
ob_run "$np" OMNIBATCH_TRACE="$work/trace.csv" OMNIBATCH_REPORT_FILE="$work/report.txt" -- \
    "$tests/mpi_threads" "$level" $steps || fail "the threaded program failed"
grep -q "results right" "$work/out" || fail "wrong results under the preload"
grep -q " 2 gradient allreduces per step (detected)$" "$work/report.txt" \
    || fail "the gradient thread's two allreduces per step were not found"
r=0
while [ $r -lt "$np" ]; do
    rows=$(ob_trace_rows "$work/trace.csv" $r)
    [ "$rows" -eq $((steps - 1)) ] || fail "trace: rank $r has $rows rows, expected $((steps - 1))"
    r=$((r + 1))
done
