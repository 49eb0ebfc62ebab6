# OMNIBATCH_PROFILE: a first run of the unmodified straggler program keeps
# its measured split in the profile; the next run (another slow rank)
# compares its split with it, rank by rank, and replaces the file.  The
# profile does not depend on the report: kept with OMNIBATCH_REPORT=off and
# when the report's file is full.
steps=24
prof="$work/split.profile"
ob_run "$np" OMNIBATCH_PROFILE="$prof" OMNIBATCH_GLOBAL_BATCH=256 -- "$tests/mpi_straggler" $steps 1 blocking \
    || fail "the first run failed"
[ -s "$prof" ] || fail "the first run wrote no profile to $prof"
head -1 "$prof" | grep -qx "omnibatch-profile 1 $np 256" || fail "profile header: $(head -1 "$prof")"
[ "$(wc -l <"$prof")" -eq $((np + 1)) ] || fail "profile: expected $np rank lines"
grep -q "no previous profile there; this run's split is kept there for the next" "$work/err" \
    || fail "the first run's report does not say it starts the profile"
cp "$prof" "$work/first.profile"
ob_run "$np" OMNIBATCH_PROFILE="$prof" OMNIBATCH_GLOBAL_BATCH=256 -- "$tests/mpi_straggler" $steps 0 blocking \
    || fail "the second run failed"
grep -Eq "^  profile $prof: balanced share then -> now \\($np ranks then\\):( [0-9.]+% -> [0-9.]+%){$np}\$" "$work/err" \
    || fail "the second report does not compare with the profile"
grep -Eq "^  profile: the largest change is rank [01]'s, [0-9.]+ points of the global batch$" "$work/err" \
    || fail "the second report does not name the largest change (rank 0 or 1)"
cmp -s "$prof" "$work/first.profile" && fail "the second run did not replace the profile"
# A damaged profile is reported, not trusted, and replaced.
echo "something else" >"$prof"
ob_run "$np" OMNIBATCH_PROFILE="$prof" -- "$tests/mpi_straggler" $steps 1 blocking || fail "the third run failed"
grep -q "not a profile: expected a first line 'omnibatch-profile 1 RANKS GLOBAL_BATCH'" "$work/err" \
    || fail "a damaged profile is not reported"
head -1 "$prof" | grep -q "^omnibatch-profile 1 $np " || fail "the damaged profile was not replaced"
# The profile is kept without a report, and when the report cannot be written.
for setting in OMNIBATCH_REPORT=off OMNIBATCH_REPORT_FILE=/dev/full; do
    rm -f "$prof"
    ob_run "$np" "$setting" OMNIBATCH_PROFILE="$prof" -- "$tests/mpi_straggler" $steps 1 blocking \
        || fail "$setting: the run failed"
    head -1 "$prof" | grep -q "^omnibatch-profile 1 $np " || fail "$setting: no profile written"
done
cat "$work/err"
