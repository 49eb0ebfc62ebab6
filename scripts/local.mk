# The MPICH build's .pc file carries the library's name, so the Open MPI
# and MPICH builds can be installed side by side (omnibatch.pc and
# omnibatch-mpich.pc): configure writes omnibatch.pc, this copies it.

EXTRA_DIST += omnibatch.pc.in
if !OB_MPI_OPENMPI
CLEANFILES += omnibatch-mpich.pc
omnibatch-mpich.pc: omnibatch.pc
	$(AM_V_GEN)cp omnibatch.pc $@
endif
