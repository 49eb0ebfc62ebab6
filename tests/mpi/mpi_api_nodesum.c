/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * OMNIBATCH_WAIT=sleep with every rank on one node: the gradient is summed
 * in shared memory (api_node.c, OMNIBATCH_NODE_SUM).  With random values
 * and unequal shares, every rank gets, bit for bit, the ranks' weighted
 * gradients added in rank order, whatever the size (one element, a chunk's
 * edges, a larger gradient that grows the shared window, a smaller one
 * after it, doubles), in place or not (the send buffer unchanged); a rank
 * without samples adds zeros whatever its buffer holds; ranks that pass
 * different counts or types all fail with one line that says so, and the
 * next call works.  tests/mpi/mpi_api_nodesum.sh runs it a second time
 * with OMNIBATCH_NODE_SUM=off (MPI's sum, whose order is MPI's own: there
 * the sums are checked to a tolerance and the mismatches are not run).
 */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_api_common.h"

#define PER_RANK 16L             /* a rank's share at equal batches */

static int node_sum_on(void)
{
    const char *v = getenv("OMNIBATCH_NODE_SUM");

    return NULL == v || 0 != strcmp(v, "off");
}

/* A deterministic value in (-1, 1) of (seed, rank, index). */
static double value_at(uint64_t seed, int rank, long k)
{
    uint64_t x = seed * 0x9E3779B97F4A7C15ULL + (uint64_t) rank * 0xBF58476D1CE4E5B9ULL + (uint64_t) k;

    x ^= x >> 30;
    x *= 0xBF58476D1CE4E5B9ULL;
    x ^= x >> 27;
    x *= 0x94D049BB133111EBULL;
    x ^= x >> 31;
    return (double) (x >> 11) / (double) (1ULL << 52) - 1.0;
}

/* A context at a fixed plan of unequal shares: rank r has 2 (r + 1) of
 * them, rank \p idle none (-1: every rank some). */
static omnibatch_t unequal_context(int idle)
{
    omnibatch_options opt;
    omnibatch_t ctx = NULL;
    const int p = mpi_size();
    long plan[64];
    long B = 0;

    ck_assert_int_le(p, 64);
    for (int r = 0; r < p; r++) {
        plan[r] = r == idle ? 0 : 2L * (r + 1);
        B += plan[r];
    }
    OB_CK_OK(omnibatch_options_init(&opt));
    opt.adaptive = 0;
    opt.min_batch = 0;
    OB_CK_OK(omnibatch_create(MPI_COMM_WORLD, B, 100L * B, &opt, &ctx));
    OB_CK_OK(omnibatch_set_plan(ctx, plan, p));
    return ctx;
}

/* One call with \p n random values of type \p type (seeded by \p seed), in
 * place or from a separate buffer; every rank checks the result against
 * every rank's weighted values added in rank order. */
static void check_one_sum(omnibatch_t ctx, uint64_t seed, long n, MPI_Datatype type, int in_place)
{
    const int p = mpi_size(), me = mpi_rank();
    const size_t elem = MPI_FLOAT == type ? sizeof(float) : sizeof(double);
    const size_t bytes = (size_t) n * elem;
    char *mine = malloc(bytes + 1), *before = malloc(bytes + 1), *out = malloc(bytes + 1);
    char *weighted = malloc(bytes + 1), *all = malloc(bytes * (size_t) p + 1);
    char *first = malloc(bytes + 1);
    omnibatch_step st;
    long wrong = 0;
    int same = 0, all_same = 0;

    ck_assert_ptr_nonnull(mine);
    ck_assert_ptr_nonnull(before);
    ck_assert_ptr_nonnull(out);
    ck_assert_ptr_nonnull(weighted);
    ck_assert_ptr_nonnull(all);
    ck_assert_ptr_nonnull(first);
    OB_CK_OK(omnibatch_next_step(ctx, &st));
    for (long k = 0; k < n; k++) {
        const double v = 0 == st.count ? (double) NAN : value_at(seed, me, k);

        if (MPI_FLOAT == type) {
            ((float *) (void *) mine)[k] = (float) v;
            /* As the library weights: in double, rounded once. */
            ((float *) (void *) weighted)[k] = 0 == st.count ? 0.0f : (float) ((double) (float) v * st.scale);
        } else {
            ((double *) (void *) mine)[k] = v;
            ((double *) (void *) weighted)[k] = 0 == st.count ? 0.0 : v * st.scale;
        }
    }
    memcpy(before, mine, bytes);
    if (in_place) {
        memcpy(out, mine, bytes);
        OB_CK_OK(omnibatch_allreduce_gradient(ctx, MPI_IN_PLACE, out, (int) n, type));
    } else {
        OB_CK_OK(omnibatch_allreduce_gradient(ctx, mine, out, (int) n, type));
        ck_assert_msg(0 == memcmp(mine, before, bytes), "the send buffer was written");
    }
    MPI_Allgather(weighted, (int) bytes, MPI_BYTE, all, (int) bytes, MPI_BYTE, MPI_COMM_WORLD);
    for (long k = 0; k < n; k++) {
        if (MPI_FLOAT == type) {
            float s = ((const float *) (const void *) all)[k];

            for (int r = 1; r < p; r++) {
                s += ((const float *) (const void *) (all + (size_t) r * bytes))[k];
            }
            wrong += node_sum_on() ? 0 != memcmp(&s, (const float *) (const void *) out + k, sizeof s)
                                   : fabs((double) s - (double) ((const float *) (const void *) out)[k]) > 1e-6;
        } else {
            double s = ((const double *) (const void *) all)[k];

            for (int r = 1; r < p; r++) {
                s += ((const double *) (const void *) (all + (size_t) r * bytes))[k];
            }
            wrong += node_sum_on() ? 0 != memcmp(&s, (const double *) (const void *) out + k, sizeof s)
                                   : fabs(s - ((const double *) (const void *) out)[k]) > 1e-12;
        }
    }
    /* Every rank holds the same bits. */
    memcpy(first, out, bytes);
    MPI_Bcast(first, (int) bytes, MPI_BYTE, 0, MPI_COMM_WORLD);
    same = 0 == memcmp(first, out, bytes);
    MPI_Allreduce(&same, &all_same, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    ck_assert_msg(0 == wrong, "rank %d: %ld of %ld sums are not the rank-order sum (%s, %s)", me, wrong, n,
                  MPI_FLOAT == type ? "float" : "double", in_place ? "in place" : "out of place");
    ck_assert_msg(all_same, "the ranks' sums differ (%ld %s)", n, MPI_FLOAT == type ? "floats" : "doubles");
    free(mine);
    free(before);
    free(out);
    free(weighted);
    free(all);
    free(first);
}

START_TEST(test_sums_are_the_rank_order_sums)
{
    omnibatch_t ctx = unequal_context(-1);
    /* One element; a chunk (4096 floats) and one more; a larger gradient
     * (the window grows); a smaller one after it; doubles. */
    const long sizes[] = { 1, 4097, 235148, 3000, 0 };

    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        check_one_sum(ctx, 11 + i, sizes[i], MPI_FLOAT, i % 2);
    }
    check_one_sum(ctx, 31, 70001, MPI_DOUBLE, 1);
    check_one_sum(ctx, 32, 70001, MPI_DOUBLE, 0);
    check_one_sum(ctx, 33, 235148, MPI_FLOAT, 1);
    OB_CK_OK(omnibatch_destroy(&ctx));
}
END_TEST

START_TEST(test_a_rank_without_samples_adds_zeros)
{
    omnibatch_t ctx = unequal_context(mpi_size() - 1);

    /* The last rank's buffer holds NaN (check_one_sum()). */
    check_one_sum(ctx, 41, 5000, MPI_FLOAT, 1);
    check_one_sum(ctx, 42, 5000, MPI_DOUBLE, 0);
    OB_CK_OK(omnibatch_destroy(&ctx));
}
END_TEST

/* Every rank fails the call that \p count_of and \p type_of make differ,
 * with the words \p says; the next call works. */
static void check_mismatch(int count_of, MPI_Datatype type_of, const char *says)
{
    omnibatch_t ctx = unequal_context(-1);
    omnibatch_step st;
    double g[16] = { 0 };
    int rc, all_rc = 0;

    if (!node_sum_on()) {
        /* MPI's sum of unequal counts is erroneous, not ours to run. */
        OB_CK_OK(omnibatch_destroy(&ctx));
        return;
    }
    OB_CK_OK(omnibatch_next_step(ctx, &st));
    rc = omnibatch_allreduce_gradient(ctx, MPI_IN_PLACE, g, count_of, type_of);
    MPI_Allreduce(&rc, &all_rc, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    ck_assert_int_eq(rc, OMNIBATCH_ERR_ARG);
    ck_assert_int_eq(all_rc, OMNIBATCH_ERR_ARG);
    ck_assert_msg(NULL != strstr(omnibatch_last_error(), says), "%s", omnibatch_last_error());
    OB_CK_OK(omnibatch_next_step(ctx, &st));
    OB_CK_OK(omnibatch_allreduce_gradient(ctx, MPI_IN_PLACE, g, 8, MPI_DOUBLE));
    OB_CK_OK(omnibatch_destroy(&ctx));
}

START_TEST(test_different_counts_fail_on_every_rank)
{
    check_mismatch(0 == mpi_rank() ? 9 : 10, MPI_DOUBLE, "count=");
}
END_TEST

START_TEST(test_different_types_fail_on_every_rank)
{
    check_mismatch(10, 0 == mpi_rank() ? MPI_FLOAT : MPI_DOUBLE, "type is");
}
END_TEST

static Suite *make_mpi_api_nodesum_suite(void)
{
    Suite *s = suite_create("mpi_api_nodesum");
    TCase *tc = tcase_create("nodesum");

    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_sums_are_the_rank_order_sums);
    tcase_add_test(tc, test_a_rank_without_samples_adds_zeros);
    tcase_add_test(tc, test_different_counts_fail_on_every_rank);
    tcase_add_test(tc, test_different_types_fail_on_every_rank);
    suite_add_tcase(s, tc);
    return s;
}

int main(int argc, char **argv)
{
    int rc;

    /* Before MPI_Init: the settings are read once, at the first use. */
    setenv("OMNIBATCH_WAIT", "sleep", 1);
    MPI_Init(&argc, &argv);
    rc = mpi_run_suite(make_mpi_api_nodesum_suite());
    MPI_Finalize();
    return rc;
}
