/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * A bad OMNIBATCH_* value (set by tests/mpi/mpi_api_env.sh, which names it in
 * OB_EXPECT_BAD): omnibatch_options_init() and omnibatch_create() with
 * default options fail with OMNIBATCH_ERR_CONFIG and a line naming the
 * variable, on every rank, and no context is left.
 *
 * MPI is started with PMPI_Init: the library's MPI_Init stops a program
 * with a bad setting by itself; what is tested here is the API's answer.
 */
#include "config.h"

#include <string.h>

#include "mpi_api_common.h"

static const char *expected_name(void)
{
    const char *name = getenv("OB_EXPECT_BAD");

    return NULL != name ? name : "OMNIBATCH_";
}

START_TEST(test_options_init_reports_the_variable)
{
    omnibatch_options o;
    omnibatch_t ctx = NULL;
    int p;

    /* Twice: the environment is read once, the answer stays. */
    for (int i = 0; i < 2; i++) {
        memset(&o, 0xff, sizeof o);
        ck_assert_int_eq(omnibatch_options_init(&o), OMNIBATCH_ERR_CONFIG);
        ck_assert_msg(NULL != strstr(omnibatch_last_error(), expected_name()),
                      "detail \"%s\" does not name %s", omnibatch_last_error(), expected_name());
    }
    /* What it filled in is the built-in defaults: usable as they are. */
    PMPI_Comm_size(MPI_COMM_WORLD, &p);
    ck_assert_int_eq(omnibatch_create(MPI_COMM_WORLD, 8L * p, 100, &o, &ctx), OMNIBATCH_SUCCESS);
    ck_assert_int_eq(omnibatch_destroy(&ctx), OMNIBATCH_SUCCESS);
}
END_TEST

START_TEST(test_create_with_defaults_fails_everywhere)
{
    omnibatch_t ctx = (omnibatch_t) &ctx;
    int p;

    PMPI_Comm_size(MPI_COMM_WORLD, &p);
    ck_assert_int_eq(omnibatch_create(MPI_COMM_WORLD, 8L * p, 100, NULL, &ctx),
                     OMNIBATCH_ERR_CONFIG);
    ck_assert_msg(NULL != strstr(omnibatch_last_error(), expected_name()),
                  "detail \"%s\" does not name %s", omnibatch_last_error(), expected_name());
    ck_assert_ptr_null(ctx);
}
END_TEST

static Suite *make_mpi_api_env_suite(void)
{
    Suite *s = suite_create("mpi_api_env");
    TCase *tc = tcase_create("env");

    tcase_add_test(tc, test_options_init_reports_the_variable);
    tcase_add_test(tc, test_create_with_defaults_fails_everywhere);
    suite_add_tcase(s, tc);
    return s;
}

int main(int argc, char **argv)
{
    omnibatch_options o;
    SRunner *sr;
    int rank;
    int failed;
    int any = 0;

    /* Before MPI: the options are MPI-free. */
    if (OMNIBATCH_ERR_CONFIG != omnibatch_options_init(&o)) {
        fprintf(stderr, "mpi_api_env: omnibatch_options_init before MPI_Init did not fail with "
                "OMNIBATCH_ERR_CONFIG (is %s set to a bad value?)\n", expected_name());
        return EXIT_FAILURE;
    }
    PMPI_Init(&argc, &argv);
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    sr = srunner_create(make_mpi_api_env_suite());
    srunner_set_fork_status(sr, CK_NOFORK);
    srunner_run_all(sr, CK_NORMAL);
    failed = ob_check_failed(sr);
    srunner_free(sr);
    PMPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    PMPI_Finalize();
    return any > 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}
