/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * The CPU quota a process runs under, read from cgroup trees written here
 * in a temporary directory, laid out as the kernel lays out v1 and v2 (the
 * files and their formats); then the host's own, checked for sanity.
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
