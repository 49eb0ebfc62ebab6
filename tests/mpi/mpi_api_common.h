/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * What the MPI test programs of the API share: running one Check suite on
 * every rank without forking (MPI cannot survive a fork), and agreeing on
 * the exit status so that a failure on any rank fails the test.
 */
#ifndef MPI_API_COMMON_H
#define MPI_API_COMMON_H

#include <check.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "ob_check_run.h"
#include "omnibatch.h"

/* Fail the test with the library's own words when a call does not succeed. */
#define OB_CK_OK(call)                                                                      \
    do {                                                                                    \
        int ob_ck_rc_ = (call);                                                             \
        ck_assert_msg(OMNIBATCH_SUCCESS == ob_ck_rc_, "%s -> %d (%s): %s", #call, ob_ck_rc_, \
                      omnibatch_strerror(ob_ck_rc_), omnibatch_last_error());               \
    } while (0)

static inline int mpi_rank(void)
{
    int r;

    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    return r;
}

static inline int mpi_size(void)
{
    int p;

    MPI_Comm_size(MPI_COMM_WORLD, &p);
    return p;
}

/* Sleep \p ns nanoseconds (an emulated compute), all of them. */
static inline void mpi_sleep_ns(long ns)
{
    struct timespec ts;

    ts.tv_sec = ns / 1000000000L;
    ts.tv_nsec = ns % 1000000000L;
    while (0 != nanosleep(&ts, &ts)) {
    }
}

/* Run \p s on every rank; the exit status is failed on any rank. */
static inline int mpi_run_suite(Suite *s)
{
    SRunner *sr = srunner_create(s);
    int failed;
    int any = 0;

    srunner_set_fork_status(sr, CK_NOFORK);
    srunner_run_all(sr, 0 == mpi_rank() ? CK_NORMAL : CK_SILENT);
    failed = ob_check_failed(sr);
    if (failed > 0 && 0 != mpi_rank()) {
        /* Rank 0's summary does not show other ranks' failures. */
        srunner_print(sr, CK_NORMAL);
    }
    srunner_free(sr);
    MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    return any > 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}

#endif /* MPI_API_COMMON_H */
