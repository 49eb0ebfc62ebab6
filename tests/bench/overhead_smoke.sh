#!/bin/sh
# bench/overhead/run.sh end to end on tiny sizes: it must finish, print one
# row per operation, type and size, and write a summary with the same rows.
# Timings are never checked (machines are noisy).
set -eu
srcdir=${top_srcdir:-.}
builddir=${top_builddir:-.}
work=$(mktemp -d "${TMPDIR:-/tmp}/ob-overhead-smoke.XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM

cg=--no-callgrind
# (not in a build with AddressSanitizer, which valgrind cannot run: run.sh skips the counts)
if [ -n "${VALGRIND:-}" ] && command -v callgrind_annotate >/dev/null 2>&1 &&
    ! ldd "$builddir/.libs/lib${OB_LIBNAME:-omnibatch}.so" 2>/dev/null | grep -q 'libasan'; then
    cg="--cg-calls 20"
else
    echo "overhead_smoke: the instruction counts are not checked (needs VALGRIND, callgrind_annotate, a build without AddressSanitizer)"
fi
# shellcheck disable=SC2086
sh "$srcdir/bench/overhead/run.sh" --builddir "$builddir" --rounds 2 --scale 0.02 \
    --max-bytes 2048 $cg --summary "$work/summary.json" >"$work/out" 2>&1 || {
    cat "$work/out"; echo "overhead_smoke: run.sh failed"; exit 1; }
cat "$work/out"

fail() { echo "overhead_smoke: $*"; exit 1; }
# sizes 8, 32, 128, 512, 2048 x {allreduce, iallreduce} x {float, int}
rows=$(awk '$1 ~ /^i?allreduce$/ && ($2 == "float" || $2 == "int") && $3 ~ /^[0-9]+$/ &&
            $5 + 0 > 0 && $6 + 0 > 0 && $7 + 0 > 0 { n++ } END { print n + 0 }' "$work/out")
[ "$rows" -eq 20 ] || fail "expected 20 latency rows, found $rows"
grep -q '^op  *type  *bytes  *class  *plain  *preload  *ratio' "$work/out" || fail "no table header"
grep -q 'allreduce  *float  *2048  *gradient' "$work/out" || fail "2 KiB float SUM not labelled gradient"
grep -q 'allreduce  *int  *2048  *passthrough' "$work/out" || fail "int SUM not labelled passthrough"

s=$work/summary.json
grep -q '"benchmark": "overhead"' "$s" || fail "summary lacks the benchmark name"
n=$(grep -c '"ratio": [0-9]' "$s" || true)
[ "$n" -eq 20 ] || fail "summary has $n latency entries, expected 20"
if [ "--no-callgrind" != "$cg" ]; then
    n=$(grep -c '"interposition": -\{0,1\}[0-9]' "$s" || true)
    [ "$n" -eq 4 ] || fail "summary has $n instruction entries, expected 4"
    grep -q '^iallreduce  *int  *passthrough  *[0-9.]*  *[0-9.]*  *-\{0,1\}[0-9.]*  *\(yes\|no\)$' "$work/out" \
        || fail "no instruction row for iallreduce int"
fi
echo "overhead_smoke: ok"
