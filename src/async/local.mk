# src/async/: the asynchronous mode, a parameter server over two-sided MPI,
# on the API's parts.  Its mathematics are MPI-free and join libobcore.la
# (the Check suites of tests/unit/async link them): the server's update rule,
# the count of every worker's pushes and their staleness, the slices of the
# epochs' permutation, the batch scaling that equalises the workers' push
# rates, the printers of a run's report and trace, a server's state blob.
# tests/house/check_core_mpi_free.sh compiles those files with the plain C
# compiler.

OB_ASYNC_MPI_FREE = \
	%reldir%/ob_update.h %reldir%/update.c \
	%reldir%/ob_tally.h %reldir%/tally.c \
	%reldir%/ob_slicer.h %reldir%/slicer.c \
	%reldir%/ob_balance.h %reldir%/balance.c \
	%reldir%/ob_psreport.h %reldir%/psreport.c \
	%reldir%/ob_psstate.h %reldir%/psstate.c
libobcore_la_SOURCES += $(OB_ASYNC_MPI_FREE)

# The parameter server itself: MPI (PMPI_* on a private duplicate), in the
# library.  Its files are named ps_*.c: the MPI-free check leaves them out.
libomnibatch_la_SOURCES += \
	%reldir%/ob_ps.h \
	%reldir%/ps_context.c \
	%reldir%/ps_common.c \
	%reldir%/ps_wait.c \
	%reldir%/ps_server.c \
	%reldir%/ps_worker.c \
	%reldir%/ps_report.c \
	%reldir%/ps_save.c
