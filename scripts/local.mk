# Generated files that name installation directories: made by make, not by
# configure, so `make prefix=...` and `make install DESTDIR=...` see the
# final paths (the GNU Coding Standards' advice).  The .pc file carries the
# library's name, so the Open MPI and MPICH builds can be installed side by
# side (omnibatch.pc and omnibatch-mpich.pc).

EXTRA_DIST += omnibatch.pc.in
CLEANFILES += $(OB_LIBNAME).pc

ob_edit = sed \
	-e 's|@prefix[@]|$(prefix)|g' \
	-e 's|@exec_prefix[@]|$(exec_prefix)|g' \
	-e 's|@libdir[@]|$(libdir)|g' \
	-e 's|@includedir[@]|$(includedir)|g' \
	-e 's|@bindir[@]|$(bindir)|g' \
	-e 's|@PACKAGE_VERSION[@]|$(PACKAGE_VERSION)|g' \
	-e 's|@OB_LIBNAME[@]|$(OB_LIBNAME)|g' \
	-e 's|@OB_MPI_VENDOR[@]|$(OB_MPI_VENDOR)|g' \
	-e 's|@OB_MPI_FAMILY[@]|$(OB_MPI_FAMILY)|g' \
	-e 's|@OB_MPI_PC_REQUIRES[@]|$(OB_MPI_PC_REQUIRES)|g' \
	-e 's|@OB_MPI_PC_CFLAGS[@]|$(OB_MPI_PC_CFLAGS)|g' \
	-e 's|@OB_MPI_PC_LIBS[@]|$(OB_MPI_PC_LIBS)|g' \
	-e 's|@MPIRUN[@]|$(MPIRUN)|g' \
	-e 's|@MPIRUN_FAMILY[@]|$(MPIRUN_FAMILY)|g'

$(OB_LIBNAME).pc: $(srcdir)/omnibatch.pc.in Makefile
	$(AM_V_GEN)rm -f $@ $@.tmp && $(ob_edit) $(srcdir)/omnibatch.pc.in >$@.tmp && mv $@.tmp $@
