/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * The parameter server's update rule: with one worker and no staleness the
 * server's updates are plain SGD (PyTorch's, momentum and weight decay
 * included) to 1e-12 in double; the batch and staleness factors; the drop
 * bound; one line per bad setting.
 */
#include "config.h"

#include <check.h>
#include <math.h>
#include <string.h>

#include "ob_error.h"
#include "ob_update.h"

#define NPARAM 37

static ob_update_rule rule(void)
{
    ob_update_rule r;

    r.lr = 0.05;
    r.momentum = 0.9;
    r.weight_decay = 1e-3;
    r.ref_batch = 32;
    r.staleness = OB_UPDATE_ADAPTIVE;
    r.concurrency = 1;
    r.max_staleness = 8;
    return r;
}

/* The gradient of 0.5 sum_i c_i (w_i - t_i)^2 plus a term that depends on
 * the step, so that every step differs. */
static void gradient(const double *w, long step, double *g)
{
    for (int i = 0; i < NPARAM; i++) {
        double c = 0.5 + 0.1 * (double) (i % 7);
        double t = sin(0.3 * i);

        g[i] = c * (w[i] - t) + 0.01 * cos(0.1 * (double) step + i);
    }
}

/* PyTorch's SGD step (dampening 0, not Nesterov): d = g + wd w;
 * buf = mu buf + d; w -= lr buf. */
static void torch_sgd(const ob_update_rule *r, double *w, double *buf, const double *g)
{
    for (int i = 0; i < NPARAM; i++) {
        double d = g[i] + r->weight_decay * w[i];

        buf[i] = r->momentum * buf[i] + d;
        w[i] = w[i] - r->lr * buf[i];
    }
}

START_TEST(test_one_worker_no_staleness_is_plain_sgd)
{
    ob_update_rule r = rule();
    double w_server[NPARAM], m_server[NPARAM];
    double w_sgd[NPARAM], m_sgd[NPARAM];
    double g[NPARAM];
    long version = 0;

    for (int i = 0; i < NPARAM; i++) {
        w_server[i] = w_sgd[i] = 0.01 * (double) i;
        m_server[i] = m_sgd[i] = 0.0;
    }
    /* One worker: it reads version v, pushes, the server is still at v. */
    for (long step = 0; step < 500; step++) {
        long read = version;
        long tau;
        double s;

        gradient(w_server, step, g);
        tau = version - read;
        ck_assert_int_eq(tau, 0);
        ck_assert(!ob_update_drops(&r, tau));
        s = ob_update_scale(&r, r.ref_batch, tau);
        ob_update_apply_double(&r, s, w_server, m_server, g, NPARAM);
        version++;

        gradient(w_sgd, step, g);
        torch_sgd(&r, w_sgd, m_sgd, g);
    }
    for (int i = 0; i < NPARAM; i++) {
        ck_assert_double_eq_tol(w_server[i], w_sgd[i], 1e-12);
        ck_assert_double_eq_tol(m_server[i], m_sgd[i], 1e-12);
    }
}
END_TEST

START_TEST(test_float_follows_double)
{
    ob_update_rule r = rule();
    float wf[NPARAM], mf[NPARAM], gf[NPARAM];
    double wd[NPARAM], md[NPARAM], gd[NPARAM];

    for (int i = 0; i < NPARAM; i++) {
        wd[i] = 0.01 * (double) i;
        wf[i] = (float) wd[i];
        md[i] = 0.0;
        mf[i] = 0.0f;
    }
    for (long step = 0; step < 100; step++) {
        gradient(wd, step, gd);
        for (int i = 0; i < NPARAM; i++) {
            gf[i] = (float) gd[i];
        }
        ob_update_apply_double(&r, 0.75, wd, md, gd, NPARAM);
        ob_update_apply_float(&r, 0.75, wf, mf, gf, NPARAM);
    }
    for (int i = 0; i < NPARAM; i++) {
        ck_assert_double_eq_tol((double) wf[i], wd[i], 1e-4);
    }
}
END_TEST

/* The factor multiplies the new gradient only: the momentum already held
 * is not damped. */
START_TEST(test_scale_damps_the_gradient_not_the_history)
{
    ob_update_rule r = rule();
    double w[1] = { 2.0 };
    double m[1] = { 3.0 };
    double g[1] = { 5.0 };

    ob_update_apply_double(&r, 0.25, w, m, g, 1);
    ck_assert_double_eq_tol(m[0], 0.9 * 3.0 + 0.25 * (5.0 + 1e-3 * 2.0), 1e-15);
    ck_assert_double_eq_tol(w[0], 2.0 - 0.05 * m[0], 1e-15);
}
END_TEST

START_TEST(test_factors)
{
    ob_update_rule r = rule();

    /* The batch over the reference batch; exactly 1 at the reference. */
    ck_assert(1.0 == ob_update_scale(&r, 32, 0));
    ck_assert_double_eq_tol(ob_update_scale(&r, 16, 0), 0.5, 1e-15);
    ck_assert_double_eq_tol(ob_update_scale(&r, 96, 0), 3.0, 1e-15);

    r.staleness = OB_UPDATE_CONSTANT;
    ck_assert(1.0 == ob_update_staleness_factor(&r, 0));
    ck_assert(1.0 == ob_update_staleness_factor(&r, 100));

    /* Zhang et al.: lr / tau. */
    r.staleness = OB_UPDATE_INVERSE;
    ck_assert(1.0 == ob_update_staleness_factor(&r, 0));
    ck_assert(1.0 == ob_update_staleness_factor(&r, 1));
    ck_assert_double_eq_tol(ob_update_staleness_factor(&r, 4), 0.25, 1e-15);

    /* Koloskova et al.: the full step up to the concurrency, then tau_C / tau. */
    r.staleness = OB_UPDATE_ADAPTIVE;
    r.concurrency = 4;
    ck_assert(1.0 == ob_update_staleness_factor(&r, 3));
    ck_assert(1.0 == ob_update_staleness_factor(&r, 4));
    ck_assert_double_eq_tol(ob_update_staleness_factor(&r, 8), 0.5, 1e-15);
    ck_assert_double_eq_tol(ob_update_scale(&r, 16, 16), 0.5 * 0.25, 1e-15);
}
END_TEST

START_TEST(test_drop_bound)
{
    ob_update_rule r = rule();

    r.max_staleness = 3;
    ck_assert(!ob_update_drops(&r, 0));
    ck_assert(!ob_update_drops(&r, 3));
    ck_assert(ob_update_drops(&r, 4));
    r.max_staleness = 0;
    ck_assert(!ob_update_drops(&r, 0));
    ck_assert(ob_update_drops(&r, 1));
}
END_TEST

/* Each bad field: OMNIBATCH_ERR_ARG and a line naming it, its value and
 * what is allowed. */
START_TEST(test_bad_settings)
{
    ob_update_rule r = rule();

    ck_assert_int_eq(ob_update_check(&r, "fn:"), OMNIBATCH_SUCCESS);
    r.lr = 0.0;
    ck_assert_int_eq(ob_update_check(&r, "fn:"), OMNIBATCH_ERR_ARG);
    ck_assert_str_eq(ob_last_error(), "fn: lr=0: expected a finite number > 0");
    r.lr = NAN;
    ck_assert_int_eq(ob_update_check(&r, "fn:"), OMNIBATCH_ERR_ARG);
    r.lr = INFINITY;
    ck_assert_int_eq(ob_update_check(&r, "fn:"), OMNIBATCH_ERR_ARG);
    r = rule();
    r.momentum = 1.0;
    ck_assert_int_eq(ob_update_check(&r, "fn:"), OMNIBATCH_ERR_ARG);
    ck_assert_str_eq(ob_last_error(), "fn: momentum=1: expected a number in [0, 1)");
    r = rule();
    r.weight_decay = -0.5;
    ck_assert_int_eq(ob_update_check(&r, "fn:"), OMNIBATCH_ERR_ARG);
    ck_assert_str_eq(ob_last_error(), "fn: weight_decay=-0.5: expected a finite number >= 0");
    r = rule();
    r.ref_batch = 0;
    ck_assert_int_eq(ob_update_check(&r, "fn:"), OMNIBATCH_ERR_ARG);
    ck_assert_str_eq(ob_last_error(), "fn: ref_batch=0: expected >= 1");
    r = rule();
    r.staleness = (ob_update_staleness) 3;
    ck_assert_int_eq(ob_update_check(&r, "fn:"), OMNIBATCH_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(ob_last_error(), "staleness=3: expected"));
    r = rule();
    r.concurrency = 0;
    ck_assert_int_eq(ob_update_check(&r, "fn:"), OMNIBATCH_ERR_ARG);
    r = rule();
    r.max_staleness = -1;
    ck_assert_int_eq(ob_update_check(&r, "fn:"), OMNIBATCH_ERR_ARG);
    ck_assert_str_eq(ob_last_error(), "fn: max_staleness=-1: expected 0..1000000000 updates");
}
END_TEST

static Suite *make_update_suite(void)
{
    Suite *s = suite_create("update");
    TCase *tc = tcase_create("rule");

    tcase_add_test(tc, test_one_worker_no_staleness_is_plain_sgd);
    tcase_add_test(tc, test_float_follows_double);
    tcase_add_test(tc, test_scale_damps_the_gradient_not_the_history);
    tcase_add_test(tc, test_factors);
    tcase_add_test(tc, test_drop_bound);
    tcase_add_test(tc, test_bad_settings);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(make_update_suite());
    int failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return 0 == failed ? 0 : 1;
}
