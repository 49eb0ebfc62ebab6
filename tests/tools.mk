# tests/tools.mk: the benchmarks' own arithmetic (Check) and smoke runs of
# bench/overhead and bench/simulate (output format only, never timings).

check_PROGRAMS += %reldir%/check_bench_stats
%canon_reldir%_check_bench_stats_SOURCES = %reldir%/check_bench_stats.c \
	bench/overhead/stats.h bench/overhead/stats.c
%canon_reldir%_check_bench_stats_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/bench/overhead
%canon_reldir%_check_bench_stats_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
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
	bench/simulate/sim_metrics.h bench/simulate/sim_metrics.c
%canon_reldir%_check_sim_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/bench/simulate
%canon_reldir%_check_sim_CFLAGS = $(OB_CORE_TEST_CFLAGS)
%canon_reldir%_check_sim_LDADD = $(OB_CORE_TEST_LDADD)
TESTS += %reldir%/check_sim

TESTS += %reldir%/simulate_smoke.sh
EXTRA_DIST += %reldir%/simulate_smoke.sh
