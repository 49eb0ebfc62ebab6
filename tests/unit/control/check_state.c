/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * The state blob of a run (src/control/ob_state.h) and the profile of the
 * preload mode (src/observe/ob_profile.h): a blob is read back as written,
 * anything else (truncated, damaged, of another version or kind of host)
 * is refused with a line saying what, and ranks are matched by host and
 * cores, the k-th rank on them taking the k-th entry.
 */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ob_check_run.h"
#include "ob_error.h"
#include "ob_profile.h"
#include "ob_state.h"

/* A blob of 4 ranks: hosts a, a, b, a with 8 cores, rank 3 with 4. */
static void *make_blob(size_t *size)
{
    static const char *const hosts[4] = { "a", "a", "b", "a" };
    void *buf;

    *size = ob_state_size(4);
    buf = calloc(1, *size);
    ck_assert_ptr_nonnull(buf);
    for (int i = 0; i < 4; i++) {
        ob_state_entry e;

        memset(&e, 0, sizeof e);
        snprintf(e.host, sizeof e.host, "%s", hosts[i]);
        e.cores = 3 == i ? 4 : 8;
        e.plan = 10 * (i + 1);
        ob_estimator_init(&e.est, 0.99);
        ob_estimator_add(&e.est, 10.0, 0.001 * (i + 1));
        ob_state_entry_put(buf, i, &e);
    }
    ob_state_finish(buf, 4, 100, 1000, 37, 42);
    return buf;
}

START_TEST(test_a_blob_reads_back_as_written)
{
    size_t size;
    void *buf = make_blob(&size);
    ob_state_header h;
    ob_state_entry e;

    ck_assert_int_eq(ob_state_check(buf, size, &h), OMNIBATCH_SUCCESS);
    ck_assert_int_eq(h.nranks, 4);
    ck_assert_int_eq(h.global_batch, 100);
    ck_assert_int_eq(h.dataset_size, 1000);
    ck_assert_int_eq(h.next_step, 37);
    ck_assert_uint_eq(h.seed, 42);
    ob_state_entry_get(buf, 2, &e);
    ck_assert_str_eq(e.host, "b");
    ck_assert_int_eq(e.plan, 30);
    ck_assert_double_eq_tol(ob_estimator_predict(&e.est, 10.0), 0.003, 1e-12);
    free(buf);
}
END_TEST

START_TEST(test_ranks_match_by_host_cores_and_occurrence)
{
    size_t size;
    void *buf = make_blob(&size);

    ck_assert_int_eq(ob_state_match(buf, "a", 8, 0), 0);
    ck_assert_int_eq(ob_state_match(buf, "a", 8, 1), 1);
    ck_assert_int_eq(ob_state_match(buf, "a", 8, 2), -1);   /* a third rank on a, 8 cores: new */
    ck_assert_int_eq(ob_state_match(buf, "a", 4, 0), 3);
    ck_assert_int_eq(ob_state_match(buf, "b", 8, 0), 2);
    ck_assert_int_eq(ob_state_match(buf, "c", 8, 0), -1);
    free(buf);
}
END_TEST

START_TEST(test_bad_blobs_are_refused_with_a_line)
{
    size_t size;
    unsigned char *buf = make_blob(&size);
    ob_state_header h;

    ck_assert_int_eq(ob_state_check(buf, size - 1, &h), OMNIBATCH_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(ob_last_error(), "truncated"));
    ck_assert_int_eq(ob_state_check(buf, 10, &h), OMNIBATCH_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(ob_last_error(), "expected at least a header"));
    ck_assert_int_eq(ob_state_check(NULL, size, &h), OMNIBATCH_ERR_ARG);
    /* One byte of an entry changed: the checksum says so. */
    buf[size - 3] ^= 0x40;
    ck_assert_int_eq(ob_state_check(buf, size, &h), OMNIBATCH_ERR_ARG);
    ck_assert_str_eq(ob_last_error(), "state: checksum mismatch: the state is damaged");
    buf[size - 3] ^= 0x40;
    ck_assert_int_eq(ob_state_check(buf, size, &h), OMNIBATCH_SUCCESS);
    /* The header's data position changed (the next step, the seed): the
     * checksum covers it too, so ranks handed states of different steps
     * cannot agree on them (version 1 checked the entries only). */
    memcpy(&h, buf, sizeof h);
    h.next_step += 5;
    memcpy(buf, &h, sizeof h);
    ck_assert_int_eq(ob_state_check(buf, size, &h), OMNIBATCH_ERR_ARG);
    ck_assert_str_eq(ob_last_error(), "state: checksum mismatch: the state is damaged");
    h.next_step -= 5;
    h.seed ^= 1;
    memcpy(buf, &h, sizeof h);
    ck_assert_int_eq(ob_state_check(buf, size, &h), OMNIBATCH_ERR_ARG);
    h.seed ^= 1;
    memcpy(buf, &h, sizeof h);
    ck_assert_int_eq(ob_state_check(buf, size, &h), OMNIBATCH_SUCCESS);
    /* Not a state at all. */
    buf[0] = 'X';
    ck_assert_int_eq(ob_state_check(buf, size, &h), OMNIBATCH_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(ob_last_error(), "not an omnibatch state"));
    buf[0] = 'O';
    /* Another version, another byte order. */
    memcpy(&h, buf, sizeof h);
    h.version = OB_STATE_VERSION + 1;
    memcpy(buf, &h, sizeof h);
    ck_assert_int_eq(ob_state_check(buf, size, &h), OMNIBATCH_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(ob_last_error(), "version"));
    h.version = OB_STATE_VERSION;
    h.byte_order = 0x04030201u;
    memcpy(buf, &h, sizeof h);
    ck_assert_int_eq(ob_state_check(buf, size, &h), OMNIBATCH_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(ob_last_error(), "another kind of host"));
    free(buf);
}
END_TEST

/* A report of two ranks with shares 0.25 and 0.75 (host h, cores 2). */
static void make_report(ob_report *rep, ob_rank_stats *st, ob_report_rank *rr, double share0)
{
    memset(rep, 0, sizeof *rep);
    memset(st, 0, 2 * sizeof *st);
    memset(rr, 0, 2 * sizeof *rr);
    for (int i = 0; i < 2; i++) {
        snprintf(st[i].host, sizeof st[i].host, "h");
        st[i].cores = 2;
        rr[i].alpha = 0.0;
        rr[i].beta = 1e-3 * (i + 1);
        rr[i].batch = 50.0;
    }
    rr[0].share = share0;
    rr[1].share = 1.0 - share0;
    rep->nranks = 2;
    rep->stats = st;
    rep->ranks = rr;
    rep->global_batch = 100;
    rep->split_ok = 1;
}

START_TEST(test_a_profile_round_trips_and_compares)
{
    char path[] = "/tmp/ob-profile-XXXXXX";
    int fd = mkstemp(path);
    ob_rank_stats st[2];
    ob_report_rank rr[2];
    ob_report rep;
    ob_profile prof;
    char text[1024] = "";
    FILE *f;

    ck_assert_int_ge(fd, 0);
    close(fd);
    make_report(&rep, st, rr, 0.25);
    ck_assert_int_eq(ob_profile_write(path, &rep), OMNIBATCH_SUCCESS);
    ck_assert_int_eq(ob_profile_read(path, &prof), OMNIBATCH_SUCCESS);
    ck_assert_int_eq(prof.nranks, 2);
    ck_assert_int_eq(prof.global_batch, 100);
    ck_assert_str_eq(prof.ranks[1].host, "h");
    ck_assert_double_eq_tol(prof.ranks[0].share, 0.25, 1e-9);
    ck_assert_int_eq(ob_profile_match(&prof, "h", 2, 1), 1);
    ck_assert_int_eq(ob_profile_match(&prof, "h", 4, 0), -1);
    /* The next run: the split moved by 15 points. */
    make_report(&rep, st, rr, 0.40);
    f = fmemopen(text, sizeof text - 1, "w");
    ck_assert_ptr_nonnull(f);
    ob_profile_compare_text(f, &rep, &prof, "P");
    fclose(f);
    ck_assert_ptr_nonnull(strstr(text, "  profile P: balanced share then -> now (2 ranks then): 25.0% -> 40.0% 75.0% -> 60.0%\n"));
    ck_assert_ptr_nonnull(strstr(text, "  profile: the largest change is rank 0's, 15.0 points of the global batch\n"));
    ob_profile_free(&prof);
    /* Something else in the file is refused with a line. */
    f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs("omnibatch-profile 1 2 100\n0 h 2 0 0.001 50 0.25\n", f);
    fclose(f);
    ck_assert_int_eq(ob_profile_read(path, &prof), OMNIBATCH_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(ob_last_error(), "line 3: expected 'RANK HOST CORES ALPHA BETA BATCH SHARE' for rank 1"));
    unlink(path);
    ck_assert_int_eq(ob_profile_read(path, &prof), OMNIBATCH_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(ob_last_error(), "no previous profile there"));
}
END_TEST

/* A profile that cannot be written says why, after the path. */
START_TEST(test_a_profile_not_written_says_why)
{
    char dir[] = "/tmp/ob-profile-XXXXXX";
    char path[64];
    ob_rank_stats st[2];
    ob_report_rank rr[2];
    ob_report rep;

    ck_assert_ptr_nonnull(mkdtemp(dir));
    make_report(&rep, st, rr, 0.25);
    snprintf(path, sizeof path, "%s/missing/p", dir);
    ck_assert_int_eq(ob_profile_write(path, &rep), OMNIBATCH_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(ob_last_error(), ": No such file or directory"));
    /* The rename over a directory fails (EISDIR), and leaves no .tmp behind. */
    snprintf(path, sizeof path, "%s/d", dir);
    ck_assert_int_eq(mkdir(path, 0700), 0);
    ck_assert_int_eq(ob_profile_write(path, &rep), OMNIBATCH_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(ob_last_error(), "cannot write it: Is a directory"));
    ck_assert_int_eq(rmdir(path), 0);
    ck_assert_int_eq(rmdir(dir), 0);
}
END_TEST

static Suite *state_suite(void)
{
    Suite *s = suite_create("state");
    TCase *tc = tcase_create("state");

    tcase_add_test(tc, test_a_blob_reads_back_as_written);
    tcase_add_test(tc, test_ranks_match_by_host_cores_and_occurrence);
    tcase_add_test(tc, test_bad_blobs_are_refused_with_a_line);
    tcase_add_test(tc, test_a_profile_round_trips_and_compares);
    tcase_add_test(tc, test_a_profile_not_written_says_why);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(state_suite());
    int failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = ob_check_failed(sr);
    srunner_free(sr);
    return 0 == failed ? EXIT_SUCCESS : EXIT_FAILURE;
}
