/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * Weighted gradient MPI_Iallreduce requests must survive a Wait/Test call
 * that fails.  A weighted request sends from its slot's scratch buffer
 * (mpi_wrappers/requests.c) until it completes, so the layer may give the
 * slot back only when MPI says the request is no longer in flight.
 *
 * The program takes unequal batches from the API (omnibatch_dl.h, the
 * library preloaded), reduces two gradients A and B per step with
 * MPI_Iallreduce on MPI_COMM_WORLD (MPI_ERRORS_RETURN), and checks every
 * weighted result against the sum, by PMPI on another communicator, of
 * each rank's gradient times its weight P * count / total (what the layer
 * must send).  Once the layer weights:
 *
 *   pending  rank 0 completes A in one MPI_Waitall with a receive that is
 *            too small (MPI_ERR_TRUNCATE) while rank 1 has not joined A
 *            yet: MPI_ERR_IN_STATUS, A still pending (MPI_ERR_PENDING).
 *            Rank 0 then starts B and only then lets rank 1 join both.  If
 *            the layer had given A's slot back, B would reuse its scratch
 *            and A would sum B's gradient.  Once with statuses, once with
 *            MPI_STATUSES_IGNORE.
 *   testall  ROUNDS steps whose A and B complete, with a too-small
 *            receive, in one MPI_Testall that returns MPI_ERR_IN_STATUS:
 *            MPI freed A and B, so the layer must free their slots too,
 *            or after as many steps as it has slots no gradient is
 *            weighted.
 *
 *   mpi_request_errors ROUNDS
 *
 * Prints "pending: yes|no" (rank 0): whether MPI_Waitall left A pending,
 * without which the first part proves nothing.
 */
#include "config.h"

#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "mpi_preload_api.h"

/* MPICH declares the status arrays of MPI_Waitall & co. as arrays, and gcc
 * then warns (-Wstringop-overflow) that MPI_STATUSES_IGNORE, a constant
 * address, holds no status: read through a volatile, the constant is out of
 * the compiler's sight. */
static MPI_Status *volatile statuses_ignore = MPI_STATUSES_IGNORE;

#define D 512                    /* gradient length: 2 KiB of float, above OMNIBATCH_MIN_BYTES */
#define B 60                     /* global batch */
#define WARMUP 40                /* steps the layer may take to learn the pattern */
#define TAG_BIG 7                /* the message that does not fit */
#define TAG_GO 8                 /* rank 0 lets rank 1 join A */

static int rank, size;
static MPI_Comm refcomm;         /* the references' communicator: not the gradients' */

typedef struct step_data {
    float ga[D], gb[D], ra[D], rb[D];
    double weight;
} step_data;

/* Step k's gradients: A and B differ, and differ between ranks and steps. */
static void fill(step_data *s, int k, const omnibatch_step *st)
{
    for (int j = 0; j < D; j++) {
        s->ga[j] = (float) (rank + 1) * (1.0f + 0.5f * (float) (k % 11)) + 0.25f * (float) (j % 7);
        s->gb[j] = -3.0f * s->ga[j] - (float) (j % 5);
    }
    s->weight = (double) size * (double) st->count / (double) st->total;
}

/* Results that are not the weighted sums, over both gradients. */
static int check(const step_data *s)
{
    float wa[D], wb[D], ea[D], eb[D];
    int bad = 0;

    for (int j = 0; j < D; j++) {
        wa[j] = (float) ((double) s->ga[j] * s->weight);
        wb[j] = (float) ((double) s->gb[j] * s->weight);
    }
    PMPI_Allreduce(wa, ea, D, MPI_FLOAT, MPI_SUM, refcomm);
    PMPI_Allreduce(wb, eb, D, MPI_FLOAT, MPI_SUM, refcomm);
    for (int j = 0; j < D; j++) {
        bad += fabs((double) s->ra[j] - (double) ea[j]) > 1e-5 * fabs((double) ea[j]);
        bad += fabs((double) s->rb[j] - (double) eb[j]) > 1e-5 * fabs((double) eb[j]);
    }
    return bad;
}

static void start(step_data *s, MPI_Request *a, MPI_Request *b)
{
    if (NULL != a) {
        MPI_Iallreduce(s->ga, s->ra, D, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, a);
    }
    if (NULL != b) {
        MPI_Iallreduce(s->gb, s->rb, D, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, b);
    }
}

/* One step of the pending part; 1 when rank 0 saw A pending. */
static int pending_step(step_data *s, int with_statuses)
{
    MPI_Request q[2];
    MPI_Status st[2];
    int small = 0, big[4] = { 1, 2, 3, 4 }, go = 1, pending = 0;

    if (0 == rank) {
        MPI_Irecv(&small, 1, MPI_INT, 1, TAG_BIG, MPI_COMM_WORLD, &q[0]);
        start(s, &q[1], NULL);
        if (MPI_ERR_IN_STATUS == MPI_Waitall(2, q, with_statuses ? st : statuses_ignore)) {
            pending = MPI_REQUEST_NULL != q[1]
                      && (!with_statuses || MPI_ERR_PENDING == st[1].MPI_ERROR);
        }
        /* B reserves a slot while A may still be in flight. */
        q[0] = q[1];
        start(s, NULL, &q[1]);
        MPI_Send(&go, 1, MPI_INT, 1, TAG_GO, MPI_COMM_WORLD);
    } else {
        if (1 == rank) {
            MPI_Send(big, 4, MPI_INT, 0, TAG_BIG, MPI_COMM_WORLD);
            MPI_Recv(&go, 1, MPI_INT, 0, TAG_GO, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
        start(s, &q[0], &q[1]);
    }
    MPI_Waitall(2, q, statuses_ignore);
    return pending;
}

/* One step of the testall part. */
static void testall_step(step_data *s)
{
    MPI_Request q[3] = { MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL };
    int small = 0, big[4] = { 1, 2, 3, 4 }, flag = 0, rc = MPI_SUCCESS;

    if (0 == rank) {
        MPI_Irecv(&small, 1, MPI_INT, 1, TAG_BIG, MPI_COMM_WORLD, &q[2]);
    } else if (1 == rank) {
        MPI_Send(big, 4, MPI_INT, 0, TAG_BIG, MPI_COMM_WORLD);
    }
    start(s, &q[0], &q[1]);
    while (!flag && MPI_SUCCESS == rc) {
        rc = MPI_Testall(3, q, &flag, statuses_ignore);
    }
    /* An MPI that ended the call before all completed: finish them. */
    MPI_Waitall(2, q, statuses_ignore);
}

int main(int argc, char **argv)
{
    omnibatch_dl ob;
    omnibatch_t ctx;
    omnibatch_step st;
    step_data *s = malloc(sizeof *s);
    int rounds, k, weighted = 0, pending = 1, bad[3] = { 0, 0, 0 }, anybad[3];

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 2 || size < 2 || size > 16 || NULL == s) {
        fprintf(stderr, "usage: %s ROUNDS (2 to 16 ranks)\n", argv[0]);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    rounds = atoi(argv[1]);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_dup(MPI_COMM_WORLD, &refcomm);
    ob_test_unequal_context("mpi_request_errors", &ob, B, (long) B * (WARMUP + rounds + 8), &ctx);

    /* Until the layer weights both gradients of a step. */
    for (k = 0; k < WARMUP && !weighted; k++) {
        MPI_Request q[2];

        ob.next_step(ctx, &st);
        fill(s, k, &st);
        start(s, &q[0], &q[1]);
        MPI_Waitall(2, q, statuses_ignore);
        weighted = 0 == check(s);
    }
    for (int part = 0; weighted && part < 2; part++, k++) {
        ob.next_step(ctx, &st);
        fill(s, k, &st);
        pending &= pending_step(s, 0 == part);
        bad[0] += check(s);
    }
    for (int r = 0; weighted && r < rounds; r++, k++) {
        ob.next_step(ctx, &st);
        fill(s, k, &st);
        testall_step(s);
        bad[1] += 0 != check(s);
    }
    bad[2] = !weighted;
    MPI_Allreduce(bad, anybad, 3, MPI_INT, MPI_MAX, refcomm);
    if (0 == rank) {
        printf("mpi_request_errors: pending: %s\n", pending ? "yes" : "no");
        printf("mpi_request_errors: %d ranks: %s; pending part %s; testall part: %d of %d steps wrong on a rank: %s\n",
               size, anybad[2] ? "NEVER WEIGHTED" : "weighted",
               anybad[0] ? "WRONG" : "right", anybad[1], rounds,
               0 == anybad[0] + anybad[1] + anybad[2] ? "results right" : "RESULTS WRONG");
    }
    ob.destroy(&ctx);
    MPI_Comm_free(&refcomm);
    free(s);
    MPI_Finalize();
    return 0 == anybad[0] + anybad[1] + anybad[2] ? 0 : 1;
}
