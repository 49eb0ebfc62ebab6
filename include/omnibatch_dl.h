/*
 * Copyright (c) 2026 The omnibatch authors.
 */
/**
 * \file omnibatch_dl.h
 * \brief Reach the omnibatch API at run time, without linking it.
 *
 * A program that includes this header (and not -lomnibatch) runs the same
 * with or without the library: omnibatch_dl_load() looks every function of
 * omnibatch.h up in the process (dlsym(RTLD_DEFAULT, ...)), so the library
 * is found when it is linked in or preloaded:
 *
 *     mpirun -np 4 -x LD_PRELOAD=/usr/local/lib/libomnibatch.so ./train
 *
 * When it is absent, omnibatch_dl_load() returns 0 and the program keeps its
 * own equal split.  Header-only; needs dlsym (in glibc's libc since 2.34,
 * otherwise link -ldl).
 *
 *     omnibatch_dl ob;
 *     if (omnibatch_dl_load(&ob)) {
 *         ob.create(MPI_COMM_WORLD, B, N, NULL, &ctx);
 *         ...
 *     }
 */
#ifndef OMNIBATCH_DL_H
#define OMNIBATCH_DL_H

#include <dlfcn.h>
#include <string.h>

#include "omnibatch.h"

/** \brief glibc declares RTLD_DEFAULT only under _GNU_SOURCE; its value there is 0. */
#ifndef RTLD_DEFAULT
#define RTLD_DEFAULT ((void *) 0)
#endif

#ifdef __cplusplus
extern "C" {
#endif

/** \brief The API as function pointers; every one is NULL when the library is absent. */
typedef struct omnibatch_dl {
    unsigned version;               /**< omnibatch_get_version() of the library found, or 0 */
    const char *(*strerror)(int code); /**< omnibatch_strerror() */
    const char *(*last_error)(void); /**< omnibatch_last_error() */
    unsigned (*get_version)(void); /**< omnibatch_get_version() */
    int (*options_init)(omnibatch_options *opt); /**< omnibatch_options_init() */
    int (*create)(MPI_Comm comm, long global_batch, long dataset_size,
                  const omnibatch_options *opt, omnibatch_t *ctx); /**< omnibatch_create() */
    int (*destroy)(omnibatch_t *ctx); /**< omnibatch_destroy() */
    int (*next_step)(omnibatch_t ctx, omnibatch_step *step); /**< omnibatch_next_step() */
    int (*compute_begin)(omnibatch_t ctx); /**< omnibatch_compute_begin() */
    int (*compute_end)(omnibatch_t ctx); /**< omnibatch_compute_end() */
    int (*allreduce_gradient)(omnibatch_t ctx, const void *sendbuf, void *recvbuf, int count,
                              MPI_Datatype type); /**< omnibatch_allreduce_gradient() */
    int (*get_plan)(omnibatch_t ctx, long *plan, int nranks); /**< omnibatch_get_plan() */
    int (*set_plan)(omnibatch_t ctx, const long *plan, int nranks); /**< omnibatch_set_plan() */
    int (*permutation)(omnibatch_t ctx, long epoch, long *perm); /**< omnibatch_permutation() */
    int (*get_stats)(omnibatch_t ctx, omnibatch_stats *stats); /**< omnibatch_get_stats() */
    int (*state_size)(omnibatch_t ctx, size_t *size); /**< omnibatch_state_size() */
    int (*get_state)(omnibatch_t ctx, void *buf, size_t size); /**< omnibatch_get_state() */
    int (*set_state)(omnibatch_t ctx, const void *buf, size_t size); /**< omnibatch_set_state() */
    int (*save)(omnibatch_t ctx, const char *path); /**< omnibatch_save() */
    int (*restore)(omnibatch_t ctx, const char *path); /**< omnibatch_restore() */
    int (*next_chunk)(omnibatch_t ctx, omnibatch_chunk *chunk); /**< omnibatch_next_chunk() (0.4) */
    int (*ps_options_init)(omnibatch_ps_options *opt); /**< omnibatch_ps_options_init() */
    int (*ps_create)(MPI_Comm comm, void *params, long count, MPI_Datatype type, long global_batch,
                     long dataset_size, const omnibatch_ps_options *opt,
                     omnibatch_ps_t *ps); /**< omnibatch_ps_create() */
    int (*ps_role_of)(omnibatch_ps_t ps, omnibatch_ps_role *role, int *index); /**< omnibatch_ps_role_of() */
    int (*ps_serve)(omnibatch_ps_t ps, long max_pushes, int *done); /**< omnibatch_ps_serve() */
    int (*ps_pull)(omnibatch_ps_t ps, omnibatch_ps_task *task); /**< omnibatch_ps_pull() */
    int (*ps_push)(omnibatch_ps_t ps, const void *grad, omnibatch_ps_task *task); /**< omnibatch_ps_push() */
    int (*ps_get_plan)(omnibatch_ps_t ps, long *plan, int workers); /**< omnibatch_ps_get_plan() */
    int (*ps_set_plan)(omnibatch_ps_t ps, const long *plan, int workers); /**< omnibatch_ps_set_plan() */
    int (*ps_get_stats)(omnibatch_ps_t ps, omnibatch_ps_stats *stats); /**< omnibatch_ps_get_stats() */
    int (*ps_get_worker_stats)(omnibatch_ps_t ps, int worker,
                               omnibatch_ps_worker_stats *stats); /**< omnibatch_ps_get_worker_stats() */
    int (*ps_permutation)(omnibatch_ps_t ps, long epoch, long *perm); /**< omnibatch_ps_permutation() */
    int (*ps_save)(omnibatch_ps_t ps, const char *path); /**< omnibatch_ps_save() */
    int (*ps_restore)(omnibatch_ps_t ps, const char *path); /**< omnibatch_ps_restore() */
    int (*ps_destroy)(omnibatch_ps_t *ps); /**< omnibatch_ps_destroy() */
} omnibatch_dl;

/** \brief Look up \p name into \p api->field, counting what is found (internal).
 *
 * dlsym gives an object pointer; copying its bytes into the function
 * pointer is the conversion POSIX allows without a cast ISO C forbids. */
#define OMNIBATCH_DL_SYM(api, field, name)                       \
    do {                                                         \
        void *omnibatch_dl_p_ = dlsym(RTLD_DEFAULT, name);       \
        memcpy(&(api)->field, &omnibatch_dl_p_, sizeof omnibatch_dl_p_); \
        omnibatch_dl_found_ += (NULL != omnibatch_dl_p_);        \
    } while (0)

/**
 * \brief Look the API up in the running process.
 *
 * \param[out] api  filled with the functions found; all NULL unless every one was.
 * \return 1 when the library is present and its interface matches this header
 *         (same major version, and the same minor while the major is 0); 0 otherwise.
 */
static inline int omnibatch_dl_load(omnibatch_dl *api)
{
    int omnibatch_dl_found_ = 0;
    unsigned v;

    memset(api, 0, sizeof *api);
    OMNIBATCH_DL_SYM(api, strerror, "omnibatch_strerror");
    OMNIBATCH_DL_SYM(api, last_error, "omnibatch_last_error");
    OMNIBATCH_DL_SYM(api, get_version, "omnibatch_get_version");
    OMNIBATCH_DL_SYM(api, options_init, "omnibatch_options_init");
    OMNIBATCH_DL_SYM(api, create, "omnibatch_create");
    OMNIBATCH_DL_SYM(api, destroy, "omnibatch_destroy");
    OMNIBATCH_DL_SYM(api, next_step, "omnibatch_next_step");
    OMNIBATCH_DL_SYM(api, compute_begin, "omnibatch_compute_begin");
    OMNIBATCH_DL_SYM(api, compute_end, "omnibatch_compute_end");
    OMNIBATCH_DL_SYM(api, allreduce_gradient, "omnibatch_allreduce_gradient");
    OMNIBATCH_DL_SYM(api, get_plan, "omnibatch_get_plan");
    OMNIBATCH_DL_SYM(api, set_plan, "omnibatch_set_plan");
    OMNIBATCH_DL_SYM(api, permutation, "omnibatch_permutation");
    OMNIBATCH_DL_SYM(api, get_stats, "omnibatch_get_stats");
    OMNIBATCH_DL_SYM(api, state_size, "omnibatch_state_size");
    OMNIBATCH_DL_SYM(api, get_state, "omnibatch_get_state");
    OMNIBATCH_DL_SYM(api, set_state, "omnibatch_set_state");
    OMNIBATCH_DL_SYM(api, save, "omnibatch_save");
    OMNIBATCH_DL_SYM(api, restore, "omnibatch_restore");
    OMNIBATCH_DL_SYM(api, next_chunk, "omnibatch_next_chunk");
    OMNIBATCH_DL_SYM(api, ps_options_init, "omnibatch_ps_options_init");
    OMNIBATCH_DL_SYM(api, ps_create, "omnibatch_ps_create");
    OMNIBATCH_DL_SYM(api, ps_role_of, "omnibatch_ps_role_of");
    OMNIBATCH_DL_SYM(api, ps_serve, "omnibatch_ps_serve");
    OMNIBATCH_DL_SYM(api, ps_pull, "omnibatch_ps_pull");
    OMNIBATCH_DL_SYM(api, ps_push, "omnibatch_ps_push");
    OMNIBATCH_DL_SYM(api, ps_get_plan, "omnibatch_ps_get_plan");
    OMNIBATCH_DL_SYM(api, ps_set_plan, "omnibatch_ps_set_plan");
    OMNIBATCH_DL_SYM(api, ps_get_stats, "omnibatch_ps_get_stats");
    OMNIBATCH_DL_SYM(api, ps_get_worker_stats, "omnibatch_ps_get_worker_stats");
    OMNIBATCH_DL_SYM(api, ps_permutation, "omnibatch_ps_permutation");
    OMNIBATCH_DL_SYM(api, ps_save, "omnibatch_ps_save");
    OMNIBATCH_DL_SYM(api, ps_restore, "omnibatch_ps_restore");
    OMNIBATCH_DL_SYM(api, ps_destroy, "omnibatch_ps_destroy");
    if (34 != omnibatch_dl_found_) {
        memset(api, 0, sizeof *api);
        return 0;
    }
    /* The structures of omnibatch.h must be the library's: it writes them
     * whole into the caller's (omnibatch_step grew scale in 0.2; 0.3 added
     * omnibatch_options.react and three omnibatch_stats fields; 0.4 two
     * omnibatch_options fields, three omnibatch_stats fields and the
     * asynchronous mode's functions and structures), so a library of
     * another interface is treated as absent. */
    v = api->get_version();
    if ((v >> 16) != OMNIBATCH_VERSION_MAJOR
        || (0 == OMNIBATCH_VERSION_MAJOR && ((v >> 8) & 0xffu) != OMNIBATCH_VERSION_MINOR)) {
        memset(api, 0, sizeof *api);
        return 0;
    }
    api->version = v;
    return 1;
}

#undef OMNIBATCH_DL_SYM

#ifdef __cplusplus
}
#endif

#endif /* OMNIBATCH_DL_H */
