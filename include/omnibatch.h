/*
 * Copyright (c) 2026 The omnibatch authors.
 */
/**
 * \file omnibatch.h
 * \brief omnibatch: per-rank mini-batches that make synchronous data-parallel
 *        training run at the speed of the whole cluster, not its slowest rank.
 *
 * The lifecycle of a context, like an hwloc topology:
 *
 *   omnibatch_options_init()  ->  omnibatch_create()  ->  per step:
 *   omnibatch_next_step(), [omnibatch_compute_begin()/end()],
 *   omnibatch_allreduce_gradient()  ->  omnibatch_destroy().
 *
 * omnibatch_create(), omnibatch_next_step(), omnibatch_allreduce_gradient(),
 * omnibatch_set_plan() and omnibatch_destroy() are collective over the
 * context's communicator: every rank calls them in the same order.  The other
 * functions are local.  Every function returns OMNIBATCH_SUCCESS (0) or one
 * of the codes of omnibatch_status; omnibatch_strerror() names a code and
 * omnibatch_last_error() gives the calling thread's detail line, which names
 * the argument, its value and what is allowed.  Arguments are checked before
 * any communication; omnibatch_create() and omnibatch_set_plan() agree on the
 * outcome, so a rank's bad argument fails every rank instead of leaving the
 * others waiting.
 *
 * Every function that takes a context first checks that the handle is a
 * live one (created and not yet destroyed, through whichever copy of it) and
 * that MPI is not finalized: otherwise it returns OMNIBATCH_ERR_STATE with a
 * line, without reading through the handle or calling MPI.  (A handle whose
 * memory a later omnibatch_create() happened to reuse is that new context:
 * set copies to NULL.)  omnibatch_options_init(), omnibatch_strerror(),
 * omnibatch_last_error() and omnibatch_get_version() need no MPI and work
 * at any time.
 *
 * A context belongs to one thread at a time.  The library's own messages
 * travel with PMPI_* calls on a duplicate of the communicator, so they never
 * meet the application's and are not seen by profiling tools.
 *
 * One source can run with or without the library: omnibatch_dl.h looks these
 * functions up at run time (dlsym), so a program built without -lomnibatch
 * gets the plan when libomnibatch.so is preloaded.
 *
 * Training where no rank waits for another, a parameter server whose batches
 * equalise the workers' push rates, is the group omnibatch_ps below.
 */
#ifndef OMNIBATCH_H
#define OMNIBATCH_H

#include <stddef.h>
#include <stdint.h>
#include <mpi.h>

#include "omnibatch_status.h"

#ifdef __cplusplus
extern "C" {
#endif

/** \brief An omnibatch context: the batch plan of one training run on one communicator. */
typedef struct omnibatch_context *omnibatch_t;

/** \brief What the code does with the summed gradient. */
typedef enum omnibatch_convention {
    OMNIBATCH_GRAD_MEAN = 0,        /**< the allreduce result is the gradient: scale by b_i / B */
    OMNIBATCH_GRAD_DIVIDE_BY_P = 1  /**< the code divides the sum by P: scale by P * b_i / B */
} omnibatch_convention;

/** \brief The first plan, before anything is measured. */
typedef enum omnibatch_prior {
    OMNIBATCH_PRIOR_EQUAL = 0,      /**< equal shares */
    OMNIBATCH_PRIOR_CORES = 1,      /**< proportional to the cores of each rank's cpuset */
    OMNIBATCH_PRIOR_GPUS = 2        /**< proportional to each rank's own GPUs (CUDA_VISIBLE_DEVICES, else
                                         those near its cpuset) if every rank has one, else to cores */
} omnibatch_prior;

/** \brief The seed of the epochs' permutation unless set (any value is allowed). */
#define OMNIBATCH_DEFAULT_SEED UINT64_C(20260101)

/**
 * \brief Options of a context; omnibatch_options_init() fills the defaults.
 *
 * min_batch, max_batch, warmup and forget belong to the calling rank and may
 * differ between ranks (a rank with less memory sets a smaller max_batch).
 * All the other fields must be the same on every rank; omnibatch_create()
 * fails with OMNIBATCH_ERR_ARG naming the first that differs.
 */
typedef struct omnibatch_options {
    long min_batch;                 /**< least local batch of this rank, >= 0 (OMNIBATCH_MIN_BATCH, 1).
                                         0: the rank may be parked (local batch 0) while it is far
                                         slower than the others; it still calls every collective,
                                         its gradient weighs 0, and it is probed with a small batch
                                         every OB_CTL_PROBE_DECISIONS decisions it stays parked */
    long max_batch;                 /**< largest local batch of this rank (memory limit), >= min_batch,
                                         or 0 = the global batch (OMNIBATCH_MAX_BATCH, 0) */
    long granularity;               /**< local batches are multiples of this (8 suits GPUs), in
                                         [1, global batch]; one rank may also carry B mod granularity
                                         (OMNIBATCH_GRANULARITY, 1) */
    double gain;                    /**< proportional gain Kp in (0, 1] (OMNIBATCH_GAIN, 1) */
    double deadband;                /**< least predicted step-time gain worth a change, in [0, 0.5]
                                         (OMNIBATCH_DEADBAND, 0.02) */
    double forget;                  /**< estimator forgetting factor in [0.5, 1] (OMNIBATCH_FORGET, 0.998) */
    long period;                    /**< steps between plan exchanges, in [1, 1000000] (OMNIBATCH_PERIOD, 4) */
    long warmup;                    /**< first steps not measured, in [0, 1000000] (OMNIBATCH_WARMUP, 2) */
    omnibatch_convention convention;/**< see omnibatch_allreduce_gradient() (OMNIBATCH_CONVENTION, mean) */
    omnibatch_prior prior;          /**< first plan (OMNIBATCH_PRIOR, equal) */
    int adaptive;                   /**< 1: the controller moves the plan; 0: the plan stays as set
                                         (0 when OMNIBATCH_ENABLE=off; default 1) */
    int verify;                     /**< 1: check at each exchange that every rank holds the same plan
                                         (OMNIBATCH_VERIFY, 0) */
    uint64_t seed;                  /**< seed of the per-epoch permutation, the same on every rank
                                         (OMNIBATCH_DEFAULT_SEED) */
    int react;                      /**< 1: a rank whose model saw a lasting change of speed (or
                                         its first sample), or a plan that moved at the last
                                         decision, brings the next exchange forward to the next
                                         step (one small collective per step between exchanges,
                                         started with the gradient allreduce); 0: exchanges every
                                         \p period steps only (OMNIBATCH_REACT, 1) */
    int chunks;                     /**< 1: the code works each step in chunks that move to a
                                         rank that is free (omnibatch_next_chunk()); 0: off
                                         (OMNIBATCH_CHUNKS, 0; since 0.4.0) */
    long chunk_floor;               /**< least samples of a chunk (the last of a range may be
                                         less), a multiple of \p granularity, or 0 = auto:
                                         B / (32 P), raised so that a chunk's measured fixed
                                         cost is at most a quarter of its time
                                         (OMNIBATCH_CHUNK_FLOOR, 0; since 0.4.0) */
} omnibatch_options;

/**
 * \brief Fill \p opt with the defaults, overridden by the OMNIBATCH_* environment.
 *
 * Local, and callable before MPI_Init.  The environment is read once per
 * process (the settings of the table above; unknown OMNIBATCH_* names are
 * warned about).
 * \param[out] opt  the options; on failure, the built-in defaults.
 * \return OMNIBATCH_SUCCESS, OMNIBATCH_ERR_ARG (\p opt is NULL), or OMNIBATCH_ERR_CONFIG
 *         with a detail line naming the bad variable, its value and what is allowed.
 */
OMNIBATCH_EXPORT int omnibatch_options_init(omnibatch_options *opt);

/**
 * \brief Create a context (collective over \p comm; MPI must be initialised).
 * \param[in] comm          the communicator the gradients are reduced on; duplicated, so the
 *                          library's traffic never meets the application's.
 * \param[in] global_batch  B: the samples of one global step, the same on every rank.
 * \param[in] dataset_size  N: samples per epoch (>= 1).
 * \param[in] opt           options (NULL: omnibatch_options_init()'s).
 * \param[out] ctx          the context (NULL on failure).
 * \return OMNIBATCH_SUCCESS; OMNIBATCH_ERR_STATE before MPI_Init or after MPI_Finalize;
 *         OMNIBATCH_ERR_ARG for a bad argument or option (or one that differs between
 *         ranks); OMNIBATCH_ERR_CONFIG for a bad OMNIBATCH_* setting when \p opt is NULL;
 *         OMNIBATCH_ERR_INFEASIBLE when the ranks' bounds cannot hold the global batch
 *         (P * min_batch > B, the max_batch sum to less than B, granularity);
 *         OMNIBATCH_ERR_NOMEM; OMNIBATCH_ERR_MPI.  When one rank fails, all do: a rank with
 *         a bad argument gets its own code and line, the others the code of the
 *         worst failure (the highest code) and a line naming the rank.
 */
OMNIBATCH_EXPORT int omnibatch_create(MPI_Comm comm, long global_batch, long dataset_size,
                                      const omnibatch_options *opt, omnibatch_t *ctx);

/**
 * \brief Destroy a context (collective) and set *ctx to NULL.
 *
 * Call it before MPI_Finalize; after MPI_Finalize it only frees memory and
 * returns OMNIBATCH_ERR_STATE (the communicator cannot be freed any more).
 * \return OMNIBATCH_SUCCESS; OMNIBATCH_ERR_ARG for ctx or *ctx NULL; OMNIBATCH_ERR_STATE
 *         when *ctx is not a live context (destroyed already through another copy of the
 *         handle: nothing is touched) or after MPI_Finalize; OMNIBATCH_ERR_MPI.
 */
OMNIBATCH_EXPORT int omnibatch_destroy(omnibatch_t *ctx);

/** \brief One step of this rank, as omnibatch_next_step() hands it out. */
typedef struct omnibatch_step {
    long epoch;                     /**< 0-based epoch */
    long step;                      /**< 0-based step within the epoch */
    long global_step;               /**< 0-based step since the context was created */
    long start;                     /**< first position of this rank's slice in the epoch's permutation */
    long count;                     /**< this rank's local batch for the step (may be 0 on a short last step) */
    long total;                     /**< the step's global size: B, or the remainder on an epoch's last step */
    double scale;                   /**< what this rank multiplies its mean gradient (or its mean
                                         loss, before the backward pass) by so that the code's own
                                         MPI_SUM allreduce on the context's communicator yields
                                         the gradient of the step's whole global batch: count / total
                                         under OMNIBATCH_GRAD_MEAN (the sum is the gradient),
                                         P * count / total under OMNIBATCH_GRAD_DIVIDE_BY_P (the code
                                         divides the sum by P, as DDP and Horovod do); 0 when count
                                         is 0 (since 0.2.0; appended last, so the fields above keep
                                         their offsets) */
} omnibatch_step;

/**
 * \brief Begin the next step: the local batch and its slice.
 *
 * Collective.  Ends the previous step: its compute time (from this call's
 * return to the start of the step's last omnibatch_allreduce_gradient(), less
 * the time spent inside the earlier ones of the same step; or the time between
 * the markers when omnibatch_compute_begin()/end() were used) is fed to this
 * rank's model once the \p warmup steps are over.  A step without markers
 * and without omnibatch_allreduce_gradient() is not measured.
 *
 * Every \p period steps the ranks exchange one small record each (one
 * allgather) and all compute the same new plan from the same records; no
 * root, no broadcast.  The new plan applies to the step handed out.
 *
 * A code that reduces its gradient itself multiplies its mean gradient by
 * step->scale before its MPI_SUM allreduce: the sum is then the gradient of
 * the global batch, with no other help from the library (no
 * OMNIBATCH_WEIGHT).  A rank whose count is 0 contributes zeros: its mean of
 * no samples is undefined (0/0), and 0 times NaN is NaN.
 *
 * Use samples perm[start .. start + count - 1] of the epoch's permutation
 * (omnibatch_permutation()).  Over an epoch every sample is used exactly once,
 * whatever plans are applied; the epoch's last step may be short, split in
 * proportion to the plan (a rank may get count 0).
 *
 * \param[in]  ctx   the context.
 * \param[out] step  the step.
 * \return OMNIBATCH_SUCCESS, OMNIBATCH_ERR_ARG, OMNIBATCH_ERR_MPI, or
 *         OMNIBATCH_ERR_DISAGREE (verify on and the ranks' plans differ; every rank gets it).
 */
OMNIBATCH_EXPORT int omnibatch_next_step(omnibatch_t ctx, omnibatch_step *step);

/**
 * \brief Mark the start of this step's compute (optional; pair with omnibatch_compute_end()).
 *
 * When a step has markers, its compute time is the sum of its marked
 * intervals, whatever they contain.  Local.
 * \return OMNIBATCH_ERR_STATE before the first step or when already inside a pair.
 */
OMNIBATCH_EXPORT int omnibatch_compute_begin(omnibatch_t ctx);

/** \brief Mark the end of this step's compute (OMNIBATCH_ERR_STATE without a begin). */
OMNIBATCH_EXPORT int omnibatch_compute_end(omnibatch_t ctx);

/** \brief A chunk of the running step (omnibatch_next_chunk()). */
typedef struct omnibatch_chunk {
    long start;                     /**< first position of the chunk in the epoch's permutation */
    long count;                     /**< samples in the chunk; 0: none left, every sample of the
                                         step is claimed by some rank */
    int owner;                      /**< the rank whose range the chunk came from (this rank's
                                         own, or a slower rank's it was taken from) */
    long done;                      /**< samples this rank has claimed in the step, this chunk's
                                         included */
    double scale;                   /**< as omnibatch_step.scale, for this rank's mean gradient
                                         over its \p done samples: done / total (times P under
                                         OMNIBATCH_GRAD_DIVIDE_BY_P); final once count is 0 */
} omnibatch_chunk;

/**
 * \brief The next chunk of the running step: from this rank's own range first, then from the
 *        tail of a slower rank's (options.chunks).
 *
 * With chunks on, a step's samples are not bound to the rank the plan gave them to: the code
 * calls this until it answers count 0, computing each chunk's samples (perm[start .. start +
 * count - 1]) and accumulating their gradient.  Its own range comes first, in chunks that
 * shrink toward its end (the first ones small, so that a rank that slows down mid-step holds
 * up one small chunk); once that is empty, the call takes a chunk from the tail of a rank
 * that is behind: within a node through one shared 64-bit word per rank (its range's next and
 * end, changed by atomic compare-and-swap, so two ranks never get the same sample and the
 * slower rank is never asked).  It answers count 0 when every sample of the step is claimed;
 * every sample of the step is then done by exactly one rank, and over an epoch every sample
 * exactly once, as without chunks.
 *
 * The rank's weight follows the samples it actually did: after count 0, chunk->scale (and the
 * step's weight that omnibatch_allreduce_gradient() applies) is done / total.  So the code
 * passes its mean gradient over its \p done samples (or zeros when done is 0), and the sum is
 * still exactly the gradient of the step's global batch.  The step is measured on the samples
 * done.  Every rank must work each step in chunks once the option is on (the option is agreed
 * at omnibatch_create()); a step ends, as always, with the gradient's reduction over every rank.
 * Local, save for the shared words (no message within a node).
 *
 * \param[in]  ctx    the context (created with options.chunks = 1).
 * \param[out] chunk  the chunk; count 0 when none is left.
 * \return OMNIBATCH_SUCCESS, OMNIBATCH_ERR_ARG (\p chunk NULL), OMNIBATCH_ERR_STATE (no step
 *         running, chunks off, or called again after count 0 in the same step).
 */
OMNIBATCH_EXPORT int omnibatch_next_chunk(omnibatch_t ctx, omnibatch_chunk *chunk);

/**
 * \brief Weight this rank's mean gradient and sum it over the ranks in one allreduce.
 *
 * Scales by count / total (OMNIBATCH_GRAD_MEAN) or P * count / total
 * (OMNIBATCH_GRAD_DIVIDE_BY_P) of the current step, then sums with one
 * MPI_SUM allreduce on the context's communicator: the result is the gradient
 * of the step's whole global batch (times P for OMNIBATCH_GRAD_DIVIDE_BY_P,
 * which the code then divides by P).  A rank whose count is 0 contributes
 * zeros, whatever its buffer holds.  A code that reduces its gradient in
 * several buckets calls this once per bucket.  Collective.
 *
 * How the rank waits for the others: in the MPI library's blocking
 * allreduce (OMNIBATCH_WAIT=poll; Open MPI and MPICH poll, a core busy for
 * the whole wait), or with OMNIBATCH_WAIT=sleep in a nonblocking allreduce
 * tested between naps, so that a rank under a CPU quota (containers) does
 * not spend in polling the quota its compute needs: one nap to about when
 * the last rank arrived in the last steps, then short ones (about 1-2% of a
 * core while waiting; the last rank to arrive waits 1-3 ms longer).  The
 * default, auto, sleeps where the rank's quota is under one core (where any
 * rank sleeps, all do).  The sum is the same.  Sleeping costs one
 * two-integer allreduce per call, which says when the ranks arrived and
 * whether any rank's buffers are on a GPU: then every rank reduces with the
 * blocking call, after waiting asleep.
 *
 * GPU memory (CUDA device buffers, found through the CUDA driver when the
 * process has loaded it; nothing is loaded otherwise) is scaled on its GPU,
 * rounded as on the host, and reduced by the MPI library, which must then be
 * CUDA-aware (Open MPI's MPIX_Query_cuda_support()); an out-of-place device
 * \p sendbuf is scaled into \p recvbuf.  Pinned and managed memory count as
 * host memory.  A refused call returns before the reduction: the code must
 * stop (MPI_Abort), as after any failure of this call.
 *
 * \param[in] ctx       the context.
 * \param[in] sendbuf   this rank's mean gradient, or MPI_IN_PLACE (then \p recvbuf holds it
 *                      and is scaled in place); never written otherwise.
 * \param[in,out] recvbuf the summed gradient (\p count elements).
 * \param[in] count     elements, >= 0, the same on every rank.
 * \param[in] type      MPI_FLOAT or MPI_DOUBLE.
 * \return OMNIBATCH_SUCCESS, OMNIBATCH_ERR_ARG (also: one buffer on the GPU and the other on
 *         the host), OMNIBATCH_ERR_STATE (before the first step; with chunks, before
 *         omnibatch_next_chunk() answered count 0), OMNIBATCH_ERR_NOMEM, OMNIBATCH_ERR_MPI, OMNIBATCH_ERR_DEVICE (GPU buffers and an MPI that is not
 *         CUDA-aware, or the CUDA driver refused to scale them).
 */
OMNIBATCH_EXPORT int omnibatch_allreduce_gradient(omnibatch_t ctx, const void *sendbuf,
                                                  void *recvbuf, int count, MPI_Datatype type);

/**
 * \brief The whole plan: \p nranks local batches (the communicator's size), summing to B.
 *
 * The plan of the step handed out last (or of the next step after
 * omnibatch_set_plan()); the same on every rank.  Local.
 */
OMNIBATCH_EXPORT int omnibatch_get_plan(omnibatch_t ctx, long *plan, int nranks);

/**
 * \brief Impose a plan from the next step on (collective; every rank passes the same one).
 *        With adaptive = 0 it stays; otherwise the controller moves on from it.
 * \return OMNIBATCH_ERR_ARG if \p nranks is not the communicator's size, the plan does not sum
 *         to B or breaks a bound or the granularity (one rank may carry B mod granularity);
 *         OMNIBATCH_ERR_DISAGREE if the ranks passed different plans.  Every rank gets the
 *         same code; on failure the plan is unchanged.
 */
OMNIBATCH_EXPORT int omnibatch_set_plan(omnibatch_t ctx, const long *plan, int nranks);

/**
 * \brief The epoch's permutation of 0..N-1 (N entries), the same on every rank.
 *
 * Depends only on the seed and \p epoch (>= 0).  Local.
 */
OMNIBATCH_EXPORT int omnibatch_permutation(omnibatch_t ctx, long epoch, long *perm);

/** \brief What a context has measured and decided so far (for logs and benchmarks). */
typedef struct omnibatch_stats {
    long steps;                     /**< steps handed out */
    long exchanges;                 /**< plan exchanges */
    long decisions;                 /**< exchanges at which every rank had a model */
    long changes;                   /**< decisions that moved the plan */
    double compute_s;               /**< this rank's compute in its last measured step, or -1 */
    double blocked_s;               /**< time blocked in omnibatch_allreduce_gradient() in the
                                         last finished step */
    double compute_total_s;         /**< all measured compute (after warmup) */
    double blocked_total_s;         /**< all time blocked in omnibatch_allreduce_gradient() */
    double alpha;                   /**< this rank's model t = alpha + beta * b (0 before any) */
    double beta;                    /**< seconds per sample of that model (0 before any) */
    double predicted_step_s;        /**< last decision: expected step time of the plan adopted,
                                         the models' uncertainty included (0 before the first
                                         decision) */
    double optimum_step_s;          /**< last decision: the best expected step time the measured
                                         models allow (their oracle; 0 before the first decision) */
    long parked_steps;              /**< steps this rank's plan gave it no sample (parked:
                                         OMNIBATCH_MIN_BATCH=0) */
    long early_exchanges;           /**< exchanges brought forward by \p react (counted in
                                         \p exchanges too) */
    double react_total_s;           /**< seconds spent waiting for \p react's collective
                                         in omnibatch_next_step(), all steps together
                                         (its cost against the step; started with the step
                                         before's gradient allreduce, it is mostly done by then) */
    long chunks;                    /**< chunks handed out (options.chunks; since 0.4.0) */
    long samples_taken;             /**< samples this rank took from other ranks' ranges */
    long samples_given;             /**< samples of this rank's ranges other ranks took */
} omnibatch_stats;

/** \brief This rank's view of the run so far (local). */
OMNIBATCH_EXPORT int omnibatch_get_stats(omnibatch_t ctx, omnibatch_stats *stats);


/**
 * \defgroup omnibatch_state Checkpoint and restart
 *
 * A long job is checkpointed and restarted, often on other nodes or another
 * number of ranks.  The state of a context is one blob (or one file) that
 * holds where the data stand (the next global step, hence the epoch and the
 * step within it, and the seed of the epochs' permutation) and what was
 * learnt of each rank (its speed model and its batch in the plan), each
 * rank keyed by its host name and the cores of its cpuset.
 *
 * Saving: after a step's last omnibatch_allreduce_gradient() (the step
 * counts as done), either omnibatch_save(ctx, path) (rank 0 writes the
 * file, atomically: aside, then renamed) or, for a code that keeps its own
 * checkpoint, omnibatch_state_size() and omnibatch_get_state() (every rank
 * gets the same bytes; store them with the model).
 *
 * Restarting: omnibatch_create() with the same global batch and data set
 * size, then omnibatch_restore(ctx, path) or omnibatch_set_state(ctx, blob,
 * size) before the first omnibatch_next_step().  The next step handed out
 * is the saved one, with the saved seed (it replaces the option's), so that
 * across the restart every sample of an epoch is still used exactly once,
 * at any number of ranks: step k of an epoch covers positions k*B .. k*B +
 * B - 1 of the epoch's permutation however they are split.  Each rank of the
 * new run on a host and core count takes the next entry saved for that host
 * and core count and resumes its learnt model (warm start); with the same
 * ranks the first plan is the saved plan itself, otherwise the rounded
 * optimum of the resumed models, a rank on a new host counting as the
 * known ranks' mean cost per unit of its prior weight (cores with
 * OMNIBATCH_PRIOR_CORES, else 1): the prior, in the known ranks' units.
 *
 * The blob is in the byte order and type sizes of the host that wrote it
 * and carries a checksum (of its header too): a blob from another kind of
 * host, of another version, truncated or damaged is refused with
 * OMNIBATCH_ERR_ARG, never misread.
 * @{
 */

/**
 * \brief Bytes of this context's state (local; the same on every rank).
 * \return OMNIBATCH_SUCCESS or OMNIBATCH_ERR_ARG.
 */
OMNIBATCH_EXPORT int omnibatch_state_size(omnibatch_t ctx, size_t *size);

/**
 * \brief The state of the run, the same bytes on every rank (collective).
 *
 * Ends the running step (its compute time is learnt now): call it after the
 * step's last omnibatch_allreduce_gradient().
 * \param[in]  ctx   the context.
 * \param[out] buf   at least omnibatch_state_size() bytes; need not be aligned.
 * \param[in]  size  the bytes \p buf holds.
 * \return OMNIBATCH_SUCCESS; OMNIBATCH_ERR_ARG (buf NULL or too small on any rank: every
 *         rank fails); OMNIBATCH_ERR_MPI.
 */
OMNIBATCH_EXPORT int omnibatch_get_state(omnibatch_t ctx, void *buf, size_t size);

/**
 * \brief Resume from a state (collective; every rank passes the same bytes), before the first
 *        omnibatch_next_step().
 * \return OMNIBATCH_SUCCESS; OMNIBATCH_ERR_STATE after the first step; OMNIBATCH_ERR_ARG for a
 *         blob that is not a state of this kind of host and version, is damaged, or is of
 *         another global batch or data set size; OMNIBATCH_ERR_DISAGREE when the ranks passed
 *         different blobs; OMNIBATCH_ERR_NOMEM; OMNIBATCH_ERR_MPI.  Every rank gets the same
 *         code; on failure the context is unchanged.
 */
OMNIBATCH_EXPORT int omnibatch_set_state(omnibatch_t ctx, const void *buf, size_t size);

/**
 * \brief omnibatch_get_state() into the file \p path, written by rank 0 (collective).
 * \return as omnibatch_get_state(); OMNIBATCH_ERR_ARG (on every rank) when the file cannot be
 *         written.
 */
OMNIBATCH_EXPORT int omnibatch_save(omnibatch_t ctx, const char *path);

/**
 * \brief omnibatch_set_state() from the file \p path, read by rank 0 (collective).
 * \return as omnibatch_set_state(); OMNIBATCH_ERR_ARG (on every rank) when rank 0 cannot read
 *         it or \p path is NULL on any rank.
 */
OMNIBATCH_EXPORT int omnibatch_restore(omnibatch_t ctx, const char *path);

/** @} */

/**
 * \defgroup omnibatch_ps Asynchronous training: a parameter server
 *
 * No rank waits for another.  Server ranks hold the model and apply
 * updates; each worker pulls the model and a slice of the data, computes
 * the mean gradient of its slice, and pushes it, tagged with the model
 * version it read; the push brings back the new model and the next slice.
 * Ranks 0 .. servers - 1 of the communicator are the servers (each holds a
 * range of the parameters; one is the usual choice), the others the
 * workers.  All traffic is two-sided (point to point) on a duplicate of the
 * communicator: no passive-target RMA, which Open MPI 4.1 over TCP only
 * progresses when the target calls MPI.
 *
 * The update.  A gradient g of b samples read at version v, arriving when
 * the server is at version u (the updates applied so far), is tau = u - v
 * updates stale; it is dropped when tau > max_staleness and otherwise
 * applied as SGD with momentum mu and weight decay wd:
 *     m <- mu m + s (g + wd w);   w <- w - lr m,   s = (b / ref_batch) f(tau),
 * f = 1 (OMNIBATCH_PS_STALE_CONSTANT), 1 / max(1, tau) (_INVERSE: Zhang et
 * al., IJCAI 2016) or min(1, workers / tau) (_ADAPTIVE: Koloskova et al.,
 * NeurIPS 2022).  With s = 1 this is PyTorch's SGD; every push is counted as
 * applied or dropped.
 *
 * The batches.  Server 0 hands out the slices of each epoch's permutation
 * (the synchronous mode's, omnibatch_ps_permutation()) in turn, so every
 * sample is handed out once per epoch, and sizes them: with \p adaptive it
 * learns each worker's cycle (compute and round trip) from its pushes and
 * gives it the batch at which all workers push at the same rate (hence with
 * the same staleness), the batches summing to the global batch; without,
 * the batches stay as set (equal, or omnibatch_ps_set_plan()'s).
 *
 * The order of calls:
 *
 *     omnibatch_ps_options_init() -> omnibatch_ps_create() (collective) ->
 *       servers: [omnibatch_ps_restore()], omnibatch_ps_serve() until *done,
 *                [omnibatch_ps_set_plan(), stats, omnibatch_ps_save() between calls];
 *       workers: omnibatch_ps_pull(), then while !task.done: compute on
 *                perm[task.start .. task.start + task.count - 1],
 *                omnibatch_ps_push();
 *     -> omnibatch_ps_destroy() (every rank).
 *
 * The run ends when the data (\p epochs) or the budget (\p max_pushes) is
 * spent: each worker's next push is answered with done, and the servers'
 * omnibatch_ps_serve() returns with *done = 1 once every worker is done.
 * A server that destroys its context early answers every worker's next
 * push with done before it goes; a worker that destroys its context early
 * tells the servers it leaves.  Functions of the other role fail with
 * OMNIBATCH_ERR_STATE and a line, before any communication.
 * @{
 */

/** \brief A parameter-server context: the servers and workers of one asynchronous run. */
typedef struct omnibatch_ps *omnibatch_ps_t;

/** \brief How the step shrinks with a gradient's staleness tau. */
typedef enum omnibatch_ps_staleness {
    OMNIBATCH_PS_STALE_CONSTANT = 0, /**< f = 1: plain asynchronous SGD */
    OMNIBATCH_PS_STALE_INVERSE = 1,  /**< f = 1 / max(1, tau) (Zhang et al., IJCAI 2016) */
    OMNIBATCH_PS_STALE_ADAPTIVE = 2  /**< f = min(1, workers / tau) (Koloskova et al., NeurIPS 2022) */
} omnibatch_ps_staleness;

/** \brief An option chosen by the library (max_staleness: 4 x workers). */
#define OMNIBATCH_PS_AUTO (-1)

/**
 * \brief Options of a parameter-server context; omnibatch_ps_options_init() fills the defaults.
 *
 * min_batch and max_batch belong to the calling worker and may differ between workers (the
 * servers' are ignored); every other field must be the same on every rank (checked at create).
 */
typedef struct omnibatch_ps_options {
    int servers;                    /**< server ranks, 1 .. size - 1 (1) */
    double lr;                      /**< learning rate, > 0 (0.01) */
    double momentum;                /**< in [0, 1) (0) */
    double weight_decay;            /**< >= 0 (0) */
    long ref_batch;                 /**< the batch whose gradient takes the full step, >= 1, or 0 =
                                         the global batch (0): a round of pushes then moves the model
                                         as one synchronous step of the global batch does */
    omnibatch_ps_staleness staleness; /**< the staleness rule (OMNIBATCH_PS_STALE_ADAPTIVE) */
    long max_staleness;             /**< gradients staler are dropped, >= 0, or OMNIBATCH_PS_AUTO =
                                         4 x workers (OMNIBATCH_PS_AUTO) */
    int adaptive;                   /**< 1: the batches equalise the workers' push rates; 0: they
                                         stay as set (1) */
    long min_batch;                 /**< this worker's least batch, >= 1 (OMNIBATCH_MIN_BATCH, at least 1) */
    long max_batch;                 /**< this worker's largest batch, >= min_batch, or 0 = the global
                                         batch (OMNIBATCH_MAX_BATCH) */
    long granularity;               /**< batches are multiples of it (OMNIBATCH_GRANULARITY) */
    double gain;                    /**< proportional gain in (0, 1] (OMNIBATCH_GAIN) */
    double deadband;                /**< least predicted gain in cycle time worth a change, in
                                         [0, 0.5] (OMNIBATCH_DEADBAND) */
    double forget;                  /**< the cycle models' forgetting factor, in [0.5, 1]
                                         (OMNIBATCH_FORGET) */
    long period;                    /**< pushes between batch decisions, >= 1, or 0 = the number of
                                         workers (0) */
    long warmup;                    /**< each worker's first pushes not learnt, >= 0 (1) */
    long epochs;                    /**< epochs of data handed out, >= 0; 0 = no limit (then
                                         max_pushes must be set) (1) */
    long max_pushes;                /**< slices handed out (hence pushes) at most, >= 0; 0 = no
                                         limit (0) */
    uint64_t seed;                  /**< seed of the epochs' permutation (OMNIBATCH_DEFAULT_SEED) */
    long max_global_batch;          /**< the largest sum of the workers' batches, >= global_batch,
                                         or 0 = global_batch (0): where a worker held at its
                                         min_batch still cycles longer than the others sharing
                                         the rest of the global batch, their batches grow so that
                                         every worker pushes at one rate, up to this sum */
} omnibatch_ps_options;

/** \brief What a rank is in a parameter-server context. */
typedef enum omnibatch_ps_role {
    OMNIBATCH_PS_SERVER = 0,
    OMNIBATCH_PS_WORKER = 1
} omnibatch_ps_role;

/** \brief A worker's task, as omnibatch_ps_pull() and omnibatch_ps_push() hand it out. */
typedef struct omnibatch_ps_task {
    long epoch;                     /**< the epoch of the slice */
    long start;                     /**< first position of the slice in the epoch's permutation */
    long count;                     /**< samples of the slice: the batch (0 when done) */
    long version;                   /**< the model version the parameters now hold */
    int done;                       /**< 1: nothing more to do; push no more */
} omnibatch_ps_task;

/** \brief Server 0's count of one worker's pushes (omnibatch_ps_get_worker_stats()). */
typedef struct omnibatch_ps_worker_stats {
    int rank;                       /**< the worker's rank in the communicator */
    long pushes;                    /**< pushes received: applied + dropped */
    long applied;
    long dropped;                   /**< staler than max_staleness: counted, not applied */
    long samples;                   /**< samples of all its pushes */
    long batch;                     /**< the batch it is handed next */
    double staleness_mean;          /**< mean staleness of its pushes (updates) */
    long staleness_p99;             /**< 99th percentile */
    long staleness_max;
    double pushes_per_s;            /**< over the server's time since its first serve */
    double samples_per_s;
    double compute_s;               /**< the compute it reported, all pushes together */
    double alpha;                   /**< its cycle model t = alpha + beta * b (0 before one) */
    double beta;
} omnibatch_ps_worker_stats;

/** \brief A rank's view of the run (omnibatch_ps_get_stats()). */
typedef struct omnibatch_ps_stats {
    omnibatch_ps_role role;
    int index;                      /**< the server's or the worker's index (0-based) */
    long version;                   /**< server: updates applied; worker: the version it holds */
    long pushes;                    /**< server: pushes received; worker: pushes made */
    long dropped;                   /**< server: pushes dropped */
    long epoch;                     /**< server 0: the epoch being handed out */
    long slices;                    /**< server 0: slices handed out */
    long decisions;                 /**< server 0: batch decisions taken */
    long changes;                   /**< server 0: decisions that moved the batches */
    double elapsed_s;               /**< since the first omnibatch_ps_serve() or omnibatch_ps_pull() */
    double busy_s;                  /**< server: handling pushes and replying */
    double busy_fraction;           /**< server: busy_s / elapsed_s */
    double compute_s;               /**< worker: between receiving its tasks and pushing them */
    double wait_s;                  /**< worker: blocked in omnibatch_ps_pull() and _push() */
    int finished;                   /**< server: every worker is done; worker: it is done */
} omnibatch_ps_stats;

/**
 * \brief Fill \p opt with the defaults (the batch settings from the OMNIBATCH_* environment).
 * \return OMNIBATCH_SUCCESS, OMNIBATCH_ERR_ARG (\p opt NULL) or OMNIBATCH_ERR_CONFIG (a bad
 *         setting: \p opt then holds the built-in defaults).
 */
OMNIBATCH_EXPORT int omnibatch_ps_options_init(omnibatch_ps_options *opt);

/**
 * \brief Create a parameter-server context (collective over \p comm; MPI must be initialised).
 *
 * \param[in] comm          at least two ranks: the first opt->servers serve, the others work.
 * \param[in,out] params    the model, \p count elements on every rank: the servers' starting
 *                          model (server s holds and updates its range of it); the workers'
 *                          copy, which omnibatch_ps_pull() and _push() overwrite with the
 *                          model they bring.  It must stay valid until omnibatch_ps_destroy().
 * \param[in] count         elements, 1 .. 2^31 - 1, the same on every rank.
 * \param[in] type          MPI_FLOAT or MPI_DOUBLE, the same on every rank (gradients too).
 * \param[in] global_batch  the sum of the workers' batches, >= the workers' least batches.
 * \param[in] dataset_size  samples per epoch, >= 1.
 * \param[in] opt           options (NULL: omnibatch_ps_options_init()'s).
 * \param[out] ps           the context (NULL on failure).
 * \return OMNIBATCH_SUCCESS; OMNIBATCH_ERR_STATE outside MPI_Init .. MPI_Finalize;
 *         OMNIBATCH_ERR_ARG for a bad argument or option, or one that differs between ranks
 *         (\p count among them); OMNIBATCH_ERR_INFEASIBLE when the workers' bounds cannot hold
 *         the global batch; OMNIBATCH_ERR_CONFIG; OMNIBATCH_ERR_NOMEM; OMNIBATCH_ERR_MPI.  When
 *         one rank fails, all do (one collective agrees on it): the failing rank has its own
 *         line, the others one naming it.
 */
OMNIBATCH_EXPORT int omnibatch_ps_create(MPI_Comm comm, void *params, long count, MPI_Datatype type,
                                         long global_batch, long dataset_size,
                                         const omnibatch_ps_options *opt, omnibatch_ps_t *ps);

/** \brief This rank's role and its index among the servers or the workers (local). */
OMNIBATCH_EXPORT int omnibatch_ps_role_of(omnibatch_ps_t ps, omnibatch_ps_role *role, int *index);

/**
 * \brief Serve: apply pushes and answer them (servers only).
 *
 * The first call sends every worker its range of the model (server 0: and its first task).
 * Returns after \p max_pushes pushes (0: not before the end), or when every worker is done,
 * with *done = 1; a server may do its own work between calls (the workers are served again
 * at the next call).  Waits asleep (short naps) while no push is arriving.
 * \return OMNIBATCH_SUCCESS; OMNIBATCH_ERR_STATE on a worker or after the end;
 *         OMNIBATCH_ERR_ARG; OMNIBATCH_ERR_MPI.
 */
OMNIBATCH_EXPORT int omnibatch_ps_serve(omnibatch_ps_t ps, long max_pushes, int *done);

/**
 * \brief A worker's first task: the model into the params buffer and the first slice
 *        (workers only, once, before any push).
 * \return OMNIBATCH_SUCCESS; OMNIBATCH_ERR_STATE on a server or when called again;
 *         OMNIBATCH_ERR_ARG; OMNIBATCH_ERR_MPI.
 */
OMNIBATCH_EXPORT int omnibatch_ps_pull(omnibatch_ps_t ps, omnibatch_ps_task *task);

/**
 * \brief Push the mean gradient of the current task's slice and get the next task and the
 *        model it starts from (workers only).
 * \param[in] grad   \p count elements of the context's type (never written; reusable on return).
 * \param[out] task  the next task; task->done = 1 when there is none (the model is the latest).
 * \return OMNIBATCH_SUCCESS; OMNIBATCH_ERR_STATE on a server, before omnibatch_ps_pull() or
 *         after a done task; OMNIBATCH_ERR_ARG; OMNIBATCH_ERR_MPI.
 */
OMNIBATCH_EXPORT int omnibatch_ps_push(omnibatch_ps_t ps, const void *grad, omnibatch_ps_task *task);

/** \brief The batch each worker is handed next, \p workers of them (server 0 only, local). */
OMNIBATCH_EXPORT int omnibatch_ps_get_plan(omnibatch_ps_t ps, long *plan, int workers);

/**
 * \brief Set the batches (server 0 only, local, between omnibatch_ps_serve() calls): from each
 *        worker's next task on; with \p adaptive on, the server moves on from them.
 * \return OMNIBATCH_ERR_ARG when they do not sum to the global batch or break a worker's bounds.
 */
OMNIBATCH_EXPORT int omnibatch_ps_set_plan(omnibatch_ps_t ps, const long *plan, int workers);

/** \brief This rank's view of the run (local). */
OMNIBATCH_EXPORT int omnibatch_ps_get_stats(omnibatch_ps_t ps, omnibatch_ps_stats *stats);

/** \brief Worker \p worker's pushes, as server 0 counted them (server 0 only, local). */
OMNIBATCH_EXPORT int omnibatch_ps_get_worker_stats(omnibatch_ps_t ps, int worker,
                                               omnibatch_ps_worker_stats *stats);

/** \brief The epoch's permutation of 0 .. dataset_size - 1, the same on every rank (local). */
OMNIBATCH_EXPORT int omnibatch_ps_permutation(omnibatch_ps_t ps, long epoch, long *perm);

/**
 * \brief Save the servers' state (server 0 only, between its omnibatch_ps_serve() calls, before
 *        the end): server 0 writes \p path now (its range of the model and the momentum, the
 *        version, where the data stand: the slices in flight included, handed out again after a
 *        restore, the batches and the cycle models) and orders every other server to write its
 *        range to "path.s" when it comes to the order in its omnibatch_ps_serve(), after the
 *        same pushes: the files hold one version of the model.  Written aside, then renamed.
 *        The counts of pushes are not kept.
 * \return OMNIBATCH_SUCCESS; OMNIBATCH_ERR_STATE on a worker, on a server other than 0 or
 *         after the end; OMNIBATCH_ERR_ARG (path NULL or not writable); OMNIBATCH_ERR_MPI.  A
 *         server s > 0 whose own save fails returns it from that omnibatch_ps_serve().
 */
OMNIBATCH_EXPORT int omnibatch_ps_save(omnibatch_ps_t ps, const char *path);

/**
 * \brief Restore a server's state saved by omnibatch_ps_save() with the same count, type,
 *        global batch, data set size, servers and workers (servers only, local, before the
 *        first omnibatch_ps_serve()).
 * \return OMNIBATCH_SUCCESS; OMNIBATCH_ERR_STATE on a worker or after the first serve;
 *         OMNIBATCH_ERR_ARG for an unreadable, damaged or foreign file (nothing changed).
 */
OMNIBATCH_EXPORT int omnibatch_ps_restore(omnibatch_ps_t ps, const char *path);

/**
 * \brief Destroy the context and set *ps to NULL (every rank; before MPI_Finalize).
 *
 * A server whose workers are not all done first answers each one's next push with done
 * (applying it); a worker that is not done tells the servers it leaves (after taking its
 * first task if it never pulled).
 * \return OMNIBATCH_SUCCESS; OMNIBATCH_ERR_ARG; OMNIBATCH_ERR_STATE (not a live context, or
 *         after MPI_Finalize: only the memory is freed); OMNIBATCH_ERR_MPI.
 */
OMNIBATCH_EXPORT int omnibatch_ps_destroy(omnibatch_ps_t *ps);

/** @} */

#ifdef __cplusplus
}
#endif

#endif /* OMNIBATCH_H */
