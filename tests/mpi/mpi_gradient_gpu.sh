#!/bin/sh
# tests/mpi/mpi_gradient_gpu at 2 ranks, on a machine with a GPU; skipped
# (77) without one, as on every CPU-only machine.
set -eu
if ! nvidia-smi -L >/dev/null 2>&1; then
    echo "mpi_gradient_gpu: SKIP: no GPU (nvidia-smi finds none)"
    exit 77
fi
exec "${top_srcdir:-.}/tests/mpirun.sh" 2 "${top_builddir:-.}/tests/mpi/mpi_gradient_gpu"
