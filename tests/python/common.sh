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
# mpi4py is built for one MPI (Debian's for Open MPI): with a build of the
# library for the other family the package's tests cannot run at all.
case $needs in
*mpi4py*)
    py_mpi=$("$py" -c 'import mpi4py
mpi4py.rc.initialize = False
mpi4py.rc.finalize = False
from mpi4py import MPI
print(MPI.Get_library_version().replace(chr(0), "").splitlines()[0])' 2>/dev/null) || py_mpi="unknown"
    case $py_mpi in
    *"Open MPI"*) py_family=openmpi ;;
    *MPICH* | *"Intel(R) MPI"* | *MVAPICH*) py_family=mpich ;;
    *) py_family=unknown ;;
    esac
    if [ "$py_family" != "${OB_MPI_FAMILY:-openmpi}" ]; then
        echo "$0: mpi4py uses $py_family ($py_mpi), this build ${OB_MPI_FAMILY:-openmpi}: skipped"
        exit 77
    fi
    ;;
esac
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
