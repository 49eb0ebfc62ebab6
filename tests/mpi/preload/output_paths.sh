# Outputs that cannot be written are found at init, not after the run:
# OMNIBATCH_TRACE, OMNIBATCH_REPORT_FILE, OMNIBATCH_TIMELINE or OMNIBATCH_PROFILE in a missing directory, under a
# file, naming a directory or a file under /proc, or two of them naming one
# file under two spellings, stop the run before its first step with one line.
# A write that fails later (a full device) is one warning naming the path
# and the system's reason, and the run goes on.
prog="$tests/mpi_straggler"
touch "$work/plain"
mkdir "$work/d"
ln -s "$work/t.csv" "$work/link.csv"

# expect_stop PATTERN VAR=value ...
expect_stop() {
    pattern=$1
    shift
    if ob_run "$np" "$@" -- "$prog" 5 1; then
        fail "$*: the run succeeded"
    fi
    lines=$(grep -c '^omnibatch:' "$work/err" || true)
    [ "$lines" -eq 1 ] || fail "$*: expected one omnibatch line, got $lines"
    grep '^omnibatch:' "$work/err" | grep -q -- "$pattern" || fail "$*: the line does not say $pattern"
    grep -q "mpi_straggler:" "$work/out" && fail "$*: the program ran its steps"
    grep '^omnibatch:' "$work/err"
}

for var in OMNIBATCH_TRACE OMNIBATCH_REPORT_FILE OMNIBATCH_TIMELINE; do
    expect_stop "$var='$work/missing/x.csv': cannot write there: No such file or directory" \
        "$var=$work/missing/x.csv"
    expect_stop "$var='$work/plain/x.csv': cannot write there: Not a directory" "$var=$work/plain/x.csv"
    expect_stop "$var='$work/d': cannot write there: Is a directory" "$var=$work/d"
    expect_stop "$var='/proc/self/x.csv': cannot write there" "$var=/proc/self/x.csv"
    expect_stop "$var='/proc/sys/kernel/hostname': cannot write there: a file under /proc or /sys" \
        "$var=/proc/sys/kernel/hostname"
done
[ -e "$work/t.csv" ] && fail "a stopped run left a trace file"
expect_stop "OMNIBATCH_TRACE='$work/t.csv' and OMNIBATCH_REPORT_FILE='$work/./t.csv' are the same file" \
    OMNIBATCH_TRACE="$work/t.csv" OMNIBATCH_REPORT_FILE="$work/./t.csv"
expect_stop "OMNIBATCH_TRACE='$work/link.csv' and OMNIBATCH_REPORT_FILE='$work/t.csv' are the same file" \
    OMNIBATCH_TRACE="$work/link.csv" OMNIBATCH_REPORT_FILE="$work/t.csv"
# The timeline is a third output: one file with either other interleaves both.
expect_stop "OMNIBATCH_TIMELINE='$work/./t.csv' and OMNIBATCH_TRACE='$work/t.csv' are the same file" \
    OMNIBATCH_TRACE="$work/t.csv" OMNIBATCH_TIMELINE="$work/./t.csv"
expect_stop "OMNIBATCH_TIMELINE='$work/link.csv' and OMNIBATCH_REPORT_FILE='$work/t.csv' are the same file" \
    OMNIBATCH_TIMELINE="$work/link.csv" OMNIBATCH_REPORT_FILE="$work/t.csv"
[ -e "$work/t.csv" ] && fail "a stopped run left the file it created"
# The profile is written at the end, through PATH.tmp renamed over PATH:
# checked at init as well, and never one of the other outputs.
expect_stop "OMNIBATCH_PROFILE='$work/missing/p.prof': cannot write there: No such file or directory" \
    OMNIBATCH_PROFILE="$work/missing/p.prof"
expect_stop "OMNIBATCH_PROFILE='$work/d': cannot write there: Is a directory" OMNIBATCH_PROFILE="$work/d"
expect_stop "OMNIBATCH_PROFILE='$work/./t.csv' is the file of OMNIBATCH_TRACE" \
    OMNIBATCH_TRACE="$work/t.csv" OMNIBATCH_PROFILE="$work/./t.csv"
expect_stop "OMNIBATCH_PROFILE='$work/link.csv' is the file of OMNIBATCH_REPORT_FILE" \
    OMNIBATCH_REPORT_FILE="$work/t.csv" OMNIBATCH_PROFILE="$work/link.csv"
[ -e "$work/t.csv" ] && fail "a stopped run left the file it created"
ls "$work" | grep -q '\.tmp$' && fail "a stopped run left a profile's .tmp file"

# A full device: one warning each, naming the path and the reason; the run succeeds.
for var in OMNIBATCH_TRACE OMNIBATCH_REPORT_FILE; do
    ob_run "$np" "$var=/dev/full" -- "$prog" 12 1 || fail "$var=/dev/full: the run failed"
    grep -q "results right" "$work/out" || fail "$var=/dev/full: wrong results"
    lines=$(grep -c "^omnibatch: .*/dev/full: No space left on device" "$work/err" || true)
    [ "$lines" -eq 1 ] || fail "$var=/dev/full: expected one warning naming /dev/full and the reason, got $lines"
    grep "/dev/full" "$work/err"
done
exit 0
