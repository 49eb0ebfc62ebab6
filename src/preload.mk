# src/preload.mk: the MPI-free modules of preload mode (step detection,
# report and trace writers), part of libobcore so the Check suites reach them.

libobcore_la_SOURCES += \
	%reldir%/ob_stepdetect.h %reldir%/stepdetect.c \
	%reldir%/ob_trace.h %reldir%/trace.c \
	%reldir%/ob_report.h %reldir%/report.c
