# mpi_wrappers/: the PMPI layer, linked into libomnibatch.la.  Lifecycle
# wrappers by hand (lifecycle.c); the thin per-call wrappers, C and
# Fortran, generated at build time from wrappers.spec into one include file
# per unit (collectives.inc, completion.inc, fortran.inc, in the build
# tree, not committed); the layer that feeds the MPI-free core: its start
# (setup.c), hot path (layer.c) and end (finalize.c).

libomnibatch_la_SOURCES += \
	%reldir%/ob_layer.h \
	%reldir%/ob_layer_state.h \
	%reldir%/ob_requests.h \
	%reldir%/lifecycle.c \
	%reldir%/setup.c \
	%reldir%/collectives.c \
	%reldir%/completion.c \
	%reldir%/foreign.c \
	%reldir%/fortran.c \
	%reldir%/layer.c \
	%reldir%/finalize.c \
	%reldir%/requests.c \
	%reldir%/tracestream.c \
	%reldir%/weight.c
libomnibatch_la_CPPFLAGS += -I$(top_srcdir)/%reldir% -I$(top_builddir)/%reldir%

OB_WRAPPER_INCS = %reldir%/collectives.inc %reldir%/completion.inc %reldir%/fortran.inc
BUILT_SOURCES += $(OB_WRAPPER_INCS)
CLEANFILES += $(OB_WRAPPER_INCS)
EXTRA_DIST += %reldir%/wrappers.spec %reldir%/genwrappers.awk
OB_GENWRAPPERS = $(MKDIR_P) $(@D) && \
	$(AWK) -v unit=$$unit -f $(srcdir)/%reldir%/genwrappers.awk \
	$(srcdir)/%reldir%/wrappers.spec >$@.tmp && mv $@.tmp $@

%reldir%/collectives.inc: $(srcdir)/%reldir%/wrappers.spec $(srcdir)/%reldir%/genwrappers.awk
	$(AM_V_GEN)unit=collectives; $(OB_GENWRAPPERS)
%reldir%/completion.inc: $(srcdir)/%reldir%/wrappers.spec $(srcdir)/%reldir%/genwrappers.awk
	$(AM_V_GEN)unit=completion; $(OB_GENWRAPPERS)
%reldir%/fortran.inc: $(srcdir)/%reldir%/wrappers.spec $(srcdir)/%reldir%/genwrappers.awk
	$(AM_V_GEN)unit=fortran; $(OB_GENWRAPPERS)
