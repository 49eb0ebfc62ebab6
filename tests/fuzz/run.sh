#!/bin/sh
# Run each libFuzzer target of tests/fuzz/ for FUZZ_SECONDS (3 by default,
# as in `make check`; `make fuzz` gives more) from its seed corpus under
# tests/fuzz/corpus/.  New inputs go to a scratch folder, never to the
# sources; on a failure the folder is kept and its path printed, with the
# input that failed in it.  Skipped (77) when configure found no compiler
# with libFuzzer.
set -eu
top_srcdir=${top_srcdir:-.}
top_builddir=${top_builddir:-.}
secs=${FUZZ_SECONDS:-3}
targets="config hetsgd_trace"
for t in $targets; do
    if [ ! -x "$top_builddir/tests/fuzz/fuzz_$t" ]; then
        echo "fuzz: tests/fuzz/fuzz_$t is not built (configure found no compiler with libFuzzer): skipped"
        exit 77
    fi
done
work=$(mktemp -d "${TMPDIR:-/tmp}/ob-fuzz.XXXXXX")
status=0
for t in $targets; do
    mkdir "$work/$t"
    echo "== fuzz_$t, ${secs} s"
    if "$top_builddir/tests/fuzz/fuzz_$t" -max_total_time="$secs" -timeout=10 -max_len=4096 \
        -rss_limit_mb=1024 -print_final_stats=1 -artifact_prefix="$work/$t-" \
        "$work/$t" "$top_srcdir/tests/fuzz/corpus/$t" >"$work/$t.log" 2>&1; then
        grep -E '^stat::number_of_executed_units|^stat::peak_rss_mb' "$work/$t.log" || true
        # A run that executed no input (or said nothing) fuzzed nothing.
        units=$(sed -n 's/^stat::number_of_executed_units: *\([0-9][0-9]*\)$/\1/p' "$work/$t.log")
        if [ "${units:-0}" -eq 0 ]; then
            tail -n 40 "$work/$t.log"
            echo "fuzz: fuzz_$t exited 0 but executed no input (stat::number_of_executed_units '${units}'); its log is in $work" >&2
            status=1
        fi
    else
        tail -n 40 "$work/$t.log"
        echo "fuzz: fuzz_$t failed; its log and the input that failed are in $work" >&2
        status=1
    fi
done
if [ 0 -eq "$status" ]; then
    rm -rf "$work"
fi
exit "$status"
