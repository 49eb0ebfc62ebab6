# Settings given per rank (MPMD: one part per rank): a setting that must be
# the same on every rank and differs, or a bad value on one rank only,
# stops every rank inside MPI_Init, before any step, with one line: the
# variable and two ranks' values, or the bad value from the rank that has it.
# Before: OMNIBATCH_ENABLE differing hung, WEIGHT, PERIOD and GLOBAL_BATCH
# differing were silent, and rank 1's bad value left only mpirun's box.
prog="$tests/mpi_straggler"

# expect_stop PATTERN ENV0 ENV1: rank 0 gets ENV0, rank 1 ENV1.
expect_stop() {
    pattern=$1
    # shellcheck disable=SC2046
    if ob_run 1 -- $(ob_part_env "$2") "$prog" 5 1 : -np 1 $(ob_part_env "$3") "$prog" 5 1; then
        fail "$2 / $3: the run succeeded"
    fi
    lines=$(grep -c '^omnibatch:' "$work/err" || true)
    [ "$lines" -eq 1 ] || fail "$2 / $3: expected one omnibatch line, got $lines"
    grep '^omnibatch:' "$work/err" | grep -Eq -- "$pattern" || fail "$2 / $3: the line does not say $pattern"
    grep -q "mpi_straggler:" "$work/out" && fail "$2 / $3: the program ran its steps"
    grep '^omnibatch:' "$work/err"
}

expect_stop "OMNIBATCH_ENABLE differs between ranks: rank 0 has 'on', rank 1 has 'off'" \
    OMNIBATCH_ENABLE=on OMNIBATCH_ENABLE=off
expect_stop "OMNIBATCH_ENABLE differs between ranks: rank 0 has 'off', rank 1 has 'on'" \
    OMNIBATCH_ENABLE=0 OMNIBATCH_ENABLE=yes
expect_stop "OMNIBATCH_WEIGHT differs between ranks: rank 0 has 'off', rank 1 has 'on'" \
    OMNIBATCH_WEIGHT=off OMNIBATCH_WEIGHT=on
expect_stop "OMNIBATCH_PERIOD differs between ranks: rank 0 has '4', rank 1 has '8'" \
    OMNIBATCH_PERIOD=4 OMNIBATCH_PERIOD=8
expect_stop "OMNIBATCH_GLOBAL_BATCH differs between ranks: rank 0 has '256', rank 1 has '128'" \
    OMNIBATCH_GLOBAL_BATCH=256 OMNIBATCH_GLOBAL_BATCH=128
# Unset on one rank is a difference too (the default, spelt as the setting).
expect_stop "OMNIBATCH_CONVENTION differs between ranks: rank 0 has 'auto', rank 1 has 'mean'" \
    OMNIBATCH_DEBUG=0 OMNIBATCH_CONVENTION=mean
# A bad value on rank 1 only: rank 1 says so.
expect_stop "^omnibatch: \[rank 1\] OMNIBATCH_GAIN='abc': expected a number in \(0, 1\]$" \
    OMNIBATCH_GAIN=0.5 OMNIBATCH_GAIN=abc

# What may differ does not stop the run: the debug level.
# shellcheck disable=SC2046
ob_run 1 -- $(ob_part_env OMNIBATCH_DEBUG=0) "$prog" 5 1 : -np 1 $(ob_part_env OMNIBATCH_DEBUG=1) "$prog" 5 1 \
    || fail "OMNIBATCH_DEBUG differing stopped the run"
grep -q "results right" "$work/out" || fail "OMNIBATCH_DEBUG differing: wrong results"

# A name that is no setting, in rank 1's environment only: rank 1 warns
# about it (rank 0 warns about its own names only), and the run goes on.
# shellcheck disable=SC2046
ob_run 1 -- $(ob_part_env OMNIBATCH_DEBUG=0) "$prog" 5 1 : -np 1 $(ob_part_env OMNIBATCH_GAINN=0.5) "$prog" 5 1 \
    || fail "OMNIBATCH_GAINN on rank 1 stopped the run"
grep -q "results right" "$work/out" || fail "OMNIBATCH_GAINN on rank 1: wrong results"
grep -Eq '^omnibatch: \[rank 1\] warning: unknown setting OMNIBATCH_GAINN ignored \(did you mean OMNIBATCH_GAIN\?\)$' \
    "$work/err" || fail "OMNIBATCH_GAINN on rank 1 only: rank 1 did not warn"
grep '^omnibatch:.*OMNIBATCH_GAINN' "$work/err"
# The same name on every rank: one line, rank 0's.
# shellcheck disable=SC2046
ob_run 1 -- $(ob_part_env OMNIBATCH_GAINN=0.5) "$prog" 5 1 : -np 1 $(ob_part_env OMNIBATCH_GAINN=0.5) "$prog" 5 1 \
    || fail "OMNIBATCH_GAINN on both ranks stopped the run"
lines=$(grep -c 'unknown setting OMNIBATCH_GAINN' "$work/err" || true)
[ "$lines" -eq 1 ] || fail "OMNIBATCH_GAINN on both ranks: expected one warning, got $lines"
exit 0
