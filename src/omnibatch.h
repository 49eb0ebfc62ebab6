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

#ifdef __cplusplus
}
#endif

#endif /* OMNIBATCH_H */
