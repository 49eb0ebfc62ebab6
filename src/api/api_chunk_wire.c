/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * Work that moves inside a step, across nodes (ob_api_chunk.h).  Passive
 * one-sided atomics would let a thief change a remote word without its
 * owner, but they do not progress where the target does not call MPI (Open
 * MPI 4.1 over TCP falls back to osc/pt2pt, which needs the target to call
 * MPI: ompi #7823, #8112, #13128; MPICH ch4's passive progress likewise,
 * pmodels/mpich#5565), and a rank inside a chunk does not.  So a thief with
 * nothing left on its node sends a request to a rank of another node, one
 * of its helpers (the next nodes in order, at most OB_WIRE_HELPERS of
 * them); any rank of that node that calls the library (between its chunks,
 * or once done, while it closes the step) answers it by taking, for the
 * thief, a share of the tail of its node's rank most behind (the words'
 * compare-and-swap, api_chunk_words.c), and replies with the range, which
 * the thief then holds in its own word.  The take is the proposal; the
 * reply confirms it: no position is handed out twice.
 *
 * The step closes with a nonblocking barrier: a rank enters it once it has
 * nothing more to take (its requests all answered) and answers requests
 * until every rank has entered it.  A request is sent only by a rank that
 * has not entered the barrier, and it waits for the reply first, so when
 * the barrier completes every request has been answered and none is in
 * flight: the next step starts clean.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ob_api_chunk.h"
#include "ob_timing.h"

/* Other nodes a rank asks in a step, at most (its helpers). */
#define OB_WIRE_HELPERS 4
/* Tags on the wire's communicator. */
#define OB_WIRE_TAG_ASK 1
#define OB_WIRE_TAG_REPLY 2
/* Asleep, the nap between two looks at the wire, nanoseconds. */
#define OB_WIRE_NAP_NS 20000L

/* A request: the thief's step, rate, plan and whether its quota bounds the rate. */
typedef struct ob_wire_ask {
    uint64_t seq;
    double rate;
    int64_t plan;
    int64_t quota_bound;
} ob_wire_ask;

/* A reply: the range taken for the thief (count 0: none), and from whom. */
typedef struct ob_wire_reply {
    uint64_t seq;
    int64_t start;
    int64_t count;
    int64_t from;
} ob_wire_reply;

static void ob_wire_nap(const struct ob_chunks *k)
{
    if (k->asleep) {
        struct timespec ts = { 0, OB_WIRE_NAP_NS };

        nanosleep(&ts, NULL);
    }
}

/* Group the context's ranks by node, from every rank's node leader (its
 * node's lowest rank): nodes in the order of their leaders, each node's
 * ranks in rank order.  O(P). */
static int ob_wire_map(ob_chunk_wire *w, const int *leader, int nranks, int me)
{
    int *node_of_leader = malloc((size_t) nranks * sizeof *node_of_leader);
    int n = 0;

    w->node_first = calloc((size_t) nranks + 1, sizeof *w->node_first);
    w->node_ranks = malloc((size_t) nranks * sizeof *w->node_ranks);
    w->asked = calloc((size_t) nranks, sizeof *w->asked);
    if (NULL == node_of_leader || NULL == w->node_first || NULL == w->node_ranks || NULL == w->asked) {
        free(node_of_leader);
        return MPI_ERR_NO_MEM;
    }
    for (int r = 0; r < nranks; r++) {
        node_of_leader[r] = leader[r] == r ? n++ : -1;
    }
    w->nnodes = n;
    /* Counts per node, then their starts, then each rank in its place. */
    for (int r = 0; r < nranks; r++) {
        w->node_first[node_of_leader[leader[r]] + 1]++;
    }
    for (int i = 0; i < n; i++) {
        w->node_first[i + 1] += w->node_first[i];
    }
    for (int r = 0; r < nranks; r++) {
        const int node = node_of_leader[leader[r]];

        w->node_ranks[w->node_first[node] + w->asked[node]++] = r;
        w->mynode = r == me ? node : w->mynode;
    }
    memset(w->asked, 0, (size_t) nranks * sizeof *w->asked);
    free(node_of_leader);
    return MPI_SUCCESS;
}

int ob_wire_open(struct ob_chunks *k, MPI_Comm comm, int nranks)
{
    ob_chunk_wire *w = &k->wire;
    int *leader;
    int mpi_rc;

    memset(w, 0, sizeof *w);
    w->comm = MPI_COMM_NULL;
    w->barrier = MPI_REQUEST_NULL;
    w->nnodes = 1;
    leader = malloc((size_t) nranks * sizeof *leader);
    if (NULL == leader) {
        return MPI_ERR_NO_MEM;
    }
    mpi_rc = PMPI_Allgather(&k->rank_of[0], 1, MPI_INT, leader, 1, MPI_INT, comm);
    if (MPI_SUCCESS == mpi_rc) {
        mpi_rc = ob_wire_map(w, leader, nranks, k->rank);
    }
    free(leader);
    if (MPI_SUCCESS == mpi_rc && w->nnodes > 1) {
        mpi_rc = PMPI_Comm_dup(comm, &w->comm);
    }
    w->helpers = w->nnodes - 1 < OB_WIRE_HELPERS ? w->nnodes - 1 : OB_WIRE_HELPERS;
    return mpi_rc;
}

void ob_wire_free(struct ob_chunks *k)
{
    ob_chunk_wire *w = &k->wire;

    if (MPI_COMM_NULL != w->comm) {
        PMPI_Comm_free(&w->comm);
    }
    free(w->node_first);
    free(w->node_ranks);
    free(w->asked);
    memset(w, 0, sizeof *w);
    w->comm = MPI_COMM_NULL;
    w->nnodes = 1;
}

void ob_wire_begin(struct ob_chunks *k)
{
    ob_chunk_wire *w = &k->wire;

    if (w->nnodes > 1) {
        memset(w->asked, 0, (size_t) w->nnodes * sizeof *w->asked);
        w->barrier = MPI_REQUEST_NULL;
    }
}

/* Answer one request from \p source: a take from this node's words for it. */
static int ob_wire_answer(struct ob_chunks *k, const ob_wire_ask *ask, int source)
{
    ob_wire_reply reply = { k->seq, 0, 0, -1 };
    ob_chunk_thief thief;
    long start = 0, count = 0;
    int from = -1;

    thief.rate = ask->rate;
    thief.plan = (long) ask->plan;
    thief.quota_bound = 0 != ask->quota_bound;
    /* A request of another step cannot come (the barrier closes each);
     * answered "none" all the same. */
    if (ask->seq == k->seq && ob_words_take(k, &thief, -1, &start, &count, &from)) {
        reply.start = start;
        reply.count = count;
        reply.from = from;
    }
    return PMPI_Send(&reply, (int) sizeof reply, MPI_BYTE, source, OB_WIRE_TAG_REPLY, k->wire.comm);
}

int ob_wire_serve(struct ob_chunks *k)
{
    ob_chunk_wire *w = &k->wire;
    int mpi_rc = MPI_SUCCESS;

    while (w->nnodes > 1 && MPI_SUCCESS == mpi_rc) {
        MPI_Status st;
        ob_wire_ask ask;
        int flag = 0;

        mpi_rc = PMPI_Iprobe(MPI_ANY_SOURCE, OB_WIRE_TAG_ASK, w->comm, &flag, &st);
        if (MPI_SUCCESS != mpi_rc || !flag) {
            break;
        }
        mpi_rc = PMPI_Recv(&ask, (int) sizeof ask, MPI_BYTE, st.MPI_SOURCE, OB_WIRE_TAG_ASK, w->comm,
                           MPI_STATUS_IGNORE);
        if (MPI_SUCCESS == mpi_rc) {
            mpi_rc = ob_wire_answer(k, &ask, st.MPI_SOURCE);
        }
    }
    return mpi_rc;
}

/* The helper node to ask next (-1: all asked), and which of its ranks:
 * the next nodes after this one, a rank chosen by this rank's place so
 * that the thieves of a node spread over the ranks they ask. */
static int ob_wire_next_helper(const struct ob_chunks *k, int *target)
{
    const ob_chunk_wire *w = &k->wire;

    for (int h = 1; h <= w->helpers; h++) {
        const int node = (w->mynode + h) % w->nnodes;
        const int size = w->node_first[node + 1] - w->node_first[node];

        if (!w->asked[node]) {
            *target = w->node_ranks[w->node_first[node] + (k->me + (int) k->seq) % size];
            return node;
        }
    }
    return -1;
}

/* Send \p ask to \p target and wait for its reply, answering requests meanwhile. */
static int ob_wire_ask_one(struct ob_chunks *k, const ob_wire_ask *ask, int target, ob_wire_reply *reply)
{
    ob_chunk_wire *w = &k->wire;
    MPI_Request req = MPI_REQUEST_NULL;
    int done = 0;
    int mpi_rc = PMPI_Irecv(reply, (int) sizeof *reply, MPI_BYTE, target, OB_WIRE_TAG_REPLY, w->comm, &req);

    if (MPI_SUCCESS == mpi_rc) {
        mpi_rc = PMPI_Send(ask, (int) sizeof *ask, MPI_BYTE, target, OB_WIRE_TAG_ASK, w->comm);
    }
    while (MPI_SUCCESS == mpi_rc && !done) {
        mpi_rc = ob_wire_serve(k);
        if (MPI_SUCCESS == mpi_rc) {
            mpi_rc = PMPI_Test(&req, &done, MPI_STATUS_IGNORE);
        }
        if (!done) {
            ob_wire_nap(k);
        }
    }
    if (MPI_REQUEST_NULL != req && !done) {
        PMPI_Cancel(&req);
        PMPI_Request_free(&req);
    }
    return mpi_rc;
}

int ob_wire_steal(struct ob_chunks *k, int *mpi_rc)
{
    ob_chunk_wire *w = &k->wire;
    const ob_chunk_thief thief = ob_words_thief(k, ob_now_ns());
    ob_wire_ask ask;
    int target = -1, node;

    *mpi_rc = MPI_SUCCESS;
    /* A rank that has done nothing in the step has no rate to ask with. */
    if (w->nnodes < 2 || !(thief.rate > 0.0)) {
        return 0;
    }
    ask.seq = k->seq;
    ask.rate = thief.rate;
    ask.plan = thief.plan;
    ask.quota_bound = thief.quota_bound;
    while ((node = ob_wire_next_helper(k, &target)) >= 0) {
        ob_wire_reply reply;

        *mpi_rc = ob_wire_ask_one(k, &ask, target, &reply);
        if (MPI_SUCCESS != *mpi_rc) {
            return 0;
        }
        if (reply.count > 0) {
            ob_words_hold(k, (long) reply.start, (long) reply.count, (int) reply.from);
            return 1;
        }
        w->asked[node] = 1;
    }
    return 0;
}

int ob_wire_close(struct ob_chunks *k)
{
    ob_chunk_wire *w = &k->wire;
    int done = 0;
    int mpi_rc;

    if (w->nnodes < 2) {
        return MPI_SUCCESS;
    }
    mpi_rc = PMPI_Ibarrier(w->comm, &w->barrier);
    while (MPI_SUCCESS == mpi_rc && !done) {
        mpi_rc = ob_wire_serve(k);
        if (MPI_SUCCESS == mpi_rc) {
            mpi_rc = PMPI_Test(&w->barrier, &done, MPI_STATUS_IGNORE);
        }
        if (!done) {
            ob_wire_nap(k);
        }
    }
    return mpi_rc;
}
