#!/bin/sh
# The controller core is MPI-free by construction: every src/core/*.c must
# compile with the plain C compiler (PLAIN_CC, found by configure), the
# core's and the installed headers' include paths, and no MPI include path.
# A core file that reaches mpi.h, directly or through a header, fails here.
set -eu
srcdir=${top_srcdir:-.}
builddir=${top_builddir:-.}
cc=${PLAIN_CC:-cc}
command -v "$cc" >/dev/null 2>&1 || { echo "check_core_mpi_free: no plain C compiler ($cc)"; exit 77; }
n=0
for f in "$srcdir"/src/core/*.c; do
    # shellcheck disable=SC2086
    "$cc" -fsyntax-only -Werror ${HWLOC_CFLAGS:-} -I"$builddir" -I"$srcdir/include" \
        -I"$srcdir/src/core" "$f" || { echo "check_core_mpi_free: $f needs MPI" >&2; exit 1; }
    n=$((n + 1))
done
[ "$n" -gt 0 ] || { echo "check_core_mpi_free: no source in $srcdir/src/core" >&2; exit 1; }
echo "check_core_mpi_free: $n files of src/core compile with $cc and no MPI"
