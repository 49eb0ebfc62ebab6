#!/bin/sh
# Run one MPI test program of the API at 2, 3 and 4 ranks (OB_API_NPS to
# choose others): tests/mpi/mpi_api_run.sh PROGRAM.  Check must not fork under
# MPI, hence CK_FORK=no for every rank.
set -eu
prog="${top_builddir:-.}/tests/mpi/$1"
for np in ${OB_API_NPS:-2 3 4}; do
    echo "== $1 at $np ranks"
    OB_MPIRUN_ENV="CK_FORK=no ${OB_MPIRUN_ENV:-}" "${top_srcdir:-.}/tests/mpirun.sh" "$np" "$prog"
done
