# mpi_wrappers/: the PMPI layer, linked into libomnibatch.la.  Lifecycle
# wrappers, thin per-call wrappers (C and Fortran), and the layer's state
# that feeds the MPI-free core (src/core/).

libomnibatch_la_SOURCES += \
	%reldir%/ob_layer.h \
	%reldir%/lifecycle.c \
	%reldir%/collectives.c \
	%reldir%/completion.c \
	%reldir%/fortran.c \
	%reldir%/layer.c \
	%reldir%/requests.c \
	%reldir%/weight.c
libomnibatch_la_CPPFLAGS += -I$(top_srcdir)/mpi_wrappers
