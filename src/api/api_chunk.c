/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * The explicit API, work that moves inside a step (options.chunks).  The
 * plan gives each rank a range of the step's positions; a rank works its
 * range in chunks from the front and, once it is empty, takes a share of
 * the tail of a rank that is behind: first on its node, through the words
 * of a shared window (api_chunk_words.c), then on its helper nodes, through
 * a request answered by a rank there (api_chunk_wire.c).  It answers count
 * 0 once it has nothing more to take; across nodes it waits there until
 * every rank has, answering requests meanwhile.  The step's weight and the
 * estimator's sample then follow the samples it did.
 */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ob_active.h"
#include "ob_api.h"
#include "ob_api_chunk.h"
#include "ob_config.h"
#include "ob_error.h"
#include "ob_log.h"
#include "ob_shard.h"
#include "ob_timing.h"

/* A chunk is at most this fraction (1 / n) of its rank's plan. */
#define OB_CHUNK_FIRST_SHARE 16
/* A rank under a CPU quota is busy (ob_chunk_busy()) when it spent at least
 * this share of its quota over the last OB_CHUNK_BUSY_WINDOW_S seconds
 * (exponentially weighted): the ranks of the quota scenario spent 84-100%,
 * each stopped by the kernel in most periods. */
#define OB_CHUNK_BUSY_SHARE 0.75
#define OB_CHUNK_BUSY_WINDOW_S 1.0
/* The automatic floor: the global batch over this many ranks' worth. */
#define OB_CHUNK_FLOOR_RANKS 32
/* The weight of the steps before in the chunks' fixed part, at each step's fold. */
#define OB_CHUNK_COST_KEEP 0.75
_Static_assert(OB_CONFIG_BATCH_LIMIT < (1L << OB_CHUNK_POS_BITS), "a step's positions fit the word");

/* Time this rank waited on the wire (another node's reply, the step's
 * close) is not compute: it is taken out of the step's compute as the
 * gradient's wait is (from the segment where the code marks none, from the
 * mark in progress where it brackets its chunks with omnibatch_compute_begin
 * and _end), and counted blocked.  Counted as compute, a rank that waited
 * for a slower one across nodes measured as slow as it, and the plan could
 * not learn their speeds. */
static void ob_chunk_waited(struct omnibatch_context *c, uint64_t waited)
{
    c->clock.blocked_ns += waited;
    c->clock.segment_ns += waited;
    if (c->clock.in_mark) {
        c->clock.mark_begin_ns += waited;
    }
    c->stats.blocked_total_s += (double) waited * 1e-9;
}

/* A share from another node, its wait taken out of the compute. */
static int ob_chunk_steal(struct omnibatch_context *c, int *mpi_rc)
{
    const uint64_t t0 = ob_now_ns();
    const int got = ob_wire_steal(c->chunks, mpi_rc);

    ob_chunk_waited(c, ob_now_ns() - t0);
    return got;
}

/* The next chunk: from this rank's word, or once that is empty from a
 * share taken on the node, then from another node.  0: none to take. */
static long ob_chunk_claim_next(struct omnibatch_context *c, long *start, int *mpi_rc)
{
    struct ob_chunks *k = c->chunks;
    long n = ob_words_claim(k, start);

    *mpi_rc = MPI_SUCCESS;
    while (0 == n) {
        ob_chunk_thief thief = ob_words_thief(k, ob_now_ns());
        long take_start, take;
        int from;

        if (ob_words_take(k, &thief, k->me, &take_start, &take, &from)) {
            ob_words_hold(k, take_start, take, from);
        } else if (!ob_chunk_steal(c, mpi_rc)) {
            return 0;
        }
        n = ob_words_claim(k, start);
    }
    return n;
}

/* None left: across nodes, the wait for every rank (blocked time, not the
 * step's compute); the step's weight from the samples done, and the mailbox
 * the layer reads (ob_active.h). */
static int ob_chunk_finish(struct omnibatch_context *c)
{
    struct ob_chunks *k = c->chunks;
    const uint64_t t0 = ob_now_ns();
    int mpi_rc = ob_wire_close(k);
    ob_active_batch active;

    ob_chunk_waited(c, ob_now_ns() - t0);
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
    return mpi_rc;
}

static int ob_chunk_args(const char *fn, struct omnibatch_context *c, const omnibatch_chunk *chunk)
{
    int rc = ob_api_check_context(fn, c);

    if (OMNIBATCH_SUCCESS != rc) {
        return rc;
    }
    if (NULL == chunk) {
        return ob_fail(OMNIBATCH_ERR_ARG, "%s: chunk=NULL: expected the address of an omnibatch_chunk", fn);
    }
    if (NULL == c->chunks) {
        return ob_fail(OMNIBATCH_ERR_STATE, "%s: chunks are off: create the context with "
                       "options.chunks = 1 (OMNIBATCH_CHUNKS=on)", fn);
    }
    if (!c->have_step) {
        return ob_fail(OMNIBATCH_ERR_STATE, "%s: no step is running: call omnibatch_next_step first", fn);
    }
    if (c->chunks->over) {
        return ob_fail(OMNIBATCH_ERR_STATE, "%s: step %ld: none was left already: the step ends with "
                       "the gradient's reduction, then omnibatch_next_step", fn, c->step.global_step);
    }
    return OMNIBATCH_SUCCESS;
}

/* The latest chunk claimed, done at \p now, counted in the rank's chunk
 * times (none after a step's last), unless it ran slower than the step
 * before it (k->slowed; not under a quota, where a stop by the kernel is
 * no change of speed) and that cannot be its fixed part: it is no smaller
 * than the chunk before it, or that part is known (ob_chunk_slower()
 * counts it, as much slower as the step's chunks before it ran than the
 * fit: a rank slowed before its step began is no slower inside it).  Then
 * the rank's speed changed, and the times of its chunks so far, of the old
 * speed, are dropped with it (and the step's time, of two speeds, is not
 * the controller's to learn: ob_chunk_changed()).
 * Fitted together (t = a + b n), a speed that fell 20x inside a chunk of
 * 16 followed by chunks of one at the new speed read as a fixed part of
 * hundreds of samples' worth:
 * the floor (ob_chunk_step_floor()) rose to the rank's whole plan, and its
 * next step was two chunks of half its plan at 1/20 of its speed (hetsgd
 * vanish, the change 0.3 into its step: that step 13x the oracle's).  A
 * small chunk before any fit is slow by its fixed part alone (4 ms beside
 * 0.2 ms a sample: a range's last piece of 2 at 10x the pace of pieces of
 * 16), and its time is what the fit needs. */
static void ob_chunk_timed(struct ob_chunks *k, uint64_t now)
{
    k->end_ns = now;
    k->slowed = !k->busy && ob_words_slowed(k, now);
    if (k->last > 0 && now > k->last_ns) {
        ob_log_debug(3, "rank %d: chunk %ld of %ld samples: %.3g s%s", k->rank, k->chunks, k->last,
                     (double) (now - k->last_ns) * 1e-9, k->slowed ? ", slowed" : "");
    }
    if (k->slowed && (k->floor_cost > 0 || k->last >= k->prev)) {
        memset(&k->cost, 0, sizeof k->cost);
        k->changed = 1;
    } else if (!k->busy && !k->sped && ob_words_faster(k, now)) {
        ob_log_debug(3, "rank %d: chunk %ld of %ld samples ran faster than the step before it", k->rank,
                     k->chunks, k->last);
        memset(&k->cost, 0, sizeof k->cost);
        ob_chunk_cost_add(&k->cost, k->last, (double) (now - k->last_ns) * 1e-9);
        k->sped = 1;
        k->sped_done = k->done - k->last;
        k->sped_ns = k->last_ns;
    } else if (k->last > 0 && now > k->last_ns && 1 == k->chunks) {
        ob_chunk_cost_add_first(&k->cost, k->last, (double) (now - k->last_ns) * 1e-9);
        k->first_done = k->last;
        k->first_ns = now;
    } else if (k->last > 0 && now > k->last_ns) {
        ob_chunk_cost_add(&k->cost, k->last, (double) (now - k->last_ns) * 1e-9);
    }
}

OMNIBATCH_EXPORT int omnibatch_next_chunk(omnibatch_t ctx, omnibatch_chunk *chunk)
{
    const char *fn = "omnibatch_next_chunk";
    struct omnibatch_context *c = ctx;
    struct ob_chunks *k;
    long start = 0, n;
    int mpi_rc;
    int rc = ob_chunk_args(fn, c, chunk);

    if (OMNIBATCH_SUCCESS != rc) {
        return rc;
    }
    k = c->chunks;
    /* The chunk claimed last is done: its time, for the cost of a chunk. */
    ob_chunk_timed(k, ob_now_ns());
    /* Requests from other nodes are answered between chunks. */
    mpi_rc = ob_wire_serve(k);
    n = MPI_SUCCESS == mpi_rc ? ob_chunk_claim_next(c, &start, &mpi_rc) : 0;
    if (MPI_SUCCESS != mpi_rc) {
        return ob_api_mpi_fail(mpi_rc, fn, "MPI_Send");
    }
    memset(chunk, 0, sizeof *chunk);
    if (n > 0) {
        k->own += k->holder == k->rank ? n : 0;
        k->done += n;
        k->chunks++;
        ob_words_done(k);
        chunk->start = k->base + start;
        chunk->count = n;
        chunk->owner = k->holder;
        chunk->scale = (double) k->done / (double) c->step.total
                       * (OMNIBATCH_GRAD_DIVIDE_BY_P == c->opt.convention ? (double) c->nranks : 1.0);
    } else {
        mpi_rc = ob_chunk_finish(c);
        if (MPI_SUCCESS != mpi_rc) {
            return ob_api_mpi_fail(mpi_rc, fn, "MPI_Ibarrier");
        }
        chunk->scale = c->step.scale;
    }
    chunk->done = k->done;
    return OMNIBATCH_SUCCESS;
}

/* The step's floor: the one set, or the automatic one raised so that a
 * chunk's fixed part (the library's call, the code's setup of a chunk) is at
 * most OB_CHUNK_COST_SHARE of its time (by the median of the latest three
 * steps' worths; a quarter before: ob_chunk_worth_floor()), at most the
 * rank's plan: where each
 * chunk costs more beside its samples than on them, fewer and larger chunks.
 * That part is fitted to each step's own chunks, of one speed, and kept
 * across steps in samples' worth (ob_chunk_worth_step()).  Fitted across
 * steps, chunk times of speeds 10% apart, the sizes differing more between
 * the steps than within them, read as a fixed part of tens of samples' worth
 * (hetsgd jitter: chunks of 16, 8 and 7 at speed 0.40, then of 11 at 0.36,
 * 21 ms + 0.63 ms a sample where each step alone fits 1.7 samples' worth):
 * the floor rose to 103, and a rank worked its whole range in one or two
 * chunks, 0-7 times a run, once a 5.1x step where it was slow.  And a rank
 * slowed 20x between steps read its times of both speeds as a fixed part of
 * most of its plan (it did one chunk of 120 at 1/20 of its speed).  A floor
 * that takes the whole range is read again after a while
 * (ob_chunk_whole_floor()): one chunk a step fits no worth, and the slowest
 * rank of hetsgd's ramp at B = 4096, its worth misread at a change of speed
 * inside a step, worked its range in one chunk for the 87 steps left; at
 * the next two changes no thief could take any of it, and those steps ran
 * 1.30x and 1.50x the oracle's. */
static void ob_chunk_step_floor(struct omnibatch_context *c, struct ob_chunks *k)
{
    double a, b;

    /* Steps without chunks (a parked rank), or before any step's chunks
     * determined a fit, keep the last fixed part and floor. */
    if (ob_chunk_worth_step(&k->worth, &k->cost, OB_CHUNK_COST_KEEP, &a, &b)) {
        double share;
        const double worth = ob_chunk_worth_floor(&k->worth, &share);

        k->fixed_s = a;
        k->fixed_b = b;
        k->floor_cost = ob_chunk_cost_floor(worth * b, b, share, k->granularity, k->plan[k->me]);
    }
    memset(&k->cost, 0, sizeof k->cost);
    if (k->floor_auto) {
        k->floor_cost = ob_chunk_whole_floor(&k->worth, &k->whole, k->floor_cost, k->plan[k->me], k->floor_set,
                                             k->granularity);
    }
    k->floor = k->floor_set;
    if (k->floor_auto && k->floor_cost > k->floor) {
        k->floor = k->floor_cost;
    }
    ob_log_debug(2, "rank %d: step %ld: chunks cost %.3g s + %.3g s a sample, floor %ld", c->rank,
                 c->step.global_step, a, b, k->floor);
}

/* Under a CPU quota q (else 0), the step's start: the process's CPU and the
 * time, and whether the rank has been spending its quota.  A rank under a
 * fractional quota runs at full speed until its period's budget is spent,
 * then the kernel stops it until the period ends (90 ms of 100 at 0.1
 * core): work it holds then waits that long, whoever else is free.  Over a
 * step, far shorter than a period, its samples per CPU second times q (its
 * rate as a thief, ob_words_thief()) is what it sustains on average, but a
 * step ends with the last rank: a rank that spends its quota and takes a
 * share of a running rank's tail is stopped holding it often enough to lose
 * more than the share wins (the chunked step under quotas 0.4, 0.4, 0.2 and
 * 0.1 ran at 2.1x the unchunked one's step, the 0.1-core rank taking 116 of
 * a step's samples and stopped 80 ms with them).  Such a rank takes only
 * the tail of a rank stalled on its chunk (ob_words_share()); one that
 * spends less has budget to spare, and takes shares.  And a busy rank
 * works its own range in halving chunks from its whole plan down, not in
 * sixteenths of it, and not one granule at a time after a stop: when the
 * kernel stops it the step waits for the chunk it holds, whatever its
 * size, and each chunk's fixed cost (the model's weights read again) is
 * CPU its quota pays (12 us a sample unchunked, 15-19 us in sixteenths:
 * the chunked step at 1.25x the unchunked one's, 1.03x now). */
static void ob_chunk_busy(struct ob_chunks *k, double quota)
{
    const uint64_t now = ob_now_ns();
    const uint64_t cpu = quota > 0.0 ? ob_cpu_ns() : 0;

    if (quota > 0.0 && k->quota > 0.0 && now > k->wall_begin_ns && cpu >= k->cpu_begin_ns) {
        const double wall = (double) (now - k->wall_begin_ns) * 1e-9;
        const double keep = exp(-wall / OB_CHUNK_BUSY_WINDOW_S);

        k->busy_wall = k->busy_wall * keep + wall;
        k->busy_cpu = k->busy_cpu * keep + (double) (cpu - k->cpu_begin_ns) * 1e-9;
    } else {
        k->busy_wall = 0.0;
        k->busy_cpu = 0.0;
    }
    /* Under a quota of a core or more a rank that polls in its waits spends
     * a core however little it computes, and a single thread is never
     * stopped: only a fractional quota makes a rank busy. */
    k->busy = quota < 1.0 && k->busy_wall > 0.0 && k->busy_cpu >= OB_CHUNK_BUSY_SHARE * quota * k->busy_wall;
    k->quota = quota;
    k->cpu_begin_ns = cpu;
    k->wall_begin_ns = now;
}

/* The largest chunk of this rank's own range: a sixteenth of its plan for
 * a whole step, \p whole (a rank slowed 20x inside such a chunk holds the
 * step up by about 1.25 steps), in granules.  Of the whole step's plan,
 * not of the step's range: an epoch's short last step cut in sixteenths
 * of its ranges paid as many chunks' fixed parts as a whole step for 65%
 * of its samples (hetsgd transient at B = 4096, the step of 2656 after
 * the slowed rank came back: 16-20 chunks a rank, 1.06x the oracle's). */
static long ob_chunk_cap(const struct ob_chunks *k, long whole)
{
    const long plan = whole > k->plan[k->me] ? whole : k->plan[k->me];

    return ob_words_granules(k, plan / OB_CHUNK_FIRST_SHARE);
}

int ob_chunk_begin(struct omnibatch_context *c)
{
    struct ob_chunks *k = c->chunks;
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
    k->base = c->step.step * c->global_batch;
    ob_chunk_step_floor(c, k);
    ob_chunk_busy(k, c->cpu.plan && c->cpu.quota > 0.0 ? c->cpu.quota : 0.0);
    k->cap = ob_chunk_cap(k, c->ctl.plan[c->rank]);
    k->cap = k->cap > k->floor ? k->cap : k->floor;
    k->cap = k->busy && k->plan[k->me] > k->cap ? k->plan[k->me] : k->cap;
    k->holder = k->rank;
    k->own = 0;
    k->done = 0;
    k->chunks = 0;
    k->slowed = 0;
    k->changed = 0;
    k->first_done = 0;
    k->first_ns = 0;
    k->sped = 0;
    k->sped_done = 0;
    k->sped_ns = 0;
    k->end_ns = 0;
    k->over = 0;
    ob_words_begin(k);
    ob_wire_begin(k);
    return OMNIBATCH_SUCCESS;
}

void ob_chunk_moved(const struct omnibatch_context *c, long *taken, long *given)
{
    const struct ob_chunks *k = c->chunks;

    *taken = -1;
    *given = -1;
    if (NULL != k && k->over) {
        *taken = k->done - k->own;
        *given = k->plan[k->me] - k->own;
    }
}

int ob_chunk_changed(const struct omnibatch_context *c)
{
    return NULL != c->chunks && c->chunks->changed;
}

/* In a chunked step the count is not the rank's to choose: it is what the
 * others left it and what it took, and it moves when its speed does (a
 * rank slowed 20x does 16 of its 256, in about the step's time).  Beside
 * its samples of the old speed at the plan's batch, such a sample lies on
 * a line whose fixed part is most of the step (the estimator takes a new
 * speed at a new batch for a new fixed part), and the plan went 156, 76,
 * 50 where the share is 16 (under MPICH at 4 ranks beside a busy loop).
 * Said at the range's batch, at the pace the rank did its samples, the
 * sample is what an unchunked step at the plan would have shown: a 20x
 * slow step, held back and confirmed as a change of speed; and the batch
 * moves only when the plan does.  A rank that sped up inside the step
 * (ob_words_faster()) is said at the pace of its chunks since, the step's
 * compute taken in proportion to their time: at the pace of the whole
 * step, of two speeds, a rank back to full speed from a quarter of it
 * read 2.3x faster, beside the next step's 4x confirmed a change of 3.1x,
 * its model 27% slow, and its plan followed three steps later (hetsgd
 * transient at B = 4096: the plan 777 of 1024 for three steps). */
void ob_chunk_sample(const struct omnibatch_context *c, double *batch, double *compute)
{
    const struct ob_chunks *k = c->chunks;
    long done;

    if (NULL == k || !k->over || k->done <= 0 || k->plan[k->me] <= 0) {
        return;
    }
    done = k->done;
    if (k->sped && k->done > k->sped_done && k->end_ns > k->sped_ns) {
        /* Its part since it sped up, at the new pace alone. */
        *compute *= (double) (k->end_ns - k->sped_ns) / (double) (k->end_ns - k->slot[k->me].begin_ns);
        done = k->done - k->sped_done;
    }
    *compute *= (double) k->plan[k->me] / (double) done;
    *batch = (double) k->plan[k->me];
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
    ob_wire_free(k);
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
        f = (f > 0 ? f : 1) + c->opt.granularity - 1;
        f = f / c->opt.granularity * c->opt.granularity;
    }
    return f;
}

/* This rank's part: the node's communicator, who is who on it, the arrays;
 * a failure is this rank's alone (agreed on by the caller). */
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

/* Every rank learns whether all have \p ok; the code to return where not. */
static int ob_chunk_agree(struct omnibatch_context *c, int ok, int mpi_rc, const char **call)
{
    int all_ok = 0;
    int rc = PMPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, c->comm);

    if (MPI_SUCCESS != rc) {
        *call = "MPI_Allreduce";
        return rc;
    }
    if (all_ok) {
        return MPI_SUCCESS;
    }
    if (ok) {
        *call = "MPI_Allreduce (another rank failed)";
        return MPI_ERR_OTHER;
    }
    return MPI_SUCCESS != mpi_rc ? mpi_rc : MPI_ERR_NO_MEM;
}

/* The node's window of slots, every word of an earlier generation than
 * the first step's (1). */
static int ob_chunk_window(struct omnibatch_context *c, struct ob_chunks *k, const char **call)
{
    void *base = NULL;
    int mpi_rc;

    *call = "MPI_Win_allocate_shared";
    mpi_rc = ob_node_window(k->node, k->me, c->comm, (size_t) k->nnode * sizeof(ob_chunk_slot), &k->win, &base);
    if (MPI_SUCCESS != mpi_rc) {
        return mpi_rc;
    }
    k->slot = base;
    if (0 == k->me) {
        memset(k->slot, 0, (size_t) k->nnode * sizeof(ob_chunk_slot));
    }
    PMPI_Win_sync(k->win);
    *call = "MPI_Barrier";
    return PMPI_Barrier(c->comm);
}

int ob_chunk_open(struct omnibatch_context *c, const char **call)
{
    struct ob_chunks *k;
    int mpi_rc = MPI_ERR_NO_MEM;

    c->chunks = NULL;
    if (!c->opt.chunks) {
        return MPI_SUCCESS;
    }
    k = calloc(1, sizeof *k);
    if (NULL != k) {
        k->win = MPI_WIN_NULL;
        k->wire.comm = MPI_COMM_NULL;
        k->rank = c->rank;
        k->floor_set = ob_chunk_floor(c);
        k->floor_auto = 0 == c->opt.chunk_floor;
        k->floor = k->floor_set;
        k->granularity = c->opt.granularity;
        k->asleep = c->wait_sleep;
        mpi_rc = ob_chunks_local(c, k, call);
    }
    /* Every rank has its part before any uses the node's communicator. */
    mpi_rc = ob_chunk_agree(c, MPI_SUCCESS == mpi_rc, mpi_rc, call);
    if (MPI_SUCCESS == mpi_rc) {
        mpi_rc = ob_chunk_window(c, k, call);
    }
    if (MPI_SUCCESS == mpi_rc) {
        const int wire_rc = ob_wire_open(k, c->comm, c->nranks);

        *call = "MPI_Comm_dup";
        mpi_rc = ob_chunk_agree(c, MPI_SUCCESS == wire_rc, wire_rc, call);
    }
    if (MPI_SUCCESS != mpi_rc) {
        ob_chunks_free(k);
        return mpi_rc;
    }
    c->chunks = k;
    ob_log_debug(1, "rank %d: steps in chunks: %d ranks on this node share their ranges, %d nodes, floor %ld",
                 c->rank, k->nnode, k->wire.nnodes, k->floor);
    return MPI_SUCCESS;
}

void ob_chunk_close(struct omnibatch_context *c)
{
    ob_chunks_free(c->chunks);
    c->chunks = NULL;
}

void ob_chunk_forget(struct omnibatch_context *c)
{
    struct ob_chunks *k = c->chunks;

    if (NULL != k) {
        free(k->wire.node_first);
        free(k->wire.node_ranks);
        free(k->wire.asked);
        free(k->rank_of);
        free(k->counts);
        free(k->first);
        free(k->plan);
        free(k);
    }
    c->chunks = NULL;
}
