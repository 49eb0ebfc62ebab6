/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * How the ranks of the asynchronous mode wait (ob_ps.h).  A server waits
 * for pushes and a worker for its answer most of the time: polling would
 * take a core from the workers that share the machine, and the quota of a
 * rank under one.  So a rank naps between tests while nothing moves.  But
 * MPI moves a large message only inside MPI calls (over shared memory
 * without a single-copy mechanism, the sender hands out fragment after
 * fragment as it is called): while a send of the rank's own is in flight,
 * or once the first part of an answer has arrived, it tests without
 * napping until the data are through, or a nap per fragment would stretch
 * every transfer.
 */
#include "config.h"

#include <time.h>

#include "ob_ps.h"

static void ob_ps_nap(void)
{
    const struct timespec nap = { 0, OB_PS_NAP_NS };

    nanosleep(&nap, NULL);
}

/* Test every request still posted; *left: those still in flight, *sends_left of the first
 * nsend, *got: the others that completed now. */
static int ob_ps_test_each(int n, MPI_Request *reqs, int nsend, int *left, int *sends_left, int *got)
{
    *left = 0;
    *sends_left = 0;
    *got = 0;
    for (int i = 0; i < n; i++) {
        int flag = 0;
        int mpi_rc;

        if (MPI_REQUEST_NULL == reqs[i]) {
            continue;
        }
        mpi_rc = PMPI_Test(&reqs[i], &flag, MPI_STATUS_IGNORE);
        if (MPI_SUCCESS != mpi_rc) {
            return mpi_rc;
        }
        if (!flag) {
            (*left)++;
            *sends_left += i < nsend;
        } else if (i >= nsend) {
            (*got)++;
        }
    }
    return MPI_SUCCESS;
}

int ob_ps_wait_all(int n, MPI_Request *reqs, int nsend, int arrived)
{
    for (;;) {
        int left, sends_left, got;
        int mpi_rc = ob_ps_test_each(n, reqs, nsend, &left, &sends_left, &got);

        if (MPI_SUCCESS != mpi_rc || 0 == left) {
            return mpi_rc;
        }
        arrived = arrived || got > 0;
        if (!arrived && 0 == sends_left) {
            ob_ps_nap();
        }
    }
}

int ob_ps_wait_any(int n, MPI_Request *reqs, int *index, MPI_Request *sends, int nsends)
{
    for (;;) {
        int flag = 0;
        int left, sends_left, got;
        int mpi_rc = PMPI_Testany(n, reqs, index, &flag, MPI_STATUS_IGNORE);

        if (MPI_SUCCESS != mpi_rc || flag) {
            return mpi_rc;
        }
        /* The answers still going out move on while this rank is here. */
        mpi_rc = ob_ps_test_each(nsends, sends, nsends, &left, &sends_left, &got);
        if (MPI_SUCCESS != mpi_rc) {
            return mpi_rc;
        }
        if (0 == sends_left) {
            ob_ps_nap();
        }
    }
}

int ob_ps_complete(int n, MPI_Request *reqs)
{
    /* One by one, each with a status of its own: MPICH's header sizes the statuses of
     * MPI_Waitall, and GCC refuses MPI_STATUSES_IGNORE for them. */
    for (int i = 0; i < n; i++) {
        MPI_Status status;
        int mpi_rc = PMPI_Wait(&reqs[i], &status);

        if (MPI_SUCCESS != mpi_rc) {
            return mpi_rc;
        }
    }
    return MPI_SUCCESS;
}

void ob_ps_cancel(MPI_Request *req)
{
    if (MPI_REQUEST_NULL == *req) {
        return;
    }
    PMPI_Cancel(req);
    PMPI_Wait(req, MPI_STATUS_IGNORE);
}
