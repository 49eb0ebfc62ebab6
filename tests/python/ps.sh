#!/bin/sh
# The asynchronous mode from Python (test_ps.py): omnibatch.ParameterServer
# on numpy at 2, 3 and 4 ranks (one worker is plain SGD, every sample once,
# the errors), then omnibatch.torch.AsyncSGD where PyTorch is installed.
# Skipped without Debian's python3-mpi4py and python3-numpy.
set -eu
# shellcheck disable=SC2034  # read by common.sh
needs="mpi4py, numpy"
# shellcheck source-path=SCRIPTDIR source=common.sh
. "$(dirname "$0")/common.sh"
export OB_PY_ENV="OMNIBATCH_LIBRARY=$library OMP_NUM_THREADS=1"
for np in 2 3 4; do
    echo "== numpy at $np ranks"
    run "$np" "$here/test_ps.py" numpy
done
if "$py" -c "import torch" >/dev/null 2>&1; then
    for np in 2 3; do
        echo "== torch at $np ranks"
        run "$np" "$here/test_ps.py" torch
    done
else
    echo "ps: $py has no torch: AsyncSGD not tested"
fi
