#!/bin/sh
# The library must export exactly the public API and the MPI wrappers: a
# wrapper that lost its export (hidden visibility) silently stops
# interposing, and an internal symbol that leaks becomes ABI by accident.
set -eu
lib="${top_builddir:-.}/.libs/lib${OB_LIBNAME:-omnibatch}.so"
expected="${top_srcdir:-.}/tests/mpi/exports.txt"
[ -f "$lib" ] || { echo "check_exports: $lib not built" >&2; exit 1; }
# The mpi_f08 entry points (mpi_x_f08_) are Open MPI's only.
if [ mpich = "${OB_MPI_FAMILY:-openmpi}" ]; then
    grep -v '_f08_$' "$expected" >"${TMPDIR:-/tmp}/ob-exports.$$"
    expected="${TMPDIR:-/tmp}/ob-exports.$$"
    trap 'rm -f "$expected"' EXIT
fi
actual=$(${NM:-nm} -D --defined-only "$lib" | awk '$2 ~ /^[TWDBVRiu]$/ { print $3 }' | LC_ALL=C sort -u)
if ! printf '%s\n' "$actual" | diff -u "$expected" - ; then
    echo "check_exports: exported symbols of $lib differ from tests/mpi/exports.txt (- expected, + actual)" >&2
    exit 1
fi
echo "check_exports: $(printf '%s\n' "$actual" | wc -l) symbols as expected"
