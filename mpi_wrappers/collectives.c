/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * MPI_Allreduce and MPI_Iallreduce.  An unrecognised call costs the handle
 * compares of ob_gradient_elem() and goes straight to PMPI; a recognised
 * gradient allreduce is (optionally) weighted, timed, and recorded.
 */
#include "config.h"

#include "ob_layer.h"
#include "ob_requests.h"
#include "ob_log.h"

static int ob_allreduce_gradient(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type,
                                 MPI_Op op, MPI_Comm comm, int elem) __attribute__((noinline));
static int ob_iallreduce_gradient(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type,
                                  MPI_Op op, MPI_Comm comm, MPI_Request *request, int elem)
    __attribute__((noinline));

static int ob_iallreduce_warned;

static int ob_allreduce_gradient(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type,
                                 MPI_Op op, MPI_Comm comm, int elem)
{
    const void *send = sendbuf;
    void **scratch;
    size_t *cap;
    long batch = -1;
    double t0, t1;
    int rc;

    ob_in_layer = 1;
    ob_weight_thread_scratch(&scratch, &cap);
    /* The call is entered now: the step boundary the weighting decision
     * sees is the one the recorder sees. */
    t0 = ob_layer_clock();
    ob_weight_prepare(&send, recvbuf, count, elem, comm, t0, scratch, cap, &batch);
    rc = PMPI_Allreduce(send, recvbuf, count, type, op, comm);
    t1 = ob_layer_clock();
    ob_layer_record_call(comm, count, elem, t0, t1, batch);
    ob_in_layer = 0;
    return rc;
}

int ob_allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
                 MPI_Comm comm)
{
    int elem = ob_gradient_elem(type, op, count);

    if (OB_LIKELY(0 == elem)) {
        return PMPI_Allreduce(sendbuf, recvbuf, count, type, op, comm);
    }
    return ob_allreduce_gradient(sendbuf, recvbuf, count, type, op, comm, elem);
}

static int ob_iallreduce_gradient(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type,
                                  MPI_Op op, MPI_Comm comm, MPI_Request *request, int elem)
{
    const void *send = sendbuf;
    void **scratch;
    size_t *cap;
    long batch = -1;
    double t0, t1;
    int slot, rc;

    ob_in_layer = 1;
    slot = ob_req_reserve(&scratch, &cap);
    if (slot < 0) {
        if (!__atomic_exchange_n(&ob_iallreduce_warned, 1, __ATOMIC_RELAXED)) {
            ob_log_warn("more than %d gradient MPI_Iallreduce in flight: the others are neither "
                        "timed nor weighted", OB_REQ_SLOTS);
        }
        rc = PMPI_Iallreduce(sendbuf, recvbuf, count, type, op, comm, request);
        ob_in_layer = 0;
        return rc;
    }
    /* The slot's scratch outlives this call: the send data must stay until
     * the request completes. */
    t0 = ob_layer_clock();
    ob_weight_prepare(&send, recvbuf, count, elem, comm, t0, scratch, cap, &batch);
    rc = PMPI_Iallreduce(send, recvbuf, count, type, op, comm, request);
    t1 = ob_layer_clock();
    if (MPI_SUCCESS == rc) {
        ob_req_publish(slot, *request, comm);
    } else {
        ob_req_cancel(slot);
    }
    ob_layer_record_call(comm, count, elem, t0, t1, batch);
    ob_in_layer = 0;
    return rc;
}

int ob_iallreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
                  MPI_Comm comm, MPI_Request *request)
{
    int elem = ob_gradient_elem(type, op, count);

    if (OB_LIKELY(0 == elem)) {
        return PMPI_Iallreduce(sendbuf, recvbuf, count, type, op, comm, request);
    }
    return ob_iallreduce_gradient(sendbuf, recvbuf, count, type, op, comm, request, elem);
}

/* The MPI_* wrappers of this unit (wrappers.spec). */
#include "collectives.inc"
