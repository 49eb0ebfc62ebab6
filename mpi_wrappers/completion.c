/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * The Wait/Test family.  The layer times only the requests it started
 * (recognised gradient MPI_Iallreduce); for any other request the cost is
 * one atomic load when none of its own is in flight, a short scan when some
 * are.  Time spent in a Wait or Test call on its requests is blocked time,
 * whether or not the call completes them.  A request leaves the table when
 * MPI frees it: when the call hands its handle back as MPI_REQUEST_NULL (a
 * nonblocking collective is never persistent, and MPI_Request_free and
 * MPI_Cancel are erroneous on one).  What the call returns does not say:
 * a call that fails with MPI_ERR_IN_STATUS may leave requests pending
 * (MPI_ERR_PENDING; Open MPI's MPI_Waitall returns as soon as one request
 * fails), and a weighted request sends from its slot's scratch until it
 * completes; an MPI_Testall that fails so has completed and freed them all.
 */
#include "config.h"

#include "ob_layer.h"
#include "ob_requests.h"

/* Recognised requests one array call can follow without allocating. */
#define OB_MATCH_STACK 32

/* Move the slots whose requests MPI freed (handed back as MPI_REQUEST_NULL)
 * to the front of slot[] (pos[] alike); return how many. */
static int ob_freed(int *pos, int *slot, int n, const MPI_Request *reqs)
{
    int done = 0;

    for (int k = 0; k < n; k++) {
        if (MPI_REQUEST_NULL == reqs[pos[k]]) {
            int p = pos[done], s = slot[done];

            pos[done] = pos[k];
            slot[done] = slot[k];
            pos[k] = p;
            slot[k] = s;
            done++;
        }
    }
    return done;
}

int ob_wait(MPI_Request *request, MPI_Status *status)
{
    int slot, rc;
    double t0, t1;

    if (OB_LIKELY(!ob_req_any()) || (slot = ob_req_find(*request)) < 0) {
        return PMPI_Wait(request, status);
    }
    t0 = ob_layer_clock();
    rc = PMPI_Wait(request, status);
    t1 = ob_layer_clock();
    ob_layer_record_wait(ob_req_settle(slot, &slot, MPI_REQUEST_NULL == *request), t0, t1);
    return rc;
}

int ob_test(MPI_Request *request, int *flag, MPI_Status *status)
{
    int slot, rc;
    double t0, t1;

    if (OB_LIKELY(!ob_req_any()) || (slot = ob_req_find(*request)) < 0) {
        return PMPI_Test(request, flag, status);
    }
    t0 = ob_layer_clock();
    rc = PMPI_Test(request, flag, status);
    t1 = ob_layer_clock();
    ob_layer_record_wait(ob_req_settle(slot, &slot, MPI_REQUEST_NULL == *request), t0, t1);
    return rc;
}

/* The array members of the family, for the shared slow path. */
typedef enum ob_array_call {
    OB_WAITALL, OB_TESTALL, OB_WAITANY, OB_TESTANY, OB_WAITSOME, OB_TESTSOME
} ob_array_call;

/* The one PMPI call of an array member; `out` is the index (any) or the
 * outcount (some). */
static int ob_array_pmpi(ob_array_call call, int n, MPI_Request *reqs, int *out, int *flag,
                         int *indices, MPI_Status *statuses)
{
    switch (call) {
    case OB_WAITALL:
        return PMPI_Waitall(n, reqs, statuses);
    case OB_TESTALL:
        return PMPI_Testall(n, reqs, flag, statuses);
    case OB_WAITANY:
        return PMPI_Waitany(n, reqs, out, statuses);
    case OB_TESTANY:
        return PMPI_Testany(n, reqs, out, flag, statuses);
    case OB_WAITSOME:
        return PMPI_Waitsome(n, reqs, out, indices, statuses);
    case OB_TESTSOME:
    default:
        return PMPI_Testsome(n, reqs, out, indices, statuses);
    }
}

/* An array member with recognised requests possibly in flight: find ours,
 * time the call if there are any, release those MPI freed. */
static int ob_array_timed(ob_array_call call, int n, MPI_Request *reqs, int *out, int *flag,
                          int *indices, MPI_Status *statuses)
{
    int spos[OB_MATCH_STACK], sslot[OB_MATCH_STACK];
    int *pos, *slot, found, rc, done;
    double t0, t1;

    found = ob_req_match(reqs, n, spos, sslot, OB_MATCH_STACK, &pos, &slot);
    if (0 == found) {
        ob_req_matches_free(pos, slot, spos);
        return ob_array_pmpi(call, n, reqs, out, flag, indices, statuses);
    }
    t0 = ob_layer_clock();
    rc = ob_array_pmpi(call, n, reqs, out, flag, indices, statuses);
    t1 = ob_layer_clock();
    done = ob_freed(pos, slot, found, reqs);
    ob_layer_record_wait(ob_req_settle(slot[0], slot, done), t0, t1);
    ob_req_matches_free(pos, slot, spos);
    return rc;
}

int ob_waitall(int count, MPI_Request requests[], MPI_Status statuses[])
{
    if (OB_LIKELY(!ob_req_any()) || count <= 0) {
        return PMPI_Waitall(count, requests, statuses);
    }
    return ob_array_timed(OB_WAITALL, count, requests, NULL, NULL, NULL, statuses);
}

int ob_testall(int count, MPI_Request requests[], int *flag, MPI_Status statuses[])
{
    if (OB_LIKELY(!ob_req_any()) || count <= 0) {
        return PMPI_Testall(count, requests, flag, statuses);
    }
    return ob_array_timed(OB_TESTALL, count, requests, NULL, flag, NULL, statuses);
}

int ob_waitany(int count, MPI_Request requests[], int *index, MPI_Status *status)
{
    if (OB_LIKELY(!ob_req_any()) || count <= 0) {
        return PMPI_Waitany(count, requests, index, status);
    }
    return ob_array_timed(OB_WAITANY, count, requests, index, NULL, NULL, status);
}

int ob_testany(int count, MPI_Request requests[], int *index, int *flag, MPI_Status *status)
{
    if (OB_LIKELY(!ob_req_any()) || count <= 0) {
        return PMPI_Testany(count, requests, index, flag, status);
    }
    return ob_array_timed(OB_TESTANY, count, requests, index, flag, NULL, status);
}

int ob_waitsome(int incount, MPI_Request requests[], int *outcount, int indices[],
                MPI_Status statuses[])
{
    if (OB_LIKELY(!ob_req_any()) || incount <= 0) {
        return PMPI_Waitsome(incount, requests, outcount, indices, statuses);
    }
    return ob_array_timed(OB_WAITSOME, incount, requests, outcount, NULL, indices, statuses);
}

int ob_testsome(int incount, MPI_Request requests[], int *outcount, int indices[],
                MPI_Status statuses[])
{
    if (OB_LIKELY(!ob_req_any()) || incount <= 0) {
        return PMPI_Testsome(incount, requests, outcount, indices, statuses);
    }
    return ob_array_timed(OB_TESTSOME, incount, requests, outcount, NULL, indices, statuses);
}

/* The MPI_* wrappers of this unit (wrappers.spec). */
#include "completion.inc"
