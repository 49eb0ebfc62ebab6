# Sourced before each preload scenario (tests/mpi/preload/scenarios.txt, run
# by tests/mpi/preload_scenarios.sh): where the built pieces are, a scratch
# directory, and a helper that runs a program under mpirun (tests/mpirun.sh)
# with libomnibatch preloaded.  The runner sets np and the scenario's
# variables, and scenario (its name).
set -eu
top_srcdir=${top_srcdir:-.}
top_builddir=${top_builddir:-.}
OB_PRELOAD=$(cd "$top_builddir" && pwd)/.libs/lib${OB_LIBNAME:-omnibatch}.so
export OB_PRELOAD
tests=$top_builddir/tests/mpi
scenario=${scenario:-$0}
[ -f "$OB_PRELOAD" ] || { echo "$scenario: $OB_PRELOAD is not built" >&2; exit 1; }
work=$(mktemp -d "${TMPDIR:-/tmp}/omnibatch-test.XXXXXX")
trap 'rm -rf "$work"' EXIT

# fail MESSAGE: show what the run printed, then fail the test.
fail() {
    for f in "$work"/out "$work"/err "$work"/report*; do
        if [ -f "$f" ]; then
            echo "--- $(basename "$f")"
            cat "$f"
        fi
    done
    echo "FAIL: $scenario: $*" >&2
    exit 1
}

# skip REASON: the scenario cannot run here (exit 77).
skip() {
    echo "SKIP: $scenario: $*"
    exit 77
}

# ob_run NP [VAR=value ...] -- PROGRAM [ARGS...]: stdout to $work/out,
# stderr to $work/err; returns the launcher's exit status.
ob_run() {
    ob_np=$1
    shift
    ob_env="CK_FORK=no"
    while [ "$1" != "--" ]; do
        ob_env="$ob_env $1"
        shift
    done
    shift
    ob_rc=0
    OB_MPIRUN_ENV="$ob_env" sh "$top_srcdir/tests/mpirun.sh" "$ob_np" "$@" \
        >"$work/out" 2>"$work/err" || ob_rc=$?
    case $ob_rc in
    124 | 137) fail "timed out (a hang)" ;;
    esac
    return $ob_rc
}

# ob_part_env VAR=value: the option that sets VAR for one part of an MPMD
# run (PROG : -np 1 PROG), as the launcher takes it: -x VAR=value for Open
# MPI's mpirun, -env VAR value for MPICH's mpiexec.hydra.
ob_part_env() {
    case ${MPIRUN_FAMILY:-openmpi} in
    hydra) echo "-env ${1%%=*} ${1#*=}" ;;
    *) echo "-x $1" ;;
    esac
}

# ob_trace_rows FILE RANK: data rows of one rank in a trace CSV.
ob_trace_rows() {
    awk -F, -v r="$2" 'NR > 1 && $2 == r { n++ } END { print n + 0 }' "$1"
}

# ob_trace_mean FILE RANK COLUMN: mean of a column (4 compute_s, 5 blocked_s);
# fails, printing nothing, when the rank has no row (a mean of 0 would pass
# a bound from above).
ob_trace_mean() {
    awk -F, -v r="$2" -v c="$3" 'NR > 1 && $2 == r { s += $c; n++ } END { if (!n) exit 1; printf "%.9f\n", s / n }' "$1"
}
