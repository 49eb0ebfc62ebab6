# bench/: the benchmarks.
