#!/bin/sh
# The parts below the API are MPI-free by construction: every .c of
# src/base, src/platform, src/control and src/observe must compile with the
# plain C compiler (PLAIN_CC, found by configure), their and the installed
# headers' include paths, and no MPI include path.  A file that reaches
# mpi.h, directly or through a header, fails here.  So must the mathematics
# of the asynchronous mode: every .c of src/async but its MPI parts, the
# parameter server's ps_*.c.
set -eu
srcdir=${top_srcdir:-.}
builddir=${top_builddir:-.}
cc=${PLAIN_CC:-cc}
parts="base platform control observe async"
command -v "$cc" >/dev/null 2>&1 || { echo "check_core_mpi_free: no plain C compiler ($cc): skipped"; exit 77; }
incs="-I$builddir -I$srcdir/include"
for p in $parts; do
    incs="$incs -I$srcdir/src/$p"
done
n=0
for p in $parts; do
    found=0
    for f in "$srcdir/src/$p"/*.c; do
        [ -f "$f" ] || continue
        case $p/$(basename "$f") in async/ps_*.c) continue ;; esac
        # shellcheck disable=SC2086
        "$cc" -fsyntax-only -Werror ${HWLOC_CFLAGS:-} $incs "$f" ||
            { echo "check_core_mpi_free: $f needs MPI" >&2; exit 1; }
        found=$((found + 1))
    done
    [ "$found" -gt 0 ] || { echo "check_core_mpi_free: no source in $srcdir/src/$p" >&2; exit 1; }
    n=$((n + found))
done
echo "check_core_mpi_free: $n files of src/{$(echo $parts | tr ' ' ',')} (async: all but ps_*.c) compile with $cc and no MPI"
