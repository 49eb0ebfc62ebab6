# tests/: unit/ (Check suites of the MPI-free core, no MPI), mpi/ (programs
# and scenarios under mpirun, through tests/mpirun.sh), bench/ (the
# benchmarks' own pieces and short smoke runs).

TEST_EXTENSIONS = .sh
SH_LOG_COMPILER = $(SHELL)
EXTRA_DIST += %reldir%/mpirun.sh %reldir%/ob_json_check.h %reldir%/ob_cuda_test.h

# The core suites link the convenience library: internals are reachable.
OB_CORE_TEST_LDADD = libobcore.la $(CHECK_LIBS) $(HWLOC_LIBS) -lm
OB_CORE_TEST_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
OB_TEST_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests

include %reldir%/unit/local.mk
include %reldir%/house/local.mk
include %reldir%/mpi/local.mk
include %reldir%/bench/local.mk
include %reldir%/fuzz/local.mk
include %reldir%/python/local.mk
