#!/bin/sh
# No function of the library (src/ and mpi_wrappers/) is above cognitive
# complexity 25 (clang-tidy's readability-function-cognitive-complexity): a
# function reads as a list of named steps.  Skipped without clang-tidy.
# A clang-tidy that judged nothing is no pass: it must first name a made-up
# function far above the limit, its exit status counts for every file, and
# a pattern of the list that matched no file fails.
set -eu
srcdir=${top_srcdir:-.}
builddir=${top_builddir:-.}
# A command and its flags ("clang-tidy-14 --extra-arg=-w"): split on purpose.
tidy=${CLANG_TIDY:-clang-tidy}
limit=25
# shellcheck disable=SC2086
set -- $tidy
command -v "${1:-}" >/dev/null 2>&1 || { echo "check_complexity: no $tidy: skipped"; exit 77; }
# The MPI compiler wrapper's include flags (mpi.h): Open MPI's -showme,
# MPICH's -show.
mpicc=${MPICC:-mpicc}
incs=$({ "$mpicc" -showme 2>/dev/null || "$mpicc" -show 2>/dev/null || true; } | tr ' ' '\n' | grep '^-I' | tr '\n' ' ')
out=$(mktemp "${TMPDIR:-/tmp}/complexity.XXXXXX")
trap 'rm -f "$out" "$out.one" "$out.c"' EXIT
srcincs=$(for d in "$srcdir"/src/*/; do printf -- '-I%s ' "${d%/}"; done)
flags="-I$builddir -I$srcdir/include $srcincs -I$srcdir/mpi_wrappers -I$builddir/mpi_wrappers -I$srcdir/bench/simulate ${HWLOC_CFLAGS:-} $incs"

# judge FILE: clang-tidy's words on FILE in $out.one; its exit status.
judge() {
    # shellcheck disable=SC2086  # $tidy: a command and its flags; $flags: one word a flag
    $tidy -quiet -checks="-*,readability-function-cognitive-complexity" \
        -config="{CheckOptions: [{key: readability-function-cognitive-complexity.Threshold, value: $limit}]}" \
        "$1" -- $flags >"$out.one" 2>&1
}

# The control: eight nested ifs weigh 1 + 2 + ... + 8 = 36.  A clang-tidy
# that does not name it judges nothing (CLANG_TIDY=true passed every file).
{
    echo 'int ob_complexity_control(int a);'
    echo 'int ob_complexity_control(int a)'
    echo '{'
    for i in 1 2 3 4 5 6 7 8; do echo "if (a > $i) {"; done
    echo 'return a;'
    for i in 1 2 3 4 5 6 7 8; do echo '}'; done
    echo 'return 0;'
    echo '}'
} >"$out.c"
if ! judge "$out.c" || ! grep -q "function 'ob_complexity_control' has cognitive complexity of 36" "$out.one"; then
    echo "check_complexity: $tidy does not name a function of cognitive complexity 36 (limit $limit): it judges nothing" >&2
    head -n 5 "$out.one" >&2
    exit 1
fi
n=0
for f in "$srcdir"/src/*/*.c "$srcdir"/mpi_wrappers/*.c "$srcdir"/bench/simulate/*.c; do
    # shellcheck disable=SC2086
    [ -f "$f" ] || { echo "check_complexity: no file matches $f" >&2; exit 1; }
    rc=0
    judge "$f" || rc=$?
    # A file clang cannot parse is not judged: that is a failure too.
    if [ "$rc" -ne 0 ] || grep -q 'error:' "$out.one"; then
        echo "check_complexity: $tidy cannot judge $f (exit $rc):" >&2
        { grep 'error:' "$out.one" || cat "$out.one"; } | head -n 5 >&2
        exit 1
    fi
    grep 'warning: function' "$out.one" >>"$out" || true
    n=$((n + 1))
done
# Nothing judged is no pass: a wrong path, or a clang-tidy that said nothing.
[ "$n" -gt 0 ] || { echo "check_complexity: no source found under $srcdir/src" >&2; exit 1; }
if [ -s "$out" ]; then
    echo "check_complexity: functions above cognitive complexity $limit:" >&2
    cat "$out" >&2
    exit 1
fi
echo "check_complexity: $n files, no function above cognitive complexity $limit"
