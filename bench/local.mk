# bench/: the benchmarks.
include %reldir%/tools.mk
include %reldir%/hetsgd.mk
include %reldir%/torch/local.mk

# make bench: the standard comparison (bench/run.sh) on this build; options
# through BENCH_FLAGS, e.g. make bench BENCH_FLAGS=--quick.
EXTRA_DIST += %reldir%/run.sh %reldir%/table.py %reldir%/RESULTS.md
# The full records RESULTS.md links to.
EXTRA_DIST += %reldir%/results/async.md %reldir%/results/chunks.md %reldir%/results/hosts-chunks.md \
	%reldir%/results/probe.md %reldir%/results/pychunks.md %reldir%/results/sim-chunks.md \
	%reldir%/results/starved.md
# The GPU measurement (bench/gpu/run.sh prepare here, measure there).
EXTRA_DIST += %reldir%/gpu/run.sh
.PHONY: bench
bench: all
	MPIRUN='$(MPIRUN)' MPIRUN_FAMILY='$(MPIRUN_FAMILY)' OB_LIBNAME='$(OB_LIBNAME)' GNUPLOT='$(GNUPLOT)' VALGRIND='$(VALGRIND)' NM='$(NM)' \
	$(SHELL) $(srcdir)/%reldir%/run.sh --builddir $(builddir) $(BENCH_FLAGS)

# make bench-hosts: omnibatch across network namespaces with their own host
# names, Open MPI over TCP, for equal hosts, one slow CPU and one slow link
# (bench/hosts/run.sh; root).  Options through BENCH_HOSTS_FLAGS.
EXTRA_DIST += %reldir%/hosts/run.sh %reldir%/hosts/lib.sh %reldir%/hetsgd/run.sh %reldir%/hetsgd/polling.sh
.PHONY: bench-hosts
bench-hosts: all tests/mpi/mpi_straggler$(EXEEXT)
	MPIRUN='$(MPIRUN)' $(SHELL) $(srcdir)/%reldir%/hosts/run.sh --builddir $(builddir) $(BENCH_HOSTS_FLAGS)

# make bench-probe: one steal's cost on each transport (shared-window atomics,
# passive-target RMA, a request and its reply) in a node, with Open MPI and
# MPICH, and across network-namespace hosts over TCP (root)
# (bench/probe/run.sh).  Options through BENCH_PROBE_FLAGS.
.PHONY: bench-probe
bench-probe: %reldir%/probe/steal_probe$(EXEEXT)
	MPIRUN='$(MPIRUN)' MPIRUN_FAMILY='$(MPIRUN_FAMILY)' OTHER_MPICC='$(OTHER_MPICC)' OTHER_MPIRUN='$(OTHER_MPIRUN)' \
	$(SHELL) $(srcdir)/%reldir%/probe/run.sh --builddir $(builddir) $(BENCH_PROBE_FLAGS)
