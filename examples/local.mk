# examples/: small complete programs using the API.  Built by `make check`
# and run by tests/mpi/example_lsq.sh and tests/mpi/example_python.sh.

check_PROGRAMS += %reldir%/lsq_train %reldir%/lsq_train_dl

# Linked with the library.
%canon_reldir%_lsq_train_SOURCES = %reldir%/lsq_train.c %reldir%/lsq_problem.h
%canon_reldir%_lsq_train_LDADD = $(OB_LIB) -lm

# Not linked with it: finds the API at run time (omnibatch_dl.h), or does
# without.
%canon_reldir%_lsq_train_dl_SOURCES = %reldir%/lsq_train_dl.c %reldir%/lsq_problem.h
%canon_reldir%_lsq_train_dl_LDADD = -lm

EXTRA_DIST += %reldir%/omnibatch_ctypes.py
