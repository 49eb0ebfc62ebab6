/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * OMNIBATCH_WAIT=sleep on one node: the gradient summed in shared memory
 * (OMNIBATCH_NODE_SUM).  MPI's nonblocking allreduce moves data only inside
 * MPI_Test, so a rank that naps between tests wakes tens of times in a
 * transfer (each wake costs 10-16 us of CPU on a virtual machine), and the
 * transfer stands still while it naps.  Where every rank of the context
 * shares one node, the ranks instead:
 *
 *  1. write their weighted gradient into their own slot of a shared window;
 *  2. arrive: a counter; the last rank to arrive combines every rank's flags
 *     and wakes the sleepers with one futex call;
 *  3. sum the slots chunk by chunk: each rank its own share of the chunks
 *     (the CPU it spends is then about the same every step), then the chunks
 *     left of the others' shares, so that a rank the kernel stopped holds
 *     up one chunk at most; whoever finishes the last chunk wakes the rest;
 *  4. copy the sum out.
 *
 * A rank that waits sleeps in the kernel until it is woken, once.  The sum
 * adds the ranks' values in rank order: the same on every rank and in
 * every run.  Phase word: +1 when the last rank arrives, +1 when the last
 * chunk is summed; a rank reads it before it arrives (it cannot move until
 * that rank has arrived) and waits for it to move.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#if defined(__linux__)
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#define OB_NODE_FUTEX 1
#else
#define OB_NODE_FUTEX 0
#endif

#include "ob_api.h"
#include "ob_error.h"
#include "ob_log.h"

/* Elements of a chunk of the sum: 16 KB of floats, so that a chunk of
 * every slot stays in the core's cache while it is added. */
#define OB_NODE_CHUNK_BYTES 16384
/* The data window grows in steps of this (bytes per slot). */
#define OB_NODE_ROUND 4096
/* The largest data window (the ranks' slots and the sum): a larger
 * gradient is reduced by MPI, which needs no copy of it per rank. */
#define OB_NODE_MAX_WINDOW ((size_t) 1 << 30)

typedef struct {
    uint32_t next;               /* the next of this rank's chunks to sum, from its first */
    int32_t in[OB_NODE_IN];      /* this rank's flags at the arrival */
    char pad[64 - sizeof(uint32_t) - OB_NODE_IN * sizeof(int32_t)];
} ob_node_rank;

typedef struct {
    uint32_t phase;              /* the futex word */
    char pad0[60];
    uint32_t arrived;            /* ranks arrived at the current call */
    char pad1[60];
    uint32_t chunks_done;        /* chunks summed */
    char pad2[60];
    int32_t out[OB_NODE_OUT];    /* the combined flags, written by the last rank in */
    char pad3[64 - (OB_NODE_OUT * sizeof(int32_t)) % 64];
    ob_node_rank rank[];
} ob_node_ctl;

struct ob_node {
    MPI_Comm comm;               /* the node's ranks: every rank of the context, same order */
    MPI_Win ctl_win;
    ob_node_ctl *ctl;
    MPI_Win data_win;            /* MPI_WIN_NULL until the first sum */
    char *data;                  /* nranks slots of cap bytes, then the sum */
    size_t cap;
    int nranks;
    int rank;
    uint32_t seen;               /* the phase read when this rank last arrived */
};

#if OB_NODE_FUTEX
static void ob_node_sleep(uint32_t *word, uint32_t seen)
{
    /* A second at most, then the word is read again (a lost wake cannot
     * keep a rank asleep). */
    struct timespec ts = { 1, 0 };

    while (__atomic_load_n(word, __ATOMIC_ACQUIRE) == seen) {
        syscall(SYS_futex, word, FUTEX_WAIT, seen, &ts, NULL, 0);
    }
}

static void ob_node_wake(uint32_t *word, uint32_t value)
{
    __atomic_store_n(word, value, __ATOMIC_RELEASE);
    syscall(SYS_futex, word, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}
#endif

/* Give the window its pages now: a shared file system too small for it
 * (a container's /dev/shm) fails here, where a first store would raise
 * SIGBUS.  Where the kernel cannot say (before Linux 5.14), yes. */
static int ob_node_populate(void *base, size_t bytes)
{
#if defined(MADV_POPULATE_WRITE)
    const long page = sysconf(_SC_PAGESIZE);
    const uintptr_t p = (uintptr_t) base, first = p / (uintptr_t) page * (uintptr_t) page;
    const uintptr_t end = (p + bytes + (uintptr_t) page - 1) / (uintptr_t) page * (uintptr_t) page;

    if (0 == bytes || page <= 0) {
        return 1;
    }
    if (0 != madvise((void *) first, end - first, MADV_POPULATE_WRITE)) {
        return EINVAL == errno;
    }
#else
    (void) base;
    (void) bytes;
#endif
    return 1;
}

int ob_node_window(MPI_Comm node, int node_rank, MPI_Comm all, size_t bytes, MPI_Win *win, void **base)
{
    MPI_Aint size = 0;
    int disp = 1;
    int ok, all_ok = 0;
    int mpi_rc;
    void *mine = NULL;

    *win = MPI_WIN_NULL;
    *base = NULL;
    mpi_rc = PMPI_Win_allocate_shared(0 == node_rank ? (MPI_Aint) bytes : 0, 1, MPI_INFO_NULL, node,
                                      &mine, win);
    ok = MPI_SUCCESS == mpi_rc;
    if (ok) {
        PMPI_Win_set_errhandler(*win, MPI_ERRORS_RETURN);
        ok = MPI_SUCCESS == PMPI_Win_shared_query(*win, 0, &size, &disp, base)
             && NULL != *base && (size_t) size >= bytes;
    }
    if (ok && 0 == node_rank) {
        ok = ob_node_populate(*base, bytes);
    }
    mpi_rc = PMPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, all);
    if (MPI_SUCCESS != mpi_rc || !all_ok) {
        /* Freed where every rank has one; else left to MPI_Finalize. */
        int have = MPI_WIN_NULL != *win, all_have = 0;

        if (MPI_SUCCESS == mpi_rc && MPI_SUCCESS == PMPI_Allreduce(&have, &all_have, 1, MPI_INT, MPI_MIN, all)
            && all_have) {
            PMPI_Win_free(win);
        }
        *win = MPI_WIN_NULL;
        *base = NULL;
        return MPI_SUCCESS == mpi_rc ? MPI_ERR_NO_MEM : mpi_rc;
    }
    /* One passive epoch for the window's life: loads and stores need no other. */
    PMPI_Win_lock_all(MPI_MODE_NOCHECK, *win);
    return MPI_SUCCESS;
}

void ob_node_window_free(MPI_Win *win)
{
    if (MPI_WIN_NULL != *win) {
        PMPI_Win_unlock_all(*win);
        PMPI_Win_free(win);
    }
}

static void ob_node_free(struct ob_node *n)
{
    if (NULL == n) {
        return;
    }
    ob_node_window_free(&n->data_win);
    ob_node_window_free(&n->ctl_win);
    if (MPI_COMM_NULL != n->comm) {
        PMPI_Comm_free(&n->comm);
    }
    free(n);
}

int ob_node_open(struct omnibatch_context *c, int want, const char **call)
{
    const size_t ctl_bytes = sizeof(ob_node_ctl) + (size_t) c->nranks * sizeof(ob_node_rank);
    struct ob_node *n = NULL;
    MPI_Comm node = MPI_COMM_NULL;
    int node_size = 0;
    int usable, all_usable = 0;
    int mpi_rc;
    void *base = NULL;

    c->node = NULL;
    mpi_rc = PMPI_Comm_split_type(c->comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    if (MPI_SUCCESS == mpi_rc) {
        PMPI_Comm_size(node, &node_size);
    }
    usable = OB_NODE_FUTEX && want && MPI_SUCCESS == mpi_rc && node_size == c->nranks && c->nranks > 1;
    if (usable) {
        n = calloc(1, sizeof *n);
        usable = NULL != n;
    }
    mpi_rc = PMPI_Allreduce(&usable, &all_usable, 1, MPI_INT, MPI_MIN, c->comm);
    *call = "MPI_Allreduce";
    if (MPI_SUCCESS != mpi_rc || !all_usable) {
        free(n);
        if (MPI_COMM_NULL != node) {
            PMPI_Comm_free(&node);
        }
        ob_log_debug(1, "rank %d: the gradient is reduced by MPI (OMNIBATCH_NODE_SUM: %s)", c->rank,
                     !want ? "off" : c->nranks < 2 ? "one rank" : "not every rank on this node, or no memory");
        return mpi_rc;
    }
    n->comm = node;
    n->ctl_win = MPI_WIN_NULL;
    n->data_win = MPI_WIN_NULL;
    n->nranks = c->nranks;
    PMPI_Comm_rank(node, &n->rank);
    mpi_rc = ob_node_window(n->comm, n->rank, c->comm, ctl_bytes, &n->ctl_win, &base);
    if (MPI_SUCCESS != mpi_rc) {
        ob_node_free(n);
        ob_log_debug(1, "rank %d: the gradient is reduced by MPI (no shared window)", c->rank);
        /* Not the context's failure: MPI's allreduce serves. */
        return MPI_SUCCESS;
    }
    n->ctl = base;
    if (0 == n->rank) {
        memset(n->ctl, 0, ctl_bytes);
    }
    /* Nobody arrives before the block is cleared. */
    mpi_rc = PMPI_Barrier(n->comm);
    *call = "MPI_Barrier";
    if (MPI_SUCCESS != mpi_rc) {
        ob_node_free(n);
        return mpi_rc;
    }
    c->node = n;
    ob_log_debug(1, "rank %d: the gradient is summed in shared memory (OMNIBATCH_NODE_SUM)", c->rank);
    return MPI_SUCCESS;
}

void ob_node_close(struct omnibatch_context *c)
{
    ob_node_free(c->node);
    c->node = NULL;
}

void ob_node_forget(struct omnibatch_context *c)
{
    free(c->node);
    c->node = NULL;
}

void *ob_node_slot(struct omnibatch_context *c, size_t bytes)
{
    const struct ob_node *n = c->node;

    return NULL != n && NULL != n->data && bytes <= n->cap ? n->data + (size_t) n->rank * n->cap : NULL;
}

void ob_node_arrive(struct omnibatch_context *c, const int32_t in[OB_NODE_IN], int32_t out[OB_NODE_OUT])
{
    struct ob_node *n = c->node;
    ob_node_ctl *ctl = n->ctl;

    n->seen = __atomic_load_n(&ctl->phase, __ATOMIC_ACQUIRE);
    memcpy(ctl->rank[n->rank].in, in, sizeof(int32_t[OB_NODE_IN]));
    if (__atomic_add_fetch(&ctl->arrived, 1, __ATOMIC_ACQ_REL) == (uint32_t) n->nranks) {
        /* The last one in: the fields' maxima, then the least element size
         * and count (which must not differ). */
        int32_t o[OB_NODE_OUT];

        memcpy(o, ctl->rank[0].in, sizeof(int32_t[OB_NODE_IN]));
        o[OB_ARRIVE_LEAST_ELEM] = o[OB_ARRIVE_ELEM];
        o[OB_ARRIVE_LEAST_COUNT] = o[OB_ARRIVE_COUNT];
        for (int r = 1; r < n->nranks; r++) {
            const int32_t *x = ctl->rank[r].in;

            for (int k = 0; k < OB_NODE_IN; k++) {
                o[k] = x[k] > o[k] ? x[k] : o[k];
            }
            o[OB_ARRIVE_LEAST_ELEM] = x[OB_ARRIVE_ELEM] < o[OB_ARRIVE_LEAST_ELEM] ? x[OB_ARRIVE_ELEM]
                                                                                 : o[OB_ARRIVE_LEAST_ELEM];
            o[OB_ARRIVE_LEAST_COUNT] = x[OB_ARRIVE_COUNT] < o[OB_ARRIVE_LEAST_COUNT] ? x[OB_ARRIVE_COUNT]
                                                                                    : o[OB_ARRIVE_LEAST_COUNT];
        }
        memcpy(ctl->out, o, sizeof o);
        ctl->arrived = 0;
        ctl->chunks_done = 0;
        for (int r = 0; r < n->nranks; r++) {
            ctl->rank[r].next = 0;
        }
#if OB_NODE_FUTEX
        ob_node_wake(&ctl->phase, n->seen + 1);
#endif
    } else {
#if OB_NODE_FUTEX
        ob_node_sleep(&ctl->phase, n->seen);
#endif
    }
    memcpy(out, ctl->out, sizeof(int32_t[OB_NODE_OUT]));
}

int ob_node_reserve(struct omnibatch_context *c, size_t bytes)
{
    struct ob_node *n = c->node;
    size_t cap = (bytes + OB_NODE_ROUND - 1) / OB_NODE_ROUND * OB_NODE_ROUND;
    void *base = NULL;
    int mpi_rc;

    if (bytes <= n->cap && NULL != n->data) {
        return MPI_SUCCESS;
    }
    /* Every rank is in this call (it follows the arrival), past the last
     * sum's reads: the old window can go. */
    ob_node_window_free(&n->data_win);
    n->data = NULL;
    n->cap = 0;
    if (cap > OB_NODE_MAX_WINDOW / ((size_t) n->nranks + 1)) {
        return MPI_ERR_NO_MEM;
    }
    mpi_rc = ob_node_window(n->comm, n->rank, c->comm, cap * ((size_t) n->nranks + 1), &n->data_win, &base);
    if (MPI_SUCCESS == mpi_rc) {
        n->data = base;
        n->cap = cap;
    }
    return mpi_rc;
}

static void ob_node_add(const struct ob_node *n, char *sum, size_t off, size_t len, MPI_Datatype type)
{
    const char *slot0 = n->data + off;

    if (MPI_FLOAT == type) {
        float *s = (float *) (void *) (sum + off);
        const size_t k = len / sizeof(float);

        memcpy(s, slot0, len);
        for (int r = 1; r < n->nranks; r++) {
            const float *x = (const float *) (const void *) (n->data + (size_t) r * n->cap + off);

            for (size_t j = 0; j < k; j++) {
                s[j] += x[j];
            }
        }
    } else {
        double *s = (double *) (void *) (sum + off);
        const size_t k = len / sizeof(double);

        memcpy(s, slot0, len);
        for (int r = 1; r < n->nranks; r++) {
            const double *x = (const double *) (const void *) (n->data + (size_t) r * n->cap + off);

            for (size_t j = 0; j < k; j++) {
                s[j] += x[j];
            }
        }
    }
}

void ob_node_sum(struct omnibatch_context *c, void *recvbuf, int count, MPI_Datatype type, size_t elem)
{
    struct ob_node *n = c->node;
    ob_node_ctl *ctl = n->ctl;
    char *sum = n->data + (size_t) n->nranks * n->cap;
    const size_t bytes = (size_t) count * elem;
    const uint32_t chunks = (uint32_t) ((bytes + OB_NODE_CHUNK_BYTES - 1) / OB_NODE_CHUNK_BYTES);

    if (0 == chunks) {
        return;
    }
    /* Each rank's own share of the chunks first, then what is left of the
     * others' (a rank the kernel stopped before its share is done). */
    for (int k = 0; k < n->nranks; k++) {
        const int r = (n->rank + k) % n->nranks;
        const uint32_t first = (uint32_t) ((uint64_t) chunks * (uint64_t) r / (uint64_t) n->nranks);
        const uint32_t end = (uint32_t) ((uint64_t) chunks * (uint64_t) (r + 1) / (uint64_t) n->nranks);

        for (;;) {
            const uint32_t i = first + __atomic_fetch_add(&ctl->rank[r].next, 1, __ATOMIC_RELAXED);
            const size_t off = (size_t) i * OB_NODE_CHUNK_BYTES;

            if (i >= end) {
                break;
            }
            ob_node_add(n, sum, off, bytes - off < OB_NODE_CHUNK_BYTES ? bytes - off : OB_NODE_CHUNK_BYTES,
                        type);
            if (__atomic_add_fetch(&ctl->chunks_done, 1, __ATOMIC_ACQ_REL) == chunks) {
#if OB_NODE_FUTEX
                ob_node_wake(&ctl->phase, n->seen + 2);
#endif
            }
        }
    }
#if OB_NODE_FUTEX
    ob_node_sleep(&ctl->phase, n->seen + 1);
#endif
    memcpy(recvbuf, sum, bytes);
}
