/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * Threads under the preload, built with plain mpicc.
 *
 *   mpi_threads multiple STEPS    a background thread reduces the gradients
 *                                 (as Horovod does) on its own communicator,
 *                                 blocking and non-blocking, while the main
 *                                 thread runs its own allreduces at the same
 *                                 time (MPI_THREAD_MULTIPLE);
 *   mpi_threads serialized STEPS  the two threads take strict turns, never
 *                                 inside MPI together and in the same order
 *                                 on every rank (MPI_THREAD_SERIALIZED, as
 *                                 PyTorch's MPI backend hands work to one
 *                                 thread at a time).
 *
 * The level asked for must come back unchanged, and every result must be
 * exact.
 */
#include "config.h"

#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NG 6000                  /* gradient floats */
#define ND 1500                  /* gradient doubles */
#define NI 64                    /* the main thread's integers */

static int rank, size, steps, serialized;
static MPI_Comm grad_comm;
static pthread_mutex_t turn_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t turn_changed = PTHREAD_COND_INITIALIZER;
static int turn;                 /* serialized: 0 the main thread's, 1 the gradient thread's */
static int bad_bg, bad_main;

static void take_turn(int who)
{
    if (serialized) {
        pthread_mutex_lock(&turn_lock);
        while (turn != who) {
            pthread_cond_wait(&turn_changed, &turn_lock);
        }
        pthread_mutex_unlock(&turn_lock);
    }
}

static void end_turn(int who)
{
    if (serialized) {
        pthread_mutex_lock(&turn_lock);
        turn = 1 - who;
        pthread_cond_broadcast(&turn_changed);
        pthread_mutex_unlock(&turn_lock);
    }
}

static void *gradient_thread(void *arg)
{
    float *g = malloc(NG * sizeof *g);
    double *d = malloc(ND * sizeof *d), *dout = malloc(ND * sizeof *dout);

    (void) arg;
    if (NULL == g || NULL == d || NULL == dout) {
        bad_bg++;
        return NULL;
    }
    for (int k = 0; k < steps; k++) {
        MPI_Request req;

        for (int i = 0; i < NG; i++) {
            g[i] = (float) (rank + k);
        }
        for (int i = 0; i < ND; i++) {
            d[i] = 0.25 * (double) (rank * k);
        }
        take_turn(1);
        MPI_Allreduce(MPI_IN_PLACE, g, NG, MPI_FLOAT, MPI_SUM, grad_comm);
        MPI_Iallreduce(d, dout, ND, MPI_DOUBLE, MPI_SUM, grad_comm, &req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        end_turn(1);
        for (int i = 0; i < NG; i++) {
            bad_bg += g[i] != (float) (size * k + size * (size - 1) / 2);
        }
        for (int i = 0; i < ND; i++) {
            bad_bg += dout[i] != 0.25 * (double) (k * size * (size - 1) / 2);
        }
    }
    free(g);
    free(d);
    free(dout);
    return NULL;
}

int main(int argc, char **argv)
{
    int required, provided = -1, bad = 0, anybad = 0;
    pthread_t thread;
    float *f;

    if (argc < 3) {
        fprintf(stderr, "usage: %s multiple|serialized STEPS\n", argv[0]);
        return 2;
    }
    serialized = 0 == strcmp(argv[1], "serialized");
    steps = atoi(argv[2]);
    required = serialized ? MPI_THREAD_SERIALIZED : MPI_THREAD_MULTIPLE;
    MPI_Init_thread(&argc, &argv, required, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (provided != required) {
        /* Open MPI grants what is asked up to MULTIPLE: anything else means
         * the level was changed on the way. */
        fprintf(stderr, "mpi_threads: asked for level %d, got %d\n", required, provided);
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    MPI_Comm_dup(MPI_COMM_WORLD, &grad_comm);
    f = malloc(NG * sizeof *f);
    if (NULL == f || 0 != pthread_create(&thread, NULL, gradient_thread, NULL)) {
        MPI_Abort(MPI_COMM_WORLD, 2);
    }

    /* The main thread: metrics and a float reduction of its own. */
    for (int k = 0; k < steps; k++) {
        int v[NI], s[NI];

        for (int i = 0; i < NI; i++) {
            v[i] = rank * i + k;
        }
        for (int i = 0; i < NG; i++) {
            f[i] = (float) (i % 32) * 0.5f;
        }
        take_turn(0);
        MPI_Allreduce(v, s, NI, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        MPI_Allreduce(MPI_IN_PLACE, f, NG, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        end_turn(0);
        for (int i = 0; i < NI; i++) {
            bad_main += s[i] != i * size * (size - 1) / 2 + size * k;
        }
        for (int i = 0; i < NG; i++) {
            bad_main += f[i] != (float) size * (float) (i % 32) * 0.5f;
        }
    }
    pthread_join(thread, NULL);
    bad = bad_main + bad_bg;
    MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (0 == rank) {
        printf("mpi_threads: %s, %d steps on %d ranks: %s\n", argv[1], steps, size,
               0 == anybad ? "results right" : "RESULTS WRONG");
    }
    free(f);
    MPI_Comm_free(&grad_comm);
    MPI_Finalize();
    return 0 == anybad ? 0 : 1;
}
