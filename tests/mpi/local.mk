# tests/mpi/: MPI programs under mpirun (tests/mpirun.sh).  The mpi_api_*
# programs link the library and run at 2, 3 and 4 ranks (mpi_api_run.sh);
# the preload programs are plain MPI codes, never linked with libomnibatch,
# run by the scenario table preload/scenarios.txt (preload_scenarios.sh).

TESTS += %reldir%/check_exports.sh
EXTRA_DIST += %reldir%/check_exports.sh %reldir%/exports.txt %reldir%/valgrind.supp

OB_API_TEST_CFLAGS = $(AM_CFLAGS) $(OB_CHECK_CFLAGS)
OB_API_TEST_LDADD = $(OB_LIB) $(CHECK_LIBS) -lm

check_PROGRAMS += \
	%reldir%/mpi_api_plan \
	%reldir%/mpi_api_dist \
	%reldir%/mpi_api_gradient \
	%reldir%/mpi_api_args \
	%reldir%/mpi_api_env \
	%reldir%/mpi_api_lifetime \
	%reldir%/mpi_api_nomem \
	%reldir%/mpi_api_restart \
	%reldir%/mpi_api_dynamics \
	%reldir%/mpi_api_wait \
	%reldir%/mpi_api_nodesum \
	%reldir%/mpi_api_chunks \
	%reldir%/mpi_ps \
	%reldir%/check_api_dl

%canon_reldir%_mpi_api_plan_SOURCES = %reldir%/mpi_api_plan.c %reldir%/mpi_api_common.h
%canon_reldir%_mpi_api_plan_CFLAGS = $(OB_API_TEST_CFLAGS)
%canon_reldir%_mpi_api_plan_LDADD = $(OB_API_TEST_LDADD)

%canon_reldir%_mpi_api_dist_SOURCES = %reldir%/mpi_api_dist.c %reldir%/mpi_api_common.h
%canon_reldir%_mpi_api_dist_CFLAGS = $(OB_API_TEST_CFLAGS)
%canon_reldir%_mpi_api_dist_LDADD = $(OB_API_TEST_LDADD)

%canon_reldir%_mpi_api_gradient_SOURCES = %reldir%/mpi_api_gradient.c %reldir%/mpi_api_common.h
%canon_reldir%_mpi_api_gradient_CFLAGS = $(OB_API_TEST_CFLAGS)
%canon_reldir%_mpi_api_gradient_LDADD = $(OB_API_TEST_LDADD)

%canon_reldir%_mpi_api_args_SOURCES = %reldir%/mpi_api_args.c %reldir%/mpi_api_common.h
%canon_reldir%_mpi_api_args_CFLAGS = $(OB_API_TEST_CFLAGS)
%canon_reldir%_mpi_api_args_LDADD = $(OB_API_TEST_LDADD)

%canon_reldir%_mpi_api_env_SOURCES = %reldir%/mpi_api_env.c %reldir%/mpi_api_common.h
%canon_reldir%_mpi_api_env_CFLAGS = $(OB_API_TEST_CFLAGS)
%canon_reldir%_mpi_api_env_LDADD = $(OB_API_TEST_LDADD)

%canon_reldir%_mpi_api_lifetime_SOURCES = %reldir%/mpi_api_lifetime.c %reldir%/mpi_api_common.h
%canon_reldir%_mpi_api_lifetime_CFLAGS = $(OB_API_TEST_CFLAGS)
%canon_reldir%_mpi_api_lifetime_LDADD = $(OB_API_TEST_LDADD)

# Replaces calloc() to run out of memory on one rank (glibc's otherwise).
%canon_reldir%_mpi_api_nomem_SOURCES = %reldir%/mpi_api_nomem.c %reldir%/mpi_api_common.h
%canon_reldir%_mpi_api_nomem_CFLAGS = $(OB_API_TEST_CFLAGS)
%canon_reldir%_mpi_api_nomem_LDADD = $(OB_API_TEST_LDADD)

# Plain MPI programs on the API (no Check): driven by their scripts.
%canon_reldir%_mpi_api_restart_SOURCES = %reldir%/mpi_api_restart.c
%canon_reldir%_mpi_api_restart_LDADD = libomnibatch.la -lm
check_PROGRAMS += %reldir%/mpi_api_quota
%canon_reldir%_mpi_api_quota_SOURCES = %reldir%/mpi_api_quota.c
%canon_reldir%_mpi_api_quota_LDADD = libomnibatch.la -lm

%canon_reldir%_mpi_api_dynamics_SOURCES = %reldir%/mpi_api_dynamics.c %reldir%/mpi_api_common.h %reldir%/mpi_api_late.h
%canon_reldir%_mpi_api_dynamics_CFLAGS = $(OB_API_TEST_CFLAGS)
%canon_reldir%_mpi_api_dynamics_LDADD = $(OB_API_TEST_LDADD)

%canon_reldir%_mpi_api_wait_SOURCES = %reldir%/mpi_api_wait.c %reldir%/mpi_api_common.h %reldir%/mpi_api_late.h
%canon_reldir%_mpi_api_wait_CFLAGS = $(OB_API_TEST_CFLAGS)
%canon_reldir%_mpi_api_wait_LDADD = $(OB_API_TEST_LDADD)

%canon_reldir%_mpi_api_nodesum_SOURCES = %reldir%/mpi_api_nodesum.c %reldir%/mpi_api_common.h
%canon_reldir%_mpi_api_nodesum_CFLAGS = $(OB_API_TEST_CFLAGS)
%canon_reldir%_mpi_api_nodesum_LDADD = $(OB_API_TEST_LDADD)

%canon_reldir%_mpi_api_chunks_SOURCES = %reldir%/mpi_api_chunks.c %reldir%/mpi_api_common.h
%canon_reldir%_mpi_api_chunks_CFLAGS = $(OB_API_TEST_CFLAGS)
%canon_reldir%_mpi_api_chunks_LDADD = $(OB_API_TEST_LDADD)

%canon_reldir%_mpi_ps_SOURCES = %reldir%/mpi_ps.c %reldir%/mpi_api_common.h
%canon_reldir%_mpi_ps_CPPFLAGS = $(OB_TEST_CPPFLAGS)
%canon_reldir%_mpi_ps_CFLAGS = $(OB_API_TEST_CFLAGS)
%canon_reldir%_mpi_ps_LDADD = $(OB_API_TEST_LDADD)

%canon_reldir%_check_api_dl_SOURCES = %reldir%/check_api_dl.c
%canon_reldir%_check_api_dl_CFLAGS = $(OB_API_TEST_CFLAGS)
%canon_reldir%_check_api_dl_LDADD = $(OB_API_TEST_LDADD)

TESTS += \
	%reldir%/check_api_dl \
	%reldir%/mpi_api_args.sh \
	%reldir%/mpi_api_env.sh \
	%reldir%/mpi_api_gradient.sh \
	%reldir%/mpi_api_lifetime.sh \
	%reldir%/mpi_api_nomem.sh \
	%reldir%/mpi_api_plan.sh \
	%reldir%/mpi_api_dist.sh \
	%reldir%/mpi_api_restart.sh \
	%reldir%/mpi_api_dynamics.sh \
	%reldir%/mpi_api_wait.sh \
	%reldir%/mpi_api_nodesum.sh \
	%reldir%/mpi_api_chunks.sh \
	%reldir%/mpi_api_chunks_hosts.sh \
	%reldir%/mpi_api_quota.sh \
	%reldir%/mpi_ps.sh \
	%reldir%/example_lsq.sh \
	%reldir%/example_python.sh \
	%reldir%/install_prefix.sh \
	%reldir%/omnibatchrun.sh

EXTRA_DIST += \
	%reldir%/install_prefix.sh \
	%reldir%/omnibatchrun.sh \
	%reldir%/mpi_api_run.sh \
	%reldir%/mpi_api_args.sh \
	%reldir%/mpi_api_env.sh \
	%reldir%/mpi_api_gradient.sh \
	%reldir%/mpi_api_lifetime.sh \
	%reldir%/mpi_api_nomem.sh \
	%reldir%/mpi_api_plan.sh \
	%reldir%/mpi_api_dist.sh \
	%reldir%/mpi_api_restart.sh \
	%reldir%/mpi_api_dynamics.sh \
	%reldir%/mpi_api_wait.sh \
	%reldir%/mpi_api_nodesum.sh \
	%reldir%/mpi_api_chunks.sh \
	%reldir%/mpi_api_chunks_hosts.sh \
	%reldir%/mpi_api_quota.sh \
	%reldir%/mpi_ps.sh \
	%reldir%/example_lsq.sh \
	%reldir%/example_python.sh

# The preload programs.
check_PROGRAMS += %reldir%/mpi_passthrough %reldir%/mpi_straggler %reldir%/mpi_threads \
	%reldir%/mpi_weighted %reldir%/mpi_weighted_reuse %reldir%/mpi_request_errors \
	%reldir%/mpi_late_exchange %reldir%/json_valid %reldir%/mpi_logreg
%canon_reldir%_mpi_passthrough_SOURCES = %reldir%/mpi_passthrough.c
%canon_reldir%_mpi_passthrough_CFLAGS = $(AM_CFLAGS) $(OB_CHECK_CFLAGS)
%canon_reldir%_mpi_passthrough_LDADD = $(CHECK_LIBS) -lm
%canon_reldir%_mpi_straggler_SOURCES = %reldir%/mpi_straggler.c
%canon_reldir%_mpi_threads_SOURCES = %reldir%/mpi_threads.c
# Reaches the API through omnibatch_dl.h (dlsym), not by linking.
%canon_reldir%_mpi_weighted_SOURCES = %reldir%/mpi_weighted.c
%canon_reldir%_mpi_weighted_LDADD = -lm
%canon_reldir%_mpi_weighted_reuse_SOURCES = %reldir%/mpi_weighted_reuse.c %reldir%/mpi_preload_api.h
%canon_reldir%_mpi_request_errors_SOURCES = %reldir%/mpi_request_errors.c %reldir%/mpi_preload_api.h
%canon_reldir%_mpi_request_errors_LDADD = -lm
%canon_reldir%_mpi_late_exchange_SOURCES = %reldir%/mpi_late_exchange.c
%canon_reldir%_mpi_logreg_SOURCES = %reldir%/mpi_logreg.c
%canon_reldir%_mpi_logreg_CFLAGS = $(AM_CFLAGS) $(ZLIB_CFLAGS)
%canon_reldir%_mpi_logreg_LDADD = $(ZLIB_LIBS) -lm
%canon_reldir%_json_valid_SOURCES = %reldir%/json_valid.c
%canon_reldir%_json_valid_CPPFLAGS = $(OB_TEST_CPPFLAGS)

# Calls PMPI_Init itself: the layer is bypassed and says so (preload/bypass.sh).
check_PROGRAMS += %reldir%/mpi_bypass
%canon_reldir%_mpi_bypass_SOURCES = %reldir%/mpi_bypass.c

# The scenario table and its runner.
TESTS += %reldir%/preload_scenarios.sh
EXTRA_DIST += %reldir%/preload_scenarios.sh \
	%reldir%/preload/scenarios.txt \
	%reldir%/preload/lib.sh \
	%reldir%/preload/api_report.sh \
	%reldir%/preload/badconfig.sh \
	%reldir%/preload/disabled.sh \
	%reldir%/preload/foreign.sh \
	%reldir%/preload/fortran.sh \
	%reldir%/preload/passthrough.sh \
	%reldir%/preload/pcontrol.sh \
	%reldir%/preload/report_file.sh \
	%reldir%/preload/profile.sh \
	%reldir%/preload/report_json.sh \
	%reldir%/preload/report_text.sh \
	%reldir%/preload/silent.sh \
	%reldir%/preload/starved.sh \
	%reldir%/preload/threads.sh \
	%reldir%/preload/timeline.sh \
	%reldir%/preload/weighted.sh \
	%reldir%/preload/weighted_reuse.sh \
	%reldir%/preload/request_errors.sh \
	%reldir%/preload/settings_agree.sh \
	%reldir%/preload/bounds.sh \
	%reldir%/preload/global_batch_api.sh \
	%reldir%/preload/output_paths.sh \
	%reldir%/preload/trace_kill.sh \
	%reldir%/preload/bypass.sh \
	%reldir%/preload/late_exchange.sh \
	%reldir%/mpi_fortran.f90 \
	%reldir%/mpi_fortran_f08.f90 \
	%reldir%/mpi_foreign.c

# Fortran: configure found mpifort (MPIFORT); built by hand since the
# project has no Fortran compiler of its own.  Without it the Fortran
# scenario skips.
if HAVE_MPIFORT
check_SCRIPTS += %reldir%/mpi_fortran
CLEANFILES += %reldir%/mpi_fortran
%reldir%/mpi_fortran: $(srcdir)/%reldir%/mpi_fortran.f90
	@$(MKDIR_P) $(@D)
	$(AM_V_GEN)$(MPIFORT) -o $@ $(srcdir)/%reldir%/mpi_fortran.f90
endif
# The mpi_f08 program: Open MPI's f08 entry points are wrapped, MPICH's not.
# Not every MPI installs the mpi_f08 module: without it the scenario skips.
if HAVE_MPIFORT
if OB_MPI_OPENMPI
check_SCRIPTS += %reldir%/mpi_fortran_f08
CLEANFILES += %reldir%/mpi_fortran_f08
%reldir%/mpi_fortran_f08: $(srcdir)/%reldir%/mpi_fortran_f08.f90
	@$(MKDIR_P) $(@D)
	$(AM_V_GEN)$(MPIFORT) -o $@ $(srcdir)/%reldir%/mpi_fortran_f08.f90 2>/dev/null \
	    || { echo "mpi_f08 module not found: the f08 scenario skips"; rm -f $@; }
endif
endif

# The API on GPU memory (skips without a GPU): the test loads the CUDA
# driver itself, the library only looks for it.
check_PROGRAMS += %reldir%/mpi_gradient_gpu
%canon_reldir%_mpi_gradient_gpu_SOURCES = %reldir%/mpi_gradient_gpu.c
%canon_reldir%_mpi_gradient_gpu_CPPFLAGS = $(OB_TEST_CPPFLAGS)
%canon_reldir%_mpi_gradient_gpu_LDADD = $(OB_LIB) -lm
TESTS += %reldir%/mpi_gradient_gpu.sh
EXTRA_DIST += %reldir%/mpi_gradient_gpu.sh
