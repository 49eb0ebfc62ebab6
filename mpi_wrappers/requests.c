/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * The table of recognised non-blocking allreduces in flight, so that the
 * Wait/Test wrappers time only the requests the layer started.
 *
 * Lookups take no lock: a slot's request handle is published with an
 * atomic store after the call that created it returned, and a lookup scans
 * the slots up to the highest ever used (a handful in practice: one per
 * gradient bucket in flight).  When nothing is in flight -- the usual case
 * for a code that does not use MPI_Iallreduce for its gradients -- a Wait
 * or Test costs one atomic load.  Reserving and releasing take the lock.
 * Each slot owns a scratch buffer (grown, never shrunk) that holds the
 * weighted send data until the request completes.
 */
#include "config.h"

#include <pthread.h>
#include <stdlib.h>

#include "ob_log.h"
#include "ob_requests.h"

typedef struct ob_req_slot {
    MPI_Request req;             /* published handle; MPI_REQUEST_NULL when not findable */
    int busy;                    /* reserved or published */
    uint64_t comm;
    void *scratch;
    size_t cap;
} ob_req_slot;

static ob_req_slot ob_req_slots[OB_REQ_SLOTS];
static int ob_req_high;          /* slots [0, high) may be busy */
static pthread_mutex_t ob_req_lock = PTHREAD_MUTEX_INITIALIZER;
int ob_req_outstanding;

void ob_req_init(void)
{
    pthread_mutex_lock(&ob_req_lock);
    for (int s = 0; s < OB_REQ_SLOTS; s++) {
        ob_req_slots[s].req = MPI_REQUEST_NULL;
        ob_req_slots[s].busy = 0;
    }
    ob_req_high = 0;
    __atomic_store_n(&ob_req_outstanding, 0, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&ob_req_lock);
}

int ob_req_reserve(void ***scratch, size_t **cap)
{
    int slot = -1;

    pthread_mutex_lock(&ob_req_lock);
    for (int s = 0; s < OB_REQ_SLOTS; s++) {
        if (!ob_req_slots[s].busy) {
            slot = s;
            break;
        }
    }
    if (slot >= 0) {
        ob_req_slot *r = &ob_req_slots[slot];

        r->busy = 1;
        if (slot >= ob_req_high) {
            __atomic_store_n(&ob_req_high, slot + 1, __ATOMIC_RELEASE);
        }
        /* The slot is this thread's until it is published: its scratch
         * may grow without the lock. */
        *scratch = &r->scratch;
        *cap = &r->cap;
        __atomic_add_fetch(&ob_req_outstanding, 1, __ATOMIC_ACQ_REL);
    }
    pthread_mutex_unlock(&ob_req_lock);
    return slot;
}

void ob_req_publish(int slot, MPI_Request req, MPI_Comm comm)
{
    ob_req_slots[slot].comm = (uint64_t) (uintptr_t) comm;
    __atomic_store_n(&ob_req_slots[slot].req, req, __ATOMIC_RELEASE);
}

static void ob_req_release_locked(int slot)
{
    ob_req_slot *r = &ob_req_slots[slot];

    if (!r->busy) {
        return;
    }
    __atomic_store_n(&r->req, MPI_REQUEST_NULL, __ATOMIC_RELEASE);
    r->busy = 0;
    __atomic_sub_fetch(&ob_req_outstanding, 1, __ATOMIC_ACQ_REL);
}

void ob_req_cancel(int slot)
{
    pthread_mutex_lock(&ob_req_lock);
    ob_req_release_locked(slot);
    pthread_mutex_unlock(&ob_req_lock);
}

int ob_req_find(MPI_Request req)
{
    int high;

    if (MPI_REQUEST_NULL == req) {
        return -1;
    }
    high = __atomic_load_n(&ob_req_high, __ATOMIC_ACQUIRE);
    for (int s = 0; s < high; s++) {
        if (__atomic_load_n(&ob_req_slots[s].req, __ATOMIC_ACQUIRE) == req) {
            return s;
        }
    }
    return -1;
}

int ob_req_match(const MPI_Request *reqs, int n, int *small_pos, int *small_slot, int small,
                 int **pos, int **slot)
{
    int found = 0;

    *pos = small_pos;
    *slot = small_slot;
    for (int i = 0; i < n; i++) {
        int s = ob_req_find(reqs[i]);

        if (s < 0) {
            continue;
        }
        if (found == small && *pos == small_pos) {
            /* More recognised requests in one call than the caller's
             * stack holds: at most n, so n entries do. */
            int *p = malloc((size_t) n * sizeof *p);
            int *q = malloc((size_t) n * sizeof *q);

            if (NULL == p || NULL == q) {
                free(p);
                free(q);
                ob_log_warn("no memory to follow %d requests; some are not timed", n);
                return found;
            }
            for (int k = 0; k < found; k++) {
                p[k] = small_pos[k];
                q[k] = small_slot[k];
            }
            *pos = p;
            *slot = q;
        }
        (*pos)[found] = i;
        (*slot)[found] = s;
        found++;
    }
    return found;
}

void ob_req_matches_free(int *pos, int *slot, const int *small_pos)
{
    if (pos != small_pos) {
        free(pos);
        free(slot);
    }
}

uint64_t ob_req_settle(int first, const int *done, int ndone)
{
    uint64_t comm = ob_req_slots[first].comm;

    pthread_mutex_lock(&ob_req_lock);
    for (int k = 0; k < ndone; k++) {
        ob_req_release_locked(done[k]);
    }
    pthread_mutex_unlock(&ob_req_lock);
    return comm;
}

void ob_req_cleanup(void)
{
    pthread_mutex_lock(&ob_req_lock);
    for (int s = 0; s < OB_REQ_SLOTS; s++) {
        ob_req_release_locked(s);
        free(ob_req_slots[s].scratch);
        ob_req_slots[s].scratch = NULL;
        ob_req_slots[s].cap = 0;
    }
    ob_req_high = 0;
    pthread_mutex_unlock(&ob_req_lock);
}
