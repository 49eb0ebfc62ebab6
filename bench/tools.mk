# bench/tools.mk: the interposition-overhead benchmark (overhead/) and the
# controller simulator (simulate/).

# overhead is a plain MPI program, deliberately not linked with omnibatch:
# run.sh measures it with and without LD_PRELOAD of the library.
noinst_PROGRAMS += %reldir%/overhead/overhead
%canon_reldir%_overhead_overhead_SOURCES = \
	%reldir%/overhead/overhead.c \
	%reldir%/overhead/stats.h %reldir%/overhead/stats.c
%canon_reldir%_overhead_overhead_LDADD = -lm
EXTRA_DIST += %reldir%/overhead/run.sh
