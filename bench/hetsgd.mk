# bench/hetsgd: data-parallel training on Fashion-MNIST under mpirun, with
# emulated or real heterogeneity and four batch policies side by side.
#
# libhetsgd.la holds the pieces that need neither MPI nor the API (data,
# model, OmniLearn's rule, schedules, options) so the Check suites in
# tests/bench/local.mk test them directly.  OmniLearn's rule is the simulator's
# own source, so both benchmarks compare against the same rule.

noinst_LTLIBRARIES += %reldir%/hetsgd/libhetsgd.la
%canon_reldir%_hetsgd_libhetsgd_la_SOURCES = \
	%reldir%/hetsgd/idx.h %reldir%/hetsgd/idx.c \
	%reldir%/hetsgd/mlp.h %reldir%/hetsgd/mlp.c \
	%reldir%/hetsgd/omnilearn.h %reldir%/hetsgd/omnilearn.c \
	%reldir%/hetsgd/schedule.h %reldir%/hetsgd/schedule.c \
	%reldir%/hetsgd/emulate.h %reldir%/hetsgd/emulate.c \
	%reldir%/hetsgd/profile.h %reldir%/hetsgd/profile.c \
	%reldir%/hetsgd/options.h %reldir%/hetsgd/options.c \
	%reldir%/hetsgd/report.h %reldir%/hetsgd/report.c \
	%reldir%/hetsgd/rng.h \
	%reldir%/simulate/sim_omnilearn.h %reldir%/simulate/sim_omnilearn.c
%canon_reldir%_hetsgd_libhetsgd_la_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/%reldir%/simulate
%canon_reldir%_hetsgd_libhetsgd_la_CFLAGS = $(AM_CFLAGS) $(OPENBLAS_CFLAGS) $(ZLIB_CFLAGS)
%canon_reldir%_hetsgd_libhetsgd_la_LIBADD = $(OPENBLAS_LIBS) $(ZLIB_LIBS) -lm


# The benchmark: the API from the shared library, the planner (ob_plan_*,
# hidden in the shared library) from the static convenience copy.
noinst_PROGRAMS += %reldir%/hetsgd/hetsgd
%canon_reldir%_hetsgd_hetsgd_SOURCES = %reldir%/hetsgd/hetsgd.c %reldir%/hetsgd/async.c %reldir%/hetsgd/async.h
%canon_reldir%_hetsgd_hetsgd_CFLAGS = $(AM_CFLAGS) $(OPENBLAS_CFLAGS)
%canon_reldir%_hetsgd_hetsgd_LDADD = %reldir%/hetsgd/libhetsgd.la $(OB_LIB) libobcore.la \
	$(OPENBLAS_LIBS) $(ZLIB_LIBS) $(HWLOC_LIBS) -lm

# Recovery of two runs of one schedule side by side (bench/run.sh).
noinst_PROGRAMS += %reldir%/hetsgd/recovery
%canon_reldir%_hetsgd_recovery_SOURCES = %reldir%/hetsgd/recovery.c
%canon_reldir%_hetsgd_recovery_LDADD = %reldir%/hetsgd/libhetsgd.la libobcore.la \
	$(OPENBLAS_LIBS) $(ZLIB_LIBS) $(HWLOC_LIBS) -lm

EXTRA_DIST += %reldir%/hetsgd/plot.gp %reldir%/hetsgd/compare.gp %reldir%/hetsgd/README.md

# make bench-async: synchronous and asynchronous training side by side at
# OmniLearn's heterogeneity levels and under real CPU quotas
# (bench/hetsgd/async.sh); options through BENCH_ASYNC_FLAGS.
EXTRA_DIST += %reldir%/hetsgd/async.sh %reldir%/hetsgd/async_table.py %reldir%/hetsgd/cgroup.sh
.PHONY: bench-async
bench-async: all
	MPIRUN='$(MPIRUN)' $(SHELL) $(srcdir)/%reldir%/hetsgd/async.sh --builddir $(builddir) $(BENCH_ASYNC_FLAGS)

# The GPU backend (--devices ...,gpu), built when configure finds CUDA: nvcc
# compiles it (with -Werror in a git checkout, as the C code), the benchmark
# links it with cuBLAS and the CUDA runtime.  Without CUDA, hetsgd refuses a
# gpu rank with one line.
EXTRA_DIST += %reldir%/hetsgd/mlp_cuda.cu %reldir%/hetsgd/mlp_cuda.h
if HAVE_CUDA
OB_HETSGD_CUDA_OBJ = %reldir%/hetsgd/mlp_cuda.$(OBJEXT)
$(OB_HETSGD_CUDA_OBJ): $(srcdir)/%reldir%/hetsgd/mlp_cuda.cu $(srcdir)/%reldir%/hetsgd/mlp_cuda.h \
		$(srcdir)/%reldir%/hetsgd/mlp.h config.h
	@$(MKDIR_P) %reldir%/hetsgd
	$(AM_V_GEN)$(NVCC) $(NVCC_FLAGS) -I$(top_builddir) -I$(srcdir)/%reldir%/hetsgd $(CUDA_CPPFLAGS) \
		-c -o $@ $(srcdir)/%reldir%/hetsgd/mlp_cuda.cu
CLEANFILES += $(OB_HETSGD_CUDA_OBJ)
%canon_reldir%_hetsgd_hetsgd_LDADD += $(OB_HETSGD_CUDA_OBJ) $(CUDA_LIBS)
%canon_reldir%_hetsgd_hetsgd_DEPENDENCIES = %reldir%/hetsgd/libhetsgd.la $(OB_LIB) libobcore.la \
	$(OB_HETSGD_CUDA_OBJ)
endif
