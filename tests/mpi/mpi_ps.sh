#!/bin/sh
# tests/mpi/mpi_ps (the asynchronous mode) at 2, 3 and 4 ranks; then once at
# 3 ranks with the report and the trace asked for (OMNIBATCH_REPORT=json,
# OMNIBATCH_REPORT_FILE, OMNIBATCH_TRACE), which its last test reads back.
# The workers' speeds are emulated with sleeps: two tries at each rank count.
set -eu
OB_API_TRIES=${OB_API_TRIES:-2} "${SHELL:-/bin/sh}" "${top_srcdir:-.}/tests/mpi/mpi_api_run.sh" mpi_ps
dir=$(mktemp -d "${TMPDIR:-/tmp}/mpi-ps.XXXXXX")
trap 'rm -rf "$dir"' EXIT
OB_API_NPS=3 OB_MPIRUN_ENV="OMNIBATCH_REPORT=json OMNIBATCH_REPORT_FILE=$dir/report.json \
OMNIBATCH_TRACE=$dir/trace.csv OB_PS_FILES=$dir ${OB_MPIRUN_ENV:-}" \
    "${SHELL:-/bin/sh}" "${top_srcdir:-.}/tests/mpi/mpi_api_run.sh" mpi_ps
