#!/bin/sh
# tests/mpi/mpi_api_nomem at 2, 3 and 4 ranks.
exec "${SHELL:-/bin/sh}" "${top_srcdir:-.}/tests/mpi/mpi_api_run.sh" mpi_api_nomem
