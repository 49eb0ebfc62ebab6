/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * The explicit API, part three: the weighted gradient allreduce.  With
 * unequal batches a plain sum of mean gradients is wrong; the gradient of
 * the global batch is sum_i (b_i / B) g_i, so each rank scales by its
 * share before one SUM allreduce (P * b_i / B for codes that divide the
 * sum by P afterwards).  The call also marks the end of the step's compute.
 *
 * GPU buffers (ob_memtype.h) are scaled on their device and reduced by the
 * MPI library itself, which must then be CUDA-aware; the CPU never touches
 * them.  Host buffers take the CPU path, unchanged.
 *
 * OMNIBATCH_WAIT=sleep reduces host buffers with a nonblocking allreduce
 * tested between naps, for ranks under a CPU quota; where any rank's
 * buffers are on a GPU, every rank takes the blocking call for that
 * reduction (Open MPI's CUDA-aware collectives are the blocking ones).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "ob_api.h"
#include "ob_config.h"
#include "ob_error.h"
#include "ob_log.h"
#include "ob_memtype.h"
#include "ob_nap.h"
#include "ob_timing.h"

/* Open MPI says at run time whether it can reduce GPU buffers (after
 * mpi.h, which ob_api.h includes). */
#if defined(__has_include)
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>
#endif
#endif

/* In double, rounded once to float: the scaled value is the float nearest
 * to the exact product. */
static void ob_scale_float(const float *in, float *out, int n, double w)
{
    for (int i = 0; i < n; i++) {
        out[i] = (float) ((double) in[i] * w);
    }
}

static void ob_scale_double(const double *in, double *out, int n, double w)
{
    for (int i = 0; i < n; i++) {
        out[i] = in[i] * w;
    }
}

static int ob_scratch(struct omnibatch_context *c, size_t bytes)
{
    void *p;

    if (bytes <= c->scratch_bytes) {
        return OMNIBATCH_SUCCESS;
    }
    p = realloc(c->scratch, bytes);
    if (NULL == p) {
        return ob_fail(OMNIBATCH_ERR_NOMEM, "omnibatch_allreduce_gradient: no memory for a %zu-byte "
                       "scratch buffer", bytes);
    }
    c->scratch = p;
    c->scratch_bytes = bytes;
    return OMNIBATCH_SUCCESS;
}

/* The MPI name of an element size ob_gradient_args() took. */
static const char *ob_type_name(size_t elem)
{
    return sizeof(float) == elem ? "MPI_FLOAT" : "MPI_DOUBLE";
}

/* Everything checked before the call touches the step or the buffers;
 * \p elem gets the element size of \p type. */
static int ob_gradient_args(const char *fn, const struct omnibatch_context *c, const void *sendbuf,
                            const void *recvbuf, int count, MPI_Datatype type, size_t *elem)
{
    int rc = ob_api_check_context(fn, c);

    if (OMNIBATCH_SUCCESS != rc) {
        return rc;
    }
    if (!c->have_step) {
        return ob_fail(OMNIBATCH_ERR_STATE, "%s: no step is running: call omnibatch_next_step "
                       "first", fn);
    }
    if (!ob_chunk_ready(c)) {
        return ob_fail(OMNIBATCH_ERR_STATE, "%s: step %ld is worked in chunks and some are left: call "
                       "omnibatch_next_chunk until it answers count 0 first", fn, c->step.global_step);
    }
    if (count < 0) {
        return ob_fail(OMNIBATCH_ERR_ARG, "%s: count=%d: expected >= 0", fn, count);
    }
    if (MPI_FLOAT == type) {
        *elem = sizeof(float);
    } else if (MPI_DOUBLE == type) {
        *elem = sizeof(double);
    } else {
        return ob_fail(OMNIBATCH_ERR_ARG, "%s: type is not MPI_FLOAT or MPI_DOUBLE: expected one "
                       "of those", fn);
    }
    if (count > 0 && NULL == recvbuf) {
        return ob_fail(OMNIBATCH_ERR_ARG, "%s: recvbuf=NULL with count=%d: expected a buffer of "
                       "%d elements", fn, count, count);
    }
    if (count > 0 && NULL == sendbuf) {
        return ob_fail(OMNIBATCH_ERR_ARG, "%s: sendbuf=NULL with count=%d: expected a buffer or "
                       "MPI_IN_PLACE", fn, count);
    }
    if (count > 0 && sendbuf == recvbuf) {
        return ob_fail(OMNIBATCH_ERR_ARG, "%s: sendbuf == recvbuf: expected MPI_IN_PLACE for an "
                       "in-place reduction, or separate buffers", fn);
    }
    return OMNIBATCH_SUCCESS;
}

/* The weighted gradient of \p in written to \p data. */
static void ob_weight_into(const struct omnibatch_context *c, const void *in, void *data, int count,
                           MPI_Datatype type, size_t elem, double w)
{
    /* A rank without samples has no mean gradient (0/0 may well be NaN in
     * its buffer): it contributes exact zeros. */
    if (0 == c->step.count) {
        if (count > 0) {
            memset(data, 0, (size_t) count * elem);
        }
    } else if (MPI_FLOAT == type) {
        ob_scale_float((const float *) in, (float *) data, count, w);
    } else {
        ob_scale_double((const double *) in, (double *) data, count, w);
    }
}

/* Weight a host gradient with the CPU: into this rank's slot of the node's
 * sum where it has one (*in_slot set; api_node.c), else in place, or into
 * the scratch buffer that then becomes the send buffer (the caller's is
 * never written). */
static int ob_weight_on_host(struct omnibatch_context *c, const void **sendbuf, void *recvbuf, int count,
                             MPI_Datatype type, size_t elem, double w, int *in_slot)
{
    const void *in = MPI_IN_PLACE == *sendbuf ? recvbuf : *sendbuf;
    void *data = ob_node_slot(c, (size_t) count * elem);
    int rc;

    *in_slot = NULL != data;
    if (NULL == data) {
        data = recvbuf;
        if (MPI_IN_PLACE != *sendbuf) {
            rc = ob_scratch(c, (size_t) count * elem);
            if (OMNIBATCH_SUCCESS != rc) {
                return rc;
            }
            data = c->scratch;
            *sendbuf = data;
        }
    }
    ob_weight_into(c, in, data, count, type, elem, w);
    return OMNIBATCH_SUCCESS;
}

/* Can the MPI library reduce GPU buffers?  Asked once: the answer is fixed
 * when MPI_Init returns.  An MPI that cannot say is taken as not able. */
static int ob_mpi_cuda_aware(void)
{
    static int aware = -1;
    int a = __atomic_load_n(&aware, __ATOMIC_RELAXED);

    if (a < 0) {
#if defined(OMPI_HAVE_MPI_EXT_CUDA) && OMPI_HAVE_MPI_EXT_CUDA
        a = 1 == MPIX_Query_cuda_support();
#else
        a = 0;
#endif
        __atomic_store_n(&aware, a, __ATOMIC_RELAXED);
    }
    return a;
}

/* Weight a gradient that lives on a GPU, in place in recvbuf (an
 * out-of-place sendbuf is scaled into recvbuf, which the reduction then
 * overwrites anyway, so no device scratch is needed). */
static int ob_weight_on_device(const struct omnibatch_context *c, const void *sendbuf, void *recvbuf,
                               int count, size_t elem, double w, const char *fn)
{
    int send_device = MPI_IN_PLACE == sendbuf || OB_MEMTYPE_DEVICE == ob_memtype_of(sendbuf);
    int recv_device = OB_MEMTYPE_DEVICE == ob_memtype_of(recvbuf);

    if (send_device != recv_device) {
        return ob_fail(OMNIBATCH_ERR_ARG, "%s: sendbuf is %s memory and recvbuf %s memory: expected "
                       "both on the GPU or both on the host", fn, send_device ? "GPU" : "host",
                       recv_device ? "GPU" : "host");
    }
    if (!ob_mpi_cuda_aware()) {
        return ob_fail(OMNIBATCH_ERR_DEVICE, "%s: the gradient is in GPU memory but this MPI library "
                       "cannot reduce GPU buffers (not CUDA-aware): expected a host buffer (copy the "
                       "gradient to the host first) or a CUDA-aware MPI", fn);
    }
    if (0 == c->step.count) {
        return ob_memtype_device_zero(recvbuf, (size_t) count * elem);
    }
    return ob_memtype_device_scale(MPI_IN_PLACE == sendbuf ? recvbuf : sendbuf, recvbuf, count,
                                   (int) elem, w);
}

/* Is either buffer on a GPU?  Asks only where the CUDA driver is loaded. */
static int ob_on_device(const void *sendbuf, const void *recvbuf, int count)
{
    if (0 == count) {
        return 0;
    }
    return OB_MEMTYPE_DEVICE == ob_memtype_of(recvbuf)
           || (MPI_IN_PLACE != sendbuf && OB_MEMTYPE_DEVICE == ob_memtype_of(sendbuf));
}

/* Asleep, the wait for the last rank: every rank says whether its buffers
 * are on a GPU and when it arrived, from the end of the last reduction
 * (which every rank left at about the same time, whatever it did between;
 * its own step's start would miss a rank throttled after the reduction);
 * the naps aim at when the last rank arrived in the last steps (ob_nap.h). */
static int ob_arrive_asleep(struct omnibatch_context *c, int on_device, uint64_t now, int next, int count,
                            size_t elem, int *any_dev, int32_t out[OB_NODE_OUT])
{
    const double mine = (double) (now - c->clock.reduced_ns) * 1e-9;
    const uint64_t plan = ob_controller_plan_hash(&c->ctl);
    /* The step's first call learns and aims (its later calls wait little). */
    const int first = 0 == c->clock.reductions && 0 != c->clock.reduced_ns;
    int32_t in[OB_NODE_IN];
    int mpi_rc;

    memset(out, 0, sizeof(int32_t[OB_NODE_OUT]));
    in[OB_ARRIVE_ON_DEVICE] = on_device;
    /* Microseconds; 0 where nothing is learnt. */
    in[OB_ARRIVE_US] = first ? (int32_t) (mine < 2e3 ? mine * 1e6 : 2e9) : 0;
    /* REACT's flag for the next step rides here (ob_exchange_begin()). */
    in[OB_ARRIVE_REACT] = OB_API_NEXT_REACT == next ? c->next.flag : 0;
    in[OB_ARRIVE_ELEM] = (int32_t) elem;
    in[OB_ARRIVE_COUNT] = count;
    if (NULL != c->node) {
        /* Asleep in the kernel until the last rank is in: nothing to aim. */
        ob_node_arrive(c, in, out);
        mpi_rc = MPI_SUCCESS;
    } else {
        /* MPI's sum checks the counts itself: the first three fields. */
        mpi_rc = ob_api_allreduce_asleep(in, out, OB_ARRIVE_REACT + 1, MPI_INT32_T, MPI_MAX, c->comm,
                                         first ? ob_nap_expected_wait(&c->nap, plan, mine) : 0.0, 0.0);
    }
    if (MPI_SUCCESS == mpi_rc && first) {
        ob_nap_learn(&c->nap, plan, (double) out[OB_ARRIVE_US] * 1e-6);
    }
    *any_dev = out[OB_ARRIVE_ON_DEVICE];
    return mpi_rc;
}

/* The sum on the node (api_node.c), every rank in: *summed where it was
 * done; not where the node had no room for it (then MPI's, from now on). */
static int ob_reduce_on_node(struct omnibatch_context *c, const void *sendbuf, void *recvbuf, int count,
                             MPI_Datatype type, size_t elem, int in_slot, int *summed)
{
    const size_t bytes = (size_t) count * elem;
    int mpi_rc;

    if (!in_slot) {
        /* The first sum of this size: every rank is here, all with it. */
        if (MPI_SUCCESS != ob_node_reserve(c, bytes)) {
            ob_log_debug(1, "rank %d: no shared memory for a %zu-byte gradient: reduced by MPI from now "
                         "on", c->rank, bytes);
            ob_node_close(c);
            return MPI_SUCCESS;
        }
        memcpy(ob_node_slot(c, bytes), MPI_IN_PLACE == sendbuf ? recvbuf : sendbuf, bytes);
        /* Every slot is written before any rank sums. */
        mpi_rc = PMPI_Barrier(c->comm);
        if (MPI_SUCCESS != mpi_rc) {
            return mpi_rc;
        }
    }
    ob_node_sum(c, recvbuf, count, type, elem);
    *summed = 1;
    return MPI_SUCCESS;
}

/* OMNIBATCH_WAIT=sleep: every rank says whether its buffers are on a GPU
 * (the wait for a late rank happens here, with REACT's flag for the next
 * step); then all take the sum in shared memory (api_node.c) or the
 * nonblocking one, or, when any is on a GPU, the blocking one: the two never
 * match, and Open MPI's CUDA-aware collectives are the blocking ones.
 * \p in_slot: the weighted gradient is in this rank's slot of the node's
 * sum (else in recvbuf, or in sendbuf when that is not MPI_IN_PLACE).
 * \p waited: the CPU clock when the wait ended (under a quota the
 * transfer's CPU is this rank's to spend like its compute, the wait's is
 * the others' lateness); \p other: a count another rank passed where it
 * differs from \p count (nothing summed), else \p count; \p call: the MPI
 * call that failed. */
static int ob_reduce_asleep(struct omnibatch_context *c, const void *sendbuf, void *recvbuf, int count,
                            MPI_Datatype type, size_t elem, int on_device, int next, int in_slot,
                            uint64_t *waited, int *other, size_t *other_elem, const char **call)
{
    const size_t bytes = (size_t) count * elem;
    int32_t out[OB_NODE_OUT];
    int any_dev = 0;
    int mpi_rc = ob_arrive_asleep(c, on_device, ob_now_ns(), next, count, elem, &any_dev, out);

    *other = count;
    *other_elem = elem;
    *waited = c->cpu.plan ? ob_cpu_ns() : 0;
    if (MPI_SUCCESS == mpi_rc && OB_API_NEXT_NONE != next) {
        /* Nothing for REACT's flag, which rode the arrival; the records
         * where it brings an exchange forward. */
        mpi_rc = ob_exchange_post(c, 1, out[OB_ARRIVE_REACT]);
        *call = MPI_SUCCESS == mpi_rc ? *call : "MPI_Iallgather";
    }
    if (MPI_SUCCESS != mpi_rc) {
        return mpi_rc;
    }
    if (NULL != c->node && (out[OB_ARRIVE_ELEM] != out[OB_ARRIVE_LEAST_ELEM]
                            || out[OB_ARRIVE_COUNT] != out[OB_ARRIVE_LEAST_COUNT])) {
        /* The types or counts differ (MPI's sum would be erroneous): no rank sums. */
        *other_elem = (size_t) (elem == (size_t) out[OB_ARRIVE_ELEM] ? out[OB_ARRIVE_LEAST_ELEM]
                                                                    : out[OB_ARRIVE_ELEM]);
        *other = count == out[OB_ARRIVE_COUNT] ? out[OB_ARRIVE_LEAST_COUNT] : out[OB_ARRIVE_COUNT];
        return MPI_SUCCESS;
    }
    if (in_slot && any_dev) {
        memcpy(recvbuf, ob_node_slot(c, bytes), bytes);
        sendbuf = MPI_IN_PLACE;
    }
    if (NULL != c->node && !any_dev && bytes > 0) {
        int summed = 0;

        mpi_rc = ob_reduce_on_node(c, sendbuf, recvbuf, count, type, elem, in_slot, &summed);
        if (MPI_SUCCESS != mpi_rc || summed) {
            *call = MPI_SUCCESS == mpi_rc ? *call : "MPI_Barrier";
            return mpi_rc;
        }
    }
    if (any_dev) {
        mpi_rc = PMPI_Allreduce(sendbuf, recvbuf, count, type, MPI_SUM, c->comm);
    } else if (NULL == c->node) {
        const uint64_t in = ob_now_ns();

        mpi_rc = ob_api_allreduce_asleep(sendbuf, recvbuf, count, type, MPI_SUM, c->comm, -1.0,
                                         ob_nap_transfer_short(&c->nap, (long) bytes));
        ob_nap_learn_transfer(&c->nap, (long) bytes, (double) (ob_now_ns() - in) * 1e-9);
    }
    return mpi_rc;
}

/* Polling: the next step's collective started, then the blocking sum. */
static int ob_reduce_polling(struct omnibatch_context *c, const void *sendbuf, void *recvbuf, int count,
                             MPI_Datatype type, int next, const char **call)
{
    int mpi_rc = MPI_SUCCESS;

    if (OB_API_NEXT_NONE != next) {
        mpi_rc = ob_exchange_post(c, 0, 0);
        if (MPI_SUCCESS != mpi_rc) {
            *call = OB_API_NEXT_REACT == next ? "MPI_Iallreduce" : "MPI_Iallgather";
            return mpi_rc;
        }
    }
    return PMPI_Allreduce(sendbuf, recvbuf, count, type, MPI_SUM, c->comm);
}

OMNIBATCH_EXPORT int omnibatch_allreduce_gradient(omnibatch_t ctx, const void *sendbuf,
                                                  void *recvbuf, int count, MPI_Datatype type)
{
    const char *fn = "omnibatch_allreduce_gradient";
    struct omnibatch_context *c = ctx;
    uint64_t begin;
    uint64_t end;
    size_t elem = 0;
    uint64_t cpu;
    uint64_t waited;
    double w;
    int on_device;
    int next;
    const char *call = "MPI_Allreduce";
    int in_slot = 0;
    int other = count;
    size_t other_elem;
    int mpi_rc;
    int rc;

    /* Stop the step's compute first: checking and scaling are ours. */
    begin = ob_now_ns();
    rc = ob_gradient_args(fn, c, sendbuf, recvbuf, count, type, &elem);
    if (OMNIBATCH_SUCCESS != rc) {
        return rc;
    }
    other_elem = elem;
    if (!c->clock.markers) {
        c->clock.unmarked_ns += begin - c->clock.segment_ns;
    }

    w = c->step.scale;
    on_device = ob_on_device(sendbuf, recvbuf, count);
    if (on_device) {
        rc = ob_weight_on_device(c, sendbuf, recvbuf, count, elem, w, fn);
        sendbuf = MPI_IN_PLACE;  /* weighted into recvbuf */
    } else {
        rc = ob_weight_on_host(c, &sendbuf, recvbuf, count, type, elem, w, &in_slot);
    }
    if (OMNIBATCH_SUCCESS != rc) {
        return rc;
    }

    /* The step's first call starts the collective the next step opens
     * with, where every rank is anyway (ob_api.h). */
    next = OB_API_NEXT_NONE;
    if (0 == c->clock.reductions) {
        if (c->cpu.plan) {
            c->cpu.entry_ns = ob_cpu_ns();
        }
        next = ob_exchange_begin(c, ob_now_ns());
    }
    cpu = c->cpu.plan ? ob_cpu_ns() : 0;
    waited = cpu;
    begin = ob_now_ns();
    mpi_rc = c->wait_sleep ? ob_reduce_asleep(c, sendbuf, recvbuf, count, type, elem, on_device, next, in_slot,
                                              &waited, &other, &other_elem, &call)
                           : ob_reduce_polling(c, sendbuf, recvbuf, count, type, next, &call);
    end = ob_now_ns();
    if (c->cpu.plan) {
        c->cpu.reduced_ns = ob_cpu_ns();
        c->cpu.blocked_ns += (c->wait_sleep ? waited : c->cpu.reduced_ns) - cpu;
    }
    c->clock.reductions++;
    c->clock.reduced_ns = end;
    c->clock.blocked_ns += end - begin;
    c->stats.blocked_total_s += (double) (end - begin) * 1e-9;
    c->clock.segment_ns = end;
    if (MPI_SUCCESS != mpi_rc) {
        return ob_api_mpi_fail(mpi_rc, fn, call);
    }
    if (other_elem != elem) {
        return ob_fail(OMNIBATCH_ERR_ARG, "%s: type is %s on this rank and %s on another: every rank "
                       "must pass the same type (nothing was summed)", fn, ob_type_name(elem),
                       ob_type_name(other_elem));
    }
    if (other != count) {
        return ob_fail(OMNIBATCH_ERR_ARG, "%s: count=%d on this rank and %d on another: every rank "
                       "must pass the same count (nothing was summed)", fn, count, other);
    }
    return OMNIBATCH_SUCCESS;
}
