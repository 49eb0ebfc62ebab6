# src/: the core.  libobcore.la is MPI-free (no MPI call in it) and is what
# the Check suites link; the library adds the API (api.mk) on top.

noinst_LTLIBRARIES += libobcore.la
libobcore_la_SOURCES = \
	%reldir%/omnibatch.h \
	%reldir%/ob_error.h %reldir%/error.c \
	%reldir%/ob_log.h %reldir%/log.c \
	%reldir%/ob_timing.h \
	%reldir%/ob_active.h %reldir%/active.c
libobcore_la_CPPFLAGS = $(AM_CPPFLAGS) -DOB_BUILDING_OMNIBATCH
libobcore_la_CFLAGS = $(AM_CFLAGS) $(VISIBILITY_CFLAGS) $(HWLOC_CFLAGS)
libobcore_la_LIBADD = $(HWLOC_LIBS) -lm

include %reldir%/control.mk
include %reldir%/support.mk
include %reldir%/preload.mk
include %reldir%/api.mk
