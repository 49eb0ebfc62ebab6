# tests/unit/control/: the controller's mathematics, one suite a module
# (check_stepmodel: the controller's whole-step model with the reduction).

OB_UNIT_CONTROL = %reldir%/check_maths %reldir%/check_estimator %reldir%/check_planner \
	%reldir%/check_planner_dist %reldir%/check_controller %reldir%/check_stepmodel \
	%reldir%/check_pool %reldir%/check_shard %reldir%/check_state %reldir%/check_chunk
check_PROGRAMS += $(OB_UNIT_CONTROL)
TESTS += $(OB_UNIT_CONTROL)

%canon_reldir%_check_maths_SOURCES = %reldir%/check_maths.c
%canon_reldir%_check_maths_CFLAGS = $(OB_CORE_TEST_CFLAGS)
%canon_reldir%_check_maths_LDADD = $(OB_CORE_TEST_LDADD)

%canon_reldir%_check_estimator_SOURCES = %reldir%/check_estimator.c
%canon_reldir%_check_estimator_CFLAGS = $(OB_CORE_TEST_CFLAGS)
%canon_reldir%_check_estimator_LDADD = $(OB_CORE_TEST_LDADD)

%canon_reldir%_check_planner_SOURCES = %reldir%/check_planner.c
%canon_reldir%_check_planner_CFLAGS = $(OB_CORE_TEST_CFLAGS)
%canon_reldir%_check_planner_LDADD = $(OB_CORE_TEST_LDADD)

%canon_reldir%_check_planner_dist_SOURCES = %reldir%/check_planner_dist.c
%canon_reldir%_check_planner_dist_CFLAGS = $(OB_CORE_TEST_CFLAGS) -pthread
%canon_reldir%_check_planner_dist_LDADD = $(OB_CORE_TEST_LDADD) -lpthread

%canon_reldir%_check_controller_SOURCES = %reldir%/check_controller.c
%canon_reldir%_check_controller_CFLAGS = $(OB_CORE_TEST_CFLAGS)
%canon_reldir%_check_controller_LDADD = $(OB_CORE_TEST_LDADD)

%canon_reldir%_check_stepmodel_SOURCES = %reldir%/check_stepmodel.c
%canon_reldir%_check_stepmodel_CFLAGS = $(OB_CORE_TEST_CFLAGS)
%canon_reldir%_check_stepmodel_LDADD = $(OB_CORE_TEST_LDADD)

%canon_reldir%_check_pool_SOURCES = %reldir%/check_pool.c
%canon_reldir%_check_pool_CFLAGS = $(OB_CORE_TEST_CFLAGS)
%canon_reldir%_check_pool_LDADD = $(OB_CORE_TEST_LDADD)

%canon_reldir%_check_shard_SOURCES = %reldir%/check_shard.c
%canon_reldir%_check_shard_CFLAGS = $(OB_CORE_TEST_CFLAGS)
%canon_reldir%_check_shard_LDADD = $(OB_CORE_TEST_LDADD)

%canon_reldir%_check_state_SOURCES = %reldir%/check_state.c
%canon_reldir%_check_state_CFLAGS = $(OB_CORE_TEST_CFLAGS)
%canon_reldir%_check_state_LDADD = $(OB_CORE_TEST_LDADD)

%canon_reldir%_check_chunk_SOURCES = %reldir%/check_chunk.c
%canon_reldir%_check_chunk_CFLAGS = $(OB_CORE_TEST_CFLAGS)
%canon_reldir%_check_chunk_LDADD = $(OB_CORE_TEST_LDADD)
