#!/bin/sh
# The omnibatch package: its ctypes structures against the header; imported
# from the build tree, with the library
# (OMNIBATCH_LIBRARY, and preloaded into the process), without it (a copy of
# the package whose installed library does not exist: the equal split), and
# with OMNIBATCH_LIBRARY naming a file that is not the library.
set -eu
# shellcheck disable=SC2034  # read by common.sh
needs="mpi4py, numpy"
# shellcheck source-path=SCRIPTDIR source=common.sh
. "$(dirname "$0")/common.sh"

echo "== the ctypes structures against include/omnibatch.h"
PYTHONPATH="$pypath" "$py" "$here/test_layout.py" "$src/include/omnibatch.h"

for np in 1 3; do
    echo "== np $np: OMNIBATCH_LIBRARY"
    OB_PY_ENV="OMNIBATCH_LIBRARY=$library" run "$np" "$here/test_package.py" library "$version"
    echo "== np $np: preloaded"
    OB_PY_ENV="OMNIBATCH_REPORT=off" OB_PRELOAD="$library" run "$np" "$here/test_package.py" preloaded "$version"
done

# No library anywhere: the package of the build tree, pointed at an install
# that is not there.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp -r "$build/python/omnibatch" "$tmp/"
sed "s|^LIBRARY = .*|LIBRARY = \"$tmp/absent/libomnibatch.so.0\"|" \
    "$build/python/omnibatch/_build.py" >"$tmp/omnibatch/_build.py"
pypath="$tmp:$here"
for np in 1 2; do
    echo "== np $np: no library"
    run "$np" "$here/test_package.py" fallback "$version"
done
echo "== np 2: OMNIBATCH_LIBRARY names a file that is not the library"
OB_PY_ENV="OMNIBATCH_LIBRARY=$src/README.md" run 2 "$here/test_package.py" bad-library "$version"

# Importing the package neither needs mpi4py nor initialises MPI.
PYTHONPATH="$tmp" "$py" -c "
import sys
import omnibatch
assert 'mpi4py.MPI' not in sys.modules, 'import omnibatch initialised MPI'
assert not omnibatch.available()
print('package: import without MPI ok')"
