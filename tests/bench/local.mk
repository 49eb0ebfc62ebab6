# tests/bench/: the benchmarks' own pieces and short runs of them.

# The benchmarks' own arithmetic (Check) and smoke runs of bench/overhead
# and bench/simulate (output format only, never timings).

check_PROGRAMS += %reldir%/check_bench_stats
%canon_reldir%_check_bench_stats_SOURCES = %reldir%/check_bench_stats.c \
	bench/overhead/stats.h bench/overhead/stats.c
%canon_reldir%_check_bench_stats_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/bench/overhead
%canon_reldir%_check_bench_stats_CFLAGS = $(AM_CFLAGS) $(OB_CHECK_CFLAGS)
%canon_reldir%_check_bench_stats_LDADD = $(CHECK_LIBS) -lm
TESTS += %reldir%/check_bench_stats

TESTS += %reldir%/overhead_smoke.sh
EXTRA_DIST += %reldir%/overhead_smoke.sh

check_PROGRAMS += %reldir%/check_sim
%canon_reldir%_check_sim_SOURCES = %reldir%/check_sim.c \
	bench/simulate/sim_random.h bench/simulate/sim_random.c \
	bench/simulate/sim_speeds.h bench/simulate/sim_speeds.c \
	bench/simulate/sim_omnilearn.h bench/simulate/sim_omnilearn.c \
	bench/simulate/sim_oracle.h bench/simulate/sim_oracle.c \
	bench/simulate/sim_metrics.h bench/simulate/sim_metrics.c \
	bench/simulate/sim_work.h bench/simulate/sim_work.c \
	bench/simulate/sim_steal.h bench/simulate/sim_steal.c
%canon_reldir%_check_sim_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/bench/simulate
%canon_reldir%_check_sim_CFLAGS = $(OB_CORE_TEST_CFLAGS)
%canon_reldir%_check_sim_LDADD = $(OB_CORE_TEST_LDADD)
TESTS += %reldir%/check_sim

TESTS += %reldir%/simulate_smoke.sh
EXTRA_DIST += %reldir%/simulate_smoke.sh
# The training benchmark's own pieces (no MPI), and a short run of the
# benchmark itself under mpirun on a generated data set.

HETSGD_TEST_CFLAGS = $(OB_CORE_TEST_CFLAGS) -I$(top_srcdir)/bench/hetsgd
HETSGD_TEST_LDADD = bench/hetsgd/libhetsgd.la $(OB_CORE_TEST_LDADD) $(ZLIB_LIBS)

check_PROGRAMS += %reldir%/check_hetsgd_idx %reldir%/check_hetsgd_mlp \
	%reldir%/check_hetsgd_omnilearn %reldir%/check_hetsgd_schedule \
	%reldir%/check_hetsgd_options %reldir%/check_hetsgd_emulate \
	%reldir%/check_hetsgd_report %reldir%/check_hetsgd_profile
TESTS += %reldir%/check_hetsgd_idx %reldir%/check_hetsgd_mlp \
	%reldir%/check_hetsgd_omnilearn %reldir%/check_hetsgd_schedule \
	%reldir%/check_hetsgd_options %reldir%/check_hetsgd_emulate \
	%reldir%/check_hetsgd_report %reldir%/check_hetsgd_profile

%canon_reldir%_check_hetsgd_idx_SOURCES = %reldir%/check_hetsgd_idx.c
%canon_reldir%_check_hetsgd_idx_CFLAGS = $(HETSGD_TEST_CFLAGS) $(ZLIB_CFLAGS)
%canon_reldir%_check_hetsgd_idx_LDADD = $(HETSGD_TEST_LDADD)

%canon_reldir%_check_hetsgd_mlp_SOURCES = %reldir%/check_hetsgd_mlp.c
%canon_reldir%_check_hetsgd_mlp_CFLAGS = $(HETSGD_TEST_CFLAGS)
%canon_reldir%_check_hetsgd_mlp_LDADD = $(HETSGD_TEST_LDADD)

%canon_reldir%_check_hetsgd_omnilearn_SOURCES = %reldir%/check_hetsgd_omnilearn.c
%canon_reldir%_check_hetsgd_omnilearn_CFLAGS = $(HETSGD_TEST_CFLAGS)
%canon_reldir%_check_hetsgd_omnilearn_LDADD = $(HETSGD_TEST_LDADD)

%canon_reldir%_check_hetsgd_schedule_SOURCES = %reldir%/check_hetsgd_schedule.c
%canon_reldir%_check_hetsgd_schedule_CFLAGS = $(HETSGD_TEST_CFLAGS)
%canon_reldir%_check_hetsgd_schedule_LDADD = $(HETSGD_TEST_LDADD)

%canon_reldir%_check_hetsgd_options_SOURCES = %reldir%/check_hetsgd_options.c
%canon_reldir%_check_hetsgd_options_CFLAGS = $(HETSGD_TEST_CFLAGS)
%canon_reldir%_check_hetsgd_options_LDADD = $(HETSGD_TEST_LDADD)

%canon_reldir%_check_hetsgd_emulate_SOURCES = %reldir%/check_hetsgd_emulate.c
%canon_reldir%_check_hetsgd_emulate_CFLAGS = $(HETSGD_TEST_CFLAGS)
%canon_reldir%_check_hetsgd_emulate_LDADD = $(HETSGD_TEST_LDADD)

%canon_reldir%_check_hetsgd_report_SOURCES = %reldir%/check_hetsgd_report.c
%canon_reldir%_check_hetsgd_report_CFLAGS = $(HETSGD_TEST_CFLAGS)
%canon_reldir%_check_hetsgd_report_LDADD = $(HETSGD_TEST_LDADD)

%canon_reldir%_check_hetsgd_profile_SOURCES = %reldir%/check_hetsgd_profile.c
%canon_reldir%_check_hetsgd_profile_CFLAGS = $(HETSGD_TEST_CFLAGS)
%canon_reldir%_check_hetsgd_profile_LDADD = $(HETSGD_TEST_LDADD)

# A short run of the benchmark itself: 4 ranks, every policy, generated data.
check_PROGRAMS += %reldir%/hetsgd_mkdata
%canon_reldir%_hetsgd_mkdata_SOURCES = %reldir%/hetsgd_mkdata.c
%canon_reldir%_hetsgd_mkdata_CFLAGS = $(HETSGD_TEST_CFLAGS)
%canon_reldir%_hetsgd_mkdata_LDADD = $(HETSGD_TEST_LDADD)
TESTS += %reldir%/hetsgd_np4.sh
EXTRA_DIST += %reldir%/hetsgd_np4.sh
# bench/hosts/run.sh --smoke across network namespaces (skipped unless root can
# make them) and bench/hetsgd/run.sh --quota --smoke in cgroups (skipped
# without a writable cpu controller), both on a generated data set.
TESTS += %reldir%/hosts_smoke.sh %reldir%/quota_smoke.sh
EXTRA_DIST += %reldir%/hosts_smoke.sh %reldir%/quota_smoke.sh
# bench/run.sh (make bench) end to end in --quick mode on a generated data
# set: the table and the targets are printed, never timed.

TESTS += %reldir%/bench_runner_smoke.sh
EXTRA_DIST += %reldir%/bench_runner_smoke.sh

# make bench-async: its table on made-up runs, and a --quick run of it.
TESTS += %reldir%/check_async_table.sh %reldir%/async_smoke.sh
EXTRA_DIST += %reldir%/check_async_table.sh %reldir%/async_smoke.sh

# make bench's table and targets (bench/table.py) on made-up runs.
TESTS += %reldir%/check_bench_table.sh
EXTRA_DIST += %reldir%/check_bench_table.sh

# The GPU measurement's script, CPU-only (the GPU rank skipped).
TESTS += %reldir%/gpu_run_dry.sh
EXTRA_DIST += %reldir%/gpu_run_dry.sh

# hetsgd's GPU backend against its CPU path (built with CUDA; skips without a GPU).
EXTRA_DIST += %reldir%/hetsgd_gpu_grad.c
if HAVE_CUDA
check_PROGRAMS += %reldir%/hetsgd_gpu_grad
TESTS += %reldir%/hetsgd_gpu_grad
%canon_reldir%_hetsgd_gpu_grad_SOURCES = %reldir%/hetsgd_gpu_grad.c
%canon_reldir%_hetsgd_gpu_grad_CFLAGS = $(HETSGD_TEST_CFLAGS)
%canon_reldir%_hetsgd_gpu_grad_LDADD = $(OB_HETSGD_CUDA_OBJ) $(HETSGD_TEST_LDADD) $(CUDA_LIBS)
%canon_reldir%_hetsgd_gpu_grad_DEPENDENCIES = $(OB_HETSGD_CUDA_OBJ) bench/hetsgd/libhetsgd.la libobcore.la
endif

# bench/hosts/lib.sh's process-tree kill and removal, without root.
TESTS += %reldir%/hosts_lib.sh
EXTRA_DIST += %reldir%/hosts_lib.sh

# bench/probe/run.sh --smoke: one steal's cost on each transport, in a node
# (Open MPI, and MPICH where installed) and across namespace hosts (where
# root can make them); the rows' form and the lines of what was left out,
# never timings.
TESTS += %reldir%/probe_smoke.sh
EXTRA_DIST += %reldir%/probe_smoke.sh
