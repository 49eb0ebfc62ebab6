/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * The inside of an omnibatch context (omnibatch.h), shared by the files of
 * the explicit API, each calling only those below it:
 *   api.c, api_state.c      lifecycle and plan queries; save and restore
 *   api_step.c              omnibatch_next_step: close, exchange, hand out
 *   api_gradient.c          the weighted gradient allreduce
 *   api_exchange.c          the plan exchange and the collective a step opens with
 *   api_measure.c           the step's measurement (and the compute markers)
 *   api_chunk*.c            work that moves inside a step (ob_api_chunk.h)
 *   api_dist.c              the distributed decision's collectives
 *   api_node.c              the gradient summed in one node's shared memory
 *   api_wait.c              waits asleep (OMNIBATCH_WAIT=sleep)
 *   api_errors.c, api_registry.c  failures reported alike; the live handles
 *   api_agree.c             the settings every rank must pass alike
 * The last three serve the asynchronous mode (src/async) too.
 * Not installed.
 */
#ifndef OB_API_H
#define OB_API_H

#include <stddef.h>
#include <stdint.h>
#include <mpi.h>

#include "omnibatch.h"
#include "ob_controller.h"
#include "ob_estimator.h"
#include "ob_nap.h"
#include "ob_planner_dist.h"
#include "ob_starve.h"

/** Under a CPU quota: the steps whose CPU after the gradient allreduce gives its median,
 *  and whose least compute at one batch is the compute the plan takes at least. */
#define OB_API_CPU_AFTER 8
/** Under a CPU quota: the steps at one batch before their least compute counts. */
#define OB_API_WALL_MIN 3
/** Under a CPU quota: nanoseconds between two reads of it (a platform may resize it). */
#define OB_API_QUOTA_REREAD_NS 1000000000ULL

/** OMNIBATCH_REACT: exchanges brought forward in a row at most (then the period applies). */
#define OB_API_MAX_EARLY 4

/** The collective that opens the next step, started with this step's first gradient allreduce
 *  (ob_exchange_begin()): none, REACT's flag, the exchange's records, or (REACT, ranks polling)
 *  the records with each rank's flag in them, which are the exchange's where any flag is set. */
#define OB_API_NEXT_NONE 0
#define OB_API_NEXT_REACT 1
#define OB_API_NEXT_EXCHANGE 2
#define OB_API_NEXT_RECORDS 3

/** The arrival of an asleep gradient allreduce (api_gradient.c, api_node.c): each rank's
 *  fields, combined as their maxima; on the node also the least element size and count, after
 *  them (where they differ from the maxima, the ranks disagree). */
enum {
    OB_ARRIVE_ON_DEVICE,         /* its buffers are on a GPU */
    OB_ARRIVE_US,                /* when it arrived, microseconds (0: nothing to learn) */
    OB_ARRIVE_REACT,             /* REACT's flag for the next step */
    OB_ARRIVE_ELEM,              /* the element size */
    OB_ARRIVE_COUNT,             /* the count */
    OB_NODE_IN,
    OB_ARRIVE_LEAST_ELEM = OB_NODE_IN,
    OB_ARRIVE_LEAST_COUNT,
    OB_NODE_OUT
};

/** Timing of the running step.  Compute without markers is the time outside
 *  omnibatch_allreduce_gradient() up to the start of the step's last call of it: segment_ns is
 *  where the current stretch of compute began (next_step's return, or the end of the previous
 *  allreduce). */
struct ob_step_clock {
    uint64_t step_begin_ns;      /* omnibatch_next_step() was entered (the step's wall time) */
    uint64_t segment_ns;
    uint64_t unmarked_ns;
    int reductions;
    int last_reductions;         /* the last closed step's (the same on every rank: each is a collective) */
    int markers;                 /* compute_begin() was called in this step */
    int in_mark;
    uint64_t mark_begin_ns;
    uint64_t marked_ns;
    uint64_t blocked_ns;
    uint64_t reduced_ns;         /* the end of the last gradient reduction (0 before the first) */
};

/** The CPU quota this rank runs under, in cores (0: none; ob_cpuquota.h), and the process's CPU
 *  time since the step's exchange and in its waits for the other ranks in its gradient
 *  allreduces (asleep, the wait before the transfer; polling, the whole call): a rank near its
 *  quota needs cpu / quota of the step whatever its compute measured (ob_measure_close()). */
struct ob_cpu_meter {
    double quota;
    int plan;                    /* OMNIBATCH_CPU_QUOTA: plan on it (a quota and the setting on) */
    uint64_t read_ns;            /* when quota was read (again every OB_API_QUOTA_REREAD_NS) */
    uint64_t begin_ns;
    uint64_t blocked_ns;
    uint64_t reduced_ns;         /* at the end of the step's last gradient allreduce */
    /* The CPU after it (an optimiser's update; now and then an evaluation or a checkpoint, which
     * are not the step's): the median of the last steps'. */
    double after[OB_API_CPU_AFTER];
    int after_n;
    /* The CPU of the step's omnibatch_next_step (the exchange, the last step's closing) and of
     * its waits: this rank's whatever it waits for, a fixed cost of every step (the median of
     * the last steps'). */
    uint64_t next_step_ns;
    double own[OB_API_CPU_AFTER];
    int own_n;
    /* The CPU from the step's first gradient allreduce's start to its last's end outside the
     * waits (the transfer): the median of the last steps' is what a look at the step from that
     * start adds (ob_exchange_begin()). */
    uint64_t entry_ns;           /* at that start; 0 when the step had none */
    double post[OB_API_CPU_AFTER];
    int post_n;
    /* The compute measured in the last steps at batch wall_batch. */
    double wall_recent[OB_API_CPU_AFTER];
    int wall_n;
    long wall_batch;
};

struct ob_node;
struct ob_chunks;

/** A node of the list of live handles (api_registry.c), held in the handle itself. */
typedef struct ob_api_live {
    struct ob_api_live *next;
} ob_api_live;

struct omnibatch_context {
    MPI_Comm comm;               /* private duplicate: every message of the library goes here */
    int rank;
    int nranks;
    long global_batch;           /* B */
    long dataset_size;           /* N */
    long steps_per_epoch;        /* ceil(N / B) */
    omnibatch_options opt;       /* as validated at create */
    long *lo;                    /* nranks: every rank's bounds, gathered at create */
    long *hi;
    ob_controller ctl;           /* the plan, identical on every rank */
    ob_estimator est;            /* this rank's speed model */
    ob_rank_record *records;     /* nranks: the records of the last exchange */
    int64_t *agree;              /* 2 * (1 + 2 * nranks): omnibatch_set_plan()'s agreement */

    /* The step handed out last. */
    long next_global_step;
    int have_step;
    omnibatch_step step;

    /* Timing of the running step (api_measure.c closes it). */
    struct ob_step_clock clock;

    /* OMNIBATCH_REACT: this rank's model confirmed a lasting change of speed
     * (or took its first sample) since the last exchange; exchanges brought
     * forward in a row. */
    int speed_changed;
    int closed_change;           /* the step closed last confirmed one */
    int parked;                  /* the last steps gave this rank batch 0 (OMNIBATCH_MIN_BATCH=0) */
    long early_streak;
    long early_hold_until;       /* after OB_API_MAX_EARLY in a row: none before this step */
    long last_exchange_step;     /* the step the last exchange came before */

    /* The collective omnibatch_next_step() for step next_step opens with
     * (OB_API_NEXT_*), started in the step before's first gradient allreduce,
     * where every rank is anyway: begun there, it waits for no rank that is
     * late out of that reduction (a slow link's last fragments), while the
     * others already compute.  request is MPI_REQUEST_NULL once done or when
     * the flag rode the arrival's allreduce (asleep). */
    struct {
        int kind;
        long step;
        MPI_Request request;
        int flag;                /* REACT: this rank's flag, sent */
        int any;                 /* REACT: the most of the ranks' flags; EXCHANGE: 1 where they
                                  * brought it forward (asleep, known at the arrival) */
        int peeked;              /* the step's sample, peeked at then, is news (OB_MEASURE_NEWS_*) */
        ob_rank_record mine;     /* EXCHANGE, RECORDS: this rank's record, sent */
    } next;

    /* Measured compute and blocked time since the last exchange (the record's
     * compute_mean and blocked_mean). */
    double compute_sum;
    double blocked_sum;
    long compute_n;
    double reduction;            /* the step model's reduction at the last exchange, -1 before it */
    ob_rank_record last_record;  /* this rank's record at the last exchange (its model for the
                                  * report, ob_hook.h); samples 0 before the first */

    omnibatch_stats stats;

    /* The distributed decision (api_dist.c): 0 not chosen yet, 1 on, -1 off (central). */
    int dist_chosen;
    int dist_pooled_said;        /* the debug line "planned on pooled speeds" was written */
    ob_dist_state dist;

    /* OMNIBATCH_WAIT=sleep: the gradient allreduce waits with naps (api_gradient.c),
     * timed by when the last rank arrived in the last steps (ob_nap.h), from the
     * end of the reduction before (clock.reduced_ns; 0 before the first). */
    int wait_sleep;
    ob_nap nap;
    /* Asleep with every rank on one node: the sum in shared memory (api_node.c); NULL: MPI's. */
    struct ob_node *node;
    /* options.chunks: the node's shared words of the ranks' ranges (api_chunk.c); NULL: off. */
    struct ob_chunks *chunks;

    /* Under a CPU quota, the CPU the step needs of it (api_measure.c). */
    struct ob_cpu_meter cpu;
    ob_cpu_watch cpu_watch;      /* the CPU the rank got since its last record (ob_starve.h) */

    /* Reused for scaling a separate send buffer: the user's is never written. */
    void *scratch;
    size_t scratch_bytes;

    ob_api_live live;            /* in the live handles (api_registry.c) */
};

/* api_chunk.c: work that moves inside a step (options.chunks). */

/** \brief Collective on c->comm: c->chunks set up where options.chunks (the node's shared
 *  words); an MPI code where any rank could not (then none has them), and in \p call the MPI
 *  call that failed. */
int ob_chunk_open(struct omnibatch_context *c, const char **call);

/** \brief Collective on the node: give back what ob_chunk_open() took. */
void ob_chunk_close(struct omnibatch_context *c);

/** \brief After MPI_Finalize: forget it (MPI has taken the window back). */
void ob_chunk_forget(struct omnibatch_context *c);

/** \brief The step handed out (c->step) begins in chunks: this rank's word holds its range. */
int ob_chunk_begin(struct omnibatch_context *c);

/** \brief The step's samples taken from other ranks' ranges and given of this rank's, once
 *  none is left; -1 and -1 when the step was not worked in chunks. */
void ob_chunk_moved(const struct omnibatch_context *c, long *taken, long *given);

/** \brief 1 when the step may end (chunks off, or none left was answered), else 0. */
int ob_chunk_ready(const struct omnibatch_context *c);

/** \brief 1 when this rank's speed fell inside the step (a chunk of its ran slower than the
 *  step's pace before it, by more than its fixed part: ob_chunk_timed()), else 0: the step's
 *  time is of two speeds. */
int ob_chunk_changed(const struct omnibatch_context *c);

/** \brief The step's sample for this rank's model: where the step was worked in chunks, \p *batch
 *  becomes the rank's range and \p *compute the time at the pace it did its samples (compute
 *  times range over done); else both unchanged. */
void ob_chunk_sample(const struct omnibatch_context *c, double *batch, double *compute);

/* api_node.c: the gradient summed in shared memory (OMNIBATCH_NODE_SUM). */

/** \brief Collective on c->comm: c->node set where \p want on every rank, every rank on one
 *  node, and the shared block allocated on all; else NULL on all.  An MPI failure's code, and
 *  in \p call the MPI call that failed. */
int ob_node_open(struct omnibatch_context *c, int want, const char **call);

/** \brief Collective on \p all: a shared window of \p bytes on node rank 0 of \p node (none on
 *  the others), its base in \p base on every rank, in one passive epoch for its life; every
 *  rank of \p all learns whether all succeeded (MPI_ERR_NO_MEM where one did not). */
int ob_node_window(MPI_Comm node, int node_rank, MPI_Comm all, size_t bytes, MPI_Win *win, void **base);

/** \brief Collective on the window's node: end its epoch and free it (nothing for MPI_WIN_NULL). */
void ob_node_window_free(MPI_Win *win);

/** \brief Collective on c->comm: give back what ob_node_open() and the sums took. */
void ob_node_close(struct omnibatch_context *c);

/** \brief After MPI_Finalize: forget it (MPI has taken the memory back). */
void ob_node_forget(struct omnibatch_context *c);

/** \brief This rank's slot where it holds \p bytes; NULL where it does not yet. */
void *ob_node_slot(struct omnibatch_context *c, size_t bytes);

/** \brief Arrive with \p in and sleep until every rank has; \p out: the combined fields. */
void ob_node_arrive(struct omnibatch_context *c, const int32_t in[OB_NODE_IN], int32_t out[OB_NODE_OUT]);

/** \brief Collective on c->comm (after an arrival): slots of at least \p bytes; an MPI code
 *  where any rank could not have them (then none has a slot). */
int ob_node_reserve(struct omnibatch_context *c, size_t bytes);

/** \brief With every rank's weighted gradient in its slot (after an arrival): the sum into
 *  \p recvbuf, on every rank. */
void ob_node_sum(struct omnibatch_context *c, void *recvbuf, int count, MPI_Datatype type, size_t elem);

/* api_wait.c: OMNIBATCH_WAIT=sleep, an allreduce whose waiting rank
 * sleeps: a nonblocking one tested between naps (a rank under a CPU quota
 * would spend in polling what its compute needs).  \p expected: the seconds
 * this rank expects to wait for the others (ob_nap_waiting()), or a
 * negative number where every rank is in and the call is the transfer
 * itself (ob_nap_transfer(), naps of 50 us lasting \p short_s). */
int ob_api_allreduce_asleep(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
                            MPI_Comm comm, double expected, double short_s);

/* api_wait.c: wait for the nonblocking request \p req as
 * ob_api_allreduce_asleep() does. */
int ob_api_wait_asleep(MPI_Request *req, double expected, double short_s);

/* api_errors.c */

/** \brief ob_fail(OMNIBATCH_ERR_MPI, ...) with MPI's own text for \p mpi_rc. */
int ob_api_mpi_fail(int mpi_rc, const char *fn, const char *call);

/** \brief The OMNIBATCH_ERR_STATE of a call of \p fn after MPI_Finalize. */
int ob_api_finalized(const char *fn);

/* api_agree.c */

/** How a field of a gathered record is compared and shown. */
typedef enum ob_agree_kind { OB_AGREE_I64, OB_AGREE_F64, OB_AGREE_I32, OB_AGREE_U64 } ob_agree_kind;

/** A field every rank must pass alike: its name in the message, where it lies in the record. */
typedef struct ob_agree_field {
    const char *name;
    size_t offset;
    ob_agree_kind kind;
} ob_agree_field;

/**
 * \brief Compare every rank's record of \p all (P records of \p record_bytes, gathered alike
 *        on every rank) with rank 0's, field by field in the table's order.
 * \return OMNIBATCH_SUCCESS, or OMNIBATCH_ERR_ARG with the line "fn: NAME differs between
 *         ranks: X on rank 0, Y on rank I: every rank must pass the same" for the first field
 *         that differs: the same verdict on every rank.
 */
int ob_api_agree(const char *fn, const void *all, size_t record_bytes, int P,
                 const ob_agree_field *fields, size_t nfields);

/* api_registry.c */

/** \brief Make the handle holding \p node a live one (allocates nothing, cannot fail). */
void ob_api_live_add(ob_api_live *node);

/** \brief Take \p node out of the live handles; 1 if it was one, 0 if not (nothing changed). */
int ob_api_live_remove(ob_api_live *node);

/**
 * \brief The check every function taking a handle starts with, for function \p fn:
 *        OMNIBATCH_ERR_ARG for a NULL \p handle, OMNIBATCH_ERR_STATE for one whose \p node
 *        is not live (never read through) or after MPI_Finalize, each with its line naming
 *        \p creator, the function that makes such handles.
 */
int ob_api_check_live(const char *fn, const char *creator, const void *handle, const ob_api_live *node);

/** \brief Make \p c a live context (allocates nothing, cannot fail). */
void ob_api_registry_add(struct omnibatch_context *c);

/** \brief Take \p c out of the live contexts; 1 if it was one, 0 if not (nothing changed). */
int ob_api_registry_remove(struct omnibatch_context *c);

/**
 * \brief The check every function taking a context starts with, for function \p fn:
 *        OMNIBATCH_ERR_ARG for NULL, OMNIBATCH_ERR_STATE for a handle that is not a live
 *        context (never read through) or after MPI_Finalize, each with its line.
 */
int ob_api_check_context(const char *fn, const struct omnibatch_context *ctx);

/* api_measure.c: the step's measurement. */

/** ob_measure_look()'s news of the running step's sample, which the other ranks should hear
 *  of at once (OMNIBATCH_REACT): a confirmed change of speed, or the model's first sample, so
 *  that the first exchange comes at the first measured step, not at step period. */
#define OB_MEASURE_NEWS_CHANGE 1
#define OB_MEASURE_NEWS_FIRST 2

/** \brief Close the running step: feed its compute time to the estimator (after warmup), note
 *         it to the layer (ob_hook.h). */
void ob_measure_close(struct omnibatch_context *c);

/**
 * \brief A look at the running step from its first gradient allreduce (\p now): its compute
 *        as ob_measure_close() will take it in \p compute, folded into \p est (a copy of the
 *        model, written whole); \p adds: whether closing adds a sample.
 * \return The sample's news (OB_MEASURE_NEWS_*), 0 for none.
 */
int ob_measure_look(const struct omnibatch_context *c, uint64_t now, ob_estimator *est, double *compute,
                    int *adds);

/** \brief The record's blocked time: the mean over the measured steps closed since the last
 *         exchange (before any, the last step's). */
double ob_measure_blocked_mean(const struct omnibatch_context *c);

/* api_exchange.c: the plan exchange. */

/**
 * \brief At the start of a step (c->next_global_step): finish the collective the last step's
 *        gradient allreduce started for it, or run the exchange where one is due (every
 *        period steps, or brought forward: OMNIBATCH_REACT), and decide.
 * \return OMNIBATCH_SUCCESS, or the failure every rank returns alike.
 */
int ob_exchange_step(struct omnibatch_context *c);

/**
 * \brief At the step's first gradient allreduce (\p now: its start, after the weighting): which
 *        collective the next omnibatch_next_step() opens with (OB_API_NEXT_*), with what this
 *        rank sends in it: REACT's flag from a look at the step's measurement as closing it
 *        will take it, or its record for the exchange.  Posts nothing (ob_exchange_post()).
 */
int ob_exchange_begin(struct omnibatch_context *c, uint64_t now);

/**
 * \brief Start the collective ob_exchange_begin() chose; \p carried: REACT's flag rode the
 *        arrival's allreduce already, and \p any is the most of the ranks' flags (an exchange
 *        they bring forward is gathered from here).
 * \return MPI_SUCCESS or MPI's error code.
 */
int ob_exchange_post(struct omnibatch_context *c, int carried, int any);

/** \brief Complete and forget a started collective the next step will not use (a checkpoint,
 *         the end): every rank started the same one. */
void ob_exchange_drop(struct omnibatch_context *c);

/** \brief At a decision, central or distributed: the steps since the last one, counted toward
 *         the parked ranks' probe gaps (ob_controller_advance()). */
static inline void ob_exchange_count_steps(struct omnibatch_context *c)
{
    ob_controller_advance(&c->ctl, c->next_global_step - c->last_exchange_step);
    c->last_exchange_step = c->next_global_step;
}

/* api_dist.c */

/** \brief Whether this context decides distributed (OMNIBATCH_PLANNER, chosen at the first exchange). */
int ob_api_dist_on(struct omnibatch_context *c);

/**
 * \brief One exchange with the distributed decision from this rank's record \p mine (instead of
 *        the allgather of every record): the decision, the plan refreshed when it changed, and
 *        under OMNIBATCH_VERIFY the checks against the other ranks and the central planner.
 * \return OMNIBATCH_SUCCESS (a decision that fails leaves the plan as it is, with a warning),
 *         or OMNIBATCH_ERR_DISAGREE / OMNIBATCH_ERR_MPI.
 */
int ob_api_dist_exchange(struct omnibatch_context *c, const ob_rank_record *mine);

#endif /* OB_API_H */
