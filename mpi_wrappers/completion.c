/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * The Wait/Test family.  The layer times only the requests it started
 * (recognised gradient MPI_Iallreduce); for any other request the cost is
 * one atomic load when none of its own is in flight, a short scan when some
 * are.  Time spent in a Wait or Test call on its requests is blocked time,
 * whether or not the call completes them; a request leaves the table when
 * a call completes it.
 */
#include "config.h"

#include "ob_layer.h"

/* Recognised requests one array call can follow without allocating. */
#define OB_MATCH_STACK 32

/* Move the slots whose positions appear in indices[0..nidx) to the front
 * of slot[] (pos[] alike); return how many. */
static int ob_completed(int *pos, int *slot, int n, const int *indices, int nidx)
{
    int done = 0;

    for (int k = 0; k < n; k++) {
        int hit = 0;

        for (int i = 0; i < nidx && !hit; i++) {
            hit = indices[i] == pos[k];
        }
        if (hit) {
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
    double t0;

    if (OB_LIKELY(!ob_req_any()) || (slot = ob_req_find(*request)) < 0) {
        return PMPI_Wait(request, status);
    }
    t0 = ob_layer_clock();
    rc = PMPI_Wait(request, status);
    ob_req_settle(slot, &slot, 1, t0, ob_layer_clock());
    return rc;
}

int ob_test(MPI_Request *request, int *flag, MPI_Status *status)
{
    int slot, rc;
    double t0;

    if (OB_LIKELY(!ob_req_any()) || (slot = ob_req_find(*request)) < 0) {
        return PMPI_Test(request, flag, status);
    }
    t0 = ob_layer_clock();
    rc = PMPI_Test(request, flag, status);
    ob_req_settle(slot, &slot, MPI_SUCCESS == rc && *flag ? 1 : 0, t0, ob_layer_clock());
    return rc;
}

int ob_waitall(int count, MPI_Request requests[], MPI_Status statuses[])
{
    int spos[OB_MATCH_STACK], sslot[OB_MATCH_STACK];
    int *pos, *slot, n, rc;
    double t0;

    if (OB_LIKELY(!ob_req_any()) || count <= 0) {
        return PMPI_Waitall(count, requests, statuses);
    }
    n = ob_req_match(requests, count, spos, sslot, OB_MATCH_STACK, &pos, &slot);
    if (0 == n) {
        ob_req_matches_free(pos, slot, spos);
        return PMPI_Waitall(count, requests, statuses);
    }
    t0 = ob_layer_clock();
    rc = PMPI_Waitall(count, requests, statuses);
    ob_req_settle(slot[0], slot, n, t0, ob_layer_clock());
    ob_req_matches_free(pos, slot, spos);
    return rc;
}

int ob_testall(int count, MPI_Request requests[], int *flag, MPI_Status statuses[])
{
    int spos[OB_MATCH_STACK], sslot[OB_MATCH_STACK];
    int *pos, *slot, n, rc;
    double t0;

    if (OB_LIKELY(!ob_req_any()) || count <= 0) {
        return PMPI_Testall(count, requests, flag, statuses);
    }
    n = ob_req_match(requests, count, spos, sslot, OB_MATCH_STACK, &pos, &slot);
    if (0 == n) {
        ob_req_matches_free(pos, slot, spos);
        return PMPI_Testall(count, requests, flag, statuses);
    }
    t0 = ob_layer_clock();
    rc = PMPI_Testall(count, requests, flag, statuses);
    ob_req_settle(slot[0], slot, MPI_SUCCESS == rc && *flag ? n : 0, t0, ob_layer_clock());
    ob_req_matches_free(pos, slot, spos);
    return rc;
}

int ob_waitany(int count, MPI_Request requests[], int *index, MPI_Status *status)
{
    int spos[OB_MATCH_STACK], sslot[OB_MATCH_STACK];
    int *pos, *slot, n, rc, done = 0;
    double t0;

    if (OB_LIKELY(!ob_req_any()) || count <= 0) {
        return PMPI_Waitany(count, requests, index, status);
    }
    n = ob_req_match(requests, count, spos, sslot, OB_MATCH_STACK, &pos, &slot);
    if (0 == n) {
        ob_req_matches_free(pos, slot, spos);
        return PMPI_Waitany(count, requests, index, status);
    }
    t0 = ob_layer_clock();
    rc = PMPI_Waitany(count, requests, index, status);
    if (MPI_UNDEFINED != *index) {
        done = ob_completed(pos, slot, n, index, 1);
    }
    ob_req_settle(slot[0], slot, done, t0, ob_layer_clock());
    ob_req_matches_free(pos, slot, spos);
    return rc;
}

int ob_testany(int count, MPI_Request requests[], int *index, int *flag, MPI_Status *status)
{
    int spos[OB_MATCH_STACK], sslot[OB_MATCH_STACK];
    int *pos, *slot, n, rc, done = 0;
    double t0;

    if (OB_LIKELY(!ob_req_any()) || count <= 0) {
        return PMPI_Testany(count, requests, index, flag, status);
    }
    n = ob_req_match(requests, count, spos, sslot, OB_MATCH_STACK, &pos, &slot);
    if (0 == n) {
        ob_req_matches_free(pos, slot, spos);
        return PMPI_Testany(count, requests, index, flag, status);
    }
    t0 = ob_layer_clock();
    rc = PMPI_Testany(count, requests, index, flag, status);
    if (MPI_SUCCESS == rc && *flag && MPI_UNDEFINED != *index) {
        done = ob_completed(pos, slot, n, index, 1);
    }
    ob_req_settle(slot[0], slot, done, t0, ob_layer_clock());
    ob_req_matches_free(pos, slot, spos);
    return rc;
}

int ob_waitsome(int incount, MPI_Request requests[], int *outcount, int indices[],
                MPI_Status statuses[])
{
    int spos[OB_MATCH_STACK], sslot[OB_MATCH_STACK];
    int *pos, *slot, n, rc, done = 0;
    double t0;

    if (OB_LIKELY(!ob_req_any()) || incount <= 0) {
        return PMPI_Waitsome(incount, requests, outcount, indices, statuses);
    }
    n = ob_req_match(requests, incount, spos, sslot, OB_MATCH_STACK, &pos, &slot);
    if (0 == n) {
        ob_req_matches_free(pos, slot, spos);
        return PMPI_Waitsome(incount, requests, outcount, indices, statuses);
    }
    t0 = ob_layer_clock();
    rc = PMPI_Waitsome(incount, requests, outcount, indices, statuses);
    if (MPI_UNDEFINED != *outcount) {
        done = ob_completed(pos, slot, n, indices, *outcount);
    }
    ob_req_settle(slot[0], slot, done, t0, ob_layer_clock());
    ob_req_matches_free(pos, slot, spos);
    return rc;
}

int ob_testsome(int incount, MPI_Request requests[], int *outcount, int indices[],
                MPI_Status statuses[])
{
    int spos[OB_MATCH_STACK], sslot[OB_MATCH_STACK];
    int *pos, *slot, n, rc, done = 0;
    double t0;

    if (OB_LIKELY(!ob_req_any()) || incount <= 0) {
        return PMPI_Testsome(incount, requests, outcount, indices, statuses);
    }
    n = ob_req_match(requests, incount, spos, sslot, OB_MATCH_STACK, &pos, &slot);
    if (0 == n) {
        ob_req_matches_free(pos, slot, spos);
        return PMPI_Testsome(incount, requests, outcount, indices, statuses);
    }
    t0 = ob_layer_clock();
    rc = PMPI_Testsome(incount, requests, outcount, indices, statuses);
    if (MPI_UNDEFINED != *outcount) {
        done = ob_completed(pos, slot, n, indices, *outcount);
    }
    ob_req_settle(slot[0], slot, done, t0, ob_layer_clock());
    ob_req_matches_free(pos, slot, spos);
    return rc;
}

OB_WRAPPER int MPI_Wait(MPI_Request *request, MPI_Status *status)
{
    return ob_wait(request, status);
}

OB_WRAPPER int MPI_Test(MPI_Request *request, int *flag, MPI_Status *status)
{
    return ob_test(request, flag, status);
}

OB_WRAPPER int MPI_Waitall(int count, MPI_Request requests[], MPI_Status statuses[])
{
    return ob_waitall(count, requests, statuses);
}

OB_WRAPPER int MPI_Testall(int count, MPI_Request requests[], int *flag, MPI_Status statuses[])
{
    return ob_testall(count, requests, flag, statuses);
}

OB_WRAPPER int MPI_Waitany(int count, MPI_Request requests[], int *index, MPI_Status *status)
{
    return ob_waitany(count, requests, index, status);
}

OB_WRAPPER int MPI_Testany(int count, MPI_Request requests[], int *index, int *flag,
                           MPI_Status *status)
{
    return ob_testany(count, requests, index, flag, status);
}

OB_WRAPPER int MPI_Waitsome(int incount, MPI_Request requests[], int *outcount, int indices[],
                            MPI_Status statuses[])
{
    return ob_waitsome(incount, requests, outcount, indices, statuses);
}

OB_WRAPPER int MPI_Testsome(int incount, MPI_Request requests[], int *outcount, int indices[],
                            MPI_Status statuses[])
{
    return ob_testsome(incount, requests, outcount, indices, statuses);
}
