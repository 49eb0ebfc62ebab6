# tests/unit/async/: the asynchronous mode's mathematics, one suite a module:
# the server's update rule (plain SGD with one worker and no staleness),
# the count of pushes and their staleness, the slices of the epochs'
# permutation, the batch scaling on a simulated server, the run's report,
# a server's state blob.

OB_UNIT_ASYNC = %reldir%/check_update %reldir%/check_tally %reldir%/check_slicer \
	%reldir%/check_balance %reldir%/check_psreport %reldir%/check_psstate
check_PROGRAMS += $(OB_UNIT_ASYNC)
TESTS += $(OB_UNIT_ASYNC)

%canon_reldir%_check_update_SOURCES = %reldir%/check_update.c
%canon_reldir%_check_update_CFLAGS = $(OB_CORE_TEST_CFLAGS)
%canon_reldir%_check_update_LDADD = $(OB_CORE_TEST_LDADD)

%canon_reldir%_check_tally_SOURCES = %reldir%/check_tally.c
%canon_reldir%_check_tally_CFLAGS = $(OB_CORE_TEST_CFLAGS)
%canon_reldir%_check_tally_LDADD = $(OB_CORE_TEST_LDADD)

%canon_reldir%_check_slicer_SOURCES = %reldir%/check_slicer.c
%canon_reldir%_check_slicer_CFLAGS = $(OB_CORE_TEST_CFLAGS)
%canon_reldir%_check_slicer_LDADD = $(OB_CORE_TEST_LDADD)

%canon_reldir%_check_balance_SOURCES = %reldir%/check_balance.c
%canon_reldir%_check_balance_CFLAGS = $(OB_CORE_TEST_CFLAGS)
%canon_reldir%_check_balance_LDADD = $(OB_CORE_TEST_LDADD)

%canon_reldir%_check_psreport_SOURCES = %reldir%/check_psreport.c
%canon_reldir%_check_psreport_CPPFLAGS = $(OB_TEST_CPPFLAGS)
%canon_reldir%_check_psreport_CFLAGS = $(OB_CORE_TEST_CFLAGS)
%canon_reldir%_check_psreport_LDADD = $(OB_CORE_TEST_LDADD)

%canon_reldir%_check_psstate_SOURCES = %reldir%/check_psstate.c
%canon_reldir%_check_psstate_CFLAGS = $(OB_CORE_TEST_CFLAGS)
%canon_reldir%_check_psstate_LDADD = $(OB_CORE_TEST_LDADD)
