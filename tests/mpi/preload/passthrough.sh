# Sourced: bit-exact passthrough under the preload, on $np ranks, with
# OMNIBATCH_WEIGHT=$weight.  With weighting on and no API context, the
# layer says so once (rank 0) and passes every call through.
ob_run "$np" OMNIBATCH_REPORT=off OMNIBATCH_WEIGHT="$weight" OB_EXPECT_PRELOAD=1 -- \
    "$tests/mpi_passthrough" || fail "passthrough test failed on $np ranks (OMNIBATCH_WEIGHT=$weight)"
# Check says "100%: Checks: 0" when no test ran (CK_RUN_CASE naming none).
grep -q "100%: Checks: [1-9][0-9]*, Failures: 0, Errors: 0" "$work/out" || fail "not every check ran and passed"
warned=$(grep -c "OMNIBATCH_WEIGHT is on but no omnibatch context" "$work/err" || true)
if [ "$weight" = on ]; then
    [ "$warned" -eq 1 ] || fail "expected the no-context warning once, got it $warned times"
else
    [ "$warned" -eq 0 ] || fail "no-context warning with weighting off"
fi
echo "passthrough on $np ranks, OMNIBATCH_WEIGHT=$weight: bit for bit"
