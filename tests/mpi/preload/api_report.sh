# A code that reduces through the API (examples/lsq_train) under the layer:
# the API reduces through PMPI on its own communicator, so the layer takes
# the steps the API measured (ob_active.h).  The report must count every
# step after warm-up, one gradient reduction per step, the API's global
# batch and its per-rank batches; the trace must hold every step of every
# rank with batches that sum to the global batch.
epochs=2
steps=$((epochs * 4096 / 128))
ob_run "$np" OMNIBATCH_REPORT=json OMNIBATCH_REPORT_FILE="$work/report.json" \
    OMNIBATCH_TRACE="$work/trace.csv" -- \
    "$top_builddir/examples/lsq_train" "$epochs" || fail "the program failed"
grep -q "lsq_train: loss" "$work/out" || fail "the example did not finish"
"$tests/json_valid" "$work/report.json" || fail "the JSON report does not parse"
grep -q '"steps_from_api": true' "$work/report.json" || fail "the steps were not taken from the API"
grep -q "\"steps\": $((steps - 2))," "$work/report.json" ||
    fail "expected $((steps - 2)) measured steps (all but 2 warm-up)"
grep -q '"calls_per_step": 1,' "$work/report.json" || fail "expected one gradient reduction per step"
grep -q '"global_batch": 128' "$work/report.json" || fail "the API's global batch is not in the report"
r=0
while [ $r -lt "$np" ]; do
    n=$(ob_trace_rows "$work/trace.csv" $r)
    [ "$n" -eq "$steps" ] || fail "rank $r has $n trace rows, expected $steps"
    r=$((r + 1))
done
bad=$(awk -F, 'NR > 1 { s[$1] += $3 } END { for (k in s) if (s[k] != 128) n++; print n + 0 }' "$work/trace.csv")
[ "$bad" -eq 0 ] || fail "$bad steps whose batches do not sum to 128"
# One path for the plan: the report's split is the controller's plan, the
# one the example printed after its last step, with the controller's models.
grep -q '"split_source": "controller"' "$work/report.json" ||
    fail "the report's split is not the controller's plan"
printed=$(sed -n 's/^lsq_train: loss .*, plan //p' "$work/out")
reported=$(grep -o '"balanced_batch": [0-9]*' "$work/report.json" | awk '{ printf "%s%s", s, $2; s = " " }')
[ -n "$printed" ] && [ "$printed" = "$reported" ] ||
    fail "the report's split '$reported' is not the controller's plan '$printed'"
grep -q '"model_beta_s": [0-9]' "$work/report.json" || fail "the report does not show the models"
