# src/: the library's own code, one folder a part, each calling only the
# parts below it (tests/house/check_no_loops.sh checks the order):
#   base/      plumbing every part uses: errors, messages, clocks, the settings table, the mailboxes
#   platform/  probes of the machine: cores and GPUs, CPU quotas, memory types, naps
#   control/   the controller's mathematics: estimator, planners, decisions, shards, state
#   observe/   what watches an unmodified code: step detection, report, trace, timeline, profile
#   api/       the explicit API on top of them (MPI: PMPI_* on a private communicator)
#   async/     the asynchronous mode: a parameter server over two-sided MPI, on the API's parts
# base, platform, control and observe, and the mathematics of async/, are
# MPI-free (every file compiles with a plain C compiler,
# tests/house/check_core_mpi_free.sh) and make up libobcore.la, which the
# Check suites link; the library adds the API, the asynchronous mode's MPI
# parts and the PMPI layer (mpi_wrappers/).

noinst_LTLIBRARIES += libobcore.la
libobcore_la_SOURCES = include/omnibatch_status.h
libobcore_la_CPPFLAGS = $(AM_CPPFLAGS) -DOB_BUILDING_OMNIBATCH
libobcore_la_CFLAGS = $(AM_CFLAGS) $(VISIBILITY_CFLAGS) $(HWLOC_CFLAGS)
libobcore_la_LIBADD = $(HWLOC_LIBS) -lm

include %reldir%/base/local.mk
include %reldir%/platform/local.mk
include %reldir%/control/local.mk
include %reldir%/observe/local.mk
include %reldir%/api/local.mk
include %reldir%/async/local.mk
