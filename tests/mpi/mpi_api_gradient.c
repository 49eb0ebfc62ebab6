/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * The weighted gradient: with unequal batches, each rank's mean gradient of
 * a least-squares model over its own slice, reduced by
 * omnibatch_allreduce_gradient(), equals the gradient of the whole global
 * batch computed in one process: 1e-6 relative in float, 1e-12 in double,
 * for both conventions, in place and with separate buffers (the send buffer
 * left as it was), on full steps and on the short last step where some
 * ranks have no sample at all.  The same holds for a code that reduces
 * itself with a plain MPI_Allreduce after scaling by the step's scale.
 */
#include "config.h"

#include <math.h>
#include <string.h>

#include "mpi_api_common.h"

#define D 6                      /* features = gradient length */

/* Sample j: features x_j and target y_j = x_j . w_true + noise. */
static void sample(long j, double *x, double *y)
{
    static const double w_true[D] = {1.0, -2.0, 0.5, 3.0, -1.0, 0.25};
    double t = 0.0;

    for (int k = 0; k < D; k++) {
        x[k] = sin(0.37 * (double) j + 1.3 * (double) k) + 0.1 * (double) k;
        t += x[k] * w_true[k];
    }
    *y = t + 0.01 * sin(7.0 * (double) j);
}

/* Mean over the given samples of the gradient of (x . w - y)^2 / 2. */
static void mean_gradient(const long *idx, long n, const double *w, double *g)
{
    for (int k = 0; k < D; k++) {
        g[k] = 0.0;
    }
    for (long i = 0; i < n; i++) {
        double x[D];
        double y;
        double r = 0.0;

        sample(idx[i], x, &y);
        for (int k = 0; k < D; k++) {
            r += x[k] * w[k];
        }
        r -= y;
        for (int k = 0; k < D; k++) {
            g[k] += x[k] * r;
        }
    }
    for (int k = 0; k < D; k++) {
        g[k] /= (double) n;
    }
}

static double max_abs(const double *v)
{
    double m = 0.0;

    for (int k = 0; k < D; k++) {
        m = fmax(m, fabs(v[k]));
    }
    return m;
}

/* |got - ref| <= tol * max |ref|, component by component. */
static void assert_close(const double *got, const double *ref, double tol)
{
    double scale = max_abs(ref);

    ck_assert_double_gt(scale, 0.0);
    for (int k = 0; k < D; k++) {
        ck_assert_double_eq_tol(got[k], ref[k], tol * scale);
    }
}

/* One reduction of this rank's gradient \p g in the given way; the result,
 * divided by P for OMNIBATCH_GRAD_DIVIDE_BY_P, back in double. */
static void reduce(omnibatch_t ctx, const double *g, long count, MPI_Datatype type, int in_place,
                   int buckets, omnibatch_convention conv, double *out)
{
    float fs[D], fr[D], fcopy[D];
    double ds[D], dr[D], dcopy[D];
    const int split = buckets > 1 ? D / 2 : D;
    const double scale = OMNIBATCH_GRAD_DIVIDE_BY_P == conv ? 1.0 / (double) mpi_size() : 1.0;

    for (int k = 0; k < D; k++) {
        /* A rank without samples has no mean: whatever it holds must not count. */
        ds[k] = count > 0 ? g[k] : (double) NAN;
        fs[k] = (float) ds[k];
        dr[k] = -7.0;
        fr[k] = -7.0f;
    }
    memcpy(fcopy, fs, sizeof fs);
    memcpy(dcopy, ds, sizeof ds);
    if (MPI_FLOAT == type) {
        float *send = in_place ? fr : fs;

        if (in_place) {
            memcpy(fr, fs, sizeof fs);
        }
        OB_CK_OK(omnibatch_allreduce_gradient(ctx, in_place ? MPI_IN_PLACE : send, fr, split, type));
        if (split < D) {
            OB_CK_OK(omnibatch_allreduce_gradient(ctx, in_place ? MPI_IN_PLACE : send + split,
                                                  fr + split, D - split, type));
        }
        if (!in_place) {
            ck_assert_mem_eq(fs, fcopy, sizeof fs);
        }
        for (int k = 0; k < D; k++) {
            out[k] = (double) fr[k] * scale;
        }
    } else {
        double *send = in_place ? dr : ds;

        if (in_place) {
            memcpy(dr, ds, sizeof ds);
        }
        OB_CK_OK(omnibatch_allreduce_gradient(ctx, in_place ? MPI_IN_PLACE : send, dr, split, type));
        if (split < D) {
            OB_CK_OK(omnibatch_allreduce_gradient(ctx, in_place ? MPI_IN_PLACE : send + split,
                                                  dr + split, D - split, type));
        }
        if (!in_place) {
            ck_assert_mem_eq(ds, dcopy, sizeof ds);
        }
        for (int k = 0; k < D; k++) {
            out[k] = dr[k] * scale;
        }
    }
}

/* An unequal plan: 2, 4, 6, ... and the rest on the last rank. */
static void unequal_plan(int P, long B, long *plan)
{
    long sum = 0;

    for (int i = 0; i < P - 1; i++) {
        plan[i] = 2L * (i + 1);
        sum += plan[i];
    }
    plan[P - 1] = B - sum;
}

/* A context of the convention \p conv holding the unequal plan, fixed. */
static omnibatch_t unequal_context(omnibatch_convention conv, long B, long N)
{
    const int P = mpi_size();
    omnibatch_options opt;
    omnibatch_t ctx = NULL;
    long *plan = malloc((size_t) P * sizeof *plan);

    ck_assert_ptr_nonnull(plan);
    OB_CK_OK(omnibatch_options_init(&opt));
    opt.adaptive = 0;
    opt.min_batch = 1;
    opt.max_batch = 0;
    opt.granularity = 1;
    opt.convention = conv;
    OB_CK_OK(omnibatch_create(MPI_COMM_WORLD, B, N, &opt, &ctx));
    unequal_plan(P, B, plan);
    OB_CK_OK(omnibatch_set_plan(ctx, plan, P));
    free(plan);
    return ctx;
}

static void check_convention(omnibatch_convention conv)
{
    const int P = mpi_size();
    const long B = (long) P * (P + 1) + 5;
    const long N = 3 * B + 2;    /* the last step has 2 samples: some ranks get none */
    const double w[D] = {0.3, 0.1, -0.2, 0.05, 0.4, -0.3};
    omnibatch_t ctx;
    omnibatch_step s;
    long *perm = malloc((size_t) N * sizeof *perm);
    int empty_seen = 0;
    int naive_wrong = 0;

    ck_assert_ptr_nonnull(perm);
    ctx = unequal_context(conv, B, N);

    /* One epoch and the first step of the next. */
    for (long t = 0; t < 5; t++) {
        double g[D], ref[D], got[D], naive[D];
        int any_empty;
        int local_empty;

        OB_CK_OK(omnibatch_next_step(ctx, &s));
        if (0 == s.step) {
            OB_CK_OK(omnibatch_permutation(ctx, s.epoch, perm));
        }
        mean_gradient(perm + s.start, s.count, w, g);
        /* The one-process reference: every sample of the global step. */
        mean_gradient(perm + s.step * B, s.total, w, ref);

        for (int f = 0; f < 2; f++) {
            MPI_Datatype type = 0 == f ? MPI_FLOAT : MPI_DOUBLE;
            double tol = 0 == f ? 1e-6 : 1e-12;

            for (int in_place = 0; in_place < 2; in_place++) {
                for (int buckets = 1; buckets <= 2; buckets++) {
                    reduce(ctx, g, s.count, type, in_place, buckets, conv, got);
                    assert_close(got, ref, tol);
                }
            }
        }

        /* The test can fail: an unweighted mean of the ranks' gradients is
         * not the global batch's gradient when batches differ. */
        local_empty = 0 == s.count;
        MPI_Allreduce(&local_empty, &any_empty, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        empty_seen |= any_empty;
        if (!any_empty) {
            MPI_Allreduce(g, naive, D, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
            for (int k = 0; k < D; k++) {
                naive[k] /= (double) P;
                naive_wrong |= fabs(naive[k] - ref[k]) > 1e-3 * max_abs(ref);
            }
        }
    }
    ck_assert_int_eq(empty_seen, 1);
    ck_assert_int_eq(naive_wrong, 1);
    OB_CK_OK(omnibatch_destroy(&ctx));
    free(perm);
}

/* A code that reduces by itself: its mean gradient times step.scale, one
 * plain MPI_Allreduce, the sum divided by P under OMNIBATCH_GRAD_DIVIDE_BY_P.
 * The result is the whole global batch's gradient, on full steps and on the
 * short last step whose empty ranks (scale 0) contribute zeros. */
static void check_step_scale(omnibatch_convention conv)
{
    const int P = mpi_size();
    const long B = (long) P * (P + 1) + 5;
    const long N = 3 * B + 2;    /* the last step has 2 samples: some ranks get none */
    const double w[D] = {0.3, 0.1, -0.2, 0.05, 0.4, -0.3};
    omnibatch_t ctx;
    omnibatch_step s;
    long *perm = malloc((size_t) N * sizeof *perm);
    int empty_seen = 0;

    ck_assert_ptr_nonnull(perm);
    ctx = unequal_context(conv, B, N);

    for (long t = 0; t < 5; t++) {
        double g[D], ref[D], sum[D];
        int local_empty;
        int any_empty;

        OB_CK_OK(omnibatch_next_step(ctx, &s));
        if (0 == s.step) {
            OB_CK_OK(omnibatch_permutation(ctx, s.epoch, perm));
        }
        mean_gradient(perm + s.step * B, s.total, w, ref);
        if (0 == s.count) {
            ck_assert_double_eq(s.scale, 0.0);
            memset(g, 0, sizeof g);
        } else {
            ck_assert_double_gt(s.scale, 0.0);
            mean_gradient(perm + s.start, s.count, w, g);
            for (int k = 0; k < D; k++) {
                g[k] *= s.scale;
            }
        }
        MPI_Allreduce(g, sum, D, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        for (int k = 0; k < D; k++) {
            sum[k] /= OMNIBATCH_GRAD_DIVIDE_BY_P == conv ? (double) P : 1.0;
        }
        assert_close(sum, ref, 1e-12);
        local_empty = 0 == s.count;
        MPI_Allreduce(&local_empty, &any_empty, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        empty_seen |= any_empty;
    }
    ck_assert_int_eq(empty_seen, 1);
    OB_CK_OK(omnibatch_destroy(&ctx));
    free(perm);
}

START_TEST(test_step_scale_mean)
{
    check_step_scale(OMNIBATCH_GRAD_MEAN);
}
END_TEST

START_TEST(test_step_scale_divide_by_p)
{
    check_step_scale(OMNIBATCH_GRAD_DIVIDE_BY_P);
}
END_TEST

START_TEST(test_mean_convention)
{
    check_convention(OMNIBATCH_GRAD_MEAN);
}
END_TEST

START_TEST(test_divide_by_p_convention)
{
    check_convention(OMNIBATCH_GRAD_DIVIDE_BY_P);
}
END_TEST

START_TEST(test_zero_elements)
{
    omnibatch_t ctx = NULL;
    omnibatch_step s;
    double nothing = 0.0;

    OB_CK_OK(omnibatch_create(MPI_COMM_WORLD, 4L * mpi_size(), 100, NULL, &ctx));
    OB_CK_OK(omnibatch_next_step(ctx, &s));
    OB_CK_OK(omnibatch_allreduce_gradient(ctx, MPI_IN_PLACE, &nothing, 0, MPI_DOUBLE));
    ck_assert_double_eq(nothing, 0.0);
    OB_CK_OK(omnibatch_destroy(&ctx));
}
END_TEST

static Suite *make_mpi_api_gradient_suite(void)
{
    Suite *s = suite_create("mpi_api_gradient");
    TCase *tc = tcase_create("gradient");

    tcase_add_test(tc, test_mean_convention);
    tcase_add_test(tc, test_divide_by_p_convention);
    tcase_add_test(tc, test_zero_elements);
    tcase_add_test(tc, test_step_scale_mean);
    tcase_add_test(tc, test_step_scale_divide_by_p);
    suite_add_tcase(s, tc);
    return s;
}

int main(int argc, char **argv)
{
    int rc;

    MPI_Init(&argc, &argv);
    rc = mpi_run_suite(make_mpi_api_gradient_suite());
    MPI_Finalize();
    return rc;
}
