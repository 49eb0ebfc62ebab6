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
 * omnibatch_create(), omnibatch_next_step() and omnibatch_destroy() are
 * collective over the context's communicator: every rank calls them in the
 * same order.  Every function returns OMNIBATCH_SUCCESS (0) or one of the
 * codes of omnibatch_status; omnibatch_strerror() names a code and
 * omnibatch_last_error() gives the calling thread's detail line.
 */
#ifndef OMNIBATCH_H
#define OMNIBATCH_H

#include <stddef.h>
#include <stdint.h>
#include <mpi.h>

/* Only the library's own build marks symbols for export; for users the
 * macro is empty. */
#ifdef OB_BUILDING_OMNIBATCH
#define OMNIBATCH_EXPORT __attribute__((visibility("default")))
#else
#define OMNIBATCH_EXPORT
#endif

#ifdef __cplusplus
extern "C" {
#endif

/** \name Version
 *  The release this header belongs to; omnibatch_get_version() gives the
 *  release of the library actually loaded. */
/**@{*/
#define OMNIBATCH_VERSION_MAJOR 0
#define OMNIBATCH_VERSION_MINOR 1
#define OMNIBATCH_VERSION_PATCH 0
#define OMNIBATCH_VERSION_STRING "0.1.0"
/** \brief (major << 16) | (minor << 8) | patch, comparable with <. */
#define OMNIBATCH_VERSION \
    ((OMNIBATCH_VERSION_MAJOR << 16) | (OMNIBATCH_VERSION_MINOR << 8) | OMNIBATCH_VERSION_PATCH)
/**@}*/

/** \brief Status codes returned by every omnibatch function. */
typedef enum omnibatch_status {
    OMNIBATCH_SUCCESS = 0,       /**< done */
    OMNIBATCH_ERR_ARG = 1,       /**< an argument is invalid or out of range */
    OMNIBATCH_ERR_CONFIG = 2,    /**< an OMNIBATCH_* environment setting is invalid */
    OMNIBATCH_ERR_INFEASIBLE = 3,/**< the bounds cannot hold the global batch */
    OMNIBATCH_ERR_NOMEM = 4,     /**< out of memory */
    OMNIBATCH_ERR_MPI = 5,       /**< an MPI call failed */
    OMNIBATCH_ERR_STATE = 6,     /**< call out of order (e.g. before MPI_Init) */
    OMNIBATCH_ERR_DISAGREE = 7   /**< ranks computed different plans (OMNIBATCH_VERIFY) */
} omnibatch_status;

/** \brief Name and meaning of a status code, e.g. "invalid argument". */
OMNIBATCH_EXPORT const char *omnibatch_strerror(int code);

/** \brief One line describing this thread's last failure ("" if none). */
OMNIBATCH_EXPORT const char *omnibatch_last_error(void);

/** \brief OMNIBATCH_VERSION of the library loaded at run time. */
OMNIBATCH_EXPORT unsigned omnibatch_get_version(void);

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
    OMNIBATCH_PRIOR_GPUS = 2        /**< proportional to GPUs (cores where a rank has none) */
} omnibatch_prior;

/** \brief Options of a context; omnibatch_options_init() fills the defaults. */
typedef struct omnibatch_options {
    long min_batch;                 /**< least local batch of every rank, >= 1 */
    long max_batch;                 /**< largest local batch (memory limit), 0 = the global batch */
    long granularity;               /**< local batches are multiples of this (8 suits GPUs), >= 1 */
    double gain;                    /**< proportional gain Kp in (0, 1] */
    double deadband;                /**< least predicted step-time gain worth a change, in [0, 0.5] */
    double forget;                  /**< estimator forgetting factor in [0.5, 1] */
    long period;                    /**< steps between plan exchanges, >= 1 */
    long warmup;                    /**< first steps not measured, >= 0 */
    omnibatch_convention convention;/**< see omnibatch_allreduce_gradient() */
    omnibatch_prior prior;          /**< first plan */
    int adaptive;                   /**< 1: the controller moves the plan; 0: the plan stays as set */
    int verify;                     /**< 1: check at each exchange that every rank holds the same plan */
    uint64_t seed;                  /**< seed of the per-epoch permutation, the same on every rank */
} omnibatch_options;

/**
 * \brief Fill \p opt with the defaults, overridden by the OMNIBATCH_* environment.
 * \return OMNIBATCH_SUCCESS, or OMNIBATCH_ERR_CONFIG naming the bad variable.
 */
OMNIBATCH_EXPORT int omnibatch_options_init(omnibatch_options *opt);

/**
 * \brief Create a context (collective over \p comm; MPI must be initialised).
 * \param[in] comm          the communicator the gradients are reduced on; duplicated, so the
 *                          library's traffic never meets the application's.
 * \param[in] global_batch  B: the samples of one global step, the same on every rank.
 * \param[in] dataset_size  N: samples per epoch (>= 1).
 * \param[in] opt           options (NULL: omnibatch_options_init()'s).
 * \param[out] ctx          the context.
 */
OMNIBATCH_EXPORT int omnibatch_create(MPI_Comm comm, long global_batch, long dataset_size,
                                      const omnibatch_options *opt, omnibatch_t *ctx);

/** \brief Destroy a context (collective) and set *ctx to NULL. */
OMNIBATCH_EXPORT int omnibatch_destroy(omnibatch_t *ctx);

/** \brief One step of this rank, as omnibatch_next_step() hands it out. */
typedef struct omnibatch_step {
    long epoch;                     /**< 0-based epoch */
    long step;                      /**< 0-based step within the epoch */
    long global_step;               /**< 0-based step since the context was created */
    long start;                     /**< first position of this rank's slice in the epoch's permutation */
    long count;                     /**< this rank's local batch for the step (may be 0 on a short last step) */
    long total;                     /**< the step's global size: B, or the remainder on an epoch's last step */
} omnibatch_step;

/**
 * \brief Begin the next step: the local batch and its slice.  Collective: every
 *        \p period steps the ranks exchange one small record each and all adopt
 *        the same new plan.  Measures the previous step unless markers are used.
 */
OMNIBATCH_EXPORT int omnibatch_next_step(omnibatch_t ctx, omnibatch_step *step);

/** \brief Mark the start of this step's compute (optional; pair with omnibatch_compute_end()). */
OMNIBATCH_EXPORT int omnibatch_compute_begin(omnibatch_t ctx);

/** \brief Mark the end of this step's compute. */
OMNIBATCH_EXPORT int omnibatch_compute_end(omnibatch_t ctx);

/**
 * \brief Weight this rank's mean gradient and sum it over the ranks in one allreduce.
 *
 * Scales by count / total (OMNIBATCH_GRAD_MEAN) or P * count / total
 * (OMNIBATCH_GRAD_DIVIDE_BY_P) of the current step, then sums: the result is
 * the gradient of the whole global batch.  \p sendbuf may be MPI_IN_PLACE;
 * otherwise it is not written.  \p type is MPI_FLOAT or MPI_DOUBLE.
 */
OMNIBATCH_EXPORT int omnibatch_allreduce_gradient(omnibatch_t ctx, const void *sendbuf,
                                                  void *recvbuf, int count, MPI_Datatype type);

/** \brief The whole plan: \p nranks local batches (the communicator's size), summing to B. */
OMNIBATCH_EXPORT int omnibatch_get_plan(omnibatch_t ctx, long *plan, int nranks);

/**
 * \brief Impose a plan (collective; every rank passes the same one).  With
 *        adaptive = 0 it stays; otherwise the controller moves on from it.
 * \return OMNIBATCH_ERR_ARG / OMNIBATCH_ERR_INFEASIBLE if it does not sum to B or breaks a bound.
 */
OMNIBATCH_EXPORT int omnibatch_set_plan(omnibatch_t ctx, const long *plan, int nranks);

/** \brief The epoch's permutation of 0..N-1 (N entries), the same on every rank. */
OMNIBATCH_EXPORT int omnibatch_permutation(omnibatch_t ctx, long epoch, long *perm);

#ifdef __cplusplus
}
#endif

#endif /* OMNIBATCH_H */
