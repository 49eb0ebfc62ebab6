# src/: the library's own code in two layers.  core/ is MPI-free (no MPI
# call, no mpi.h: every file compiles with a plain C compiler, see
# tests/unit/check_core_mpi_free.sh); api/ is the explicit API on top of it.

include %reldir%/core/local.mk
include %reldir%/api/local.mk
