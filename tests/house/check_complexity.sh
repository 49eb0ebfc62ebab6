#!/bin/sh
# No function of the library (src/ and mpi_wrappers/) is above cognitive
# complexity 25 (clang-tidy's readability-function-cognitive-complexity): a
# function reads as a list of named steps.  Skipped without clang-tidy.
set -eu
srcdir=${top_srcdir:-.}
builddir=${top_builddir:-.}
tidy=${CLANG_TIDY:-clang-tidy}
limit=25
command -v "$tidy" >/dev/null 2>&1 || { echo "check_complexity: no $tidy: skipped"; exit 77; }
# The MPI compiler wrapper's include flags (mpi.h): Open MPI's -showme,
# MPICH's -show.
mpicc=${MPICC:-mpicc}
incs=$({ "$mpicc" -showme 2>/dev/null || "$mpicc" -show 2>/dev/null || true; } | tr ' ' '\n' | grep '^-I' | tr '\n' ' ')
out=$(mktemp "${TMPDIR:-/tmp}/complexity.XXXXXX")
trap 'rm -f "$out" "$out.one"' EXIT
srcincs=$(for d in "$srcdir"/src/*/; do printf -- '-I%s ' "${d%/}"; done)
n=0
for f in "$srcdir"/src/*/*.c "$srcdir"/mpi_wrappers/*.c "$srcdir"/bench/simulate/*.c; do
    # shellcheck disable=SC2086
    "$tidy" -quiet -checks='-*,readability-function-cognitive-complexity' \
        -config="{CheckOptions: [{key: readability-function-cognitive-complexity.Threshold, value: $limit}]}" \
        "$f" -- -I"$builddir" -I"$srcdir/include" $srcincs \
        -I"$srcdir/mpi_wrappers" -I"$builddir/mpi_wrappers" -I"$srcdir/bench/simulate" ${HWLOC_CFLAGS:-} $incs >"$out.one" 2>&1 || true
    # A file clang cannot parse is not judged: that is a failure too.
    if grep -q 'error:' "$out.one"; then
        echo "check_complexity: clang-tidy cannot parse $f:" >&2
        grep 'error:' "$out.one" | head -n 5 >&2
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
