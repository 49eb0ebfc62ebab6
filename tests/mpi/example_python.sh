#!/bin/sh
# The Python example reaches the API through ctypes when the library is
# preloaded, and does without it otherwise.  Needs Debian's python3 with
# mpi4py and numpy (python3-mpi4py, python3-numpy); skipped without them.
set -eu
top_srcdir=${top_srcdir:-.}
top_builddir=${top_builddir:-.}
py=${OB_PYTHON:-/usr/bin/python3}
if ! "$py" -c 'import mpi4py, numpy' >/dev/null 2>&1; then
    echo "example_python: $py lacks mpi4py or numpy: skipped"
    exit 77
fi
# mpi4py is built for one MPI (Debian's for Open MPI): with a build of the
# library for the other, the example cannot run at all.
py_mpi=$("$py" -c 'import mpi4py
mpi4py.rc.initialize = False
mpi4py.rc.finalize = False
from mpi4py import MPI
print(MPI.Get_library_version().replace(chr(0), "").splitlines()[0])' 2>/dev/null) || py_mpi="unknown"
case $py_mpi in
*"Open MPI"*) py_family=openmpi ;;
*MPICH* | *"Intel(R) MPI"* | *MVAPICH*) py_family=mpich ;;
*) py_family=unknown ;;
esac
if [ "$py_family" != "${OB_MPI_FAMILY:-openmpi}" ]; then
    echo "example_python: mpi4py uses $py_family ($py_mpi), this build ${OB_MPI_FAMILY:-openmpi}: skipped"
    exit 77
fi
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
