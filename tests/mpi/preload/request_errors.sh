# Sourced: weighted gradient MPI_Iallreduce requests outlive a Wait/Test
# call that fails (tests/mpi/mpi_request_errors.c).  A request still pending
# after an MPI_Waitall that returned MPI_ERR_IN_STATUS keeps its slot, so
# the next weighted gradient does not overwrite the scratch it sends from;
# requests an MPI_Testall completed and freed while it returned
# MPI_ERR_IN_STATUS give theirs back, over more steps than the layer has
# slots (OB_REQ_SLOTS), so that gradients stay weighted to the end.
case ${MPIRUN_FAMILY:-openmpi} in
openmpi) ;;
*) skip "rank 1 joins the pending MPI_Iallreduce only after rank 0's MPI_Waitall returned, as Open MPI's does; MPICH's waits for it" ;;
esac
slots=$(sed -n 's/^#define OB_REQ_SLOTS \([0-9][0-9]*\).*/\1/p' "$top_srcdir/mpi_wrappers/ob_requests.h")
[ -n "$slots" ] || fail "no OB_REQ_SLOTS in mpi_wrappers/ob_requests.h"
ob_run "$np" OMNIBATCH_WEIGHT=on OMNIBATCH_CALLS_PER_STEP=2 OMNIBATCH_REPORT=off -- \
    "$tests/mpi_request_errors" "$slots" || fail "the run failed"
grep -q "results right" "$work/out" || fail "wrong results"
grep -q "gradient MPI_Iallreduce in flight" "$work/err" && fail "the layer ran out of request slots"
grep -q "pending: yes" "$work/out" \
    || skip "this MPI's MPI_Waitall completed every request: nothing pending to check"
cat "$work/out"
