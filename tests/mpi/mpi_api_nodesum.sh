#!/bin/sh
# tests/mpi/mpi_api_nodesum (OMNIBATCH_WAIT=sleep, every rank on this node)
# at 2, 3 and 4 ranks: the gradient summed in shared memory, then the same
# program with OMNIBATCH_NODE_SUM=off (MPI's nonblocking sum).
set -eu
run="${top_srcdir:-.}/tests/mpi/mpi_api_run.sh"
"${SHELL:-/bin/sh}" "$run" mpi_api_nodesum
echo "== OMNIBATCH_NODE_SUM=off"
OB_MPIRUN_ENV="OMNIBATCH_NODE_SUM=off ${OB_MPIRUN_ENV:-}" exec "${SHELL:-/bin/sh}" "$run" mpi_api_nodesum
