# tests/control.mk: Check suites of the controller core (no MPI).

check_PROGRAMS += %reldir%/check_estimator %reldir%/check_planner %reldir%/check_controller
TESTS += %reldir%/check_estimator %reldir%/check_planner %reldir%/check_controller

%canon_reldir%_check_estimator_SOURCES = %reldir%/check_estimator.c
%canon_reldir%_check_estimator_CFLAGS = $(OB_CORE_TEST_CFLAGS)
%canon_reldir%_check_estimator_LDADD = $(OB_CORE_TEST_LDADD)

%canon_reldir%_check_planner_SOURCES = %reldir%/check_planner.c
%canon_reldir%_check_planner_CFLAGS = $(OB_CORE_TEST_CFLAGS)
%canon_reldir%_check_planner_LDADD = $(OB_CORE_TEST_LDADD)

%canon_reldir%_check_controller_SOURCES = %reldir%/check_controller.c
%canon_reldir%_check_controller_CFLAGS = $(OB_CORE_TEST_CFLAGS)
%canon_reldir%_check_controller_LDADD = $(OB_CORE_TEST_LDADD)
