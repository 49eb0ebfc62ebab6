#!/bin/sh
# tests/mpi/mpi_ps (the asynchronous mode) at 2, 3 and 4 ranks.
# The workers' speeds are emulated with sleeps: two tries at each rank count.
OB_API_TRIES=${OB_API_TRIES:-2} exec "${SHELL:-/bin/sh}" "${top_srcdir:-.}/tests/mpi/mpi_api_run.sh" mpi_ps
