# tests/unit/platform/: the machine's probes: topology from hand-written
# hwloc XML, CPU quotas from made-up cgroup trees, naps, memory types.

OB_UNIT_PLATFORM = %reldir%/check_topology %reldir%/check_cpuquota %reldir%/check_nap
check_PROGRAMS += $(OB_UNIT_PLATFORM)
TESTS += $(OB_UNIT_PLATFORM)

# The topology suite reads hand-written hwloc XML from the source tree.
%canon_reldir%_check_topology_SOURCES = %reldir%/check_topology.c
%canon_reldir%_check_topology_CPPFLAGS = $(OB_TEST_CPPFLAGS) \
	-DOB_TEST_GPU_XML='"$(abs_top_srcdir)/%reldir%/topology-gpus.xml"'
%canon_reldir%_check_topology_CFLAGS = $(OB_CORE_TEST_CFLAGS) $(HWLOC_CFLAGS)
%canon_reldir%_check_topology_LDADD = $(OB_CORE_TEST_LDADD)
EXTRA_DIST += %reldir%/topology-gpus.xml

%canon_reldir%_check_cpuquota_SOURCES = %reldir%/check_cpuquota.c
%canon_reldir%_check_cpuquota_CFLAGS = $(OB_CORE_TEST_CFLAGS)
%canon_reldir%_check_cpuquota_LDADD = $(OB_CORE_TEST_LDADD)

%canon_reldir%_check_nap_SOURCES = %reldir%/check_nap.c
%canon_reldir%_check_nap_CFLAGS = $(OB_CORE_TEST_CFLAGS)
%canon_reldir%_check_nap_LDADD = $(OB_CORE_TEST_LDADD)

# Memory types (src/platform/memtype.c).  check_memtype: no CUDA in the process
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
