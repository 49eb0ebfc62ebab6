# The MPICH build's .pc file carries the library's name, so the Open MPI
# and MPICH builds can be installed side by side (omnibatch.pc and
# omnibatch-mpich.pc): configure writes omnibatch.pc, this copies it.

EXTRA_DIST += omnibatch.pc.in
if !OB_MPI_OPENMPI
CLEANFILES += omnibatch-mpich.pc
omnibatch-mpich.pc: omnibatch.pc
	$(AM_V_GEN)cp omnibatch.pc $@
endif

# omnibatchrun, the launcher: a shell script with the library's installed
# path and the launcher configure found filled in by make (so that
# `make prefix=...` is honoured).
bin_SCRIPTS += scripts/omnibatchrun
EXTRA_DIST += scripts/omnibatchrun.in
CLEANFILES += scripts/omnibatchrun
ob_edit = sed \
	-e 's|@libdir[@]|$(libdir)|g' \
	-e 's|@OB_LIBNAME[@]|$(OB_LIBNAME)|g' \
	-e 's|@OB_MPI_VENDOR[@]|$(OB_MPI_VENDOR)|g' \
	-e 's|@MPIRUN[@]|$(MPIRUN)|g' \
	-e 's|@MPIRUN_FAMILY[@]|$(MPIRUN_FAMILY)|g'
scripts/omnibatchrun: $(srcdir)/scripts/omnibatchrun.in Makefile
	@$(MKDIR_P) $(@D)
	$(AM_V_GEN)rm -f $@ $@.tmp && $(ob_edit) $(srcdir)/scripts/omnibatchrun.in >$@.tmp && \
	chmod +x $@.tmp && mv $@.tmp $@
