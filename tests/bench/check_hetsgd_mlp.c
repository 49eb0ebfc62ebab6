/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * The benchmark's MLP: backward against finite differences, the weighted
 * mean the gradient allreduce relies on, and learning on a tiny problem.
 */
#include "config.h"

#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ob_check_run.h"
#include "mlp.h"
#include "ob_error.h"
#include "rng.h"

static float *random_inputs(long n, int width, uint64_t seed)
{
    float *x = malloc((size_t) n * (size_t) width * sizeof(float));
    uint64_t state = seed;

    ck_assert_ptr_nonnull(x);
    for (long i = 0; i < n * width; i++) {
        x[i] = (float) hetsgd_rng_uniform(&state);
    }
    return x;
}

START_TEST(test_backward_matches_finite_differences)
{
    const int dims[4] = { 6, 5, 4, 3 };
    const long n = 4;
    const uint8_t y[4] = { 0, 2, 1, 2 };
    hetsgd_mlp *m;
    float *x = random_inputs(n, dims[0], 7);
    float *grad;
    float *scratch;
    float *p;
    long np;
    int checked = 0;

    ck_assert_int_eq(hetsgd_mlp_create(dims, n, 42, &m), OMNIBATCH_SUCCESS);
    np = hetsgd_mlp_nparams(m);
    ck_assert_int_eq(np, 6 * 5 + 5 + 5 * 4 + 4 + 4 * 3 + 3);
    grad = malloc((size_t) np * sizeof(float));
    scratch = malloc((size_t) np * sizeof(float));
    ck_assert_ptr_nonnull(grad);
    ck_assert_ptr_nonnull(scratch);
    p = hetsgd_mlp_params(m);
    /* Non-zero biases, so the bias gradients are tested away from 0 too. */
    for (int i = 0; i < 5; i++) {
        p[6 * 5 + i] = 0.05f * (float) (i + 1);
    }
    hetsgd_mlp_loss_grad(m, x, y, n, grad);
    for (long k = 0; k < np; k++) {
        /* Small enough that no ReLU of this net changes side within +-eps
         * (a kink would spoil the difference), large enough for float. */
        const float eps = 1e-3f;
        float saved = p[k];
        double up, down, fd;

        p[k] = saved + eps;
        up = hetsgd_mlp_loss_grad(m, x, y, n, scratch);
        p[k] = saved - eps;
        down = hetsgd_mlp_loss_grad(m, x, y, n, scratch);
        p[k] = saved;
        fd = (up - down) / (2.0 * (double) eps);
        ck_assert_msg(fabs((double) grad[k] - fd) <= 1e-4 + 1e-3 * fabs(fd),
                      "parameter %ld: backward %g, finite difference %g", k, (double) grad[k], fd);
        checked += 0.0 != fd;
    }
    /* A check that compared zeros with zeros would prove nothing. */
    ck_assert_int_gt(checked, np / 2);
    free(grad);
    free(scratch);
    free(x);
    hetsgd_mlp_destroy(m);
}
END_TEST

START_TEST(test_empty_batch_gives_zero_gradient)
{
    const int dims[4] = { 3, 4, 4, 2 };
    hetsgd_mlp *m;
    float grad[3 * 4 + 4 + 4 * 4 + 4 + 4 * 2 + 2];

    ck_assert_int_eq(hetsgd_mlp_create(dims, 8, 1, &m), OMNIBATCH_SUCCESS);
    ck_assert_int_eq(hetsgd_mlp_nparams(m), (long) (sizeof grad / sizeof grad[0]));
    memset(grad, 0x7f, sizeof grad);
    ck_assert_double_eq(hetsgd_mlp_loss_grad(m, NULL, NULL, 0, grad), 0.0);
    for (size_t i = 0; i < sizeof grad / sizeof grad[0]; i++) {
        ck_assert_double_eq((double) grad[i], 0.0);
    }
    hetsgd_mlp_destroy(m);
}
END_TEST

/* The gradient of a batch is the count-weighted mean of its parts' mean
 * gradients: what scaling by b_i / B before a SUM allreduce computes. */
START_TEST(test_batch_gradient_is_weighted_mean_of_parts)
{
    const int dims[4] = { 8, 6, 5, 4 };
    const long n = 7, n1 = 2;
    uint8_t y[7] = { 0, 1, 2, 3, 3, 2, 1 };
    hetsgd_mlp *m;
    float *x = random_inputs(n, dims[0], 3);
    float *g, *g1, *g2;
    long np;
    double loss, loss1, loss2;

    ck_assert_int_eq(hetsgd_mlp_create(dims, n, 9, &m), OMNIBATCH_SUCCESS);
    np = hetsgd_mlp_nparams(m);
    g = malloc(3 * (size_t) np * sizeof(float));
    ck_assert_ptr_nonnull(g);
    g1 = g + np;
    g2 = g1 + np;
    loss = hetsgd_mlp_loss_grad(m, x, y, n, g);
    loss1 = hetsgd_mlp_loss_grad(m, x, y, n1, g1);
    loss2 = hetsgd_mlp_loss_grad(m, x + n1 * dims[0], y + n1, n - n1, g2);
    ck_assert_double_eq_tol(loss, (n1 * loss1 + (n - n1) * loss2) / n, 1e-6);
    for (long k = 0; k < np; k++) {
        double mix = ((double) n1 * (double) g1[k] + (double) (n - n1) * (double) g2[k]) / (double) n;
        ck_assert_double_eq_tol((double) g[k], mix, 1e-6);
    }
    free(g);
    free(x);
    hetsgd_mlp_destroy(m);
}
END_TEST

/* Chunks accumulated in place (hetsgd_mlp_loss_grad_add, what a step
 * worked in chunks does) sum to n times the batch's mean gradient, added to
 * what the sum held; an empty chunk adds nothing. */
START_TEST(test_chunks_add_to_the_summed_gradient)
{
    const int dims[4] = { 8, 6, 5, 4 };
    const long n = 7, cuts[4] = { 0, 3, 3, 7 };
    uint8_t y[7] = { 0, 1, 2, 3, 3, 2, 1 };
    hetsgd_mlp *m;
    float *x = random_inputs(n, dims[0], 5);
    float *g, *sum;
    long np;
    double loss, summed = 0.0;

    ck_assert_int_eq(hetsgd_mlp_create(dims, n, 11, &m), OMNIBATCH_SUCCESS);
    np = hetsgd_mlp_nparams(m);
    g = malloc(2 * (size_t) np * sizeof(float));
    ck_assert_ptr_nonnull(g);
    sum = g + np;
    for (long k = 0; k < np; k++) {
        sum[k] = (float) (k % 5) - 2.0f;
    }
    loss = hetsgd_mlp_loss_grad(m, x, y, n, g);
    for (int c = 0; c + 1 < 4; c++) {
        summed += hetsgd_mlp_loss_grad_add(m, x + cuts[c] * dims[0], y + cuts[c], cuts[c + 1] - cuts[c], sum);
    }
    ck_assert_double_eq_tol(summed, loss * (double) n, 1e-5);
    for (long k = 0; k < np; k++) {
        ck_assert_double_eq_tol((double) sum[k] - ((double) (k % 5) - 2.0), (double) n * (double) g[k], 1e-5);
    }
    free(g);
    free(x);
    hetsgd_mlp_destroy(m);
}
END_TEST

START_TEST(test_same_seed_same_weights)
{
    const int dims[4] = { 10, 8, 6, 3 };
    hetsgd_mlp *a, *b, *c;
    long np;

    ck_assert_int_eq(hetsgd_mlp_create(dims, 4, 123, &a), OMNIBATCH_SUCCESS);
    ck_assert_int_eq(hetsgd_mlp_create(dims, 9, 123, &b), OMNIBATCH_SUCCESS);
    ck_assert_int_eq(hetsgd_mlp_create(dims, 4, 124, &c), OMNIBATCH_SUCCESS);
    np = hetsgd_mlp_nparams(a);
    ck_assert_mem_eq(hetsgd_mlp_params(a), hetsgd_mlp_params(b), (size_t) np * sizeof(float));
    ck_assert_int_ne(memcmp(hetsgd_mlp_params(a), hetsgd_mlp_params(c), (size_t) np * sizeof(float)), 0);
    /* He-uniform: every first-layer weight within sqrt(6 / fan_in). */
    for (long k = 0; k < 10 * 8; k++) {
        ck_assert_double_le(fabs((double) hetsgd_mlp_params(a)[k]), sqrt(6.0 / 10.0));
    }
    hetsgd_mlp_destroy(a);
    hetsgd_mlp_destroy(b);
    hetsgd_mlp_destroy(c);
}
END_TEST

START_TEST(test_bad_dimensions_are_refused)
{
    const int dims[4] = { 10, 0, 6, 3 };
    const int good[4] = { 10, 8, 6, 3 };
    hetsgd_mlp *m = (hetsgd_mlp *) 1;

    ck_assert_int_eq(hetsgd_mlp_create(dims, 4, 1, &m), OMNIBATCH_ERR_ARG);
    ck_assert_ptr_null(m);
    ck_assert_str_eq(ob_last_error(), "layer width 1 is 0: expected 1 to 65536");
    ck_assert_int_eq(hetsgd_mlp_create(good, 0, 1, &m), OMNIBATCH_ERR_ARG);
}
END_TEST

/* n samples of 8 features in three well separated blobs: sample r is of
 * class r % 3, its features c with c % 3 == class near 0.9, the rest near 0.1. */
static void make_blobs(float *x, uint8_t *y, long n, uint64_t seed)
{
    uint64_t state = seed;

    for (long r = 0; r < n; r++) {
        y[r] = (uint8_t) (r % 3);
        for (int c = 0; c < 8; c++) {
            double centre = c % 3 == y[r] ? 0.9 : 0.1;
            x[r * 8 + c] = (float) (centre + 0.2 * (hetsgd_rng_uniform(&state) - 0.5));
        }
    }
}

/* SGD must drive the loss down on the blobs and classify them. */
START_TEST(test_training_decreases_loss_on_a_tiny_problem)
{
    const int dims[4] = { 8, 16, 16, 3 };
    const long n = 60;
    float x[60 * 8];
    uint8_t y[60];
    const uint64_t seed = 5;
    hetsgd_mlp *m;
    float *grad;
    double first, last = 0.0, eval_loss;
    long correct;

    make_blobs(x, y, n, seed);
    ck_assert_int_eq(hetsgd_mlp_create(dims, n, 11, &m), OMNIBATCH_SUCCESS);
    grad = malloc((size_t) hetsgd_mlp_nparams(m) * sizeof(float));
    ck_assert_ptr_nonnull(grad);
    first = hetsgd_mlp_loss_grad(m, x, y, n, grad);
    for (int step = 0; step < 100; step++) {
        last = hetsgd_mlp_loss_grad(m, x, y, n, grad);
        hetsgd_mlp_sgd_step(m, grad, 0.1f, 0.9f);
    }
    ck_assert_double_lt(last, 0.3 * first);
    /* A fresh network from the same seed, evaluated in slices of 16 (less
     * than n), has the summed loss of the first step. */
    hetsgd_mlp_destroy(m);
    ck_assert_int_eq(hetsgd_mlp_create(dims, 16, 11, &m), OMNIBATCH_SUCCESS);
    eval_loss = hetsgd_mlp_evaluate(m, x, y, n, &correct);
    ck_assert_double_eq_tol(eval_loss / n, first, 1e-5);
    free(grad);
    hetsgd_mlp_destroy(m);
}
END_TEST

START_TEST(test_trained_network_classifies_tiny_problem)
{
    const int dims[4] = { 8, 16, 16, 3 };
    const long n = 60;
    float x[60 * 8];
    uint8_t y[60];
    const uint64_t seed = 17;
    hetsgd_mlp *m;
    float *grad;
    long correct = 0;

    make_blobs(x, y, n, seed);
    ck_assert_int_eq(hetsgd_mlp_create(dims, 16, 3, &m), OMNIBATCH_SUCCESS);
    grad = malloc((size_t) hetsgd_mlp_nparams(m) * sizeof(float));
    ck_assert_ptr_nonnull(grad);
    hetsgd_mlp_evaluate(m, x, y, n, &correct);
    ck_assert_int_lt(correct, n);
    /* Plain SGD (momentum 0) on mini-batches of 15 in turn. */
    for (int step = 0; step < 200; step++) {
        long first = (step % 4) * 15;
        hetsgd_mlp_loss_grad(m, x + first * 8, y + first, 15, grad);
        hetsgd_mlp_sgd_step(m, grad, 0.2f, 0.0f);
    }
    hetsgd_mlp_evaluate(m, x, y, n, &correct);
    ck_assert_int_eq(correct, n);
    free(grad);
    hetsgd_mlp_destroy(m);
}
END_TEST

static Suite *make_hetsgd_mlp_suite(void)
{
    Suite *s = suite_create("hetsgd_mlp");
    TCase *tc = tcase_create("core");

    tcase_add_test(tc, test_backward_matches_finite_differences);
    tcase_add_test(tc, test_empty_batch_gives_zero_gradient);
    tcase_add_test(tc, test_batch_gradient_is_weighted_mean_of_parts);
    tcase_add_test(tc, test_chunks_add_to_the_summed_gradient);
    tcase_add_test(tc, test_same_seed_same_weights);
    tcase_add_test(tc, test_bad_dimensions_are_refused);
    tcase_add_test(tc, test_training_decreases_loss_on_a_tiny_problem);
    tcase_add_test(tc, test_trained_network_classifies_tiny_problem);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(make_hetsgd_mlp_suite());
    int failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = ob_check_failed(sr);
    srunner_free(sr);
    return 0 == failed ? 0 : 1;
}
