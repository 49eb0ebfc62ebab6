# src/api.mk: the explicit batch-negotiation API (omnibatch.h).  It talks
# MPI (PMPI_* on a private communicator), so it lives in the library, not in
# the MPI-free libobcore.la.

libomnibatch_la_SOURCES += \
	%reldir%/ob_api.h \
	%reldir%/api.c \
	%reldir%/api_step.c \
	%reldir%/api_gradient.c

# Header-only run-time lookup of the API (dlsym), for programs that do not
# link the library.
include_HEADERS += %reldir%/omnibatch_dl.h
