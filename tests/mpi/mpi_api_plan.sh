#!/bin/sh
# tests/mpi/mpi_api_plan at 2, 3 and 4 ranks.
# Speeds are emulated with sleeps: two tries at each rank count (mpi_api_run.sh).
OB_API_TRIES=${OB_API_TRIES:-2} exec "${SHELL:-/bin/sh}" "${top_srcdir:-.}/tests/mpi/mpi_api_run.sh" mpi_api_plan
