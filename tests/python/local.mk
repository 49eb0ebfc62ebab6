# tests/python/: the Python package (python/) under mpirun, through
# tests/mpirun.sh; skipped (77) when $(PYTHON) lacks mpi4py, numpy or torch.
TESTS += %reldir%/package.sh %reldir%/torch.sh %reldir%/torch_chunks.sh %reldir%/readme_example.sh \
	%reldir%/bench_smoke.sh %reldir%/ps.sh
EXTRA_DIST += %reldir%/package.sh %reldir%/torch.sh %reldir%/torch_chunks.sh \
	%reldir%/readme_example.sh %reldir%/bench_smoke.sh %reldir%/ps.sh %reldir%/test_ps.py \
	%reldir%/common.sh %reldir%/test_package.py %reldir%/test_torch.py \
	%reldir%/test_torch_chunks.py %reldir%/test_layout.py \
	examples/torch_train.py examples/torch_chunks.py
