# tests/unit/wrappers/: the PMPI layer's request table, a leaf of
# mpi_wrappers/ that makes no MPI call, tested on its own (built with the
# MPI compiler for its types; MPI is never started).

check_PROGRAMS += %reldir%/check_requests
TESTS += %reldir%/check_requests
%canon_reldir%_check_requests_SOURCES = %reldir%/check_requests.c mpi_wrappers/requests.c
%canon_reldir%_check_requests_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/mpi_wrappers
%canon_reldir%_check_requests_CFLAGS = $(OB_CORE_TEST_CFLAGS)
%canon_reldir%_check_requests_LDADD = $(OB_CORE_TEST_LDADD)
