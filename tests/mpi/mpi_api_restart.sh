#!/bin/sh
# Checkpoint and restart: a run of 3 ranks stops at step 18 (in its second
# epoch of 12 steps) and saves its state; it is resumed at 3, 2 and 4 ranks
# up to step 36.  Each pair must use every sample of each of epochs 0, 1 and
# 2 exactly once (the samples of epoch 1 are split across the restart), and
# the resumed run checks its warm start (tests/mpi/mpi_api_restart.c).
set -eu
prog="${top_builddir:-.}/tests/mpi/mpi_api_restart"
dir=$(mktemp -d "${TMPDIR:-/tmp}/ob-restart.XXXXXX")
trap 'rm -rf "$dir"' EXIT INT TERM
run() { "${top_srcdir:-.}/tests/mpirun.sh" "$@"; }
N=$((12 * 4 * 64 - 5))

"${top_srcdir:-.}/tests/mpirun.sh" 3 "$prog" first "$dir/state" "$dir/first" 18
for np in 3 2 4; do
    echo "== resumed at $np ranks"
    cp "$dir/first" "$dir/samples.$np"
    run "$np" "$prog" resume "$dir/state" "$dir/samples.$np" 36
    for epoch in 0 1 2; do
        # Every position 0 .. N-1 once: N lines, N distinct values, in range.
        awk -v e="$epoch" -v n="$N" '
            $1 == e { count++; if ($2 < 0 || $2 >= n || seen[$2]++) bad++ }
            END {
                if (count != n || bad) {
                    printf "epoch %d: %d samples used (expected %d), %d repeated or out of range\n", e, count, n, bad
                    exit 1
                }
            }' "$dir/samples.$np"
    done
    echo "samples: epochs 0, 1, 2 each used all $N samples exactly once across the restart"
done
