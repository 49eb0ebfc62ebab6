# shellcheck shell=sh disable=SC2034
# Sourced by the tests/python/*.sh runners: the interpreter, the package of
# the build tree, and the skip (77) when what the test needs is missing.
# Usage: needs="mpi4py, numpy"; . common.sh   (the modules the test imports)
# Sets py, build, src, here, library, version, pypath and run().
top_srcdir=${top_srcdir:-.}
top_builddir=${top_builddir:-.}
py=${PYTHON:-/usr/bin/python3}
if [ "$py" = ":" ] || ! "$py" -c "import ${needs:?set needs before sourcing common.sh}" >/dev/null 2>&1; then
    echo "$0: ${py} lacks one of: $needs: skipped"
    exit 77
fi
build=$(cd "$top_builddir" && pwd)
src=$(cd "$top_srcdir" && pwd)
here="$src/tests/python"
library="$build/.libs/libomnibatch.so"
version=$(sed -n 's/^#define PACKAGE_VERSION "\(.*\)"$/\1/p' "$build/config.h")
# The package as make builds it (python/ of the build tree), the library of
# this build; the test scripts beside this file.
pypath="$build/python:$here"
run() {    # run NP SCRIPT ARGS...: under tests/mpirun.sh with the build's package
    np=$1; shift
    OB_MPIRUN_ENV="PYTHONPATH=$pypath ${OB_PY_ENV:-}" "$src/tests/mpirun.sh" "$np" "$py" "$@"
}
