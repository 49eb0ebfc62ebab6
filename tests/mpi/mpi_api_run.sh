#!/bin/sh
# Run one MPI test program of the API at 2, 3 and 4 ranks (OB_API_NPS to
# choose others): tests/mpi/mpi_api_run.sh PROGRAM.  Check must not fork under
# MPI, hence CK_FORK=no for every rank.
# OB_API_TRIES=N (default 1): a program whose figures are judged from
# emulated speeds (sleeps) may see a crowded machine's scheduling delays; it
# gets N tries at each rank count, every failed try printed in full and
# named, and fails only when all N fail.
set -eu
prog="${top_builddir:-.}/tests/mpi/$1"
tries=${OB_API_TRIES:-1}
case $tries in
'' | *[!0-9]* | 0)
    echo "mpi_api_run.sh: OB_API_TRIES='$tries': a whole number >= 1 is allowed" >&2
    exit 99
    ;;
esac
ran=0
for np in ${OB_API_NPS:-2 3 4}; do
    ran=$((ran + 1))
    t=1
    while :; do
        echo "== $1 at $np ranks (try $t of $tries)"
        if OB_MPIRUN_ENV="CK_FORK=no ${OB_MPIRUN_ENV:-}" "${top_srcdir:-.}/tests/mpirun.sh" "$np" "$prog"; then
            break
        fi
        if [ "$t" -ge "$tries" ]; then
            echo "== $1 at $np ranks: failed $t of $t tries" >&2
            exit 1
        fi
        echo "== $1 at $np ranks: try $t failed (its output is above); once more" >&2
        t=$((t + 1))
    done
done
# OB_API_NPS=' ' ran it at no rank count: nothing was checked.
[ "$ran" -gt 0 ] || { echo "mpi_api_run.sh: OB_API_NPS='${OB_API_NPS:-}': no rank count, $1 not run" >&2; exit 1; }
