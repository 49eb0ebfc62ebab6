#!/bin/sh
# tests/mpi/mpi_api_chunks at 2, 3 and 4 ranks: a step worked in chunks
# (options.chunks), a rank slowed inside its step, samples taken from it,
# each exactly once; the exact gradient; calls out of order and bad settings.
set -eu
exec "${SHELL:-/bin/sh}" "${top_srcdir:-.}/tests/mpi/mpi_api_run.sh" mpi_api_chunks
