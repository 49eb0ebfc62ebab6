/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * omnibatch_allreduce_gradient on GPU memory, under mpirun on a machine
 * with a GPU (mpi_gradient_gpu.sh skips without one).  Batches 3 and 7 of
 * 10 make the weights unequal.  With a CUDA-aware MPI the device gradient
 * is weighted on the GPU and summed: the gradient of the global batch.
 * With one that is not, the call is refused with OMNIBATCH_ERR_DEVICE
 * before the reduction, every rank alike, the buffer untouched.  One buffer
 * on the GPU and the other on the host is refused with OMNIBATCH_ERR_ARG.
 */
#include "config.h"

#include <math.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ob_cuda_test.h"
#include "omnibatch.h"

#if defined(__has_include)
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>
#endif
#endif

#define D 1000
#define B 10

static int failures;
static int rank;

static void expect(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "mpi_gradient_gpu: [rank %d] FAILED: %s (last error: %s)\n", rank, what,
                omnibatch_last_error());
        failures++;
    }
}

static int cuda_aware(void)
{
#if defined(OMPI_HAVE_MPI_EXT_CUDA) && OMPI_HAVE_MPI_EXT_CUDA
    return 1 == MPIX_Query_cuda_support();
#else
    return 0;
#endif
}

int main(int argc, char **argv)
{
    const long plan[2] = { 3, 7 };
    static float g[D], back[D], host_recv[D];
    ob_test_cuda d;
    omnibatch_options opt;
    omnibatch_t ctx;
    omnibatch_step st;
    ob_cu_deviceptr dg = 0;
    const char *why;
    int nranks;
    int rc;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    why = ob_test_cuda_open(&d);
    if (NULL != why || 2 != nranks) {
        fprintf(stderr, "mpi_gradient_gpu: [rank %d] needs 2 ranks and a GPU: %s\n", rank,
                NULL != why ? why : "wrong number of ranks");
        MPI_Abort(MPI_COMM_WORLD, 1);
        return 1;
    }
    omnibatch_options_init(&opt);
    opt.adaptive = 0;
    opt.convention = OMNIBATCH_GRAD_MEAN;   /* weights b_r / B: 0.3 and 0.7 */
    expect(OMNIBATCH_SUCCESS == omnibatch_create(MPI_COMM_WORLD, B, B, &opt, &ctx), "create");
    expect(OMNIBATCH_SUCCESS == omnibatch_set_plan(ctx, plan, 2), "set_plan");
    expect(OMNIBATCH_SUCCESS == omnibatch_next_step(ctx, &st), "next_step");
    expect(plan[rank] == st.count, "the plan's batch");
    for (int i = 0; i < D; i++) {
        g[i] = (float) ((rank + 1) * (i + 1)) * 0.1f;
    }
    expect(OB_CUDA_SUCCESS == d.mem_alloc(&dg, sizeof g) && OB_CUDA_SUCCESS == d.htod(dg, g, sizeof g),
           "a device gradient");

    /* Mixed: refused on every rank, nothing reduced. */
    rc = omnibatch_allreduce_gradient(ctx, (const void *) (uintptr_t) dg, host_recv, D, MPI_FLOAT);
    expect(OMNIBATCH_ERR_ARG == rc && NULL != strstr(omnibatch_last_error(), "sendbuf is GPU memory and "
           "recvbuf host memory"), "GPU sendbuf with a host recvbuf is refused");

    rc = omnibatch_allreduce_gradient(ctx, MPI_IN_PLACE, (void *) (uintptr_t) dg, D, MPI_FLOAT);
    d.dtoh(back, dg, sizeof back);
    if (cuda_aware()) {
        long wrong = 0;

        expect(OMNIBATCH_SUCCESS == rc, "a CUDA-aware MPI reduces the device gradient");
        for (int i = 0; i < D; i++) {
            /* sum_r (b_r / B) g_r, each term rounded as the library rounds it */
            float want = (float) ((double) ((float) (1 * (i + 1)) * 0.1f) * 0.3)
                         + (float) ((double) ((float) (2 * (i + 1)) * 0.1f) * 0.7);

            wrong += fabsf(back[i] - want) > 1e-6f * fabsf(want);
        }
        expect(0 == wrong, "the weighted sum is the global batch's gradient");
    } else {
        expect(OMNIBATCH_ERR_DEVICE == rc && NULL != strstr(omnibatch_last_error(), "not CUDA-aware"),
               "an MPI that is not CUDA-aware: refused with OMNIBATCH_ERR_DEVICE");
        expect(0 == memcmp(back, g, sizeof g), "the refused device gradient is untouched");
    }
    d.mem_free(dg);
    omnibatch_destroy(&ctx);
    if (0 == rank && 0 == failures) {
        printf("mpi_gradient_gpu: PASS (MPI %s CUDA-aware)\n", cuda_aware() ? "is" : "is not");
    }
    MPI_Finalize();
    return 0 == failures ? 0 : 1;
}
