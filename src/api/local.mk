# src/api/: the explicit batch-negotiation API (include/omnibatch.h).  It
# talks MPI (PMPI_* on a private communicator), so it lives in the library,
# not in the MPI-free libobcore.la.

libomnibatch_la_SOURCES += \
	%reldir%/ob_api.h \
	%reldir%/api_errors.c \
	%reldir%/api_agree.c \
	%reldir%/api.c \
	%reldir%/api_step.c \
	%reldir%/api_dist.c \
	%reldir%/api_gradient.c \
	%reldir%/api_node.c \
	%reldir%/api_registry.c \
	%reldir%/api_state.c
