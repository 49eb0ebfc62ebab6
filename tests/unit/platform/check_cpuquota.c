/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * The CPU quota a process runs under, read from cgroup trees written here
 * in a temporary directory, laid out as the kernel lays out v1 and v2 (the
 * files and their formats); the binding cgroup's throttling and the main
 * thread's schedstat, read through a probe from such trees and changed
 * between two samples as the kernel would change them; then the host's
 * own, checked for sanity.
 */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ob_check_run.h"
#include "ob_cpuquota.h"
#include "ob_cpuuse.h"

static char root[256];

static void put(const char *rel, const char *text)
{
    char path[512];
    FILE *f;

    snprintf(path, sizeof path, "%s/%s", root, rel);
    f = fopen(path, "w");
    ck_assert_msg(NULL != f, "cannot write %s", path);
    fputs(text, f);
    fclose(f);
}

static void dir(const char *rel)
{
    char path[512];

    snprintf(path, sizeof path, "%s/%s", root, rel);
    ck_assert_msg(0 == mkdir(path, 0700), "cannot create %s", path);
}

static double quota_of(const char *proc_cgroup)
{
    char proc[512], fs[512];

    put("proc-cgroup", proc_cgroup);
    snprintf(proc, sizeof proc, "%s/proc-cgroup", root);
    snprintf(fs, sizeof fs, "%s/fs", root);
    return ob_cpu_quota(proc, fs);
}

static void setup(void)
{
    snprintf(root, sizeof root, "%s/check-cpuquota.XXXXXX", NULL != getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    ck_assert_ptr_nonnull(mkdtemp(root));
    dir("fs");
}

static void teardown(void)
{
    char cmd[600];

    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    ck_assert_int_eq(system(cmd), 0);
}

/* v1: cpu.cfs_quota_us / cpu.cfs_period_us of the cpu controller's cgroup. */
START_TEST(test_v1_quota_of_the_process_cgroup)
{
    dir("fs/cpu");
    dir("fs/cpu/job");
    dir("fs/cpu/job/rank3");
    put("fs/cpu/cpu.cfs_quota_us", "-1\n");
    put("fs/cpu/cpu.cfs_period_us", "100000\n");
    put("fs/cpu/job/cpu.cfs_quota_us", "-1\n");
    put("fs/cpu/job/cpu.cfs_period_us", "100000\n");
    put("fs/cpu/job/rank3/cpu.cfs_quota_us", "10000\n");
    put("fs/cpu/job/rank3/cpu.cfs_period_us", "100000\n");
    ck_assert_double_eq_tol(quota_of("12:memory:/job\n4:cpu,cpuacct:/job/rank3\n1:name=systemd:/x\n"), 0.1,
                            1e-12);
    /* The parent's quota binds when it is the smaller. */
    put("fs/cpu/job/cpu.cfs_quota_us", "5000\n");
    ck_assert_double_eq_tol(quota_of("4:cpu,cpuacct:/job/rank3\n"), 0.05, 1e-12);
    /* No quota anywhere (-1): none. */
    put("fs/cpu/job/cpu.cfs_quota_us", "-1\n");
    put("fs/cpu/job/rank3/cpu.cfs_quota_us", "-1\n");
    ck_assert_double_eq(quota_of("4:cpu,cpuacct:/job/rank3\n"), 0.0);
}
END_TEST

/* v1 mounted as cpu,cpuacct (no "cpu" link), a period of its own, 2.5 cores. */
START_TEST(test_v1_under_the_joint_mount)
{
    dir("fs/cpu,cpuacct");
    dir("fs/cpu,cpuacct/pod");
    put("fs/cpu,cpuacct/pod/cpu.cfs_quota_us", "125000\n");
    put("fs/cpu,cpuacct/pod/cpu.cfs_period_us", "50000\n");
    ck_assert_double_eq_tol(quota_of("3:cpuacct,cpu:/pod\n"), 2.5, 1e-12);
    /* A line of another controller only: none. */
    ck_assert_double_eq(quota_of("3:cpuacct:/pod\n5:cpuset:/pod\n"), 0.0);
}
END_TEST

/* v2: cpu.max, "max" for none, the least over the ancestors. */
START_TEST(test_v2_cpu_max)
{
    dir("fs/a");
    dir("fs/a/b");
    put("fs/a/b/cpu.max", "40000 100000\n");
    ck_assert_double_eq_tol(quota_of("0::/a/b\n"), 0.4, 1e-12);
    put("fs/a/cpu.max", "20000 100000\n");
    ck_assert_double_eq_tol(quota_of("0::/a/b\n"), 0.2, 1e-12);
    put("fs/a/cpu.max", "max 100000\n");
    put("fs/a/b/cpu.max", "max 100000\n");
    ck_assert_double_eq(quota_of("0::/a/b\n"), 0.0);
    /* The root cgroup (a container's own namespace shows "/"): the root has no cpu.max. */
    ck_assert_double_eq(quota_of("0::/\n"), 0.0);
}
END_TEST

/* What cannot be read or parsed is no quota, never a wrong one. */
START_TEST(test_unreadable_or_malformed_is_none)
{
    char proc[512];

    dir("fs/a");
    put("fs/a/cpu.max", "40000\n");
    ck_assert_double_eq(quota_of("0::/a\n"), 0.0);
    put("fs/a/cpu.max", "40000 x\n");
    ck_assert_double_eq(quota_of("0::/a\n"), 0.0);
    put("fs/a/cpu.max", "-5 100000\n");
    ck_assert_double_eq(quota_of("0::/a\n"), 0.0);
    ck_assert_double_eq(quota_of("0::/missing/dir\n"), 0.0);
    ck_assert_double_eq(quota_of("garbage\n\n0:\n"), 0.0);
    snprintf(proc, sizeof proc, "%s/no-such-file", root);
    ck_assert_double_eq(ob_cpu_quota(proc, root), 0.0);
    ck_assert_double_eq(ob_cpu_quota(NULL, root), 0.0);
}
END_TEST

/* This host: a number, never negative. */
START_TEST(test_host_quota_is_a_number)
{
    double q = ob_cpu_quota("/proc/self/cgroup", "/sys/fs/cgroup");

    ck_assert(q >= 0.0);
    printf("check_cpuquota: this process's CPU quota: %g cores (0: none)\n", q);
}
END_TEST

/* The cgroup whose quota binds is named: the deepest of the least. */
START_TEST(test_where_names_the_binding_cgroup)
{
    char proc[512], fs[512], where[4096], want[600];

    dir("fs/cpu");
    dir("fs/cpu/job");
    dir("fs/cpu/job/rank3");
    put("fs/cpu/job/cpu.cfs_quota_us", "50000\n");
    put("fs/cpu/job/cpu.cfs_period_us", "100000\n");
    put("fs/cpu/job/rank3/cpu.cfs_quota_us", "10000\n");
    put("fs/cpu/job/rank3/cpu.cfs_period_us", "100000\n");
    put("proc-cgroup", "4:cpu:/job/rank3\n");
    snprintf(proc, sizeof proc, "%s/proc-cgroup", root);
    snprintf(fs, sizeof fs, "%s/fs", root);
    ck_assert_double_eq_tol(ob_cpu_quota_where(proc, fs, where, sizeof where), 0.1, 1e-12);
    snprintf(want, sizeof want, "%s/fs/cpu/job/rank3", root);
    ck_assert_str_eq(where, want);
    /* The parent's smaller quota binds: its directory. */
    put("fs/cpu/job/cpu.cfs_quota_us", "5000\n");
    ck_assert_double_eq_tol(ob_cpu_quota_where(proc, fs, where, sizeof where), 0.05, 1e-12);
    snprintf(want, sizeof want, "%s/fs/cpu/job", root);
    ck_assert_str_eq(where, want);
    /* A tie: the deepest, the process's own. */
    put("fs/cpu/job/rank3/cpu.cfs_quota_us", "5000\n");
    ck_assert_double_eq_tol(ob_cpu_quota_where(proc, fs, where, sizeof where), 0.05, 1e-12);
    snprintf(want, sizeof want, "%s/fs/cpu/job/rank3", root);
    ck_assert_str_eq(where, want);
    /* No quota: "". */
    put("fs/cpu/job/cpu.cfs_quota_us", "-1\n");
    put("fs/cpu/job/rank3/cpu.cfs_quota_us", "-1\n");
    ck_assert_double_eq(ob_cpu_quota_where(proc, fs, where, sizeof where), 0.0);
    ck_assert_str_eq(where, "");
}
END_TEST

/* cpu.stat as v1 and v2 write it; anything short of the three counters is nothing. */
START_TEST(test_throttle_counters_of_either_version)
{
    ob_cpu_throttle t = { 7, 7, 7.0 };

    ck_assert(ob_cpu_throttle_parse("nr_periods 1700\nnr_throttled 1604\nthrottled_time 11873000000\n"
                                    "nr_bursts 0\nburst_time 0\n", &t));
    ck_assert_int_eq(t.periods, 1700);
    ck_assert_int_eq(t.throttled, 1604);
    ck_assert_double_eq_tol(t.throttled_s, 11.873, 1e-12);
    ck_assert(ob_cpu_throttle_parse("usage_usec 812\nuser_usec 700\nsystem_usec 112\ncore_sched.force_idle_usec 0\n"
                                    "nr_periods 40\nnr_throttled 9\nthrottled_usec 250000\nnr_bursts 0\n"
                                    "burst_usec 0\n", &t));
    ck_assert_int_eq(t.periods, 40);
    ck_assert_int_eq(t.throttled, 9);
    ck_assert_double_eq_tol(t.throttled_s, 0.25, 1e-12);
    /* v2 without the cpu controller has the usage only. */
    t.periods = 7;
    ck_assert(!ob_cpu_throttle_parse("usage_usec 812\nuser_usec 700\nsystem_usec 112\n", &t));
    ck_assert(!ob_cpu_throttle_parse("nr_periods 1\nnr_throttled x\nthrottled_time 5\n", &t));
    ck_assert(!ob_cpu_throttle_parse("nr_periods 1\nnr_throttled -1\nthrottled_time 5\n", &t));
    ck_assert(!ob_cpu_throttle_parse("nr_periods_x 1\nnr_throttled 1\nthrottled_time 5\n", &t));
    ck_assert(!ob_cpu_throttle_parse("", &t));
    ck_assert(!ob_cpu_throttle_parse(NULL, &t));
    ck_assert_int_eq(t.periods, 7);
}
END_TEST

/* A probe of a made-up v1 tree: the counters move between two samples as
 * a starved rank's would; the shares follow. */
START_TEST(test_probe_reads_a_starved_rank)
{
    char proc[512], fs[512], sched[512];
    ob_cpu_probe p;
    ob_cpu_sample a, b;
    ob_cpu_use u;

    dir("fs/cpu");
    dir("fs/cpu/rank3");
    put("fs/cpu/rank3/cpu.cfs_quota_us", "1000\n");
    put("fs/cpu/rank3/cpu.cfs_period_us", "10000\n");
    put("fs/cpu/rank3/cpu.stat", "nr_periods 10\nnr_throttled 2\nthrottled_time 5000000\n");
    put("schedstat", "1000000000 2000000000 77\n");
    put("proc-cgroup", "1:cpu:/rank3\n");
    snprintf(proc, sizeof proc, "%s/proc-cgroup", root);
    snprintf(fs, sizeof fs, "%s/fs", root);
    snprintf(sched, sizeof sched, "%s/schedstat", root);
    ob_cpu_probe_open(&p, proc, fs, sched);
    ck_assert_double_eq_tol(p.quota, 0.1, 1e-12);
    ck_assert_int_ge(p.stat_fd, 0);
    ck_assert_int_ge(p.schedstat_fd, 0);
    ob_cpu_probe_read(&p, &a);
    ck_assert_double_eq_tol(a.run_s, 1.0, 1e-12);
    ck_assert_double_eq_tol(a.delay_s, 2.0, 1e-12);
    ck_assert_int_eq(a.throttled, 2);
    /* The same open files, read again: 10 s later, on a CPU 1 s of them,
     * 9 s runnable off it, 8 of them throttled in 900 of 1000 periods. */
    put("fs/cpu/rank3/cpu.stat", "nr_periods 1010\nnr_throttled 902\nthrottled_time 8005000000\n");
    put("schedstat", "2000000000 11000000000 99\n");
    ob_cpu_probe_read(&p, &b);
    b.wall_s = a.wall_s + 10.0;
    b.cpu_s = a.cpu_s + 1.0;
    ob_cpu_use_between(&a, &b, p.quota, &u);
    ck_assert_double_eq_tol(u.wall_s, 10.0, 1e-9);
    ck_assert_int_eq(u.periods, 1000);
    ck_assert_int_eq(u.throttled, 900);
    ck_assert_double_eq_tol(u.throttled_s, 8.0, 1e-9);
    ck_assert_double_eq_tol(u.quota, 0.1, 1e-12);
    ck_assert_double_eq_tol(ob_cpu_use_cpu_share(&u), 0.1, 1e-9);
    ck_assert_double_eq_tol(ob_cpu_use_throttled_share(&u), 0.8, 1e-9);
    ck_assert_double_eq_tol(ob_cpu_use_held_share(&u), 0.9, 1e-9);
    /* Of its 9 s off the CPU 8 were the quota's: it waited 1 s of the 2 s it
     * could have run. */
    ck_assert_double_eq_tol(ob_cpu_use_wait_share(&u), 0.5, 1e-9);
    ob_cpu_probe_close(&p);
    ck_assert_int_eq(p.stat_fd, -1);
    ck_assert_int_eq(p.schedstat_fd, -1);
}
END_TEST

/* Without schedstat or a quota the shares are unknown (< 0), never 0; a
 * counter that went back (a cgroup recreated) is unknown too. */
START_TEST(test_probe_without_the_files_says_unknown)
{
    char proc[512], fs[512], sched[512];
    ob_cpu_probe p;
    ob_cpu_sample a, b;
    ob_cpu_use u;

    put("proc-cgroup", "0::/\n");
    snprintf(proc, sizeof proc, "%s/proc-cgroup", root);
    snprintf(fs, sizeof fs, "%s/fs", root);
    snprintf(sched, sizeof sched, "%s/no-schedstat", root);
    ob_cpu_probe_open(&p, proc, fs, sched);
    ck_assert_double_eq(p.quota, 0.0);
    ob_cpu_probe_read(&p, &a);
    ob_cpu_probe_read(&p, &b);
    b.wall_s = a.wall_s + 1.0;
    ob_cpu_use_between(&a, &b, p.quota, &u);
    ck_assert(ob_cpu_use_throttled_share(&u) < 0.0);
    ck_assert(ob_cpu_use_held_share(&u) < 0.0);
    ck_assert(ob_cpu_use_wait_share(&u) < 0.0);
    ck_assert_int_eq(u.periods, -1);
    a.throttled = 5;
    a.periods = 5;
    a.throttled_s = 1.0;
    b.throttled = 3;
    b.periods = 9;
    b.throttled_s = 2.0;
    ob_cpu_use_between(&a, &b, 0.5, &u);
    ck_assert(ob_cpu_use_throttled_share(&u) < 0.0);
    ob_cpu_probe_close(&p);
}
END_TEST

/* This process: its own counters move forward, and spinning shows as CPU. */
START_TEST(test_probe_of_this_process)
{
    ob_cpu_probe p;
    ob_cpu_sample a, b;
    ob_cpu_use u;
    volatile double x = 0.0;

    ob_cpu_probe_open_self(&p);
    ob_cpu_probe_read(&p, &a);
    for (long i = 0; i < 20000000; i++) {
        x += 1.0;
    }
    ob_cpu_probe_read(&p, &b);
    ob_cpu_use_between(&a, &b, p.quota, &u);
    ck_assert(u.wall_s > 0.0);
    ck_assert(u.cpu_s > 0.0);
    ck_assert_int_ge(u.nivcsw, 0);
    if (u.run_s >= 0.0) {
        ck_assert(u.run_s > 0.0);
        ck_assert(ob_cpu_use_wait_share(&u) >= 0.0 && ob_cpu_use_wait_share(&u) <= 1.0);
    }
    printf("check_cpuquota: this process spun %.3f s of CPU in %.3f s; schedstat %s, quota %g, cpu.stat %s\n",
           u.cpu_s, u.wall_s, u.run_s >= 0.0 ? "read" : "not readable", p.quota,
           u.periods >= 0 ? "read" : "none");
    ob_cpu_probe_close(&p);
}
END_TEST

static Suite *make_suite(void)
{
    Suite *s = suite_create("cpuquota");
    TCase *tc = tcase_create("trees");

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_v1_quota_of_the_process_cgroup);
    tcase_add_test(tc, test_v1_under_the_joint_mount);
    tcase_add_test(tc, test_v2_cpu_max);
    tcase_add_test(tc, test_unreadable_or_malformed_is_none);
    tcase_add_test(tc, test_host_quota_is_a_number);
    tcase_add_test(tc, test_where_names_the_binding_cgroup);
    tcase_add_test(tc, test_throttle_counters_of_either_version);
    tcase_add_test(tc, test_probe_reads_a_starved_rank);
    tcase_add_test(tc, test_probe_without_the_files_says_unknown);
    tcase_add_test(tc, test_probe_of_this_process);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(make_suite());
    int failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = ob_check_failed(sr);
    srunner_free(sr);
    return 0 == failed ? EXIT_SUCCESS : EXIT_FAILURE;
}
