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
