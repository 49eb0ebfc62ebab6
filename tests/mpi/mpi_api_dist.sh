#!/bin/sh
# tests/mpi/mpi_api_dist with the distributed decision forced and verified
# (OMNIBATCH_VERIFY=on: same decision and plan on every rank, the same
# optimum and integer step time as the central planner) at 2 to 64 ranks,
# oversubscribed, and at 4 asleep (OMNIBATCH_WAIT=sleep); 64 ranks run only a few steps.  Every rank must say that
# the distributed decision planned (OMNIBATCH_DEBUG=1).  From 32 ranks on,
# 16 or more share a speed and the decisions pool them (OMNIBATCH_POOL): the
# script says how many did.
set -eu
prog="${top_builddir:-.}/tests/mpi/mpi_api_dist"
out="${TMPDIR:-/tmp}/ob_api_dist.$$"
trap 'rm -f "$out"' EXIT
run() {
    np=$1; steps=$2; wait=${3:+OMNIBATCH_WAIT=$3}
    echo "== mpi_api_dist at $np ranks, $steps steps${wait:+, $wait}"
    OB_MPIRUN_ENV="CK_FORK=no OB_DIST_STEPS=$steps OMNIBATCH_PLANNER=distributed OMNIBATCH_VERIFY=on \
OMNIBATCH_DEBUG=1${wait:+ $wait}" OB_MPI_TIMEOUT=240 "${top_srcdir:-.}/tests/mpirun.sh" "$np" "$prog" >"$out" 2>&1 || {
        cat "$out"; exit 1; }
    # Each rank says it once a context (a test); every rank must have said it.
    said=$(grep "the distributed decision plans for $np ranks" "$out" | sed 's/.*\[rank \([0-9]*\)\].*/\1/' |
        sort -u | awk 'END { print NR }')
    if [ "$said" -ne "$np" ]; then
        cat "$out"
        echo "mpi_api_dist: $said of $np ranks planned with the distributed decision"
        exit 1
    fi
    if [ "$np" -ge 32 ]; then
        # What pooled (OMNIBATCH_POOL): said, not judged.  The checks above
        # then cover pooled decisions; whether ranks pool depends on the
        # timings, which 32 oversubscribed ranks do not keep apart (the
        # program judges speeds only up to OB_SPEEDS_MEANINGFUL_RANKS).
        pooled=$(grep -c "planned on pooled speeds" "$out" || true)
        echo "mpi_api_dist: $pooled of $np ranks planned on pooled speeds"
    fi
}
run 2 24
run 3 24
# Asleep, the decision's collectives are nonblocking ones (api_dist.c).
run 4 24 sleep
run 8 24
run 16 16
run 32 12
run 64 6
