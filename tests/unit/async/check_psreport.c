/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * The asynchronous run's report and trace rows: every worker's pushes,
 * applied, dropped, samples per second and staleness (mean, p99, max) in
 * the text and the JSON (which parses), the server's busy fraction, the
 * pushes lost, the staleness spread; one trace row per push.
 */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ob_json_check.h"
#include "ob_psreport.h"

static const ob_psreport_worker rows[2] = {
    { 1, 100, 98, 2, 6400, 64, 3.5, 9, 12, 640.0, 1.5 },
    { 2, 50, 50, 0, 3200, 64, 7.0, 15, 20, 320.0, 2.5 },
};

static ob_psreport report(void)
{
    ob_psreport r;

    memset(&r, 0, sizeof r);
    r.servers = 1;
    r.workers = 2;
    r.elapsed_s = 10.0;
    r.pushes = 150;
    r.applied = 148;
    r.dropped = 2;
    r.max_staleness = 8;
    r.staleness_rule = "adaptive";
    r.adaptive = 1;
    r.decisions = 30;
    r.changes = 4;
    r.busy_fraction = 0.25;
    r.worker = rows;
    return r;
}

/* What a writer printed, as one string (free() it). */
static char *printed(int (*write)(FILE *, const ob_psreport *), const ob_psreport *r)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);

    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(write(f, r), 0);
    fclose(f);
    return text;
}

START_TEST(test_text)
{
    ob_psreport r = report();
    char *t = printed(ob_psreport_write_text, &r);

    ck_assert_msg(NULL != strstr(t, "omnibatch: asynchronous run: 1 server, 2 workers, 150 pushes in 10.00 s: "
                                    "148 applied (14.8 updates/s), 2 dropped (staler than 8 updates), 0 lost; "
                                    "960 samples/s; server busy 25.0%\n"), "%s", t);
    ck_assert_msg(NULL != strstr(t, "omnibatch:        0     1      100       98        2      640.0            "
                                    "3.50      9     12     64\n"), "%s", t);
    ck_assert_msg(NULL != strstr(t, "omnibatch:        1     2       50       50        0      320.0            "
                                    "7.00     15     20     64\n"), "%s", t);
    ck_assert_msg(NULL != strstr(t, "spreads 2.00x (largest / least); the step shrinks for staleness by the "
                                    "adaptive rule; batches: equal push rates, 30 decisions, 4 moved them"),
                  "%s", t);
    ck_assert_msg(NULL == strstr(t, "least batch"), "%s", t);
    free(t);
}
END_TEST

/* The JSON report of \p r parses and holds \p needle. */
static void json_has(const ob_psreport *r, const char *needle)
{
    char *t = printed(ob_psreport_write_json, r);

    ck_assert_msg(json_parses(t), "%s", t);
    ck_assert_msg(NULL != strstr(t, needle), "%s", t);
    free(t);
}

/* A worker the controller cannot bring to the others' rate: said, with
 * the global batch that would, in the text and the JSON. */
START_TEST(test_bound_worker)
{
    ob_psreport r = report();
    char *t;

    r.bound = 1;
    r.bound_worker = 1;
    r.bound_batch = 2;
    r.bound_cycle_s = 0.0131;
    r.bound_level_s = 0.0094;
    r.bound_need = 350;
    r.batch = 256;
    t = printed(ob_psreport_write_text, &r);
    ck_assert_msg(NULL != strstr(t, "omnibatch:   worker 1 (rank 2) is held at its least batch, 2, and still "
                                    "cycles in 13.1 ms against the others' 9.4 ms: no split of the global "
                                    "batch 256 equalises the push rates; one of about 350 would "
                                    "(max_global_batch allows a larger sum)\n"), "%s", t);
    ck_assert_msg(NULL == strstr(t, "grown"), "%s", t);
    free(t);
    /* Grown, up to a max_global_batch that still holds it back. */
    r.total = 300;
    r.max_total = 300;
    t = printed(ob_psreport_write_text, &r);
    ck_assert_msg(NULL != strstr(t, "omnibatch:   the batches sum to 300, grown from the global batch 256 "
                                    "(max_global_batch 300) so that a worker at its least batch pushes as "
                                    "often as the others\n"), "%s", t);
    ck_assert_msg(NULL != strstr(t, "no split of the batches' sum 300 equalises the push rates; one of "
                                    "about 350 would\n"), "%s", t);
    free(t);
    json_has(&r, "\"global_batch\": 256,\n    \"batch_sum\": 300,\n    \"max_global_batch\": 300,\n");
    r.total = 256;
    r.max_total = 0;
    json_has(&r, "\"bound\": {\"worker\": 1, \"batch\": 2, \"cycle_s\": 0.0131, \"level_s\": 0.0094, "
                 "\"global_batch_needed\": 350},");
    r.bound = 0;
    json_has(&r, "\"bound\": null,");
}
END_TEST

START_TEST(test_json)
{
    ob_psreport r = report();
    char *t;

    r.pushes = 151;              /* one push neither applied nor dropped: shown as lost */
    t = printed(ob_psreport_write_json, &r);
    ck_assert_msg(json_parses(t), "%s", t);
    ck_assert_ptr_nonnull(strstr(t, "\"lost\": 1,"));
    ck_assert_ptr_nonnull(strstr(t, "\"busy_fraction\": 0.25,"));
    ck_assert_ptr_nonnull(strstr(t, "\"staleness_spread\": 2,"));
    ck_assert_ptr_nonnull(strstr(t, "{\"rank\": 2, \"pushes\": 50, \"applied\": 50, \"dropped\": 0, "
                                    "\"samples\": 3200, \"samples_per_s\": 320, \"staleness_mean\": 7, "
                                    "\"staleness_p99\": 15, \"staleness_max\": 20, \"batch\": 64, "
                                    "\"compute_s\": 2.5}\n"));
    free(t);
}
END_TEST

START_TEST(test_spread)
{
    ob_psreport r = report();
    ob_psreport_worker none[2];

    ck_assert_double_eq_tol(ob_psreport_spread(&r), 2.0, 1e-12);
    memcpy(none, rows, sizeof none);
    none[1].pushes = 0;          /* a worker that never pushed: no spread to speak of */
    r.worker = none;
    ck_assert_double_eq(ob_psreport_spread(&r), 0.0);
}
END_TEST

START_TEST(test_trace_row)
{
    ob_psreport_push p = { 7, 1.25, 1, 2, 64, 3, 1, 0.25, 8, 0.01, 0.002 };
    char row[256];
    size_t n = ob_psreport_trace_row(row, sizeof row, &p);

    ck_assert_str_eq(ob_psreport_trace_header(),
                     "push,t_s,worker,rank,batch,staleness,applied,scale,version,compute_s,wait_s\n");
    ck_assert_str_eq(row, "7,1.250000,1,2,64,3,1,0.25,8,0.01,0.002\n");
    ck_assert_uint_eq(n, strlen(row));
    ck_assert_uint_eq(ob_psreport_trace_row(row, 8, &p), 0);
}
END_TEST

static Suite *make_psreport_suite(void)
{
    Suite *s = suite_create("psreport");
    TCase *tc = tcase_create("report");

    tcase_add_test(tc, test_text);
    tcase_add_test(tc, test_json);
    tcase_add_test(tc, test_bound_worker);
    tcase_add_test(tc, test_spread);
    tcase_add_test(tc, test_trace_row);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(make_psreport_suite());
    int failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return 0 == failed ? 0 : 1;
}
