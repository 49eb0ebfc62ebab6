# tests/unit/: Check suites of the MPI-free parts, no MPI, in the folders of
# src/ (one suite per module), of the PMPI layer's request table and of the
# chunked step's shared words (both built with the MPI compiler).  Each
# suite links libobcore.la, so internals are reachable.

include %reldir%/base/local.mk
include %reldir%/platform/local.mk
include %reldir%/control/local.mk
include %reldir%/observe/local.mk
include %reldir%/async/local.mk
include %reldir%/wrappers/local.mk
include %reldir%/api/local.mk
