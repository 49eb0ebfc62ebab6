#!/bin/sh
# Run an MPI test program: tests/mpirun.sh NP PROGRAM [ARGS...]
# (tests/mpirun.sh --print-flags: only print the flags it would add.)
# Adds what a small shared machine needs, in the words of the launcher
# configure found (MPIRUN, of the kind MPIRUN_FAMILY: openmpi or hydra;
# asked of the launcher itself when unset): oversubscription, root, no core
# binding, shared-memory transport for Open MPI; nothing for MPICH's
# mpiexec.hydra, which needs none of them.  MPIRUN_FLAGS replaces those
# flags.  A time limit makes a hang fail the test instead of the whole run.
# Extra environment for the ranks: OB_MPIRUN_ENV="VAR=value VAR2=value".
# Set OB_PRELOAD=path/to/libomnibatch.so to preload the library.
# Per-rank settings through MPMD syntax: tests/mpirun.sh 1 -x A=1 PROG : -np 1 -x A=2 PROG
# (hydra: -env A 1; preload/lib.sh's ob_part_env writes either)
# (OB_MPIRUN_ENV and OB_PRELOAD then go to every part).
set -eu
np=$1; shift
mpirun=${MPIRUN:-mpirun}
family=${MPIRUN_FAMILY:-}
if [ -z "$family" ]; then
    case $("$mpirun" --version 2>&1) in
    *"Open MPI"* | *OpenRTE*) family=openmpi ;;
    *HYDRA*) family=hydra ;;
    *) family=unknown ;;
    esac
fi

case $family in
openmpi)
    default_flags="--oversubscribe --allow-run-as-root --bind-to none \
--mca btl self,vader --mca btl_vader_single_copy_mechanism none"
    ;;
*)
    default_flags=""
    ;;
esac
flags=${MPIRUN_FLAGS-$default_flags}
if [ "--print-flags" = "$np" ]; then
    echo "$flags"
    exit 0
fi

# One VAR=value for every rank, as this launcher takes it.
envs=""
add_env() {
    case $family in
    openmpi) envs="$envs -x $1" ;;
    *) envs="$envs -genv ${1%%=*} ${1#*=}" ;;
    esac
}
for kv in ${OB_MPIRUN_ENV:-}; do
    add_env "$kv"
done
if [ -n "${OB_PRELOAD:-}" ]; then
    add_env "LD_PRELOAD=$OB_PRELOAD"
fi
# MPMD (tests/mpirun.sh 1 PROG : -np 1 PROG): Open MPI's -x before the
# first ':' holds for the first part only, so every part gets them; hydra's
# -genv holds for all parts already.
if [ openmpi = "$family" ]; then
    first=1
    for arg in "$@"; do
        if [ $first -eq 1 ]; then
            set --
            first=0
        fi
        set -- "$@" "$arg"
        if [ ":" = "$arg" ]; then
            # shellcheck disable=SC2086
            set -- "$@" $envs
        fi
    done
fi
# shellcheck disable=SC2086
exec timeout --signal=TERM --kill-after=10 "${OB_MPI_TIMEOUT:-120}" \
    "$mpirun" -np "$np" $flags $envs "$@"
