#!/bin/sh
# PyTorch with omnibatch (test_torch.py): exact gradients through DDP over
# gloo and through mpi4py at 2, 3 and 4 ranks; the DataLoader path with
# worker processes; a clean exit after DDP training.  Skipped without Debian's python3-torch and python3-mpi4py.
set -eu
# shellcheck disable=SC2034  # read by common.sh
needs="mpi4py, numpy, torch"
# shellcheck source-path=SCRIPTDIR source=common.sh
. "$(dirname "$0")/common.sh"
# torch.distributed's rendezvous: rank 0's free port, on this host.
export OB_PY_ENV="OMNIBATCH_LIBRARY=$library MASTER_ADDR=127.0.0.1 OMP_NUM_THREADS=1"
run 2 "$here/test_torch.py" exact unused
run 3 "$here/test_torch.py" exact loader
run 4 "$here/test_torch.py" exact
# An exit right after DDP training: three runs of four processes.
for _ in 1 2 3; do
    run 4 "$here/test_torch.py" exit
done
