/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * The explicit API, work that moves inside a step (options.chunks).  The
 * plan gives each rank a range of the step's positions; a rank works its
 * range in chunks from the front and, once it is empty, takes a share of
 * the tail of a rank that is behind.  Within a node every rank has one
 * 64-bit word in a shared window: the range it works now, as
 *
 *     generation (4 bits) | next (30 bits) | end (30 bits)
 *
 * positions within the step (a step holds at most OB_CONFIG_BATCH_LIMIT <
 * 2^30 samples).  The owner claims a chunk by moving next up, a thief takes
 * a tail by moving end down, each with one compare-and-swap: whoever's
 * swap lands first wins, the other reads the word again, so no position is
 * ever handed out twice and the rank that is behind is never asked.  A thief
 * then puts the tail it took into its own word, where it works it the same
 * way (and where a third rank may take from it in turn).
 *
 * The generation is the step's count since create, modulo 16, the same on
 * every rank.  A word of another generation belongs to a rank that has not
 * begun this step yet: it stands for that rank's whole range in the plan
 * (every rank holds the same plan), so it may be taken from before its
 * owner arrives; the owner then starts from what is left.  No rank can be a
 * step ahead of another that still claims: the step before ended in the
 * gradient's reduction over every rank, which no rank leaves before every
 * rank entered it, and a rank enters it only once it has answered count 0.
 *
 * Chunk sizes: half of what is left, at most a sixteenth of the rank's
 * plan (OB_CHUNK_FIRST_SHARE: a rank that slows down 20x mid-step holds up
 * one such chunk, about 1.25 of its steps), at least the floor, in multiples
 * of the granularity.  A thief takes from the rank whose expected time left
 * is longest (what is left over its rate in this step: samples claimed over
 * time since it began the step, or its share of the plan before it has
 * one), the share that makes both expect to finish together, when that is
 * at least the floor.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "ob_active.h"
#include "ob_api.h"
#include "ob_config.h"
#include "ob_error.h"
#include "ob_log.h"
#include "ob_shard.h"
#include "ob_timing.h"

#define OB_CHUNK_POS_BITS 30
#define OB_CHUNK_POS_MASK ((UINT64_C(1) << OB_CHUNK_POS_BITS) - 1)
#define OB_CHUNK_GEN_SHIFT 60
#define OB_CHUNK_GEN_MASK UINT64_C(0xf)
/* A chunk is at most this fraction (1 / n) of its rank's plan. */
#define OB_CHUNK_FIRST_SHARE 16
/* The automatic floor: the global batch over this many ranks' worth. */
#define OB_CHUNK_FLOOR_RANKS 32

_Static_assert(OB_CONFIG_BATCH_LIMIT < (1L << OB_CHUNK_POS_BITS), "a step's positions fit the word");

/* One rank's slot in the node's window, a cache line of its own. */
typedef struct ob_chunk_slot {
    uint64_t range;              /* generation | next | end: the range the rank works now */
    uint64_t done;               /* generation | samples the rank has claimed in the step */
    uint64_t begin_ns;           /* when it began the step (one monotonic clock on a node) */
    char pad[64 - 3 * sizeof(uint64_t)];
} ob_chunk_slot;

struct ob_chunks {
    MPI_Comm node;               /* this node's ranks of the context */
    MPI_Win win;
    ob_chunk_slot *slot;         /* the node's slots, in node rank order */
    int nnode;
    int me;                      /* this rank's index on the node */
    int *rank_of;                /* nnode: each node rank's rank in the context */
    long *counts;                /* P: every rank's count in the step (ob_shard_counts()) */
    long *first;                 /* nnode: each node rank's first position in the step */
    long *plan;                  /* nnode: each node rank's count in the step */
    long floor;                  /* least samples of a chunk */
    long granularity;
    uint64_t seq;                /* steps begun since create */
    uint64_t gen;                /* seq's generation: the words' tag for this step */
    long base;                   /* the step's first position in the epoch's permutation */
    long cap;                    /* this rank's largest chunk in the step */
    int holder;                  /* node index of the rank whose range this rank's word holds */
    long own;                    /* samples claimed from its own range */
    long done;                   /* samples claimed in all */
    long chunks;                 /* chunks handed out in the step */
    int over;                    /* count 0 answered in the step */
};

static uint64_t ob_chunk_pack(uint64_t gen, long next, long end)
{
    return (gen << OB_CHUNK_GEN_SHIFT) | ((uint64_t) next << OB_CHUNK_POS_BITS) | (uint64_t) end;
}

/* Node rank j's range as word \p w tells it: the word's, or the plan's
 * where the word is of an earlier step (j has not begun this one). */
static void ob_chunk_unpack(const struct ob_chunks *k, int j, uint64_t w, long *next, long *end)
{
    if (((w >> OB_CHUNK_GEN_SHIFT) & OB_CHUNK_GEN_MASK) == k->gen) {
        *next = (long) ((w >> OB_CHUNK_POS_BITS) & OB_CHUNK_POS_MASK);
        *end = (long) (w & OB_CHUNK_POS_MASK);
    } else {
        *next = k->first[j];
        *end = k->first[j] + k->plan[j];
    }
}

static long ob_chunk_round_up(long n, long g)
{
    return (n + g - 1) / g * g;
}

/* The next chunk of a range with \p left samples: half of it, at most the
 * cap, at least the floor, in granules; never more than is left. */
static long ob_chunk_size(const struct ob_chunks *k, long left)
{
    long n = (left + 1) / 2;

    n = n > k->cap ? k->cap : n;
    n = n < k->floor ? k->floor : n;
    n = ob_chunk_round_up(n, k->granularity);
    return n < left ? n : left;
}

/* A chunk from the front of this rank's word: its size, 0 when empty. */
static long ob_chunk_claim(struct ob_chunks *k, long *start)
{
    uint64_t *word = &k->slot[k->me].range;
    uint64_t w = __atomic_load_n(word, __ATOMIC_ACQUIRE);

    for (;;) {
        long next, end, n;

        ob_chunk_unpack(k, k->me, w, &next, &end);
        if (next >= end) {
            return 0;
        }
        n = ob_chunk_size(k, end - next);
        if (__atomic_compare_exchange_n(word, &w, ob_chunk_pack(k->gen, next + n, end), 0, __ATOMIC_ACQ_REL,
                                        __ATOMIC_ACQUIRE)) {
            *start = next;
            return n;
        }
    }
}

/* Node rank j's rate in the step, samples per second: what it claimed over
 * the time since it began; before it has a measure, \p mine (this rank's)
 * in proportion to the plans. */
static double ob_chunk_rate(const struct ob_chunks *k, int j, uint64_t now, double mine)
{
    const uint64_t done = __atomic_load_n(&k->slot[j].done, __ATOMIC_ACQUIRE);
    const uint64_t begin = __atomic_load_n(&k->slot[j].begin_ns, __ATOMIC_ACQUIRE);
    const double planned = k->plan[k->me] > 0 ? mine * (double) k->plan[j] / (double) k->plan[k->me] : mine;
    double seen;

    if (((done >> OB_CHUNK_GEN_SHIFT) & OB_CHUNK_GEN_MASK) != k->gen || now <= begin) {
        return planned;
    }
    /* Claimed counts the chunk in hand as done: a rate seen is at most
     * what it is; the smaller of the two. */
    seen = (double) (done & OB_CHUNK_POS_MASK) / ((double) (now - begin) * 1e-9);
    return seen < planned ? seen : planned;
}

/* The node rank that is most behind (the longest expected time left) and
 * the share of its tail that makes both expect to finish together; -1 when
 * no share reaches the floor. */
static int ob_chunk_victim(const struct ob_chunks *k, uint64_t now, double mine, long *take, uint64_t *seen)
{
    double worst = 0.0;
    int victim = -1;

    for (int j = 0; j < k->nnode; j++) {
        uint64_t w;
        long next, end, x;
        double r, left_s;

        if (j == k->me) {
            continue;
        }
        w = __atomic_load_n(&k->slot[j].range, __ATOMIC_ACQUIRE);
        ob_chunk_unpack(k, j, w, &next, &end);
        if (end - next < k->floor) {
            continue;
        }
        r = ob_chunk_rate(k, j, now, mine);
        left_s = r > 0.0 ? (double) (end - next) / r : 1e300;
        x = (long) ((double) (end - next) * (mine / (mine + r))) / k->granularity * k->granularity;
        if (left_s > worst && x >= k->floor) {
            worst = left_s;
            victim = j;
            *take = x < end - next ? x : end - next;
            *seen = w;
        }
    }
    return victim;
}

/* Take a tail from the rank most behind into this rank's (empty) word: 1
 * when one was taken, 0 when none is worth taking. */
static int ob_chunk_steal(struct ob_chunks *k)
{
    const uint64_t now = ob_now_ns();
    const uint64_t begin = k->slot[k->me].begin_ns;
    /* This rank's rate: what it claimed over its time in the step. */
    const double mine = now > begin && k->done > 0 ? (double) k->done / ((double) (now - begin) * 1e-9) : 0.0;

    for (;;) {
        long take = 0, next, end;
        uint64_t w = 0;
        int j = mine > 0.0 ? ob_chunk_victim(k, now, mine, &take, &w) : -1;

        if (j < 0) {
            return 0;
        }
        ob_chunk_unpack(k, j, w, &next, &end);
        if (__atomic_compare_exchange_n(&k->slot[j].range, &w, ob_chunk_pack(k->gen, next, end - take), 0,
                                        __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
            /* Nobody swaps an empty word: a plain store publishes the tail. */
            __atomic_store_n(&k->slot[k->me].range, ob_chunk_pack(k->gen, end - take, end), __ATOMIC_RELEASE);
            k->holder = j;
            return 1;
        }
        /* The owner or another thief moved first: look again. */
    }
}

/* The step's weight from the samples done, and the mailbox the layer reads
 * (ob_active.h), once none is left. */
static void ob_chunk_finish(struct omnibatch_context *c)
{
    struct ob_chunks *k = c->chunks;
    ob_active_batch active;

    k->over = 1;
    c->step.count = k->done;
    c->step.scale = 0.0;
    if (k->done > 0) {
        c->step.scale = (double) k->done / (double) c->step.total;
        if (OMNIBATCH_GRAD_DIVIDE_BY_P == c->opt.convention) {
            c->step.scale *= (double) c->nranks;
        }
    }
    c->stats.chunks += k->chunks;
    c->stats.samples_taken += k->done - k->own;
    c->stats.samples_given += k->plan[k->me] - k->own;
    if (ob_active_get(&active) && active.step == c->step.global_step) {
        active.local = k->done;
        ob_active_publish(&active);
    }
}

OMNIBATCH_EXPORT int omnibatch_next_chunk(omnibatch_t ctx, omnibatch_chunk *chunk)
{
    const char *fn = "omnibatch_next_chunk";
    struct omnibatch_context *c = ctx;
    struct ob_chunks *k;
    long start = 0, n;
    int rc = ob_api_check_context(fn, c);

    if (OMNIBATCH_SUCCESS != rc) {
        return rc;
    }
    if (NULL == chunk) {
        return ob_fail(OMNIBATCH_ERR_ARG, "%s: chunk=NULL: expected the address of an omnibatch_chunk", fn);
    }
    k = c->chunks;
    if (NULL == k) {
        return ob_fail(OMNIBATCH_ERR_STATE, "%s: chunks are off: create the context with "
                       "options.chunks = 1 (OMNIBATCH_CHUNKS=on)", fn);
    }
    if (!c->have_step) {
        return ob_fail(OMNIBATCH_ERR_STATE, "%s: no step is running: call omnibatch_next_step first", fn);
    }
    if (k->over) {
        return ob_fail(OMNIBATCH_ERR_STATE, "%s: step %ld: none was left already: the step ends with "
                       "the gradient's reduction, then omnibatch_next_step", fn, c->step.global_step);
    }
    n = ob_chunk_claim(k, &start);
    while (0 == n && ob_chunk_steal(k)) {
        n = ob_chunk_claim(k, &start);
    }
    memset(chunk, 0, sizeof *chunk);
    if (n > 0) {
        k->own += k->holder == k->me ? n : 0;
        k->done += n;
        k->chunks++;
        __atomic_store_n(&k->slot[k->me].done, (k->gen << OB_CHUNK_GEN_SHIFT) | (uint64_t) k->done,
                         __ATOMIC_RELEASE);
        chunk->start = k->base + start;
        chunk->count = n;
        chunk->owner = k->rank_of[k->holder];
    } else {
        ob_chunk_finish(c);
    }
    chunk->done = k->done;
    chunk->scale = k->over ? c->step.scale
                           : (double) k->done / (double) c->step.total
                                 * (OMNIBATCH_GRAD_DIVIDE_BY_P == c->opt.convention ? (double) c->nranks : 1.0);
    return OMNIBATCH_SUCCESS;
}

int ob_chunk_begin(struct omnibatch_context *c)
{
    struct ob_chunks *k = c->chunks;
    uint64_t *word;
    uint64_t w;
    long before = 0;
    int rc;

    if (NULL == k) {
        return OMNIBATCH_SUCCESS;
    }
    rc = ob_shard_counts(c->dataset_size, c->global_batch, c->step.step, c->nranks, c->ctl.plan, k->counts);
    if (OMNIBATCH_SUCCESS != rc) {
        return rc;
    }
    /* Each node rank's range: the counts of the ranks before it. */
    for (int i = 0, j = 0; i < c->nranks && j < k->nnode; i++) {
        if (i == k->rank_of[j]) {
            k->first[j] = before;
            k->plan[j] = k->counts[i];
            j++;
        }
        before += k->counts[i];
    }
    k->seq++;
    k->gen = k->seq & OB_CHUNK_GEN_MASK;
    k->base = c->step.step * c->global_batch;
    k->cap = ob_chunk_round_up(k->plan[k->me] / OB_CHUNK_FIRST_SHARE, k->granularity);
    k->cap = k->cap > k->floor ? k->cap : k->floor;
    k->holder = k->me;
    k->own = 0;
    k->done = 0;
    k->chunks = 0;
    k->over = 0;
    __atomic_store_n(&k->slot[k->me].done, k->gen << OB_CHUNK_GEN_SHIFT, __ATOMIC_RELEASE);
    __atomic_store_n(&k->slot[k->me].begin_ns, ob_now_ns(), __ATOMIC_RELEASE);
    /* This step's word: the plan's range, unless a thief has begun it (then
     * it already holds what is left). */
    word = &k->slot[k->me].range;
    w = __atomic_load_n(word, __ATOMIC_ACQUIRE);
    while (((w >> OB_CHUNK_GEN_SHIFT) & OB_CHUNK_GEN_MASK) != k->gen
           && !__atomic_compare_exchange_n(word, &w,
                                           ob_chunk_pack(k->gen, k->first[k->me], k->first[k->me] + k->plan[k->me]),
                                           0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
    }
    return OMNIBATCH_SUCCESS;
}

int ob_chunk_ready(const struct omnibatch_context *c)
{
    return NULL == c->chunks || c->chunks->over;
}

static void ob_chunks_free(struct ob_chunks *k)
{
    if (NULL == k) {
        return;
    }
    ob_node_window_free(&k->win);
    if (MPI_COMM_NULL != k->node) {
        PMPI_Comm_free(&k->node);
    }
    free(k->rank_of);
    free(k->counts);
    free(k->first);
    free(k->plan);
    free(k);
}

/* The automatic floor: B / (32 P), at least one granule. */
static long ob_chunk_floor(const struct omnibatch_context *c)
{
    long f = c->opt.chunk_floor;

    if (0 == f) {
        f = c->global_batch / ((long) OB_CHUNK_FLOOR_RANKS * c->nranks);
        f = ob_chunk_round_up(f > 0 ? f : 1, c->opt.granularity);
    }
    return f;
}

/* This rank's part: the node's communicator, who is who on it, the arrays;
 * every failure is this rank's alone (agreed on by the caller). */
static int ob_chunks_local(struct omnibatch_context *c, struct ob_chunks *k, const char **call)
{
    int mpi_rc = PMPI_Comm_split_type(c->comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &k->node);

    *call = "MPI_Comm_split_type";
    if (MPI_SUCCESS != mpi_rc) {
        k->node = MPI_COMM_NULL;
        return mpi_rc;
    }
    PMPI_Comm_size(k->node, &k->nnode);
    PMPI_Comm_rank(k->node, &k->me);
    k->rank_of = malloc((size_t) k->nnode * sizeof *k->rank_of);
    k->first = calloc((size_t) k->nnode, sizeof *k->first);
    k->plan = calloc((size_t) k->nnode, sizeof *k->plan);
    k->counts = malloc((size_t) c->nranks * sizeof *k->counts);
    if (NULL == k->rank_of || NULL == k->first || NULL == k->plan || NULL == k->counts) {
        return MPI_ERR_NO_MEM;
    }
    *call = "MPI_Allgather";
    return PMPI_Allgather(&c->rank, 1, MPI_INT, k->rank_of, 1, MPI_INT, k->node);
}

int ob_chunk_open(struct omnibatch_context *c, const char **call)
{
    struct ob_chunks *k;
    int ok, all_ok = 0;
    int mpi_rc;
    void *base = NULL;

    c->chunks = NULL;
    if (!c->opt.chunks) {
        return MPI_SUCCESS;
    }
    k = calloc(1, sizeof *k);
    if (NULL == k) {
        ok = 0;
        mpi_rc = MPI_ERR_NO_MEM;
    } else {
        k->win = MPI_WIN_NULL;
        k->floor = ob_chunk_floor(c);
        k->granularity = c->opt.granularity;
        mpi_rc = ob_chunks_local(c, k, call);
        ok = MPI_SUCCESS == mpi_rc;
    }
    /* Every rank learns whether all have their part before any uses MPI on
     * the node's communicator. */
    mpi_rc = PMPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, c->comm);
    if (MPI_SUCCESS != mpi_rc || !all_ok) {
        ob_chunks_free(k);
        if (MPI_SUCCESS == mpi_rc) {
            *call = ok ? "MPI_Allreduce (another rank failed)" : *call;
            mpi_rc = ok ? MPI_ERR_OTHER : MPI_ERR_NO_MEM;
        }
        return mpi_rc;
    }
    *call = "MPI_Win_allocate_shared";
    mpi_rc = ob_node_window(k->node, k->me, c->comm, (size_t) k->nnode * sizeof(ob_chunk_slot), &k->win, &base);
    if (MPI_SUCCESS != mpi_rc) {
        ob_chunks_free(k);
        return mpi_rc;
    }
    k->slot = base;
    /* Every word of an earlier generation than the first step's (1). */
    if (0 == k->me) {
        for (int j = 0; j < k->nnode; j++) {
            k->slot[j].range = ob_chunk_pack(0, 0, 0);
            k->slot[j].done = 0;
            k->slot[j].begin_ns = 0;
        }
    }
    PMPI_Win_sync(k->win);
    *call = "MPI_Barrier";
    mpi_rc = PMPI_Barrier(c->comm);
    if (MPI_SUCCESS != mpi_rc) {
        ob_chunks_free(k);
        return mpi_rc;
    }
    c->chunks = k;
    ob_log_debug(1, "rank %d: steps in chunks, %d ranks on this node share their ranges, floor %ld", c->rank,
                 k->nnode, k->floor);
    return MPI_SUCCESS;
}

void ob_chunk_close(struct omnibatch_context *c)
{
    ob_chunks_free(c->chunks);
    c->chunks = NULL;
}

void ob_chunk_forget(struct omnibatch_context *c)
{
    if (NULL != c->chunks) {
        free(c->chunks->rank_of);
        free(c->chunks->counts);
        free(c->chunks->first);
        free(c->chunks->plan);
        free(c->chunks);
    }
    c->chunks = NULL;
}
