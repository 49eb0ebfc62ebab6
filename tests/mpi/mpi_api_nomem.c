/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * Out of memory on one rank only: omnibatch_set_state() must still return
 * the same code on every rank and leave every context as it was (its
 * documented contract).  The memory runs out on purpose: this program's
 * calloc() makes the library's next calloc(P, sizeof(double)) on rank 1
 * fail once, while armed, and hands every other call to the C library's.
 * A sanitizer build (its own allocator) skips the test.
 */
/* dladdr() is a GNU extension: asked for before any header (config.h
 * included) can pull in <features.h>. */
#define _GNU_SOURCE 1

#include "config.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "mpi_api_common.h"

#if defined(__SANITIZE_ADDRESS__)
#define NOMEM_INJECT 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(memory_sanitizer)
#define NOMEM_INJECT 0
#endif
#endif
#ifndef NOMEM_INJECT
#define NOMEM_INJECT 1
#endif

#if NOMEM_INJECT
/* glibc's own calloc, which this program's replaces for every object. */
extern void *__libc_calloc(size_t n, size_t size);

static volatile int nomem_armed;
static size_t nomem_count;
static int nomem_hit;

/* Whether \p addr is code of the object that holds omnibatch_set_state(). */
static int nomem_in_library(const void *addr)
{
    Dl_info here, lib;

    return 0 != dladdr(addr, &here) && 0 != dladdr((const void *) (uintptr_t) omnibatch_set_state, &lib)
           && here.dli_fbase == lib.dli_fbase;
}

void *calloc(size_t n, size_t size)
{
    if (nomem_armed && n == nomem_count && sizeof(double) == size
        && nomem_in_library(__builtin_return_address(0))) {
        nomem_armed = 0;
        nomem_hit = 1;
        errno = ENOMEM;
        return NULL;
    }
    return __libc_calloc(n, size);
}
#endif

/* The state of a run whose ranks 1.. learnt a model and whose rank 0 was
 * parked (min_batch 0): restored at min_batch 1, the saved plan does not
 * fit and the models plan, which is where the memory runs out. */
START_TEST(test_one_rank_out_of_memory_fails_every_rank_and_changes_nothing)
{
    const int P = mpi_size(), r = mpi_rank();
    const long B = 64L * P;
    omnibatch_options opt;
    omnibatch_t ctx = NULL;
    long plan[64];
    size_t size = 0;
    void *state, *fresh, *after;
    int rc, codes[2], most[2];

    ck_assert_int_le(P, 64);
    if (P < 2 || !NOMEM_INJECT) {
        return;
    }
    OB_CK_OK(omnibatch_options_init(&opt));
    opt.min_batch = 0;
    opt.adaptive = 0;
    opt.warmup = 1;
    OB_CK_OK(omnibatch_create(MPI_COMM_WORLD, B, 100 * B, &opt, &ctx));
    for (int i = 0; i < P; i++) {
        plan[i] = 0 == i ? 0 : (1 == i ? 128 : 64);
    }
    OB_CK_OK(omnibatch_set_plan(ctx, plan, P));
    for (int k = 0; k < 6; k++) {
        omnibatch_step st;
        double g = 1.0, sum = 0.0;

        OB_CK_OK(omnibatch_next_step(ctx, &st));
        mpi_sleep_ns(st.count * 20000L);
        OB_CK_OK(omnibatch_allreduce_gradient(ctx, &g, &sum, 1, MPI_DOUBLE));
    }
    OB_CK_OK(omnibatch_state_size(ctx, &size));
    state = malloc(size);
    fresh = malloc(size);
    after = malloc(size);
    ck_assert_ptr_nonnull(state);
    ck_assert_ptr_nonnull(fresh);
    ck_assert_ptr_nonnull(after);
    OB_CK_OK(omnibatch_get_state(ctx, state, size));
    OB_CK_OK(omnibatch_destroy(&ctx));

    opt.min_batch = 1;
    OB_CK_OK(omnibatch_create(MPI_COMM_WORLD, B, 100 * B, &opt, &ctx));
    OB_CK_OK(omnibatch_get_state(ctx, fresh, size));
#if NOMEM_INJECT
    nomem_count = (size_t) P;
    nomem_hit = 0;
    nomem_armed = 1 == r;
#endif
    rc = omnibatch_set_state(ctx, state, size);
#if NOMEM_INJECT
    nomem_armed = 0;
    ck_assert_int_eq(nomem_hit, 1 == r);
#endif
    codes[0] = rc;
    codes[1] = -rc;
    ck_assert_int_eq(MPI_Allreduce(codes, most, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD), MPI_SUCCESS);
    ck_assert_msg(most[0] == rc && -most[1] == rc, "rank %d: omnibatch_set_state returned %d, another rank %d", r,
                  rc, most[0] == rc ? -most[1] : most[0]);
    ck_assert_int_eq(rc, OMNIBATCH_ERR_NOMEM);
    /* Every context as it was: the same state, byte for byte. */
    OB_CK_OK(omnibatch_get_state(ctx, after, size));
    ck_assert_msg(0 == memcmp(fresh, after, size), "rank %d: the context changed in a failed omnibatch_set_state",
                  r);
    /* And it still resumes, the memory back. */
    OB_CK_OK(omnibatch_set_state(ctx, state, size));
    OB_CK_OK(omnibatch_get_plan(ctx, plan, P));
    for (int i = 0; i < P; i++) {
        ck_assert_int_ge(plan[i], 1);
    }
    free(state);
    free(fresh);
    free(after);
    OB_CK_OK(omnibatch_destroy(&ctx));
}
END_TEST

static Suite *make_mpi_api_nomem_suite(void)
{
    Suite *s = suite_create("nomem");
    TCase *tc = tcase_create("nomem");

    tcase_add_test(tc, test_one_rank_out_of_memory_fails_every_rank_and_changes_nothing);
    suite_add_tcase(s, tc);
    return s;
}

int main(int argc, char **argv)
{
    int rc;

    MPI_Init(&argc, &argv);
    rc = mpi_run_suite(make_mpi_api_nomem_suite());
    MPI_Finalize();
    return rc;
}
