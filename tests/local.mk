# tests/: unit/ (Check suites of the MPI-free core, no MPI), mpi/ (programs
# and scenarios under mpirun, through tests/mpirun.sh), bench/ (the
# benchmarks' own pieces and short smoke runs).

TEST_EXTENSIONS = .sh
SH_LOG_COMPILER = $(SHELL)
EXTRA_DIST += %reldir%/mpirun.sh %reldir%/ob_json_check.h %reldir%/ob_cuda_test.h %reldir%/ob_check_run.h

# Check's flags, and tests/ for ob_check_run.h: every suite's main() counts
# a run in which no test ran as failed.
OB_CHECK_CFLAGS = $(CHECK_CFLAGS) -I$(top_srcdir)/tests

# The core suites link the convenience library: internals are reachable.
OB_CORE_TEST_LDADD = libobcore.la $(CHECK_LIBS) $(HWLOC_LIBS) -lm
OB_CORE_TEST_CFLAGS = $(AM_CFLAGS) $(OB_CHECK_CFLAGS)
OB_TEST_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests

include %reldir%/unit/local.mk
include %reldir%/house/local.mk
include %reldir%/mpi/local.mk
include %reldir%/bench/local.mk
include %reldir%/fuzz/local.mk
include %reldir%/python/local.mk
