# tests/: Check suites (one per src/ module, no MPI) and MPI tests run under
# mpirun through tests/mpirun.sh.

TEST_EXTENSIONS = .sh
SH_LOG_COMPILER = $(SHELL)
EXTRA_DIST += %reldir%/mpirun.sh %reldir%/exports.txt

TESTS += %reldir%/check_exports.sh
EXTRA_DIST += %reldir%/check_exports.sh

# The core suites link the convenience library: internals are reachable.
OB_CORE_TEST_LDADD = libobcore.la $(CHECK_LIBS) $(HWLOC_LIBS) -lm
OB_CORE_TEST_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)

check_PROGRAMS += %reldir%/check_error
%canon_reldir%_check_error_SOURCES = %reldir%/check_error.c
%canon_reldir%_check_error_CFLAGS = $(OB_CORE_TEST_CFLAGS)
%canon_reldir%_check_error_LDADD = $(OB_CORE_TEST_LDADD)
TESTS += %reldir%/check_error

include %reldir%/control.mk
include %reldir%/support.mk
include %reldir%/preload.mk
include %reldir%/api.mk
include %reldir%/tools.mk
include %reldir%/hetsgd.mk
include %reldir%/runner.mk
