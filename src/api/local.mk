# src/api/: the explicit batch-negotiation API (include/omnibatch.h).  It
# talks MPI (PMPI_* on a private communicator), so it lives in the library,
# not in the MPI-free libobcore.la.

libomnibatch_la_SOURCES += \
	%reldir%/ob_api.h \
	%reldir%/api_errors.c \
	%reldir%/api_agree.c \
	%reldir%/api.c \
	%reldir%/api_step.c \
	%reldir%/api_gradient.c \
	%reldir%/ob_api_chunk.h \
	%reldir%/api_chunk.c \
	%reldir%/api_chunk_wire.c \
	%reldir%/api_chunk_words.c \
	%reldir%/api_exchange.c \
	%reldir%/api_measure.c \
	%reldir%/api_dist.c \
	%reldir%/api_wait.c \
	%reldir%/api_node.c \
	%reldir%/api_registry.c \
	%reldir%/api_state.c
