/*
 * Copyright (c) 2026 The omnibatch authors.
 */
/**
 * \file omnibatch_status.h
 * \brief omnibatch's version, status codes and error strings: the part of the
 *        API that needs no MPI.  omnibatch.h includes it; the MPI-free core
 *        (src/base, platform, control, observe) include only this.
 */
#ifndef OMNIBATCH_STATUS_H
#define OMNIBATCH_STATUS_H

/** \brief Marks the library's exported symbols: only its own build does; for users the
 *         macro is empty. */
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
#define OMNIBATCH_VERSION_MAJOR 0          /**< \brief incompatible changes of the API */
#define OMNIBATCH_VERSION_MINOR 4          /**< \brief additions */
#define OMNIBATCH_VERSION_PATCH 0          /**< \brief fixes */
#define OMNIBATCH_VERSION_STRING "0.4.0"   /**< \brief the three, as text */
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
    OMNIBATCH_ERR_DISAGREE = 7,  /**< ranks computed different plans (OMNIBATCH_VERIFY) */
    OMNIBATCH_ERR_DEVICE = 8,    /**< a buffer in GPU memory that cannot be reduced here (the MPI
                                      library is not CUDA-aware, or the CUDA driver refused) */
    OMNIBATCH_ERR_IO = 9         /**< an output file cannot be opened or written */
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

#endif /* OMNIBATCH_STATUS_H */
