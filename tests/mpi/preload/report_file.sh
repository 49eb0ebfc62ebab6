# An unmodified MPI program (plain mpicc) under LD_PRELOAD, 4 ranks, rank 2
# sleeping ten times longer each step: the text report must name rank 2,
# and the trace must hold every measured step of every rank.
steps=30
ob_run "$np" OMNIBATCH_REPORT_FILE="$work/report.txt" OMNIBATCH_TRACE="$work/trace.csv" \
    OMNIBATCH_GLOBAL_BATCH=256 -- "$tests/mpi_straggler" $steps 2 blocking || fail "the program failed"
grep -q "results right" "$work/out" || fail "wrong results under the preload"
[ -s "$work/report.txt" ] || fail "no report in OMNIBATCH_REPORT_FILE"
grep -q "^omnibatch: report: 4 ranks, .* 3 gradient allreduces per step (detected)$" "$work/report.txt" \
    || fail "the report header does not say 4 ranks and 3 allreduces per step"
grep -Eq '^  rank 2 \(host [^)]+\) is the straggler: it computes [0-9.]+x as long as the fastest; ranks 0,1,3 wait [0-9]+% of their step$' \
    "$work/report.txt" || fail "the report does not name rank 2 as the straggler"
grep -Eq '^  balanced split of the global batch 256:( [0-9]+){4}$' "$work/report.txt" \
    || fail "no balanced split of the global batch"
head -1 "$work/trace.csv" | grep -qx "step,rank,batch,compute_s,blocked_s,reduction_s,waiting_s,time_s,host,cpu_s,involuntary_switches,off_cpu_s,throttled_s,taken,given" || fail "trace header"
for r in 0 1 2 3; do
    # Every step but the first, whose start the layer cannot know.
    rows=$(ob_trace_rows "$work/trace.csv" $r)
    [ "$rows" -eq $((steps - 1)) ] || fail "trace: rank $r has $rows rows, expected $((steps - 1))"
done
# The straggler blocks least: blocked time, not step time, shows who is slow.
b2=$(ob_trace_mean "$work/trace.csv" 2 5) || fail "trace: no row of rank 2"
for r in 0 1 3; do
    br=$(ob_trace_mean "$work/trace.csv" $r 5) || fail "trace: no row of rank $r"
    awk -v a="$b2" -v b="$br" 'BEGIN { exit !(a < b) }' \
        || fail "trace: rank 2 blocks $b2 s per step, not less than rank $r's $br s"
done
# What the kernel gave each rank in a step: its CPU seconds and involuntary
# switches on every row whose step reached the layer as it ended (those the
# detector held while it learnt the pattern leave them empty); most do here.
awk -F, 'NR > 1 { n++; if ($10 ~ /^[0-9.e+-]+$/ && $11 ~ /^[0-9]+$/) known++; else if ($10 != "" || $11 != "") bad++ }
    END { exit !(n > 0 && known * 2 >= n && bad == 0) }' "$work/trace.csv" \
    || fail "trace: the CPU columns are empty on most rows, or not numbers"
grep -q "omnibatch" "$work/err" && fail "the layer wrote to stderr though the report went to a file"
cat "$work/report.txt"
