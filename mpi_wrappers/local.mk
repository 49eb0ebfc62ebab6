# mpi_wrappers/: the PMPI layer, linked into libomnibatch.la.
