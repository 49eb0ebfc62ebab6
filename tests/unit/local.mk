# tests/unit/: one Check suite per module of the MPI-free core (src/core/).

OB_UNIT_SUITES = %reldir%/check_error %reldir%/check_estimator %reldir%/check_planner \
	%reldir%/check_planner_dist \
	%reldir%/check_controller %reldir%/check_config %reldir%/check_shard \
	%reldir%/check_topology %reldir%/check_stepdetect %reldir%/check_trace \
	%reldir%/check_timeline %reldir%/check_report %reldir%/check_maths %reldir%/check_stepmodel %reldir%/check_state \
	%reldir%/check_cpuquota %reldir%/check_pool %reldir%/check_nap
check_PROGRAMS += $(OB_UNIT_SUITES)
TESTS += $(OB_UNIT_SUITES) %reldir%/check_man.sh
EXTRA_DIST += %reldir%/check_man.sh

%canon_reldir%_check_pool_SOURCES = %reldir%/check_pool.c
%canon_reldir%_check_pool_CFLAGS = $(OB_CORE_TEST_CFLAGS)
%canon_reldir%_check_pool_LDADD = $(OB_CORE_TEST_LDADD)

%canon_reldir%_check_nap_SOURCES = %reldir%/check_nap.c
%canon_reldir%_check_nap_CFLAGS = $(OB_CORE_TEST_CFLAGS)
%canon_reldir%_check_nap_LDADD = $(OB_CORE_TEST_LDADD)

%canon_reldir%_check_cpuquota_SOURCES = %reldir%/check_cpuquota.c
%canon_reldir%_check_cpuquota_CFLAGS = $(OB_CORE_TEST_CFLAGS)
%canon_reldir%_check_cpuquota_LDADD = $(OB_CORE_TEST_LDADD)

%canon_reldir%_check_state_SOURCES = %reldir%/check_state.c
%canon_reldir%_check_state_CFLAGS = $(OB_CORE_TEST_CFLAGS)
%canon_reldir%_check_state_LDADD = $(OB_CORE_TEST_LDADD)

%canon_reldir%_check_error_SOURCES = %reldir%/check_error.c
%canon_reldir%_check_error_CFLAGS = $(OB_CORE_TEST_CFLAGS)
%canon_reldir%_check_error_LDADD = $(OB_CORE_TEST_LDADD)

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

%canon_reldir%_check_config_SOURCES = %reldir%/check_config.c
%canon_reldir%_check_config_CPPFLAGS = $(OB_TEST_CPPFLAGS) \
	-DOB_TEST_README='"$(abs_top_srcdir)/README.md"'
%canon_reldir%_check_config_CFLAGS = $(OB_CORE_TEST_CFLAGS)
%canon_reldir%_check_config_LDADD = $(OB_CORE_TEST_LDADD)

# The timeline suite checks its JSON with tests/ob_json_check.h.
%canon_reldir%_check_timeline_SOURCES = %reldir%/check_timeline.c
%canon_reldir%_check_timeline_CPPFLAGS = $(OB_TEST_CPPFLAGS)
%canon_reldir%_check_timeline_CFLAGS = $(OB_CORE_TEST_CFLAGS)
%canon_reldir%_check_timeline_LDADD = $(OB_CORE_TEST_LDADD)

%canon_reldir%_check_shard_SOURCES = %reldir%/check_shard.c
%canon_reldir%_check_shard_CFLAGS = $(OB_CORE_TEST_CFLAGS)
%canon_reldir%_check_shard_LDADD = $(OB_CORE_TEST_LDADD)

# The topology suite reads hand-written hwloc XML from the source tree.
%canon_reldir%_check_topology_SOURCES = %reldir%/check_topology.c
%canon_reldir%_check_topology_CPPFLAGS = $(OB_TEST_CPPFLAGS) \
	-DOB_TEST_GPU_XML='"$(abs_top_srcdir)/%reldir%/topology-gpus.xml"'
%canon_reldir%_check_topology_CFLAGS = $(OB_CORE_TEST_CFLAGS) $(HWLOC_CFLAGS)
%canon_reldir%_check_topology_LDADD = $(OB_CORE_TEST_LDADD)
EXTRA_DIST += %reldir%/topology-gpus.xml

%canon_reldir%_check_stepdetect_SOURCES = %reldir%/check_stepdetect.c
%canon_reldir%_check_stepdetect_CFLAGS = $(OB_CORE_TEST_CFLAGS)
%canon_reldir%_check_stepdetect_LDADD = $(OB_CORE_TEST_LDADD)

%canon_reldir%_check_trace_SOURCES = %reldir%/check_trace.c
%canon_reldir%_check_trace_CFLAGS = $(OB_CORE_TEST_CFLAGS)
%canon_reldir%_check_trace_LDADD = $(OB_CORE_TEST_LDADD)

%canon_reldir%_check_report_SOURCES = %reldir%/check_report.c
%canon_reldir%_check_report_CPPFLAGS = $(OB_TEST_CPPFLAGS)
%canon_reldir%_check_report_CFLAGS = $(OB_CORE_TEST_CFLAGS)
%canon_reldir%_check_report_LDADD = $(OB_CORE_TEST_LDADD)

%canon_reldir%_check_maths_SOURCES = %reldir%/check_maths.c
%canon_reldir%_check_maths_CFLAGS = $(OB_CORE_TEST_CFLAGS)
%canon_reldir%_check_maths_LDADD = $(OB_CORE_TEST_LDADD)

%canon_reldir%_check_stepmodel_SOURCES = %reldir%/check_stepmodel.c
%canon_reldir%_check_stepmodel_CFLAGS = $(OB_CORE_TEST_CFLAGS)
%canon_reldir%_check_stepmodel_LDADD = $(OB_CORE_TEST_LDADD)

# The core is MPI-free: every src/core/*.c compiles with the plain C
# compiler and no MPI include path.
TESTS += %reldir%/check_core_mpi_free.sh
EXTRA_DIST += %reldir%/check_core_mpi_free.sh

# No two files of the library include or call each other in a loop (nm on
# the built objects, the includes of the sources; tsort finds a loop).
TESTS += %reldir%/check_no_loops.sh
EXTRA_DIST += %reldir%/check_no_loops.sh

# The PMPI layer's request table: a leaf of mpi_wrappers/ that makes no MPI
# call, tested on its own (built with the MPI compiler for its types; MPI
# is never started).
check_PROGRAMS += %reldir%/check_requests
TESTS += %reldir%/check_requests
%canon_reldir%_check_requests_SOURCES = %reldir%/check_requests.c mpi_wrappers/requests.c
%canon_reldir%_check_requests_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/mpi_wrappers
%canon_reldir%_check_requests_CFLAGS = $(OB_CORE_TEST_CFLAGS)
%canon_reldir%_check_requests_LDADD = $(OB_CORE_TEST_LDADD)

# Memory types (src/core/memtype.c).  check_memtype: no CUDA in the process
# (the CPU machines'); memtype_stub: the toolkit's stub driver loaded (skips
# without the toolkit); memtype_gpu: a real GPU (skips without one).
OB_MEMTYPE_TESTS = %reldir%/check_memtype %reldir%/memtype_stub %reldir%/memtype_gpu
check_PROGRAMS += $(OB_MEMTYPE_TESTS) %reldir%/memtype_ptx
TESTS += $(OB_MEMTYPE_TESTS) %reldir%/memtype_ptxas.sh
EXTRA_DIST += %reldir%/memtype_ptxas.sh
noinst_HEADERS += %reldir%/ob_maps.h

%canon_reldir%_check_memtype_SOURCES = %reldir%/check_memtype.c
%canon_reldir%_check_memtype_CPPFLAGS = $(OB_TEST_CPPFLAGS) -I$(top_srcdir)/%reldir%
%canon_reldir%_check_memtype_CFLAGS = $(OB_CORE_TEST_CFLAGS)
%canon_reldir%_check_memtype_LDADD = $(OB_CORE_TEST_LDADD)

%canon_reldir%_memtype_stub_SOURCES = %reldir%/memtype_stub.c
%canon_reldir%_memtype_stub_CPPFLAGS = $(OB_TEST_CPPFLAGS) -I$(top_srcdir)/%reldir% \
	-DOB_TEST_CUDA_STUB='"$(CUDA_STUB_LIBCUDA)"'
%canon_reldir%_memtype_stub_LDADD = libobcore.la $(HWLOC_LIBS) -lm

%canon_reldir%_memtype_gpu_SOURCES = %reldir%/memtype_gpu.c
%canon_reldir%_memtype_gpu_CPPFLAGS = $(OB_TEST_CPPFLAGS)
%canon_reldir%_memtype_gpu_LDADD = libobcore.la $(HWLOC_LIBS) -lm

%canon_reldir%_memtype_ptx_SOURCES = %reldir%/memtype_ptx.c
%canon_reldir%_memtype_ptx_LDADD = libobcore.la $(HWLOC_LIBS) -lm

# Compile-only where the toolkit is: ob_memtype_cuda.h against cuda.h.
if HAVE_CUDA
check_PROGRAMS += %reldir%/check_memtype_abi
TESTS += %reldir%/check_memtype_abi
%canon_reldir%_check_memtype_abi_SOURCES = %reldir%/check_memtype_abi.c
%canon_reldir%_check_memtype_abi_CPPFLAGS = $(AM_CPPFLAGS) $(CUDA_CPPFLAGS)
endif
EXTRA_DIST += %reldir%/check_memtype_abi.c

# No function of src/ and mpi_wrappers/ above cognitive complexity 25
# (clang-tidy; skipped without it).
TESTS += %reldir%/check_complexity.sh
EXTRA_DIST += %reldir%/check_complexity.sh
