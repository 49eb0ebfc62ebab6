#!/bin/sh
# The library must export exactly the public API and the MPI wrappers: a
# wrapper that lost its export (hidden visibility) silently stops
# interposing, and an internal symbol that leaks becomes ABI by accident.
set -eu
lib="${top_builddir:-.}/.libs/lib${OB_LIBNAME:-omnibatch}.so"
expected="${top_srcdir:-.}/tests/mpi/exports.txt"
[ -f "$lib" ] || { echo "check_exports: $lib not built" >&2; exit 1; }
[ -s "$expected" ] || { echo "check_exports: $expected is missing or empty" >&2; exit 1; }
# automake passes NM="/usr/bin/nm -B": a command and its flags, split on purpose.
nm=${NM:-nm}
# shellcheck disable=SC2086
set -- $nm
command -v "${1:-}" >/dev/null 2>&1 || { echo "check_exports: no nm ('$nm'): skipped"; exit 77; }
# The mpi_f08 entry points (mpi_x_f08_) are Open MPI's only.
if [ mpich = "${OB_MPI_FAMILY:-openmpi}" ]; then
    grep -v '_f08_$' "$expected" >"${TMPDIR:-/tmp}/ob-exports.$$"
    expected="${TMPDIR:-/tmp}/ob-exports.$$"
    trap 'rm -f "$expected"' EXIT
fi
# nm on its own, not first in a pipe: sh has no pipefail, and a failing nm
# read as "no symbol" showed only as a difference from the list.
# shellcheck disable=SC2086
syms=$($nm -D --defined-only "$lib") || { echo "check_exports: '$nm' failed on $lib" >&2; exit 1; }
actual=$(printf '%s\n' "$syms" | awk '$2 ~ /^[TWDBVRiu]$/ { print $3 }' | LC_ALL=C sort -u)
[ -n "$actual" ] || { echo "check_exports: '$nm' lists no defined symbol of $lib" >&2; exit 1; }
if ! printf '%s\n' "$actual" | diff -u "$expected" - ; then
    echo "check_exports: exported symbols of $lib differ from tests/mpi/exports.txt (- expected, + actual)" >&2
    exit 1
fi
echo "check_exports: $(printf '%s\n' "$actual" | wc -l) symbols as expected"
