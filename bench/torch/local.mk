# bench/torch: PyTorch training through the omnibatch package on 4 emulated
# heterogeneous ranks, the policies side by side (bench_torch.py); options
# through BENCH_TORCH_FLAGS, e.g. make bench-torch BENCH_TORCH_FLAGS='--epochs 1'.
# chunk_reduce.py: how a step worked in chunks ends under DDP, the ways side by
# side (mpirun -np 4 python3 bench/torch/chunk_reduce.py; bench/results/pychunks.md).
EXTRA_DIST += %reldir%/bench_torch.py %reldir%/chunk_reduce.py
BENCH_TORCH_TIMEOUT = 3600
.PHONY: bench-torch
bench-torch: all
	OB_MPIRUN_ENV="PYTHONPATH=$(abs_builddir)/python OMNIBATCH_LIBRARY=$(abs_builddir)/.libs/libomnibatch.so OMP_NUM_THREADS=1" \
	OB_MPI_TIMEOUT=$(BENCH_TORCH_TIMEOUT) MPIRUN='$(MPIRUN)' \
	$(SHELL) $(srcdir)/tests/mpirun.sh 4 $(PYTHON) $(srcdir)/%reldir%/bench_torch.py $(BENCH_TORCH_FLAGS)
