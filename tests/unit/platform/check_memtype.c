/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * Memory types without CUDA in the process: every pointer is host memory,
 * the device calls refuse with their code, and nothing of CUDA is loaded by
 * asking (on a machine with the CUDA driver installed too: the driver is
 * only looked for among the libraries already loaded).  With a driver
 * loaded: memtype_stub.c (the toolkit's stub) and memtype_gpu.c (a GPU).
 */
#include "config.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "ob_check_run.h"
#include "ob_error.h"
#include "ob_maps.h"
#include "ob_memtype.h"

static double static_buffer[16];

START_TEST(test_host_pointers_are_host)
{
    double on_stack[4] = { 1, 2, 3, 4 };
    float *on_heap = malloc(1024 * sizeof *on_heap);

    ck_assert_ptr_nonnull(on_heap);
    ck_assert_int_eq(ob_memtype_of(on_stack), OB_MEMTYPE_HOST);
    ck_assert_int_eq(ob_memtype_of(on_heap), OB_MEMTYPE_HOST);
    ck_assert_int_eq(ob_memtype_of(static_buffer), OB_MEMTYPE_HOST);
    ck_assert_int_eq(ob_memtype_of(NULL), OB_MEMTYPE_HOST);
    /* The answer is cached; asking again changes nothing. */
    ck_assert_int_eq(ob_memtype_of(on_heap + 17), OB_MEMTYPE_HOST);
    free(on_heap);
}
END_TEST

START_TEST(test_no_driver_and_nothing_loaded)
{
    float x[8] = { 0 };

    ck_assert_int_eq(ob_test_mapped("libcuda"), 0);
    ck_assert_int_eq(ob_memtype_driver_present(), 0);
    for (int i = 0; i < 100; i++) {
        (void) ob_memtype_of(x);
    }
    (void) ob_memtype_device_scale(x, x, 8, 4, 0.5);
    (void) ob_memtype_device_zero(x, sizeof x);
    ck_assert_int_eq(ob_test_mapped("libcuda"), 0);
    ck_assert_int_eq(ob_test_mapped("libcudart"), 0);
    ck_assert_int_eq(ob_test_mapped("libcublas"), 0);
}
END_TEST

START_TEST(test_device_calls_refused_without_driver)
{
    float x[4] = { 1.0f, 2.0f, 3.0f, 4.0f };

    ck_assert_int_eq(ob_memtype_device_scale(x, x, 4, 4, 0.5), OMNIBATCH_ERR_DEVICE);
    ck_assert_ptr_nonnull(strstr(ob_last_error(), "no CUDA driver (libcuda.so.1)"));
    /* The host buffer is never touched by a refused call. */
    ck_assert(1.0f == x[0] && 4.0f == x[3]);
    ck_assert_int_eq(ob_memtype_device_zero(x, sizeof x), OMNIBATCH_ERR_DEVICE);
    ck_assert(2.0f == x[1]);
}
END_TEST

START_TEST(test_bad_arguments_named)
{
    float x[4] = { 0 };

    ck_assert_int_eq(ob_memtype_device_scale(x, x, 4, 2, 0.5), OMNIBATCH_ERR_ARG);
    ck_assert_str_eq(ob_last_error(), "elem=2: expected 4 (float) or 8 (double)");
    ck_assert_int_eq(ob_memtype_device_scale(x, x, -1, 4, 0.5), OMNIBATCH_ERR_ARG);
    ck_assert_str_eq(ob_last_error(), "count=-1: expected >= 0");
}
END_TEST

START_TEST(test_ptx_holds_both_kernels)
{
    const char *ptx = ob_memtype_ptx();

    ck_assert_ptr_nonnull(strstr(ptx, ".entry ob_scale_f32("));
    ck_assert_ptr_nonnull(strstr(ptx, ".entry ob_scale_f64("));
    /* Rounded as the host rounds: one double product, nearest-even back to float. */
    ck_assert_ptr_nonnull(strstr(ptx, "mul.rn.f64"));
    ck_assert_ptr_nonnull(strstr(ptx, "cvt.rn.f32.f64"));
}
END_TEST

static Suite *make_memtype_suite(void)
{
    Suite *s = suite_create("memtype");
    TCase *absent = tcase_create("without_cuda");

    tcase_add_test(absent, test_host_pointers_are_host);
    tcase_add_test(absent, test_no_driver_and_nothing_loaded);
    tcase_add_test(absent, test_device_calls_refused_without_driver);
    tcase_add_test(absent, test_bad_arguments_named);
    tcase_add_test(absent, test_ptx_holds_both_kernels);
    suite_add_tcase(s, absent);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(make_memtype_suite());
    int failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = ob_check_failed(sr);
    srunner_free(sr);
    return 0 == failed ? EXIT_SUCCESS : EXIT_FAILURE;
}
