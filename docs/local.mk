# docs/: the omnibatch(7) man page and the API reference.
#
# The man page is written by docs/omnibatch-man from docs/omnibatch.7.in and
# the configuration table (src/base/config.c), the same table that
# docs/configuration.md is checked against: the two cannot drift apart.

noinst_PROGRAMS += %reldir%/omnibatch-man
%canon_reldir%_omnibatch_man_SOURCES = %reldir%/omnibatch-man.c
%canon_reldir%_omnibatch_man_LDADD = libobcore.la $(HWLOC_LIBS) -lm

nodist_man_MANS = %reldir%/omnibatch.7
CLEANFILES += %reldir%/omnibatch.7
EXTRA_DIST += %reldir%/omnibatch.7.in %reldir%/Doxyfile.in

%reldir%/omnibatch.7: %reldir%/omnibatch-man$(EXEEXT) $(srcdir)/%reldir%/omnibatch.7.in Makefile
	@$(MKDIR_P) $(@D)
	$(AM_V_GEN)./%reldir%/omnibatch-man$(EXEEXT) $(srcdir)/%reldir%/omnibatch.7.in '$(libdir)' \
	    '$(bindir)' '$(OB_LIBNAME)' '$(OB_MPI_VENDOR)' >$@.tmp && mv $@.tmp $@

# make doc: the API reference (HTML under docs/api/html) when doxygen is installed.
CLEANFILES += %reldir%/Doxyfile
%reldir%/Doxyfile: $(srcdir)/%reldir%/Doxyfile.in Makefile
	@$(MKDIR_P) $(@D)
	$(AM_V_GEN)sed -e 's|@top_srcdir[@]|$(abs_top_srcdir)|g' -e 's|@top_builddir[@]|$(abs_top_builddir)|g' \
	    -e 's|@PACKAGE_VERSION[@]|$(PACKAGE_VERSION)|g' $(srcdir)/%reldir%/Doxyfile.in >$@.tmp && mv $@.tmp $@

.PHONY: doc
doc: %reldir%/Doxyfile
if HAVE_DOXYGEN
	@$(MKDIR_P) %reldir%/api
	$(DOXYGEN) %reldir%/Doxyfile
	@echo "make doc: docs/api/html/index.html (warnings: docs/api/warnings.log)"
else
	@echo "make doc: doxygen not found (install the Debian package doxygen)" >&2; exit 1
endif

clean-local: clean-doc-api
.PHONY: clean-doc-api
clean-doc-api:
	-rm -rf %reldir%/api
