# tests/runner.mk: bench/run.sh (make bench) end to end in --quick mode on a
# generated data set: the table and the targets are printed, never timed.

TESTS += %reldir%/bench_runner_smoke.sh
EXTRA_DIST += %reldir%/bench_runner_smoke.sh
