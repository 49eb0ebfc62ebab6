#!/bin/sh
# The parts below the API are MPI-free by construction: every .c of
# src/base, src/platform, src/control and src/observe must compile with the
# plain C compiler (PLAIN_CC, found by configure), their and the installed
# headers' include paths, and no MPI include path.  A file that reaches
# mpi.h, directly or through a header, fails here.  So must the mathematics
# of the asynchronous mode: every .c of src/async but its MPI parts, the
# parameter server's ps_*.c.  The compiler must first compile a file
# without MPI and refuse one that includes mpi.h: one that accepts both
# (PLAIN_CC=true) or sees MPI's headers judges nothing.
set -eu
srcdir=${top_srcdir:-.}
builddir=${top_builddir:-.}
# A command and its flags ("ccache gcc", "gcc -m64"): split on purpose.
cc=${PLAIN_CC:-cc}
parts="base platform control observe async"
# shellcheck disable=SC2086
set -- $cc
command -v "${1:-}" >/dev/null 2>&1 || { echo "check_core_mpi_free: no plain C compiler ('$cc'): skipped"; exit 77; }
[ -f "$builddir/config.h" ] || { echo "check_core_mpi_free: no config.h in $builddir: not a configured build tree" >&2; exit 1; }
work=$(mktemp -d "${TMPDIR:-/tmp}/mpi-free.XXXXXX")
trap 'rm -rf "$work"' EXIT
echo 'int ob_control(void);' >"$work/plain.c"
printf '#include <mpi.h>\nint ob_control(void);\n' >"$work/mpi.c"
# shellcheck disable=SC2086
$cc -fsyntax-only -Werror "$work/plain.c" ||
    { echo "check_core_mpi_free: '$cc' cannot compile a file of one declaration" >&2; exit 1; }
# shellcheck disable=SC2086
if $cc -fsyntax-only "$work/mpi.c" >/dev/null 2>&1; then
    echo "check_core_mpi_free: '$cc' compiles a file that includes mpi.h: it sees MPI's headers, or judges nothing" >&2
    exit 1
fi
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
        $cc -fsyntax-only -Werror ${HWLOC_CFLAGS:-} $incs "$f" ||
            { echo "check_core_mpi_free: $f does not compile with '$cc' and no MPI (the compiler's words above)" >&2; exit 1; }
        found=$((found + 1))
    done
    [ "$found" -gt 0 ] || { echo "check_core_mpi_free: no source in $srcdir/src/$p" >&2; exit 1; }
    n=$((n + found))
done
echo "check_core_mpi_free: $n files of src/{$(echo $parts | tr ' ' ',')} (async: all but ps_*.c) compile with $cc and no MPI"
