#!/bin/sh
# Every check can fail.  The house and unit check scripts, the quick ones of
# tests/mpi, tests/fuzz and tests/python (no rank started, nothing trained)
# and three Check suites are run against empty or broken inputs -- a build
# tree or a source tree that is an empty folder, a tool that fails (false),
# one that does nothing and says nothing (true), one that is not there, a
# selection that selects nothing -- and each must fail (exit neither 0 nor
# 77), or skip (77) where a tool is missing, with a line that says why.  A
# check that passes here checked nothing, as check_no_loops did with "0 call
# edges" when nm could not run, and check_complexity with CLANG_TIDY=true.
set -eu
srcdir=${top_srcdir:-.}
builddir=${top_builddir:-.}
work=$(mktemp -d "${TMPDIR:-/tmp}/scripts-fail.XXXXXX")
trap 'rm -rf "$work"' EXIT
empty=$work/empty
mkdir "$empty"
cases=0
bad=0

# have COMMAND: its first word runs here (a variable of make check may hold
# a command and its flags).
have() {
    # shellcheck disable=SC2086
    set -- $1
    command -v "${1:-}" >/dev/null 2>&1
}

# expect WANT PATTERN CHECK [VAR=value ...]: run CHECK (a script, by its
# path in the source tree, run by sh; a program, by its path in the build
# tree) with make check's environment and VAR=value.  WANT: fail (an exit
# status neither 0 nor 77) or skip (77); either way its output must hold a
# line matching PATTERN (grep's basic expression).
expect() {
    want=$1
    pattern=$2
    check=$3
    shift 3
    cases=$((cases + 1))
    case $check in
    *.sh) path=$srcdir/$check; run="sh $path" ;;
    *) path=$builddir/$check; run=$path ;;
    esac
    # A check that is not there cannot fail: that fails here.
    if [ ! -f "$path" ]; then
        echo "FAIL: $check: no $path"
        bad=$((bad + 1))
        return 0
    fi
    rc=0
    # shellcheck disable=SC2086  # $run: sh and the script, or the program
    env "$@" $run </dev/null >"$work/out" 2>&1 || rc=$?
    ok=0
    case $want:$rc in
    fail:0 | fail:77) ;;
    fail:*) ok=1 ;;
    skip:77) ok=1 ;;
    esac
    if [ "$ok" -eq 1 ] && grep -q -- "$pattern" "$work/out"; then
        echo "ok: $check $*: exit $rc: $(grep -m 1 -- "$pattern" "$work/out")"
    else
        echo "FAIL: $check $*: exit $rc; expected to $want with a line matching '$pattern'; it said:"
        tail -n 8 "$work/out" | sed 's/^/  | /'
        bad=$((bad + 1))
    fi
}

# WANT for a case that needs TOOL to get as far as the input under test:
# without the tool the script skips.
needs() {
    if have "$1"; then echo fail; else echo skip; fi
}

# tests/house/check_no_loops.sh: the library's call and include graph.
nm=${NM:-nm}
cc=${PLAIN_CC:-cc}
expect fail "no built objects" tests/house/check_no_loops.sh top_builddir="$empty"
expect fail "false failed on" tests/house/check_no_loops.sh NM=false
expect fail "no call edge" tests/house/check_no_loops.sh NM=true
expect skip "no nm" tests/house/check_no_loops.sh NM="$empty/nm"
# No include edge: a build of two objects, one calling the other (nm over
# the library's own takes half a minute on a loaded machine), and no source.
if have "$cc" && have "$nm"; then
    mkdir -p "$work/objs/src/base/.libs"
    printf 'int ob_a(void);\nint ob_a(void) { return 1; }\n' >"$work/a.c"
    printf 'int ob_a(void);\nint ob_b(void);\nint ob_b(void) { return ob_a(); }\n' >"$work/b.c"
    for o in a b; do
        # shellcheck disable=SC2086
        $cc -c -o "$work/objs/src/base/.libs/libobcore_la-$o.o" "$work/$o.c"
    done
    expect fail "no include edge" tests/house/check_no_loops.sh top_builddir="$work/objs" top_srcdir="$empty"
else
    echo "not run: check_no_loops.sh on a source tree without includes (needs '$cc' and '$nm')"
fi

# tests/house/check_core_mpi_free.sh: the MPI-free parts compile without MPI.
expect fail "cannot compile" tests/house/check_core_mpi_free.sh PLAIN_CC=false
expect fail "compiles a file that includes mpi.h" tests/house/check_core_mpi_free.sh PLAIN_CC=true
expect skip "no plain C compiler" tests/house/check_core_mpi_free.sh PLAIN_CC="$empty/cc"
expect "$(needs "$cc")" "no config.h\\|no plain C compiler" tests/house/check_core_mpi_free.sh top_builddir="$empty"
expect "$(needs "$cc")" "no source in\\|no plain C compiler" tests/house/check_core_mpi_free.sh top_srcdir="$empty"

# tests/house/check_complexity.sh: clang-tidy's cognitive complexity.
tidy=${CLANG_TIDY:-clang-tidy}
expect fail "judges nothing" tests/house/check_complexity.sh CLANG_TIDY=false
expect fail "judges nothing" tests/house/check_complexity.sh CLANG_TIDY=true
expect skip "no $empty/clang-tidy: skipped" tests/house/check_complexity.sh CLANG_TIDY="$empty/clang-tidy"
expect "$(needs "$tidy")" "no file matches\\|skipped" tests/house/check_complexity.sh top_srcdir="$empty"

# tests/unit/base/check_man.sh: the man page against the settings table.
mkdir -p "$work/man/docs"
: >"$work/man/docs/omnibatch.7"
expect fail "is not built" tests/unit/base/check_man.sh top_builddir="$empty"
expect fail "$empty" tests/unit/base/check_man.sh top_srcdir="$empty"
expect fail "omnibatch(7)" tests/unit/base/check_man.sh top_builddir="$work/man"

# tests/unit/platform/memtype_ptxas.sh: the PTX kernels through ptxas.
expect skip "no ptxas" tests/unit/platform/memtype_ptxas.sh CUDA_PTXAS=
expect skip "no ptxas" tests/unit/platform/memtype_ptxas.sh CUDA_PTXAS="$empty/ptxas"
expect fail "missing for sm_75" tests/unit/platform/memtype_ptxas.sh CUDA_PTXAS=/bin/true
expect fail "memtype_ptx" tests/unit/platform/memtype_ptxas.sh CUDA_PTXAS=/bin/true top_builddir="$empty"

# The Check suites (tests/ob_check_run.h): a selection of no test.
expect fail "no test ran" tests/unit/base/check_error CK_RUN_CASE=no_such_case
expect fail "no test ran" tests/unit/control/check_maths CK_RUN_SUITE=no_such_suite
expect fail "no test ran" tests/unit/observe/check_trace CK_INCLUDE_TAGS=no_such_tag

# The quick ones of tests/mpi: no rank is started.
expect fail "false' failed on" tests/mpi/check_exports.sh NM=false
expect fail "no defined symbol" tests/mpi/check_exports.sh NM=true
expect skip "no nm" tests/mpi/check_exports.sh NM="$empty/nm"
expect fail "no row of .* selected" tests/mpi/preload_scenarios.sh OB_SCENARIOS=no_such_scenario
expect fail "cannot read $empty" tests/mpi/preload_scenarios.sh top_srcdir="$empty"
expect fail "no rank count" tests/mpi/mpi_api_args.sh OB_API_NPS=" "

# tests/fuzz/run.sh: targets that are not built, and targets that run no
# input and say nothing.
mkdir -p "$work/fuzz/tests/fuzz"
for t in config hetsgd_trace; do
    printf '#!/bin/sh\nexit 0\n' >"$work/fuzz/tests/fuzz/fuzz_$t"
    chmod +x "$work/fuzz/tests/fuzz/fuzz_$t"
done
expect skip "is not built" tests/fuzz/run.sh top_builddir="$empty"
# (TMPDIR: the folder a failing run keeps goes with this one.)
expect fail "executed no input" tests/fuzz/run.sh top_builddir="$work/fuzz" TMPDIR="$work"

# tests/python: an interpreter that cannot import what the test needs.
expect skip "lacks one of" tests/python/package.sh PYTHON=false

[ "$cases" -gt 0 ] || { echo "check_scripts_fail: no case ran" >&2; exit 1; }
if [ "$bad" -gt 0 ]; then
    echo "check_scripts_fail: $bad of $cases cases passed where they should fail or skip, or said nothing" >&2
    exit 1
fi
echo "check_scripts_fail: $cases cases, each failed or skipped with its line"
