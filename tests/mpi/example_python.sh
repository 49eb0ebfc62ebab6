#!/bin/sh
# The Python example reaches the API through ctypes when the library is
# preloaded, and does without it otherwise.  Needs Debian's python3 with
# mpi4py and numpy (python3-mpi4py, python3-numpy); skipped without them.
set -eu
# The interpreter, the skips (no mpi4py or numpy; mpi4py of the other MPI
# family) and the paths, as the package's tests have them.
# shellcheck disable=SC2034  # read by common.sh
needs="mpi4py, numpy"
# shellcheck source=../python/common.sh
. "${top_srcdir:-.}/tests/python/common.sh"
out=$(mktemp)
trap 'rm -f "$out"' EXIT
script="$top_srcdir/examples/omnibatch_ctypes.py"

echo "== 2 ranks, no library"
"$top_srcdir/tests/mpirun.sh" 2 "$py" "$script" >"$out"
cat "$out"
grep -q "omnibatch_ctypes: omnibatch absent, equal batches: loss .* plan 64 64$" "$out"

echo "== 3 ranks, library preloaded"
OB_PRELOAD="$(cd "$top_builddir" && pwd)/.libs/lib${OB_LIBNAME:-omnibatch}.so" \
    "$top_srcdir/tests/mpirun.sh" 3 "$py" "$script" >"$out"
cat "$out"
grep -q "omnibatch_ctypes: omnibatch found: loss" "$out"
awk '/omnibatch_ctypes: omnibatch found/ {
    for (i = 1; i <= NF; i++) {
        if ($i == "loss") { a = $(i + 1) + 0; b = $(i + 3); sub(/,$/, "", b); b += 0 }
        if ($i == "plan") { for (j = i + 1; j <= NF; j++) sum += $j }
    }
    if (!(b < a / 100) || sum != 128) { print "example_python: bad result"; exit 1 }
}' "$out"
