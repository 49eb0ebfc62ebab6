# tests/api.mk: the explicit API.  The mpi_api_* programs run under mpirun
# at 2, 3 and 4 ranks through their .sh runners (tests/mpi_api_run.sh);
# check_api_dl checks the run-time lookup header; example_*.sh run the
# examples (examples/local.mk) plain, linked and preloaded.

OB_API_TEST_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
OB_API_TEST_LDADD = libomnibatch.la $(CHECK_LIBS) -lm

check_PROGRAMS += \
	%reldir%/mpi_api_plan \
	%reldir%/mpi_api_gradient \
	%reldir%/mpi_api_args \
	%reldir%/mpi_api_env \
	%reldir%/check_api_dl

%canon_reldir%_mpi_api_plan_SOURCES = %reldir%/mpi_api_plan.c %reldir%/mpi_api_common.h
%canon_reldir%_mpi_api_plan_CFLAGS = $(OB_API_TEST_CFLAGS)
%canon_reldir%_mpi_api_plan_LDADD = $(OB_API_TEST_LDADD)

%canon_reldir%_mpi_api_gradient_SOURCES = %reldir%/mpi_api_gradient.c %reldir%/mpi_api_common.h
%canon_reldir%_mpi_api_gradient_CFLAGS = $(OB_API_TEST_CFLAGS)
%canon_reldir%_mpi_api_gradient_LDADD = $(OB_API_TEST_LDADD)

%canon_reldir%_mpi_api_args_SOURCES = %reldir%/mpi_api_args.c %reldir%/mpi_api_common.h
%canon_reldir%_mpi_api_args_CFLAGS = $(OB_API_TEST_CFLAGS)
%canon_reldir%_mpi_api_args_LDADD = $(OB_API_TEST_LDADD)

%canon_reldir%_mpi_api_env_SOURCES = %reldir%/mpi_api_env.c %reldir%/mpi_api_common.h
%canon_reldir%_mpi_api_env_CFLAGS = $(OB_API_TEST_CFLAGS)
%canon_reldir%_mpi_api_env_LDADD = $(OB_API_TEST_LDADD)

%canon_reldir%_check_api_dl_SOURCES = %reldir%/check_api_dl.c
%canon_reldir%_check_api_dl_CFLAGS = $(OB_API_TEST_CFLAGS)
%canon_reldir%_check_api_dl_LDADD = $(OB_API_TEST_LDADD)

TESTS += \
	%reldir%/check_api_dl \
	%reldir%/mpi_api_args.sh \
	%reldir%/mpi_api_env.sh \
	%reldir%/mpi_api_gradient.sh \
	%reldir%/mpi_api_plan.sh \
	%reldir%/example_lsq.sh \
	%reldir%/example_python.sh

EXTRA_DIST += \
	%reldir%/mpi_api_run.sh \
	%reldir%/mpi_api_args.sh \
	%reldir%/mpi_api_env.sh \
	%reldir%/mpi_api_gradient.sh \
	%reldir%/mpi_api_plan.sh \
	%reldir%/example_lsq.sh \
	%reldir%/example_python.sh
