# A bad OMNIBATCH_* value stops every rank before any step with one clear
# line (from rank 0) and a non-zero exit; no hang (ob_run fails a timeout).
for bad in OMNIBATCH_REPORT=xml OMNIBATCH_MIN_BYTES=lots; do
    if ob_run "$np" "$bad" OMNIBATCH_TRACE="$work/trace.csv" -- "$tests/mpi_straggler" 5 1; then
        fail "$bad: the run succeeded"
    fi
    lines=$(grep -c '^omnibatch:' "$work/err" || true)
    [ "$lines" -eq 1 ] || fail "$bad: expected one omnibatch line, got $lines"
    name=${bad%%=*}
    value=${bad#*=}
    grep '^omnibatch:' "$work/err" | grep -q "$name.*$value" || fail "$bad: the line does not name the variable and value"
    grep -q "mpi_straggler:" "$work/out" && fail "$bad: the program ran its steps"
    [ -e "$work/trace.csv" ] && fail "$bad: a trace was written"
    grep '^omnibatch:' "$work/err"
done
exit 0
