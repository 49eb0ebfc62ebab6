#!/bin/sh
# Steps worked in chunks through PyTorch (test_torch_chunks.py) at 2, 3 and
# 4 ranks, a rank that sleeps inside its first chunk of every step: every
# sample once, the exact gradient and one reduction per rank per step
# through DDP (gloo) and mpi4py; the DataLoader with worker processes;
# misuse.  Skipped without Debian's python3-torch and python3-mpi4py.
set -eu
# shellcheck disable=SC2034  # read by common.sh
needs="mpi4py, numpy, torch"
# shellcheck source-path=SCRIPTDIR source=common.sh
. "$(dirname "$0")/common.sh"
# torch.distributed's rendezvous: rank 0's free port, on this host.
export OB_PY_ENV="OMNIBATCH_LIBRARY=$library MASTER_ADDR=127.0.0.1 OMP_NUM_THREADS=1"
run 2 "$here/test_torch_chunks.py" exact misuse
run 3 "$here/test_torch_chunks.py" exact loader
run 4 "$here/test_torch_chunks.py" exact

