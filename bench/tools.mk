# bench/tools.mk: the interposition-overhead benchmark (overhead/) and the
# controller simulator (simulate/).

# overhead is a plain MPI program, deliberately not linked with omnibatch:
# run.sh measures it with and without LD_PRELOAD of the library.
noinst_PROGRAMS += %reldir%/overhead/overhead
%canon_reldir%_overhead_overhead_SOURCES = \
	%reldir%/overhead/overhead.c \
	%reldir%/overhead/stats.h %reldir%/overhead/stats.c
%canon_reldir%_overhead_overhead_LDADD = -lm
EXTRA_DIST += %reldir%/overhead/run.sh

# simulate drives the MPI-free controller core directly at up to 65,536
# simulated ranks.
noinst_PROGRAMS += %reldir%/simulate/simulate
%canon_reldir%_simulate_simulate_SOURCES = \
	%reldir%/simulate/simulate.c \
	%reldir%/simulate/sim_clock.h \
	%reldir%/simulate/sim_options.h %reldir%/simulate/sim_options.c \
	%reldir%/simulate/sim_run.h %reldir%/simulate/sim_run.c \
	%reldir%/simulate/sim_decide.h %reldir%/simulate/sim_decide.c \
	%reldir%/simulate/sim_report.h %reldir%/simulate/sim_report.c \
	%reldir%/simulate/sim_false.h %reldir%/simulate/sim_false.c \
	%reldir%/simulate/sim_random.h %reldir%/simulate/sim_random.c \
	%reldir%/simulate/sim_speeds.h %reldir%/simulate/sim_speeds.c \
	%reldir%/simulate/sim_omnilearn.h %reldir%/simulate/sim_omnilearn.c \
	%reldir%/simulate/sim_oracle.h %reldir%/simulate/sim_oracle.c \
	%reldir%/simulate/sim_metrics.h %reldir%/simulate/sim_metrics.c \
	%reldir%/simulate/sim_dist.h %reldir%/simulate/sim_dist.c
%canon_reldir%_simulate_simulate_LDADD = libobcore.la $(HWLOC_LIBS) -lm

# netbound: a network-bound run on one host through the API (microseconds of
# compute, a large reduction): the plan of equal-speed ranks must stay equal.
noinst_PROGRAMS += %reldir%/netbound/netbound
%canon_reldir%_netbound_netbound_SOURCES = %reldir%/netbound/netbound.c
%canon_reldir%_netbound_netbound_LDADD = libomnibatch.la -lm

# steal_probe: one steal's latency on each transport a thief could use
# (shared-window atomics, passive-target RMA, a request and its reply), in a
# node and across hosts: bench/probe/run.sh, make bench-probe.
noinst_PROGRAMS += %reldir%/probe/steal_probe
%canon_reldir%_probe_steal_probe_SOURCES = \
	%reldir%/probe/steal_probe.c \
	%reldir%/overhead/stats.h %reldir%/overhead/stats.c
%canon_reldir%_probe_steal_probe_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/%reldir%/overhead
%canon_reldir%_probe_steal_probe_LDADD = -lm
EXTRA_DIST += %reldir%/probe/run.sh %reldir%/probe/tcp_rtt.py
