# python/: the omnibatch Python package (pure Python over ctypes), installed
# for $(PYTHON) (configure: AM_PATH_PYTHON, Debian's /usr/bin/python3 by
# default).  The build tree holds a complete copy under $(builddir)/python,
# with _build.py written from the build (version, where make install puts
# the library), so tests import exactly what make install installs.

ob_python_sources = \
	%reldir%/omnibatch/__init__.py \
	%reldir%/omnibatch/_context.py \
	%reldir%/omnibatch/_library.py \
	%reldir%/omnibatch/_ps.py \
	%reldir%/omnibatch/torch.py

if HAVE_PYTHON
obpythondir = $(pythondir)/omnibatch
obpython_PYTHON = $(ob_python_sources)
nodist_obpython_PYTHON = %reldir%/omnibatch/_build.py
noinst_DATA = %reldir%/.stamp
endif
EXTRA_DIST += $(ob_python_sources) %reldir%/omnibatch/_build.py.in

# The library's file name as libtool installs it (dlname of the .la).
%reldir%/omnibatch/_build.py: %reldir%/omnibatch/_build.py.in $(OB_LIB) Makefile
	$(AM_V_GEN)$(MKDIR_P) $(@D) && \
	dlname=`sed -n "s/^dlname='\(.*\)'$$/\1/p" $(OB_LIB)` && \
	sed -e 's|@PACKAGE_VERSION[@]|$(PACKAGE_VERSION)|' \
	    -e "s|@LIBRARY[@]|$(libdir)/$$dlname|" $(srcdir)/%reldir%/omnibatch/_build.py.in >$@-t && \
	mv $@-t $@

# A VPATH build copies the sources beside _build.py.  The stamp depends on
# the sources in $(srcdir): once copied, a build-tree copy would otherwise
# satisfy make's search, and an edited source would never be copied again.
%reldir%/.stamp: $(srcdir)/%reldir%/omnibatch/__init__.py $(srcdir)/%reldir%/omnibatch/_context.py \
		$(srcdir)/%reldir%/omnibatch/_library.py $(srcdir)/%reldir%/omnibatch/torch.py \
		%reldir%/omnibatch/_build.py
	$(AM_V_GEN)if test "$(srcdir)" != "$(builddir)"; then \
	    for f in $(ob_python_sources); do cp $(srcdir)/$$f $$f || exit 1; done; \
	fi; \
	touch $@

CLEANFILES += %reldir%/omnibatch/_build.py %reldir%/.stamp
clean-local: clean-local-python
.PHONY: clean-local-python
clean-local-python:
	-rm -rf %reldir%/omnibatch/__pycache__
	if test "$(srcdir)" != "$(builddir)"; then rm -f $(ob_python_sources); fi
