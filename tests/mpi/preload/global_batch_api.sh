# A code on the API (examples/lsq_train, global batch 128) run with an
# OMNIBATCH_GLOBAL_BATCH that says otherwise: one warning naming both, and
# the report gives the split of the batch that ran (before: silent, and the
# report split 256 samples the code never had).
ob_run "$np" OMNIBATCH_GLOBAL_BATCH=256 OMNIBATCH_REPORT=json OMNIBATCH_REPORT_FILE="$work/report.json" -- \
    "$top_builddir/examples/lsq_train" 1 || fail "the program failed"
lines=$(grep -c "OMNIBATCH_GLOBAL_BATCH='256' differs from the global batch 128 of the omnibatch context" "$work/err" || true)
[ "$lines" -eq 1 ] || fail "expected one warning about OMNIBATCH_GLOBAL_BATCH, got $lines"
grep -q '"global_batch": 128' "$work/report.json" || fail "the report does not use the context's global batch 128"
grep "OMNIBATCH_GLOBAL_BATCH" "$work/err"
