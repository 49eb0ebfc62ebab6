# tests/preload.mk: preload mode.  Check suites for its MPI-free modules.

check_PROGRAMS += %reldir%/check_stepdetect
%canon_reldir%_check_stepdetect_SOURCES = %reldir%/check_stepdetect.c
%canon_reldir%_check_stepdetect_CFLAGS = $(OB_CORE_TEST_CFLAGS)
%canon_reldir%_check_stepdetect_LDADD = $(OB_CORE_TEST_LDADD)
TESTS += %reldir%/check_stepdetect

check_PROGRAMS += %reldir%/check_trace
%canon_reldir%_check_trace_SOURCES = %reldir%/check_trace.c
%canon_reldir%_check_trace_CFLAGS = $(OB_CORE_TEST_CFLAGS)
%canon_reldir%_check_trace_LDADD = $(OB_CORE_TEST_LDADD)
TESTS += %reldir%/check_trace

check_PROGRAMS += %reldir%/check_report
%canon_reldir%_check_report_SOURCES = %reldir%/check_report.c
%canon_reldir%_check_report_CFLAGS = $(OB_CORE_TEST_CFLAGS)
%canon_reldir%_check_report_LDADD = $(OB_CORE_TEST_LDADD)
TESTS += %reldir%/check_report
