#!/bin/sh
# Every preload scenario of tests/mpi/preload/scenarios.txt, one after the
# other: each row names a scenario, its rank count, the script under
# tests/mpi/preload/ and the variables that script reads.  One line per
# scenario (PASS, FAIL or SKIP); a failing scenario's output follows its
# line.  OB_SCENARIOS='pattern ...' (shell patterns) runs only the matching
# rows: OB_SCENARIOS='weighted_*' make check TESTS=tests/mpi/preload_scenarios.sh
set -u
top_srcdir=${top_srcdir:-.}
top_builddir=${top_builddir:-.}
export top_srcdir top_builddir
dir="$top_srcdir/tests/mpi/preload"
pass=0 failed=0 skipped=0
# A table that cannot be read, or rows none of which OB_SCENARIOS selects,
# ran nothing: a failure, not a skip.
[ -r "$dir/scenarios.txt" ] || { echo "preload scenarios: cannot read $dir/scenarios.txt" >&2; exit 1; }
log=$(mktemp "${TMPDIR:-/tmp}/omnibatch-scenario.XXXXXX")
trap 'rm -f "$log"' EXIT

selected() {
    [ -z "${OB_SCENARIOS:-}" ] && return 0
    for p in $OB_SCENARIOS; do
        # shellcheck disable=SC2254
        case $1 in $p) return 0 ;; esac
    done
    return 1
}

while read -r name np script vars; do
    case $name in '' | '#'*) continue ;; esac
    selected "$name" || continue
    rc=0
    # A subshell per scenario: its variables, traps and exits stay its own;
    # no stdin, or mpirun would read the rest of the table.
    # shellcheck disable=SC2086
    (
        scenario=$name
        np=$np
        for kv in $vars; do
            eval "${kv%%=*}=\${kv#*=}"
        done
        . "$dir/lib.sh"
        . "$dir/$script"
    ) </dev/null >"$log" 2>&1 || rc=$?
    case $rc in
    0) pass=$((pass + 1)); echo "PASS: $name" ;;
    77) skipped=$((skipped + 1)); echo "SKIP: $name ($(tail -n 1 "$log"))" ;;
    *) failed=$((failed + 1)); echo "FAIL: $name (exit $rc)"; cat "$log" ;;
    esac
done <"$dir/scenarios.txt"

echo "preload scenarios: $pass passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ] || exit 1
if [ $((pass + skipped)) -eq 0 ]; then
    echo "preload scenarios: no row of $dir/scenarios.txt selected (OB_SCENARIOS='${OB_SCENARIOS:-}')" >&2
    exit 1
fi
[ "$pass" -gt 0 ] || exit 77
exit 0
