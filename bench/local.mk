# bench/: the benchmarks.
include %reldir%/tools.mk
