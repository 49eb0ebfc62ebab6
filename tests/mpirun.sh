#!/bin/sh
# Run an MPI test program: tests/mpirun.sh NP PROGRAM [ARGS...]
# Adds what a small shared machine needs (oversubscription, root, no core
# binding, a time limit so a hang fails the test instead of the whole run).
# Extra environment for the ranks: OB_MPIRUN_ENV="VAR=value VAR2=value".
# Set OB_PRELOAD=path/to/libomnibatch.so to preload the library.
# Per-rank settings through MPMD syntax: tests/mpirun.sh 1 -x A=1 PROG : -np 1 -x A=2 PROG
# (OB_MPIRUN_ENV and OB_PRELOAD then go to every part: mpirun's -x before
# the first ':' holds for the first part only).
set -eu
np=$1; shift
xs=""
for kv in ${OB_MPIRUN_ENV:-}; do
    xs="$xs -x $kv"
done
if [ -n "${OB_PRELOAD:-}" ]; then
    xs="$xs -x LD_PRELOAD=$OB_PRELOAD"
fi
first=1
for arg in "$@"; do
    if [ $first -eq 1 ]; then
        set --
        first=0
    fi
    set -- "$@" "$arg"
    if [ ":" = "$arg" ]; then
        # shellcheck disable=SC2086
        set -- "$@" $xs
    fi
done
# shellcheck disable=SC2086
exec timeout --signal=TERM --kill-after=10 "${OB_MPI_TIMEOUT:-120}" \
    "${MPIRUN:-mpirun}" -np "$np" --oversubscribe --allow-run-as-root --bind-to none \
    --mca btl self,vader --mca btl_vader_single_copy_mechanism none \
    $xs "$@"
