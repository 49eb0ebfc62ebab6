/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * Gradient weighting in preload mode (OMNIBATCH_WEIGHT, off by default).
 * When ranks run unequal batches, each rank's mean gradient must count in
 * proportion to its batch: the sum of (b_i / B) g_i is the gradient of the
 * whole global batch.  Only recognised gradient allreduces are touched, and
 * only while an API context publishes the running step (ob_active.h): the
 * layer cannot know b_i otherwise.  Of those, only the step's gradient
 * reduction: a call of the learned per-step pattern, in a whole step, on a
 * communicator of more than one rank congruent with the context's
 * (ob_layer_weighs()).  A metric on MPI_COMM_SELF or a sub-communicator,
 * or any call before the pattern is known, passes through unchanged.
 */
#include "config.h"

#include <pthread.h>
#include <stdlib.h>

#include "ob_active.h"
#include "ob_config.h"
#include "ob_layer.h"
#include "ob_log.h"
#include "ob_memtype.h"

/* Scratch for blocking allreduces, one per thread (a Horovod-style
 * background thread and the main thread may reduce at once); freed by the
 * key's destructor when a thread exits. */
static __thread void *ob_weight_scratch;
static __thread size_t ob_weight_cap;
static pthread_key_t ob_weight_key;
static pthread_once_t ob_weight_once = PTHREAD_ONCE_INIT;
static int ob_weight_warned_nocontext;
static int ob_weight_warned_nomem;
static int ob_weight_warned_device;

static void ob_weight_key_create(void)
{
    pthread_key_create(&ob_weight_key, free);
}

void ob_weight_thread_scratch(void ***scratch, size_t **cap)
{
    *scratch = &ob_weight_scratch;
    *cap = &ob_weight_cap;
}

void ob_weight_cleanup(void)
{
    pthread_once(&ob_weight_once, ob_weight_key_create);
    pthread_setspecific(ob_weight_key, NULL);
    free(ob_weight_scratch);
    ob_weight_scratch = NULL;
    ob_weight_cap = 0;
}

/* The factor for this rank's gradient, or 0 when it is not to be weighted. */
static int ob_weight_factor(MPI_Comm comm, int count, int elem, double t0, long *batch,
                            double *factor)
{
    const ob_config *cfg;
    ob_active_batch b;
    ob_convention convention;

    ob_config_global(&cfg);
    if (!ob_active_get(&b)) {
        *batch = -1;
        if (cfg->weight && !__atomic_exchange_n(&ob_weight_warned_nocontext, 1, __ATOMIC_RELAXED)) {
            ob_log_warn_rank0("OMNIBATCH_WEIGHT is on but no omnibatch context publishes the "
                              "running step (omnibatch_next_step): gradients pass through unweighted");
        }
        return 0;
    }
    *batch = b.local;
    if (!cfg->weight || b.total <= 0 || b.local < 0
        || !ob_layer_weighs(comm, count, elem, t0, b.comm, b.generation)) {
        return 0;
    }
    /* An unmodified code usually averages the sum over P itself (PyTorch
     * DDP, Horovod): divide-by-P unless OMNIBATCH_CONVENTION says. */
    convention = OB_CONVENTION_AUTO == cfg->convention ? OB_CONVENTION_DIVIDE_BY_P : cfg->convention;
    if (OB_CONVENTION_MEAN == convention) {
        *factor = (double) b.local / (double) b.total;
    } else {
        int P = 1;

        PMPI_Comm_size(comm, &P);
        *factor = (double) P * (double) b.local / (double) b.total;
    }
    return 1;
}

static void ob_weight_scale(void *dst, const void *src, int count, int elem, double factor)
{
    if (4 == elem) {
        float *d = dst;
        const float *s = src;

        for (int i = 0; i < count; i++) {
            d[i] = (float) ((double) s[i] * factor);
        }
    } else {
        double *d = dst;
        const double *s = src;

        for (int i = 0; i < count; i++) {
            d[i] = s[i] * factor;
        }
    }
}

int ob_weight_prepare(const void **sendbuf, void *recvbuf, int count, int elem, MPI_Comm comm,
                      double t0, void **scratch, size_t *cap, long *batch)
{
    double factor = 1.0;
    size_t bytes = (size_t) count * (size_t) elem;

    if (!ob_weight_factor(comm, count, elem, t0, batch, &factor)) {
        return 0;
    }
    /* The CPU must not read a CUDA-aware code's device buffer: asked only
     * here, for a gradient that would be weighted. */
    if (OB_MEMTYPE_DEVICE == ob_memtype_of(MPI_IN_PLACE == *sendbuf ? recvbuf : *sendbuf)) {
        if (!__atomic_exchange_n(&ob_weight_warned_device, 1, __ATOMIC_RELAXED)) {
            ob_log_warn("OMNIBATCH_WEIGHT: a gradient of %zu bytes in GPU memory passes through "
                        "unweighted (the layer weights host memory only; omnibatch_allreduce_gradient "
                        "weights it on the GPU)", bytes);
        }
        return 0;
    }
    if (MPI_IN_PLACE == *sendbuf) {
        ob_weight_scale(recvbuf, recvbuf, count, elem, factor);
        return 0;
    }
    if (bytes > *cap) {
        void *p = realloc(*scratch, bytes);

        if (NULL == p) {
            if (!__atomic_exchange_n(&ob_weight_warned_nomem, 1, __ATOMIC_RELAXED)) {
                ob_log_warn("no memory for %zu bytes of weighted gradient: sent unweighted", bytes);
            }
            return -1;
        }
        *scratch = p;
        *cap = bytes;
        if (scratch == &ob_weight_scratch) {
            pthread_once(&ob_weight_once, ob_weight_key_create);
            pthread_setspecific(ob_weight_key, p);
        }
    }
    ob_weight_scale(*scratch, *sendbuf, count, elem, factor);
    *sendbuf = *scratch;
    return 0;
}
