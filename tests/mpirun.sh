#!/bin/sh
# Run an MPI test program: tests/mpirun.sh NP PROGRAM [ARGS...]
# Adds what a small shared machine needs (oversubscription, root, no core
# binding, a time limit so a hang fails the test instead of the whole run).
# Extra environment for the ranks: OB_MPIRUN_ENV="VAR=value VAR2=value".
# Set OB_PRELOAD=path/to/libomnibatch.so to preload the library.
set -eu
np=$1; shift
set -- "$@"
xs=""
for kv in ${OB_MPIRUN_ENV:-}; do
    xs="$xs -x $kv"
done
if [ -n "${OB_PRELOAD:-}" ]; then
    xs="$xs -x LD_PRELOAD=$OB_PRELOAD"
fi
# shellcheck disable=SC2086
exec timeout --signal=TERM --kill-after=10 "${OB_MPI_TIMEOUT:-120}" \
    "${MPIRUN:-mpirun}" -np "$np" --oversubscribe --allow-run-as-root --bind-to none \
    --mca btl self,vader --mca btl_vader_single_copy_mechanism none \
    $xs "$@"
