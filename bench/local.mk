# bench/: the benchmarks.
include %reldir%/tools.mk
include %reldir%/hetsgd.mk
