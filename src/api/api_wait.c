/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * The explicit API's waits asleep (OMNIBATCH_WAIT=sleep): a nonblocking
 * collective tested between naps, so that a rank under a CPU quota does not
 * spend in polling what its compute needs.  The lowest file of the API: the
 * gradient, the exchange and the distributed decision all wait here.
 */
#include "config.h"

#include <time.h>

#include "ob_api.h"
#include "ob_nap.h"
#include "ob_timing.h"

/* OMNIBATCH_WAIT=sleep (ob_api.h). */
int ob_api_wait_asleep(MPI_Request *req, double expected, double short_s)
{
    const uint64_t begin = ob_now_ns();
    int done = 0;
    int mpi_rc = MPI_SUCCESS;

    while (MPI_SUCCESS == mpi_rc) {
        double elapsed, nap;
        struct timespec ts;

        mpi_rc = PMPI_Test(req, &done, MPI_STATUS_IGNORE);
        if (MPI_SUCCESS != mpi_rc || done) {
            break;
        }
        elapsed = (double) (ob_now_ns() - begin) * 1e-9;
        nap = expected < 0.0 ? ob_nap_transfer(elapsed, short_s) : ob_nap_waiting(elapsed, expected);
        ts.tv_sec = (time_t) nap;
        ts.tv_nsec = (long) ((nap - (double) ts.tv_sec) * 1e9);
        nanosleep(&ts, NULL);
    }
    return mpi_rc;
}

int ob_api_allreduce_asleep(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
                            MPI_Comm comm, double expected, double short_s)
{
    MPI_Request req = MPI_REQUEST_NULL;
    int mpi_rc = PMPI_Iallreduce(sendbuf, recvbuf, count, type, op, comm, &req);

    return MPI_SUCCESS == mpi_rc ? ob_api_wait_asleep(&req, expected, short_s) : mpi_rc;
}
