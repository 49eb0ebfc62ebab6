/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * Gradient weighting in preload mode (OMNIBATCH_WEIGHT=on).  The program
 * takes its batch plan from the API through the run-time lookup
 * (omnibatch_dl.h: not linked, the library is preloaded), imposes unequal
 * batches, and reduces its gradients with plain MPI calls, as an
 * unmodified code does.  The layer must weight each rank's mean gradient
 * by its batch, so that the result is the mean gradient of the whole
 * global batch: checked against a one-process reference over the same
 * samples, to 1e-6 relative in float and 1e-12 in double.
 *
 * Before the layer knows the step's pattern of gradient allreduces nothing
 * is weighted: the first steps must come back unweighted (the plain sum),
 * every later one weighted, whole steps only, from step STEPS/2 at the
 * latest.  Data that is not the step's gradient must come back bit for bit
 * as MPI sums it: an allreduce on MPI_COMM_SELF, one on a communicator split
 * from MPI_COMM_WORLD, and, in the last step, a gradient-shaped metric on
 * MPI_COMM_WORLD between MPI_Pcontrol(0) and MPI_Pcontrol(1).
 *
 *   mpi_weighted divide|mean STEPS
 *
 * divide: the code divides the sum by P (the preload default); mean: the
 * sum is the gradient (OMNIBATCH_CONVENTION=mean).
 */
#include "config.h"

#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "omnibatch_dl.h"

#define D 512                    /* gradient length: 2 KiB of float, above OMNIBATCH_MIN_BYTES */
#define B 60                     /* global batch */

static int rank, size;

/* The "gradient" of one sample: positive, so relative errors mean something. */
static double sample_gradient(long sample, int j)
{
    return 1.0 + 0.5 * sin(0.37 * (double) sample + 0.11 * (double) j);
}

static double rel_err(double got, double want)
{
    return fabs(got - want) / fabs(want);
}

int main(int argc, char **argv)
{
    omnibatch_dl ob;
    omnibatch_options opt;
    omnibatch_t ctx;
    omnibatch_step st;
    long plan[16], *perm, N;
    int steps, divide, bad = 0, anybad = 0, first_weighted = -1, half_size = 0;
    double worst_f = 0.0, worst_d = 0.0, moved = 0.0;
    float *self = malloc(D * sizeof *self), *metric = malloc(D * sizeof *metric);
    double *halfbuf = malloc(D * sizeof *halfbuf);
    MPI_Comm half;
    float *gf = malloc(D * sizeof *gf), *rf = malloc(D * sizeof *rf), *copy = malloc(D * sizeof *copy);
    float *gi = malloc(D * sizeof *gi), *ri = malloc(D * sizeof *ri);
    float *g2 = malloc(D * sizeof *g2), *r2 = malloc(D * sizeof *r2);
    double *gd = malloc(D * sizeof *gd), *mean = malloc(D * sizeof *mean), *ref = malloc(D * sizeof *ref);
    double *plain = malloc(D * sizeof *plain);

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
    MPI_Comm_size(half, &half_size);
    if (argc < 3 || size > 16 || NULL == self || NULL == metric || NULL == halfbuf || NULL == gf || NULL == rf || NULL == copy || NULL == gi || NULL == ri || NULL == g2 || NULL == r2
        || NULL == gd || NULL == mean || NULL == ref || NULL == plain) {
        fprintf(stderr, "usage: %s divide|mean STEPS (at most 16 ranks)\n", argv[0]);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    divide = 0 == strcmp(argv[1], "divide");
    steps = atoi(argv[2]);
    if (!omnibatch_dl_load(&ob)) {
        fprintf(stderr, "mpi_weighted: libomnibatch is not loaded (run it with LD_PRELOAD)\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    N = (long) B * steps;
    perm = malloc((size_t) N * sizeof *perm);
    ob.options_init(&opt);
    opt.adaptive = 0;
    if (NULL == perm || 0 != ob.create(MPI_COMM_WORLD, B, N, &opt, &ctx)) {
        fprintf(stderr, "mpi_weighted: %s\n", ob.last_error());
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    /* Unequal batches: rank i gets a share proportional to i + 1. */
    {
        long given = 0;

        for (int i = 0; i < size; i++) {
            plan[i] = (long) B * (i + 1) / (size * (size + 1) / 2);
            given += plan[i];
        }
        plan[size - 1] += B - given;
    }
    if (0 != ob.set_plan(ctx, plan, size) || 0 != ob.permutation(ctx, 0, perm)) {
        fprintf(stderr, "mpi_weighted: %s\n", ob.last_error());
        MPI_Abort(MPI_COMM_WORLD, 2);
    }

    for (int k = 0; k < steps; k++) {
        MPI_Request req;
        double step_f = 0.0, step_d = 0.0, plain_f = 0.0, plain_d = 0.0;
        int weighted;

        if (0 != ob.next_step(ctx, &st) || st.count != plan[rank] || st.total != B) {
            fprintf(stderr, "mpi_weighted: step %d: count %ld, plan %ld\n", k, st.count, plan[rank]);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        /* This rank's mean gradient over its slice of the step. */
        for (int j = 0; j < D; j++) {
            mean[j] = 0.0;
            for (long s = st.start; s < st.start + st.count; s++) {
                mean[j] += sample_gradient(perm[s], j);
            }
            mean[j] /= (double) st.count;
            gf[j] = (float) mean[j];
            gi[j] = (float) mean[j];
            gd[j] = mean[j];
            self[j] = 3.0f;
            halfbuf[j] = 2.0;
        }
        /* The reference: one process, the whole global batch of the step. */
        for (int j = 0; j < D; j++) {
            ref[j] = 0.0;
            for (long s = (long) k * B; s < (long) (k + 1) * B; s++) {
                ref[j] += sample_gradient(perm[s], j);
            }
            ref[j] /= (double) B;
        }
        memcpy(copy, gf, D * sizeof *gf);
        /* Unweighted -- PMPI, which the layer does not see -- the sum
         * gives the plain mean of the ranks' means. */
        PMPI_Allreduce(mean, plain, D, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);

        MPI_Allreduce(gf, rf, D, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        /* Not the step's gradient: other communicators, same shapes. */
        MPI_Allreduce(MPI_IN_PLACE, self, D, MPI_FLOAT, MPI_SUM, MPI_COMM_SELF);
        MPI_Allreduce(MPI_IN_PLACE, halfbuf, D, MPI_DOUBLE, MPI_SUM, half);
        MPI_Allreduce(MPI_IN_PLACE, gd, D, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        MPI_Iallreduce(gi, ri, D, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, &req);
        /* The scaled copy the request sends must outlive the call: a
         * blocking weighted reduction in between scales other data. */
        for (int j = 0; j < D; j++) {
            g2[j] = 2.0f * gf[j];
        }
        MPI_Allreduce(g2, r2, D, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        if (k == steps - 1) {
            /* A metric of a gradient's shape on the gradients' communicator,
             * kept out of the layer's way as docs/preload.md says. */
            for (int j = 0; j < D; j++) {
                metric[j] = 1.0f;
            }
            MPI_Pcontrol(0);
            MPI_Allreduce(MPI_IN_PLACE, metric, D, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
            MPI_Pcontrol(1);
            for (int j = 0; j < D; j++) {
                bad += metric[j] != (float) size;
            }
        }
        bad += 0 != memcmp(gf, copy, D * sizeof *gf);
        for (int j = 0; j < D; j++) {
            bad += self[j] != 3.0f || halfbuf[j] != 2.0 * half_size;
        }

        for (int j = 0; j < D; j++) {
            double f = (double) rf[j], d = gd[j], fi = (double) ri[j], f2 = 0.5 * (double) r2[j];
            /* What plain MPI gives: the sum of the ranks' means. */
            double unweighted = plain[j];

            if (divide) {
                f /= size;
                d /= size;
                fi /= size;
                f2 /= size;
                unweighted /= size;
            }
            step_f = fmax(step_f, fmax(rel_err(f, ref[j]), rel_err(fi, ref[j])));
            step_f = fmax(step_f, rel_err(f2, ref[j]));
            step_d = fmax(step_d, rel_err(d, ref[j]));
            plain_f = fmax(plain_f, fmax(rel_err(f, unweighted), rel_err(fi, unweighted)));
            plain_f = fmax(plain_f, rel_err(f2, unweighted));
            plain_d = fmax(plain_d, rel_err(d, unweighted));
            moved = fmax(moved, rel_err(plain[j] / size, ref[j]));
        }
        /* A whole step weighted, or a whole step as plain MPI sums it;
         * once weighted, weighted for good. */
        weighted = step_f <= 1e-6 && step_d <= 1e-12;
        if (weighted) {
            worst_f = fmax(worst_f, step_f);
            worst_d = fmax(worst_d, step_d);
            if (first_weighted < 0) {
                first_weighted = k;
            }
        } else if (first_weighted >= 0 || plain_f > 1e-6 || plain_d > 1e-12) {
            fprintf(stderr, "mpi_weighted: rank %d step %d: neither weighted nor plain (errors "
                    "%.3g %.3g weighted, %.3g %.3g plain)\n", rank, k, step_f, step_d, plain_f, plain_d);
            bad++;
        }
    }
    if (first_weighted < 0 || first_weighted > steps / 2) {
        fprintf(stderr, "mpi_weighted: rank %d: weighting began at step %d, expected by step %d\n",
                rank, first_weighted, steps / 2);
        bad++;
    }
    /* The test means something only if weighting changes the answer. */
    bad += worst_f > 1e-6 || worst_d > 1e-12 || !(moved > 1e-3);
    MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (0 == rank) {
        printf("mpi_weighted: %s, %d steps on %d ranks, plan", argv[1], steps, size);
        for (int i = 0; i < size; i++) {
            printf(" %ld", plan[i]);
        }
        printf(": weighted from step %d, worst relative error %.3g (float), %.3g (double), %.3g "
               "unweighted: %s\n", first_weighted, worst_f, worst_d, moved,
               0 == anybad ? "results right" : "RESULTS WRONG");
    }
    ob.destroy(&ctx);
    free(perm);
    free(gf);
    free(rf);
    free(copy);
    free(gi);
    free(ri);
    free(g2);
    free(r2);
    free(gd);
    free(mean);
    free(ref);
    free(plain);
    free(self);
    free(metric);
    free(halfbuf);
    MPI_Comm_free(&half);
    MPI_Finalize();
    return 0 == anybad ? 0 : 1;
}
