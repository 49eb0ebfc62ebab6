# src/observe/: what watches an unmodified code, on the parts below: the
# step boundary from its gradient allreduces, the analysis and report at
# finalize, the per-step trace row (with the CPU the rank got in the step)
# and its buffered writer, the timeline, the profile of a run.

libobcore_la_SOURCES += \
	%reldir%/ob_stepdetect.h %reldir%/stepdetect.c \
	%reldir%/ob_report.h %reldir%/report.c %reldir%/report_write.c \
	%reldir%/ob_trace.h %reldir%/trace.c \
	%reldir%/ob_cpumarks.h %reldir%/cpumarks.c \
	%reldir%/ob_writer.h %reldir%/writer.c \
	%reldir%/ob_timeline.h %reldir%/timeline.c \
	%reldir%/ob_profile.h %reldir%/profile.c
