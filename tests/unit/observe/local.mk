# tests/unit/observe/: step detection, the trace row, the timeline, the
# report (the last two check their JSON with tests/ob_json_check.h).

OB_UNIT_OBSERVE = %reldir%/check_stepdetect %reldir%/check_trace %reldir%/check_timeline \
	%reldir%/check_report
check_PROGRAMS += $(OB_UNIT_OBSERVE)
TESTS += $(OB_UNIT_OBSERVE)

%canon_reldir%_check_stepdetect_SOURCES = %reldir%/check_stepdetect.c
%canon_reldir%_check_stepdetect_CFLAGS = $(OB_CORE_TEST_CFLAGS)
%canon_reldir%_check_stepdetect_LDADD = $(OB_CORE_TEST_LDADD)

%canon_reldir%_check_trace_SOURCES = %reldir%/check_trace.c
%canon_reldir%_check_trace_CFLAGS = $(OB_CORE_TEST_CFLAGS)
%canon_reldir%_check_trace_LDADD = $(OB_CORE_TEST_LDADD)

%canon_reldir%_check_timeline_SOURCES = %reldir%/check_timeline.c
%canon_reldir%_check_timeline_CPPFLAGS = $(OB_TEST_CPPFLAGS)
%canon_reldir%_check_timeline_CFLAGS = $(OB_CORE_TEST_CFLAGS)
%canon_reldir%_check_timeline_LDADD = $(OB_CORE_TEST_LDADD)

%canon_reldir%_check_report_SOURCES = %reldir%/check_report.c
%canon_reldir%_check_report_CPPFLAGS = $(OB_TEST_CPPFLAGS)
%canon_reldir%_check_report_CFLAGS = $(OB_CORE_TEST_CFLAGS)
%canon_reldir%_check_report_LDADD = $(OB_CORE_TEST_LDADD)
