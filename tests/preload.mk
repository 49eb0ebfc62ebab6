# tests/preload.mk: preload mode.  Check suites for its MPI-free modules
# (step detection, trace, report), and MPI scenarios run under mpirun with
# libomnibatch preloaded (tests/preload_*.sh, one scenario each).

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
%canon_reldir%_check_report_SOURCES = %reldir%/check_report.c %reldir%/ob_json_check.h
%canon_reldir%_check_report_CFLAGS = $(OB_CORE_TEST_CFLAGS)
%canon_reldir%_check_report_LDADD = $(OB_CORE_TEST_LDADD)
TESTS += %reldir%/check_report

# The MPI programs are plain MPI codes: built with mpicc, never linked with
# libomnibatch; the scenarios preload it (tests/mpirun.sh, OB_PRELOAD).
check_PROGRAMS += %reldir%/mpi_passthrough %reldir%/mpi_straggler %reldir%/mpi_threads \
	%reldir%/mpi_weighted %reldir%/json_valid
%canon_reldir%_mpi_passthrough_SOURCES = %reldir%/mpi_passthrough.c
%canon_reldir%_mpi_passthrough_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
%canon_reldir%_mpi_passthrough_LDADD = $(CHECK_LIBS) -lm
%canon_reldir%_mpi_straggler_SOURCES = %reldir%/mpi_straggler.c
%canon_reldir%_mpi_threads_SOURCES = %reldir%/mpi_threads.c
# Reaches the API through omnibatch_dl.h (dlsym), not by linking.
%canon_reldir%_mpi_weighted_SOURCES = %reldir%/mpi_weighted.c
%canon_reldir%_mpi_weighted_LDADD = -lm
%canon_reldir%_json_valid_SOURCES = %reldir%/json_valid.c %reldir%/ob_json_check.h

OB_PRELOAD_TESTS = \
	%reldir%/preload_passthrough_np2.sh \
	%reldir%/preload_passthrough_np3.sh \
	%reldir%/preload_passthrough_np4.sh \
	%reldir%/preload_passthrough_weight_np2.sh \
	%reldir%/preload_passthrough_weight_np3.sh \
	%reldir%/preload_passthrough_weight_np4.sh \
	%reldir%/preload_report_np2.sh \
	%reldir%/preload_report_json_np3.sh \
	%reldir%/preload_api_report_np3.sh \
	%reldir%/preload_report_np4.sh \
	%reldir%/preload_threads_multiple_np2.sh \
	%reldir%/preload_threads_serialized_np3.sh \
	%reldir%/preload_pcontrol_np2.sh \
	%reldir%/preload_weighted_np2.sh \
	%reldir%/preload_weighted_np3.sh \
	%reldir%/preload_weighted_mean_np3.sh \
	%reldir%/preload_weighted_np4.sh \
	%reldir%/preload_disabled_np2.sh \
	%reldir%/preload_badconfig_np4.sh
TESTS += $(OB_PRELOAD_TESTS)
EXTRA_DIST += $(OB_PRELOAD_TESTS) %reldir%/preload_lib.sh %reldir%/preload_passthrough.sh \
	%reldir%/preload_weighted.sh \
	%reldir%/preload_fortran_np2.sh %reldir%/mpi_fortran.f90

# Fortran: configure found mpifort (MPIFORT); built by hand since the
# project has no Fortran compiler of its own.
if HAVE_MPIFORT
check_SCRIPTS += %reldir%/mpi_fortran
CLEANFILES += %reldir%/mpi_fortran
TESTS += %reldir%/preload_fortran_np2.sh
%reldir%/mpi_fortran: $(srcdir)/%reldir%/mpi_fortran.f90
	@$(MKDIR_P) $(@D)
	$(AM_V_GEN)$(MPIFORT) -o $@ $(srcdir)/%reldir%/mpi_fortran.f90
endif
