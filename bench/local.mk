# bench/: the benchmarks.

include %reldir%/hetsgd.mk
