#!/bin/sh
# A bad OMNIBATCH_* value makes omnibatch_options_init and omnibatch_create
# fail with OMNIBATCH_ERR_CONFIG naming it: one variable per rank count.
set -eu
bad() {
    np=$1; name=$2; value=$3
    echo "== mpi_api_env at $np ranks, $name=$value"
    OB_MPIRUN_ENV="CK_FORK=no OB_EXPECT_BAD=$name $name=$value" \
        "${top_srcdir:-.}/tests/mpirun.sh" "$np" "${top_builddir:-.}/tests/mpi/mpi_api_env"
}
bad 2 OMNIBATCH_GAIN abc
bad 3 OMNIBATCH_PERIOD 0
bad 4 OMNIBATCH_VERIFY maybe
