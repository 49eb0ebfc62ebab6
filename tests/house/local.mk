# tests/house/: checks of the whole tree's shape rather than of a module.

# The MPI-free parts are MPI-free: every file of src/base, platform,
# control and observe, and of src/async but its parameter server (ps_*.c),
# compiles with the plain C compiler and no MPI include path.
TESTS += %reldir%/check_core_mpi_free.sh
EXTRA_DIST += %reldir%/check_core_mpi_free.sh

# Dependencies point down: no two files of the library include or call each
# other in a loop, and no folder calls or includes one above it (nm on the
# built objects, the includes of the sources; tsort finds a loop).
TESTS += %reldir%/check_no_loops.sh
EXTRA_DIST += %reldir%/check_no_loops.sh

# No function of src/ and mpi_wrappers/ above cognitive complexity 25
# (clang-tidy; skipped, with a line, without it).
TESTS += %reldir%/check_complexity.sh
EXTRA_DIST += %reldir%/check_complexity.sh

# Every check can fail: the house and unit check scripts, the quick ones of
# tests/mpi, tests/fuzz and tests/python, and three Check suites, on empty or
# broken inputs, each fail, or skip where a tool is missing, with a line
# saying why (a few seconds).
TESTS += %reldir%/check_scripts_fail.sh
EXTRA_DIST += %reldir%/check_scripts_fail.sh
