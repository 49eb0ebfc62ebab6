# src/core/: the controller and its support, MPI-free.  libobcore.la is
# what the Check suites link; the library adds the API and the PMPI layer.

noinst_LTLIBRARIES += libobcore.la
libobcore_la_SOURCES = \
	include/omnibatch_status.h \
	%reldir%/ob_error.h %reldir%/error.c \
	%reldir%/ob_log.h %reldir%/log.c \
	%reldir%/ob_timing.h \
	%reldir%/ob_active.h %reldir%/active.c \
	%reldir%/ob_hook.h %reldir%/hook.c \
	%reldir%/ob_estimator.h %reldir%/estimator.c \
	%reldir%/ob_planner.h %reldir%/planner.c \
	%reldir%/ob_maths.h %reldir%/maths.c \
	%reldir%/ob_planner_dist.h %reldir%/planner_dist.c \
	%reldir%/ob_controller.h %reldir%/controller.c \
	%reldir%/ob_pool.h %reldir%/pool.c \
	%reldir%/ob_config.h %reldir%/config.c %reldir%/config_roff.c \
	%reldir%/ob_rng.h \
	%reldir%/ob_shard.h %reldir%/shard.c \
	%reldir%/ob_topology.h %reldir%/topology.c \
	%reldir%/ob_cpuquota.h %reldir%/cpuquota.c \
	%reldir%/ob_nap.h %reldir%/nap.c \
	%reldir%/ob_memtype.h %reldir%/ob_memtype_cuda.h %reldir%/memtype.c \
	%reldir%/ob_stepdetect.h %reldir%/stepdetect.c \
	%reldir%/ob_trace.h %reldir%/trace.c \
	%reldir%/ob_writer.h %reldir%/writer.c \
	%reldir%/ob_timeline.h %reldir%/timeline.c \
	%reldir%/ob_json.h %reldir%/json.c \
	%reldir%/ob_report.h %reldir%/report.c %reldir%/report_write.c \
	%reldir%/ob_state.h %reldir%/state.c \
	%reldir%/ob_profile.h %reldir%/profile.c
libobcore_la_CPPFLAGS = $(AM_CPPFLAGS) -DOB_BUILDING_OMNIBATCH
libobcore_la_CFLAGS = $(AM_CFLAGS) $(VISIBILITY_CFLAGS) $(HWLOC_CFLAGS)
libobcore_la_LIBADD = $(HWLOC_LIBS) -lm
