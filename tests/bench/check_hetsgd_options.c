/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * The training benchmark's command line: every option read, every mistake
 * refused with one line naming the option, the value and what is allowed.
 */
#include "config.h"

#include <check.h>
#include <string.h>

#include "ob_check_run.h"
#include "ob_error.h"
#include "options.h"

#define ARGC(a) ((int) (sizeof(a) / sizeof((a)[0])))

static hetsgd_options opts;

static int parse(int argc, const char *const *argv)
{
    hetsgd_options_defaults(&opts);
    return hetsgd_options_parse(argc, argv, &opts);
}

START_TEST(test_defaults)
{
    const char *argv[] = { "hetsgd" };

    ck_assert_int_eq(parse(ARGC(argv), argv), OMNIBATCH_SUCCESS);
    ck_assert_int_eq(opts.batch, HETSGD_DEFAULT_BATCH);
    ck_assert_int_eq(opts.epochs, HETSGD_DEFAULT_EPOCHS);
    ck_assert_int_eq(opts.max_steps, 0);
    ck_assert_int_eq(opts.policy, HETSGD_POLICY_OMNIBATCH);
    ck_assert_int_eq(opts.schedule, HETSGD_SCHEDULE_NONE);
    ck_assert_int_eq(opts.nspeeds, 0);
    ck_assert_double_eq(opts.target, 0.85);
    ck_assert_double_eq(opts.slowdown, 0.0);
    ck_assert_int_eq(opts.warmup, -1);
    ck_assert_int_eq(opts.final_evals, 5);
    ck_assert_str_eq(opts.data, "/usr/share/datasets/fashion-mnist");
    ck_assert_ptr_null(opts.trace);
    ck_assert(!opts.bind && !opts.help && !opts.has_cost && !opts.calibrate && !opts.no_own_wait &&
              !opts.last_eval_only);
}
END_TEST

START_TEST(test_every_option_is_read)
{
    const char *argv[] = { "hetsgd", "--epochs", "3", "--max-steps=40", "--batch", "128", "--lr", "0.1",
                     "--momentum", "0", "--seed", "77", "--subset", "5000", "--eval-every", "25", "--final-evals", "3",
                     "--speeds", "1,1,0.5,0.25", "--alpha", "0.002", "--slowdown", "2",
                     "--cost", "0.0005,2e-5", "--calibrate", "--no-own-wait", "--last-eval-only", "--warmup", "12", "--schedule", "vanish", "--policy", "omnilearn",
                     "--target", "0.8", "--data", "/tmp/d", "--trace", "t.csv", "--summary=s.txt" };

    ck_assert_int_eq(parse(ARGC(argv), argv), OMNIBATCH_SUCCESS);
    ck_assert_int_eq(opts.epochs, 3);
    ck_assert_int_eq(opts.max_steps, 40);
    ck_assert_int_eq(opts.batch, 128);
    ck_assert_double_eq(opts.lr, 0.1);
    ck_assert_double_eq(opts.momentum, 0.0);
    ck_assert_uint_eq(opts.seed, 77);
    ck_assert_int_eq(opts.subset, 5000);
    ck_assert_int_eq(opts.eval_every, 25);
    ck_assert_int_eq(opts.final_evals, 3);
    ck_assert_int_eq(opts.nspeeds, 4);
    ck_assert_double_eq(opts.speeds[2], 0.5);
    ck_assert_double_eq(opts.speeds[3], 0.25);
    ck_assert_double_eq(opts.alpha, 0.002);
    ck_assert_double_eq(opts.slowdown, 2.0);
    ck_assert(opts.has_cost && opts.calibrate && opts.no_own_wait && opts.last_eval_only);
    ck_assert_double_eq(opts.cost[0], 0.0005);
    ck_assert_double_eq(opts.cost[1], 2e-5);
    ck_assert_int_eq(opts.warmup, 12);
    ck_assert_int_eq(opts.schedule, HETSGD_SCHEDULE_VANISH);
    ck_assert_int_eq(opts.policy, HETSGD_POLICY_OMNILEARN);
    ck_assert_double_eq(opts.target, 0.8);
    ck_assert_str_eq(opts.data, "/tmp/d");
    ck_assert_str_eq(opts.trace, "t.csv");
    ck_assert_str_eq(opts.summary, "s.txt");
    ck_assert_str_eq(hetsgd_policy_name(opts.policy), "omnilearn");
}
END_TEST

START_TEST(test_chunks_jitter_and_changes_inside_a_step)
{
    const char *chunks[] = { "hetsgd", "--policy", "chunks", "--schedule", "jitter", "--cost", "0.0005,2e-5,1e-4" };
    const char *inside[] = { "hetsgd", "--schedule", "vanish", "--change-at=0.5", "--cost", "0,1e-5" };

    ck_assert_int_eq(parse(ARGC(chunks), chunks), OMNIBATCH_SUCCESS);
    ck_assert_int_eq(opts.policy, HETSGD_POLICY_CHUNKS);
    ck_assert_str_eq(hetsgd_policy_name(opts.policy), "chunks");
    ck_assert_int_eq(opts.schedule, HETSGD_SCHEDULE_JITTER);
    ck_assert_str_eq(hetsgd_schedule_name(opts.schedule), "jitter");
    ck_assert_double_eq(opts.cost[0], 0.0005);
    ck_assert_double_eq(opts.cost[1], 2e-5);
    ck_assert_double_eq(opts.chunk_cost, 1e-4);
    ck_assert_double_eq(opts.change_at, 0.0);
    ck_assert_int_eq(parse(ARGC(inside), inside), OMNIBATCH_SUCCESS);
    ck_assert_double_eq(opts.change_at, 0.5);
    /* Two numbers: the chunk's cost is measured at start-up. */
    ck_assert_double_eq(opts.chunk_cost, -1.0);
}
END_TEST

START_TEST(test_bind_takes_whole_cores)
{
    const char *good[] = { "hetsgd", "--bind", "--speeds", "2,1" };
    const char *fraction[] = { "hetsgd", "--bind", "--speeds", "2,0.5" };
    const char *dynamic[] = { "hetsgd", "--bind", "--schedule", "transient" };

    ck_assert_int_eq(parse(ARGC(good), good), OMNIBATCH_SUCCESS);
    ck_assert(opts.bind);
    ck_assert_int_eq(parse(ARGC(fraction), fraction), OMNIBATCH_ERR_ARG);
    ck_assert_str_eq(ob_last_error(),
                     "--speeds entry 1 is 0.5: with --bind, expected whole numbers of cores (1 to 4096)");
    ck_assert_int_eq(parse(ARGC(dynamic), dynamic), OMNIBATCH_ERR_ARG);
    ck_assert_str_eq(ob_last_error(), "--bind with --schedule transient: --bind takes --schedule none only");
}
END_TEST

START_TEST(test_async_mode)
{
    const char *async[] = { "hetsgd", "--mode", "async", "--policy", "omnilearn", "--staleness", "inverse",
                            "--max-staleness", "12", "--curve", "c.csv", "--eval-after" };
    const char *plain[] = { "hetsgd" };

    ck_assert_int_eq(parse(ARGC(plain), plain), OMNIBATCH_SUCCESS);
    ck_assert_int_eq(opts.mode, HETSGD_MODE_SYNC);
    ck_assert_int_eq(opts.staleness, 2);
    ck_assert_int_eq(opts.max_staleness, -1);
    ck_assert_ptr_null(opts.curve);
    ck_assert_int_eq(parse(ARGC(async), async), OMNIBATCH_SUCCESS);
    ck_assert_int_eq(opts.mode, HETSGD_MODE_ASYNC);
    ck_assert_int_eq(opts.policy, HETSGD_POLICY_OMNILEARN);
    ck_assert_int_eq(opts.staleness, 1);
    ck_assert_int_eq(opts.max_staleness, 12);
    ck_assert_int_eq(opts.max_global_batch, 0);
    ck_assert_str_eq(opts.curve, "c.csv");
    ck_assert_int_eq(opts.eval_after, 1);
    ck_assert_str_eq(hetsgd_mode_name(opts.mode), "async");
}
END_TEST

START_TEST(test_devices_per_rank)
{
    const char *mixed[] = { "hetsgd", "--bind", "--speeds", "4,4,4,2", "--devices", "cpu,cpu,cpu,gpu" };
    const char *cpus[] = { "hetsgd", "--devices=cpu,cpu" };
    const char *unbound[] = { "hetsgd", "--devices", "gpu,cpu" };

    ck_assert_int_eq(parse(ARGC(mixed), mixed), OMNIBATCH_SUCCESS);
    ck_assert_int_eq(opts.ndevices, 4);
    ck_assert(0 == opts.gpu[0] && 0 == opts.gpu[2] && 1 == opts.gpu[3]);
    ck_assert_int_eq(parse(ARGC(cpus), cpus), OMNIBATCH_SUCCESS);
    ck_assert(2 == opts.ndevices && 0 == opts.gpu[0] && 0 == opts.gpu[1]);
    /* A GPU rank's speed is real: emulation would scale the CPU's time. */
    ck_assert_int_eq(parse(ARGC(unbound), unbound), OMNIBATCH_ERR_ARG);
    ck_assert_str_eq(ob_last_error(), "--devices with gpu ranks: expected --bind too (a GPU rank runs at "
                     "its real speed, not an emulated one)");
}
END_TEST

/* Each bad command line and the line it must produce. */
static const struct {
    const char *args[3];
    const char *message;
} bad_cases[] = {
    { { "--batch", "x" }, "--batch 'x': expected an integer from 1 to 100000000" },
    { { "--batch", "0" }, "--batch '0': expected an integer from 1 to 100000000" },
    { { "--epochs", "2.5" }, "--epochs '2.5': expected an integer from 1 to 1000000" },
    { { "--lr", "0" }, "--lr '0': expected a number in (0, 100]" },
    { { "--momentum", "1" }, "--momentum '1': expected a number in [0, 1)" },
    { { "--target", "1.5" }, "--target '1.5': expected a number in (0, 1]" },
    { { "--alpha", "-1" }, "--alpha '-1': expected a number in [0, 60]" },
    { { "--lr", "nan" }, "--lr 'nan': expected a number in (0, 100]" },
    { { "--policy", "fast" }, "--policy 'fast': expected static, omnibatch, oracle, omnilearn or chunks" },
    { { "--schedule", "sine" }, "--schedule 'sine': expected none, ramp, transient, vanish or jitter" },
    { { "--change-at", "1" }, "--change-at '1': expected a number in [0, 1)" },
    { { "--change-at", "-0.1" }, "--change-at '-0.1': expected a number in [0, 1)" },
    { { "--change-at", "0.5" }, "--change-at 0.5 with --schedule none: no speed changes to place" },
    { { "--speeds", "1,,2" },
      "--speeds '1,,2': expected up to 4096 comma-separated numbers > 0, e.g. 1,1,0.5,0.25" },
    { { "--speeds", "1,-1" }, "--speeds '1,-1': entry '-1' is not a number > 0 (e.g. 1,1,0.5,0.25)" },
    { { "--slowdown", "0.5" }, "--slowdown '0.5': expected auto or a number in [1, 1000]" },
    { { "--final-evals", "0" }, "--final-evals '0': expected an integer from 1 to 1000000" },
    { { "--warmup", "-3" }, "--warmup '-3': expected auto or an integer >= 0" },
    { { "--frobnicate", "1" }, "unknown option '--frobnicate' (see --help)" },
    { { "--batch" }, "--batch needs a value (see --help)" },
    { { "batch", "3" }, "unexpected argument 'batch': options start with -- (see --help)" },
    { { "--bind=yes" }, "--bind takes no value, got 'yes'" },
    { { "--cost", "0.001" }, "--cost '0.001': expected A,B or A,B,C: seconds per step in [0, 60], per "
      "sample in (0, 60] and per later chunk in [0, 60], e.g. 0.0005,2e-5,0.0001 (what --calibrate prints)" },
    { { "--cost", "0.001,0" }, "--cost '0.001,0': expected A,B or A,B,C: seconds per step in [0, 60], per "
      "sample in (0, 60] and per later chunk in [0, 60], e.g. 0.0005,2e-5,0.0001 (what --calibrate prints)" },
    { { "--cost", "-1,1e-5" }, "--cost '-1,1e-5': expected A,B or A,B,C: seconds per step in [0, 60], per "
      "sample in (0, 60] and per later chunk in [0, 60], e.g. 0.0005,2e-5,0.0001 (what --calibrate prints)" },
    { { "--cost", "1,2,61" }, "--cost '1,2,61': expected A,B or A,B,C: seconds per step in [0, 60], per "
      "sample in (0, 60] and per later chunk in [0, 60], e.g. 0.0005,2e-5,0.0001 (what --calibrate prints)" },
    { { "--cost", "1,2,-1" }, "--cost '1,2,-1': expected A,B or A,B,C: seconds per step in [0, 60], per "
      "sample in (0, 60] and per later chunk in [0, 60], e.g. 0.0005,2e-5,0.0001 (what --calibrate prints)" },
    { { "--cost", "1,2,3,4" }, "--cost '1,2,3,4': expected A,B or A,B,C: seconds per step in [0, 60], per "
      "sample in (0, 60] and per later chunk in [0, 60], e.g. 0.0005,2e-5,0.0001 (what --calibrate prints)" },
    { { "--cost", "1,2," }, "--cost '1,2,': expected A,B or A,B,C: seconds per step in [0, 60], per "
      "sample in (0, 60] and per later chunk in [0, 60], e.g. 0.0005,2e-5,0.0001 (what --calibrate prints)" },
    { { "--bind", "--cost", "0,1e-5" }, "--bind with --cost: bound ranks are not emulated" },
    { { "--calibrate=1" }, "--calibrate takes no value, got '1'" },
    { { "--no-own-wait=on" }, "--no-own-wait takes no value, got 'on'" },
    { { "--last-eval-only=1" }, "--last-eval-only takes no value, got '1'" },
    { { "--data", "" }, "--data: empty value" },
    { { "--devices", "cpu,tpu" }, "--devices 'cpu,tpu': entry 'tpu' is not cpu or gpu (e.g. cpu,cpu,cpu,gpu)" },
    { { "--devices", "cpu,,gpu" }, "--devices 'cpu,,gpu': entry '' is not cpu or gpu (e.g. cpu,cpu,cpu,gpu)" },
    { { "--devices", "GPU" }, "--devices 'GPU': entry 'GPU' is not cpu or gpu (e.g. cpu,cpu,cpu,gpu)" },
    { { "--schedule", "ramp", "--speeds=1,2" },
      "--schedule ramp sets every rank's speed itself: leave out --speeds" },
    { { "--mode", "hybrid" }, "--mode 'hybrid': expected sync or async" },
    { { "--staleness", "none" }, "--staleness 'none': expected constant, inverse or adaptive" },
    { { "--max-staleness", "-2" }, "--max-staleness '-2': expected auto or an integer from 0 to 1000000000" },
    { { "--mode=async", "--policy", "oracle" },
      "--policy oracle with --mode async: expected static, omnibatch or omnilearn" },
    { { "--mode=async", "--bind" },
      "--mode async with --bind: the asynchronous mode runs emulated CPU workers only" },
    { { "--mode=async", "--trace", "t.csv" }, "--trace with --mode async: the per-step trace is the "
      "synchronous mode's (the asynchronous run's per-worker figures are in its report)" },
    { { "--mode=async", "--policy", "chunks" },
      "--policy chunks with --mode async: expected static, omnibatch or omnilearn" },
    { { "--mode=async", "--schedule=ramp", "--change-at=0.5" },
      "--change-at 0.5 with --mode async: expected 0 (the asynchronous mode has no common step to place "
      "a change in)" },
    { { "--eval-after=1" }, "--eval-after takes no value, got '1'" },
    { { "--max-global-batch", "512" }, "--max-global-batch 512 with --mode sync: expected 0 (a synchronous "
      "step is --batch)" },
};

START_TEST(test_mistakes_name_option_value_and_range)
{
    const char *argv[4];
    int argc = 1;

    argv[0] = "hetsgd";
    for (int k = 0; k < 3 && NULL != bad_cases[_i].args[k]; k++) {
        argv[argc++] = bad_cases[_i].args[k];
    }
    ck_assert_int_eq(parse(argc, argv), OMNIBATCH_ERR_ARG);
    ck_assert_str_eq(ob_last_error(), bad_cases[_i].message);
}
END_TEST

START_TEST(test_usage_mentions_every_option)
{
    static const char *const names[] = {
        "--policy", "--speeds", "--schedule", "--change-at", "--alpha", "--slowdown", "--cost", "--calibrate", "--bind", "--devices", "--epochs",
        "--max-steps", "--batch", "--lr", "--momentum", "--seed", "--subset", "--target",
        "--eval-every", "--final-evals", "--last-eval-only", "--no-own-wait", "--warmup", "--data", "--trace", "--summary", "--help",
        "--mode", "--staleness", "--max-staleness", "--eval-after", "--curve", "--max-global-batch"
    };

    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
        ck_assert_ptr_nonnull(strstr(hetsgd_options_usage(), names[k]));
    }
}
END_TEST

static Suite *make_hetsgd_options_suite(void)
{
    Suite *s = suite_create("hetsgd_options");
    TCase *tc = tcase_create("core");

    tcase_add_test(tc, test_defaults);
    tcase_add_test(tc, test_every_option_is_read);
    tcase_add_test(tc, test_devices_per_rank);
    tcase_add_test(tc, test_async_mode);
    tcase_add_test(tc, test_bind_takes_whole_cores);
    tcase_add_test(tc, test_chunks_jitter_and_changes_inside_a_step);
    tcase_add_loop_test(tc, test_mistakes_name_option_value_and_range, 0,
                        (int) (sizeof bad_cases / sizeof bad_cases[0]));
    tcase_add_test(tc, test_usage_mentions_every_option);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(make_hetsgd_options_suite());
    int failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = ob_check_failed(sr);
    srunner_free(sr);
    return 0 == failed ? 0 : 1;
}
