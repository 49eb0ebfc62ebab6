/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * The step trace's rows, and the buffered writer that streams them
 * (ob_writer.h): paths that cannot hold output are refused when opened,
 * records reach the file whole, and a failed write is an OMNIBATCH_ERR_IO
 * naming the path and the system's reason.
 */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ob_check_run.h"
#include "ob_cpumarks.h"
#include "ob_error.h"
#include "ob_trace.h"
#include "ob_writer.h"

/* The fields of a row past the time: what the kernel gave the rank, unknown. */
#define OB_NO_CPU 0, 0.0, 0, 0.0, 0.0
/* A row of a step not worked in chunks: taken and given unknown. */
#define OB_NOT_CHUNKED -1, -1

static char dir[] = "/tmp/omnibatch-check-trace.XXXXXX";

static void make_dir(void)
{
    ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void remove_dir(void)
{
    char cmd[128];

    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
    strcpy(dir, "/tmp/omnibatch-check-trace.XXXXXX");
}

static char *slurp(const char *path)
{
    static char buf[1 << 16];
    FILE *f = fopen(path, "r");
    size_t n;

    ck_assert_ptr_nonnull(f);
    n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

START_TEST(test_row_spelling)
{
    char line[OB_TRACE_ROW_MAX];
    /* The step model's columns: the reduction known then, and the rest of
     * the blocked time (at least 0); empty when the reduction is unknown. */
    ob_trace_row known = { 12, 64, 0.5, 0.25, 0.125, 1764547200.5, OB_NO_CPU, OB_NOT_CHUNKED };
    ob_trace_row unknown = { 3, -1, 1e-3, 2.5, -1.0, 0.0, OB_NO_CPU, OB_NOT_CHUNKED };
    ob_trace_row waitless = { 4, 8, 1e-3, 0.1, 0.125, 0.0, OB_NO_CPU, OB_NOT_CHUNKED };
    ob_trace_row starved = { 5, 8, 0.000124, 0.006128, 0.000735, 0.0, OB_NO_CPU, OB_NOT_CHUNKED };
    ob_trace_row huge = { INT64_MAX, INT64_MAX, -1.2345678901234e-300, -1.2345678901234e300,
                          1.2345678901234e-300, 1e300, OB_NO_CPU, OB_NOT_CHUNKED };
    char long_host[2 * OB_TRACE_HOST_MAX];

    ck_assert_uint_eq(ob_trace_format(line, &known, 7, "node-a"),
                      strlen("12,7,64,0.5,0.25,0.125,0.125,1764547200.500000,node-a,,,,,,\n"));
    ck_assert_str_eq(line, "12,7,64,0.5,0.25,0.125,0.125,1764547200.500000,node-a,,,,,,\n");
    ob_trace_format(line, &unknown, 0, NULL);
    ck_assert_str_eq(line, "3,0,,0.001,2.5,,,,,,,,,,\n");
    ob_trace_format(line, &waitless, 1, "h");
    ck_assert_str_eq(line, "4,1,8,0.001,0.1,0.125,0,,h,,,,,,\n");
    /* What the kernel gave the rank: a starved step (stopped by its quota),
     * and one on a host with no quota and no schedstat. */
    starved.cpu_known = 1;
    starved.cpu_s = 0.0005;
    starved.nivcsw = 3;
    starved.off_cpu_s = 0.0056;
    starved.throttled_s = 0.0055;
    ob_trace_format(line, &starved, 3, "h3");
    ck_assert_str_eq(line, "5,3,8,0.000124,0.006128,0.000735,0.005393,,h3,0.0005,3,0.0056,0.0055,,\n");
    starved.nivcsw = -1;
    starved.off_cpu_s = -1.0;
    starved.throttled_s = -1.0;
    ob_trace_format(line, &starved, 3, "h3");
    ck_assert_str_eq(line, "5,3,8,0.000124,0.006128,0.000735,0.005393,,h3,0.0005,,,,,\n");
    /* A step worked in chunks: 5 samples taken from others, none given. */
    starved.taken = 5;
    starved.given = 0;
    ob_trace_format(line, &starved, 3, "h3");
    ck_assert_str_eq(line, "5,3,8,0.000124,0.006128,0.000735,0.005393,,h3,0.0005,,,,5,0\n");
    huge.taken = INT64_MAX;
    huge.given = INT64_MAX;
    huge.cpu_known = 1;
    huge.cpu_s = -1.2345678901234e300;
    huge.nivcsw = INT64_MAX;
    huge.off_cpu_s = 1.2345678901234e300;
    huge.throttled_s = 1.2345678901234e-300;
    memset(long_host, 'h', sizeof long_host - 1);
    long_host[sizeof long_host - 1] = '\0';
    ck_assert_uint_eq(ob_trace_format(line, &huge, 65535, long_host), strlen(line));
    ck_assert_ptr_nonnull(strchr(line, '\n'));
}
END_TEST

START_TEST(test_unwritable_paths_are_refused_at_open)
{
    static const char *const cases[][2] = {
        { "/nonexistent-dir-of-omnibatch/t.csv", "No such file or directory" },
        { "/proc/self/omnibatch.csv", NULL },
        { "/proc/sys/kernel/hostname", "/proc or /sys" },
        { "/tmp", NULL },
    };
    ob_writer w;

    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ck_assert_int_eq(ob_writer_open(&w, cases[i][0], "OMNIBATCH_TRACE", 0, 0.0), OMNIBATCH_ERR_IO);
        ck_assert_msg(NULL != strstr(ob_last_error(), "OMNIBATCH_TRACE='"), "%s", ob_last_error());
        ck_assert_msg(NULL != strstr(ob_last_error(), cases[i][0]), "%s", ob_last_error());
        if (NULL != cases[i][1]) {
            ck_assert_msg(NULL != strstr(ob_last_error(), cases[i][1]), "%s", ob_last_error());
        }
        ck_assert_int_eq(ob_writer_close(&w, 0.0), OMNIBATCH_SUCCESS);
    }
}
END_TEST

START_TEST(test_read_only_directory_is_refused)
{
    char path[256];
    ob_writer w;

    if (0 == geteuid()) {
        /* root writes through the mode bits; the directory test is the user's. */
        return;
    }
    make_dir();
    ck_assert_int_eq(chmod(dir, 0555), 0);
    snprintf(path, sizeof path, "%s/t.csv", dir);
    ck_assert_int_eq(ob_writer_open(&w, path, "OMNIBATCH_TRACE", 0, 0.0), OMNIBATCH_ERR_IO);
    ck_assert_msg(NULL != strstr(ob_last_error(), "Permission denied"), "%s", ob_last_error());
    chmod(dir, 0755);
    remove_dir();
}
END_TEST

START_TEST(test_records_are_whole_and_flushed_when_due)
{
    char path[256];
    ob_writer w;

    make_dir();
    snprintf(path, sizeof path, "%s/t.csv", dir);
    /* A 20-byte buffer: the third 8-byte record makes the first two go out together. */
    ck_assert_int_eq(ob_writer_open(&w, path, "OMNIBATCH_TRACE", 20, 0.0), OMNIBATCH_SUCCESS);
    ck_assert_int_eq(ob_writer_start(&w), OMNIBATCH_SUCCESS);
    ck_assert_int_eq(ob_writer_append(&w, "aaaaaaa\n", 8), OMNIBATCH_SUCCESS);
    ck_assert_int_eq(ob_writer_append(&w, "bbbbbbb\n", 8), OMNIBATCH_SUCCESS);
    ck_assert_str_eq(slurp(path), "");
    ck_assert_int_eq(ob_writer_append(&w, "ccccccc\n", 8), OMNIBATCH_SUCCESS);
    ck_assert_str_eq(slurp(path), "aaaaaaa\nbbbbbbb\n");
    /* Not yet due, then due. */
    ck_assert_int_eq(ob_writer_flush_due(&w, OB_WRITER_FLUSH_SECONDS / 2), OMNIBATCH_SUCCESS);
    ck_assert_str_eq(slurp(path), "aaaaaaa\nbbbbbbb\n");
    ck_assert_int_eq(ob_writer_flush_due(&w, OB_WRITER_FLUSH_SECONDS), OMNIBATCH_SUCCESS);
    ck_assert_str_eq(slurp(path), "aaaaaaa\nbbbbbbb\nccccccc\n");
    /* A record larger than the buffer goes out by itself, whole. */
    ck_assert_int_eq(ob_writer_append(&w, "0123456789012345678901234\n", 26), OMNIBATCH_SUCCESS);
    ck_assert_str_eq(slurp(path), "aaaaaaa\nbbbbbbb\nccccccc\n0123456789012345678901234\n");
    ck_assert_int_eq(ob_writer_append(&w, "d\n", 2), OMNIBATCH_SUCCESS);
    ck_assert_int_eq(ob_writer_close(&w, 10.0), OMNIBATCH_SUCCESS);
    ck_assert_str_eq(slurp(path), "aaaaaaa\nbbbbbbb\nccccccc\n0123456789012345678901234\nd\n");
    remove_dir();
}
END_TEST

START_TEST(test_existing_file_kept_until_start_and_created_file_abandoned)
{
    char path[256];
    FILE *f;
    ob_writer w;

    make_dir();
    snprintf(path, sizeof path, "%s/old.csv", dir);
    f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs("previous run\n", f);
    fclose(f);
    ck_assert_int_eq(ob_writer_open(&w, path, "OMNIBATCH_TRACE", 0, 0.0), OMNIBATCH_SUCCESS);
    ob_writer_abandon(&w);
    ck_assert_str_eq(slurp(path), "previous run\n");
    ck_assert_int_eq(ob_writer_open(&w, path, "OMNIBATCH_TRACE", 0, 0.0), OMNIBATCH_SUCCESS);
    ck_assert_int_eq(ob_writer_start(&w), OMNIBATCH_SUCCESS);
    ck_assert_int_eq(ob_writer_close(&w, 0.0), OMNIBATCH_SUCCESS);
    ck_assert_str_eq(slurp(path), "");
    snprintf(path, sizeof path, "%s/new.csv", dir);
    ck_assert_int_eq(ob_writer_open(&w, path, "OMNIBATCH_TRACE", 0, 0.0), OMNIBATCH_SUCCESS);
    ob_writer_abandon(&w);
    ck_assert_int_ne(access(path, F_OK), 0);
    remove_dir();
}
END_TEST

START_TEST(test_same_file_under_two_names)
{
    char a[256], b[256], c[256], d[256];
    ob_writer wa, wb, wc, wd;

    make_dir();
    snprintf(a, sizeof a, "%s/t.csv", dir);
    snprintf(b, sizeof b, "%s/./t.csv", dir);
    snprintf(c, sizeof c, "%s/link.csv", dir);
    snprintf(d, sizeof d, "%s/other.csv", dir);
    ck_assert_int_eq(ob_writer_open(&wa, a, "OMNIBATCH_TRACE", 0, 0.0), OMNIBATCH_SUCCESS);
    ck_assert_int_eq(symlink(a, c), 0);
    ck_assert_int_eq(ob_writer_open(&wb, b, "OMNIBATCH_TRACE", 0, 0.0), OMNIBATCH_SUCCESS);
    ck_assert_int_eq(ob_writer_open(&wc, c, "OMNIBATCH_TRACE", 0, 0.0), OMNIBATCH_SUCCESS);
    ck_assert_int_eq(ob_writer_open(&wd, d, "OMNIBATCH_TRACE", 0, 0.0), OMNIBATCH_SUCCESS);
    ck_assert(ob_writer_same_file(&wa, &wb));
    ck_assert(ob_writer_same_file(&wa, &wc));
    ck_assert(!ob_writer_same_file(&wa, &wd));
    ob_writer_close(&wa, 0.0);
    ob_writer_close(&wb, 0.0);
    ob_writer_close(&wc, 0.0);
    ob_writer_close(&wd, 0.0);
    remove_dir();
}
END_TEST

START_TEST(test_full_disk_is_an_io_error_once)
{
    ob_writer w;

    ck_assert_int_eq(ob_writer_open(&w, "/dev/full", "OMNIBATCH_TRACE", 16, 0.0), OMNIBATCH_SUCCESS);
    ck_assert_int_eq(ob_writer_append(&w, "0123456789\n", 11), OMNIBATCH_SUCCESS);
    ck_assert_int_eq(ob_writer_append(&w, "0123456789\n", 11), OMNIBATCH_ERR_IO);
    ck_assert_msg(NULL != strstr(ob_last_error(), "/dev/full: No space left on device"), "%s",
                  ob_last_error());
    /* Reported once: later records are counted, not retried. */
    ck_assert_int_eq(ob_writer_append(&w, "0123456789\n", 11), OMNIBATCH_SUCCESS);
    ck_assert_int_eq(ob_writer_close(&w, 1.0), OMNIBATCH_SUCCESS);
    /* All three: the one buffered when the write failed, and the two after. */
    ck_assert_int_eq(w.lost, 3);
    ck_assert_str_eq(omnibatch_strerror(OMNIBATCH_ERR_IO), "cannot write an output file");
}
END_TEST

/* A made-up sample at second t: 0.1 s of CPU, one involuntary switch,
 * 0.9 s off the CPU and 0.8 s stopped by the quota for each second. */
static ob_cpu_sample sample_at(double t)
{
    ob_cpu_sample s = { .wall_s = t, .cpu_s = 0.1 * t, .nivcsw = (int64_t) t, .nvcsw = 0, .run_s = 0.1 * t,
                        .delay_s = 0.9 * t, .periods = 10 * (int64_t) t, .throttled = 8 * (int64_t) t,
                        .throttled_s = 0.8 * t };

    return s;
}

/* Steps handed over long after their calls (the detector learning the
 * pattern) still get the CPU of their own stretch; the first step, and a
 * step whose mark was overwritten, get none. */
START_TEST(test_cpu_marks_give_each_step_its_own_stretch)
{
    ob_cpu_marks m;
    ob_cpu_use u;
    ob_cpu_sample s;

    ck_assert(ob_cpu_marks_init(&m));
    /* Three calls a step, steps ending at 3, 6, 9, ... seconds. */
    for (int k = 1; k <= 30; k++) {
        s = sample_at((double) k);
        ob_cpu_marks_add(&m, (double) k, &s);
    }
    ck_assert_int_eq(ob_cpu_marks_step(&m, 3.0, 0.1, &u), 0);
    for (int k = 2; k <= 10; k++) {
        ck_assert_int_eq(ob_cpu_marks_step(&m, 3.0 * k, 0.1, &u), 1);
        ck_assert_double_eq_tol(u.wall_s, 3.0, 1e-12);
        ck_assert_double_eq_tol(u.cpu_s, 0.3, 1e-12);
        ck_assert_int_eq(u.nivcsw, 3);
        ck_assert_double_eq_tol(u.delay_s, 2.7, 1e-12);
        ck_assert_double_eq_tol(u.throttled_s, 2.4, 1e-12);
        ck_assert_double_eq_tol(u.quota, 0.1, 1e-12);
    }
    /* An end never marked (or already passed): unknown, and so is the next. */
    ck_assert_int_eq(ob_cpu_marks_step(&m, 31.5, 0.1, &u), 0);
    s = sample_at(33.0);
    ob_cpu_marks_add(&m, 33.0, &s);
    ck_assert_int_eq(ob_cpu_marks_step(&m, 33.0, 0.1, &u), 0);
    /* More calls than kept: the oldest marks are gone. */
    for (int k = 34; k < 34 + OB_CPU_MARKS + 10; k++) {
        s = sample_at((double) k);
        ob_cpu_marks_add(&m, (double) k, &s);
    }
    ck_assert_int_eq(ob_cpu_marks_step(&m, 36.0, 0.1, &u), 0);
    ck_assert_int_eq(ob_cpu_marks_step(&m, 100.0, 0.1, &u), 0);
    ck_assert_int_eq(ob_cpu_marks_step(&m, 102.0, 0.1, &u), 1);
    ck_assert_double_eq_tol(u.wall_s, 2.0, 1e-12);
    ob_cpu_marks_free(&m);
    /* Freed (or never allocated): nothing kept, nothing known, no crash. */
    ob_cpu_marks_add(&m, 1.0, &s);
    ck_assert_int_eq(ob_cpu_marks_step(&m, 1.0, 0.1, &u), 0);
}
END_TEST

static Suite *make_trace_suite(void)
{
    Suite *s = suite_create("trace");
    TCase *tc = tcase_create("core");

    tcase_add_test(tc, test_row_spelling);
    tcase_add_test(tc, test_cpu_marks_give_each_step_its_own_stretch);
    tcase_add_test(tc, test_unwritable_paths_are_refused_at_open);
    tcase_add_test(tc, test_read_only_directory_is_refused);
    tcase_add_test(tc, test_records_are_whole_and_flushed_when_due);
    tcase_add_test(tc, test_existing_file_kept_until_start_and_created_file_abandoned);
    tcase_add_test(tc, test_same_file_under_two_names);
    tcase_add_test(tc, test_full_disk_is_an_io_error_once);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(make_trace_suite());
    int failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = ob_check_failed(sr);
    srunner_free(sr);
    return 0 == failed ? 0 : 1;
}
