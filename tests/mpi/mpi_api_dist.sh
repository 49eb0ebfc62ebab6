#!/bin/sh
# tests/mpi/mpi_api_dist with the distributed decision forced and verified
# (OMNIBATCH_VERIFY=on: same decision and plan on every rank, the same
# optimum and integer step time as the central planner) at 2 to 64 ranks,
# oversubscribed; 64 ranks run only a few steps.  Every rank must say that
# the distributed decision planned (OMNIBATCH_DEBUG=1).  At 32 ranks the 21
# fast ones (the slow are every third) are 16 or more of one speed: some must
# say they planned on pooled speeds (OMNIBATCH_POOL), and no slow rank, 4x
# slower and only 11, may.
set -eu
prog="${top_builddir:-.}/tests/mpi/mpi_api_dist"
out="${TMPDIR:-/tmp}/ob_api_dist.$$"
trap 'rm -f "$out"' EXIT
run() {
    np=$1; steps=$2
    echo "== mpi_api_dist at $np ranks, $steps steps"
    OB_MPIRUN_ENV="CK_FORK=no OB_DIST_STEPS=$steps OMNIBATCH_PLANNER=distributed OMNIBATCH_VERIFY=on \
OMNIBATCH_DEBUG=1" OB_MPI_TIMEOUT=240 "${top_srcdir:-.}/tests/mpirun.sh" "$np" "$prog" >"$out" 2>&1 || {
        cat "$out"; exit 1; }
    said=$(grep -c "the distributed decision plans for $np ranks" "$out" || true)
    if [ "$said" -ne "$np" ]; then
        cat "$out"
        echo "mpi_api_dist: $said of $np ranks planned with the distributed decision"
        exit 1
    fi
    if [ "$np" -eq 32 ]; then
        pooled=$(grep -c "planned on pooled speeds" "$out" || true)
        slow=$(sed -n 's/.*debug: rank \([0-9]*\): planned on pooled speeds.*/\1/p' "$out" |
            awk '$1 % 3 == 0' | wc -l)
        if [ "$pooled" -lt 1 ] || [ "$slow" -ne 0 ]; then
            cat "$out"
            echo "mpi_api_dist: $pooled ranks planned on pooled speeds, $slow of them slow (want >= 1 and 0)"
            exit 1
        fi
        echo "mpi_api_dist: $pooled of 32 ranks planned on pooled speeds, none of the slow"
    fi
}
run 2 24
run 3 24
run 8 24
run 16 16
run 32 12
run 64 6
