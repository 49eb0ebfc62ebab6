#!/bin/sh
# tests/mpi/mpi_api_wait (OMNIBATCH_WAIT=sleep) at 2, 3 and 4 ranks.
# It times how soon the sleepers wake: two tries at each rank count (mpi_api_run.sh).
OB_API_TRIES=${OB_API_TRIES:-2} exec "${SHELL:-/bin/sh}" "${top_srcdir:-.}/tests/mpi/mpi_api_run.sh" mpi_api_wait
