# The library preloaded into a program of the other MPI family (built here
# with OTHER_MPICC, run by OTHER_MPIRUN): the run ends before MPI_Init with
# one line that names the preload and the build to use, instead of MPI's
# "Invalid communicator" or a crash.  The same program without the preload
# runs, so the failure is ours and on purpose.
[ -n "${OTHER_MPICC:-}" ] && [ -n "${OTHER_MPIRUN:-}" ] \
    || skip "no MPI of the other family installed (OTHER_MPICC, OTHER_MPIRUN)"
"$OTHER_MPICC" -o "$work/foreign" "$top_srcdir/tests/mpi/mpi_foreign.c" \
    || fail "$OTHER_MPICC cannot build the program"
# Run by the other launcher, with its own flags (tests/mpirun.sh asks it).
foreign_run() {
    (
        MPIRUN=$OTHER_MPIRUN
        MPIRUN_FAMILY=""
        export MPIRUN MPIRUN_FAMILY
        unset MPIRUN_FLAGS
        ob_run "$@"
    )
}
saved_preload=$OB_PRELOAD
OB_PRELOAD=""
foreign_run "$np" -- "$work/foreign" || fail "the program fails even without the preload"
grep -q "foreign: sum right" "$work/out" || fail "wrong sum without the preload"
OB_PRELOAD=$saved_preload
if foreign_run "$np" -- "$work/foreign"; then
    fail "the mismatched preload ran instead of stopping"
fi
lines=$(grep -c "^omnibatch: .*LD_PRELOAD=.* is built for .*, but this program runs .*: preload .* instead$" "$work/err" || true)
[ "$lines" -eq 1 ] || fail "expected the mismatch line once, found it $lines times"
if grep -q -i -E "invalid communicator|segmentation|signal 11" "$work/err" "$work/out"; then
    fail "MPI failed before our check"
fi
grep "^omnibatch:" "$work/err"
