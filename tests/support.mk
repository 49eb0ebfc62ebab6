# tests/support.mk: Check suites of settings, sharding and topology (no MPI).

check_PROGRAMS += %reldir%/check_config
%canon_reldir%_check_config_SOURCES = %reldir%/check_config.c
%canon_reldir%_check_config_CPPFLAGS = $(AM_CPPFLAGS) \
	-DOB_TEST_README='"$(abs_top_srcdir)/README.md"'
%canon_reldir%_check_config_CFLAGS = $(OB_CORE_TEST_CFLAGS)
%canon_reldir%_check_config_LDADD = $(OB_CORE_TEST_LDADD)
TESTS += %reldir%/check_config

check_PROGRAMS += %reldir%/check_shard
%canon_reldir%_check_shard_SOURCES = %reldir%/check_shard.c
%canon_reldir%_check_shard_CFLAGS = $(OB_CORE_TEST_CFLAGS)
%canon_reldir%_check_shard_LDADD = $(OB_CORE_TEST_LDADD)
TESTS += %reldir%/check_shard

# The topology suite reads hand-written hwloc XML from the source tree.
check_PROGRAMS += %reldir%/check_topology
%canon_reldir%_check_topology_SOURCES = %reldir%/check_topology.c
%canon_reldir%_check_topology_CPPFLAGS = $(AM_CPPFLAGS) \
	-DOB_TEST_GPU_XML='"$(abs_top_srcdir)/%reldir%/topology-gpus.xml"'
%canon_reldir%_check_topology_CFLAGS = $(OB_CORE_TEST_CFLAGS) $(HWLOC_CFLAGS)
%canon_reldir%_check_topology_LDADD = $(OB_CORE_TEST_LDADD)
TESTS += %reldir%/check_topology
EXTRA_DIST += %reldir%/topology-gpus.xml %reldir%/valgrind.supp
