/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * The IDX reader of the training benchmark, on files generated here:
 * round trips gzip'd and plain, and every way a file can be wrong.
 */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "ob_check_run.h"
#include "idx.h"
#include "ob_error.h"

static char tmpdir[256];

static void make_tmpdir(void)
{
    const char *base = getenv("TMPDIR");

    snprintf(tmpdir, sizeof tmpdir, "%s/hetsgd-idx-XXXXXX", NULL != base ? base : "/tmp");
    ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void remove_tmpdir(void)
{
    char cmd[512];

    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    ck_assert_int_eq(system(cmd), 0);
}

static void path_in_tmp(char *path, size_t size, const char *name)
{
    snprintf(path, size, "%s/%s", tmpdir, name);
}

/* Raw bytes to a gzip file: lets a test build headers the writer refuses. */
static void write_raw_gz(const char *path, const unsigned char *bytes, size_t n)
{
    gzFile gz = gzopen(path, "wb");

    ck_assert_ptr_nonnull(gz);
    ck_assert_int_eq(gzwrite(gz, bytes, (unsigned) n), (int) n);
    ck_assert_int_eq(gzclose(gz), Z_OK);
}

static void fill_pattern(uint8_t *p, long n)
{
    for (long i = 0; i < n; i++) {
        p[i] = (uint8_t) ((i * 37 + 11) & 0xff);
    }
}

/* A complete data set: train_n and test_n images of rows x cols, labels i % 10. */
static void write_dataset(long train_n, long test_n, int rows, int cols, long train_labels_n)
{
    char path[512];
    long dims[3];
    uint8_t *pixels = malloc((size_t) (train_n > test_n ? train_n : test_n) * (size_t) (rows * cols));
    uint8_t *labels = malloc((size_t) (train_n > test_n ? train_n : test_n) + (size_t) train_labels_n);

    ck_assert_ptr_nonnull(pixels);
    ck_assert_ptr_nonnull(labels);
    fill_pattern(pixels, (train_n > test_n ? train_n : test_n) * rows * cols);
    for (long i = 0; i < (train_n > test_n ? train_n : test_n) + train_labels_n; i++) {
        labels[i] = (uint8_t) (i % 10);
    }
    dims[1] = rows;
    dims[2] = cols;
    dims[0] = train_n;
    path_in_tmp(path, sizeof path, "train-images-idx3-ubyte.gz");
    ck_assert_int_eq(hetsgd_idx_write(path, 3, dims, pixels), OMNIBATCH_SUCCESS);
    dims[0] = train_labels_n;
    path_in_tmp(path, sizeof path, "train-labels-idx1-ubyte.gz");
    ck_assert_int_eq(hetsgd_idx_write(path, 1, dims, labels), OMNIBATCH_SUCCESS);
    dims[0] = test_n;
    path_in_tmp(path, sizeof path, "t10k-images-idx3-ubyte.gz");
    ck_assert_int_eq(hetsgd_idx_write(path, 3, dims, pixels), OMNIBATCH_SUCCESS);
    /* The test labels uncompressed: the reader takes either form. */
    path_in_tmp(path, sizeof path, "t10k-labels-idx1-ubyte");
    ck_assert_int_eq(hetsgd_idx_write(path, 1, dims, labels), OMNIBATCH_SUCCESS);
    free(pixels);
    free(labels);
}

START_TEST(test_images_round_trip_gzip_and_plain)
{
    static const char *const names[] = { "imgs.gz", "imgs" };
    long dims[3] = { 5, 3, 4 };
    uint8_t data[5 * 3 * 4];

    fill_pattern(data, (long) sizeof data);
    for (int k = 0; k < 2; k++) {
        char path[512];
        hetsgd_images im;

        path_in_tmp(path, sizeof path, names[k]);
        ck_assert_int_eq(hetsgd_idx_write(path, 3, dims, data), OMNIBATCH_SUCCESS);
        ck_assert_int_eq(hetsgd_idx_read_images(path, &im), OMNIBATCH_SUCCESS);
        ck_assert_int_eq(im.count, 5);
        ck_assert_int_eq(im.rows, 3);
        ck_assert_int_eq(im.cols, 4);
        ck_assert_mem_eq(im.pixels, data, sizeof data);
        free(im.pixels);
    }
}
END_TEST

START_TEST(test_plain_file_has_the_documented_header)
{
    char path[512];
    long dims[1] = { 3 };
    uint8_t labels[3] = { 7, 0, 9 };
    const unsigned char expected[] = { 0, 0, 8, 1, 0, 0, 0, 3, 7, 0, 9 };
    unsigned char got[sizeof expected + 1];
    FILE *f;

    path_in_tmp(path, sizeof path, "labels.idx");
    ck_assert_int_eq(hetsgd_idx_write(path, 1, dims, labels), OMNIBATCH_SUCCESS);
    f = fopen(path, "rb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fread(got, 1, sizeof got, f), sizeof expected);
    fclose(f);
    ck_assert_mem_eq(got, expected, sizeof expected);
}
END_TEST

START_TEST(test_bad_magic_is_refused)
{
    char path[512];
    hetsgd_images im;
    hetsgd_labels lb;
    long dims[1] = { 4 };
    uint8_t labels[4] = { 1, 2, 3, 4 };
    /* An IDX file of 32-bit integers (type 0x0c) is not ours either. */
    const unsigned char ints[] = { 0, 0, 0x0c, 1, 0, 0, 0, 1, 0, 0, 0, 5 };

    path_in_tmp(path, sizeof path, "labels.gz");
    ck_assert_int_eq(hetsgd_idx_write(path, 1, dims, labels), OMNIBATCH_SUCCESS);
    ck_assert_int_eq(hetsgd_idx_read_images(path, &im), OMNIBATCH_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(ob_last_error(), "magic number 0x00000801"));
    ck_assert_ptr_nonnull(strstr(ob_last_error(), "expected 0x00000803"));
    ck_assert_ptr_null(im.pixels);

    path_in_tmp(path, sizeof path, "ints.gz");
    write_raw_gz(path, ints, sizeof ints);
    ck_assert_int_eq(hetsgd_idx_read_labels(path, &lb), OMNIBATCH_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(ob_last_error(), "magic number 0x00000c01"));
}
END_TEST

START_TEST(test_truncated_payload_and_header_are_refused)
{
    char path[512];
    hetsgd_images im;
    /* Announces 10 images of 2x2 (40 bytes) but carries 6. */
    const unsigned char short_payload[] = {
        0, 0, 8, 3, 0, 0, 0, 10, 0, 0, 0, 2, 0, 0, 0, 2, 1, 2, 3, 4, 5, 6
    };
    /* Ends inside the dimension sizes. */
    const unsigned char short_header[] = { 0, 0, 8, 3, 0, 0, 0, 10, 0, 0 };

    path_in_tmp(path, sizeof path, "short.gz");
    write_raw_gz(path, short_payload, sizeof short_payload);
    ck_assert_int_eq(hetsgd_idx_read_images(path, &im), OMNIBATCH_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(ob_last_error(), "truncated"));
    ck_assert_ptr_nonnull(strstr(ob_last_error(), "40 bytes"));
    ck_assert_ptr_null(im.pixels);

    path_in_tmp(path, sizeof path, "short_header.gz");
    write_raw_gz(path, short_header, sizeof short_header);
    ck_assert_int_eq(hetsgd_idx_read_images(path, &im), OMNIBATCH_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(ob_last_error(), "truncated"));
    ck_assert_ptr_nonnull(strstr(ob_last_error(), "dimension sizes"));
}
END_TEST

START_TEST(test_cut_gzip_stream_is_refused)
{
    char path[512];
    char cut[512];
    long dims[3] = { 200, 28, 28 };
    uint8_t *data = malloc(200 * 28 * 28);
    hetsgd_images im;
    FILE *f;
    unsigned char buf[4096];
    size_t n;

    ck_assert_ptr_nonnull(data);
    fill_pattern(data, 200 * 28 * 28);
    path_in_tmp(path, sizeof path, "whole.gz");
    ck_assert_int_eq(hetsgd_idx_write(path, 3, dims, data), OMNIBATCH_SUCCESS);
    /* Keep the first half of the compressed bytes, like an interrupted download. */
    f = fopen(path, "rb");
    ck_assert_ptr_nonnull(f);
    n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    ck_assert_uint_gt(n, 40);
    path_in_tmp(cut, sizeof cut, "cut.gz");
    f = fopen(cut, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(buf, 1, n / 2, f), n / 2);
    fclose(f);
    ck_assert_int_eq(hetsgd_idx_read_images(cut, &im), OMNIBATCH_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(ob_last_error(), cut));
    ck_assert_ptr_null(im.pixels);
    free(data);
}
END_TEST

START_TEST(test_trailing_bytes_and_zero_sizes_are_refused)
{
    char path[512];
    hetsgd_labels lb;
    const unsigned char trailing[] = { 0, 0, 8, 1, 0, 0, 0, 2, 3, 4, 5 };
    const unsigned char empty[] = { 0, 0, 8, 1, 0, 0, 0, 0 };

    path_in_tmp(path, sizeof path, "trailing.gz");
    write_raw_gz(path, trailing, sizeof trailing);
    ck_assert_int_eq(hetsgd_idx_read_labels(path, &lb), OMNIBATCH_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(ob_last_error(), "trailing bytes"));

    path_in_tmp(path, sizeof path, "empty.gz");
    write_raw_gz(path, empty, sizeof empty);
    ck_assert_int_eq(hetsgd_idx_read_labels(path, &lb), OMNIBATCH_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(ob_last_error(), "dimension 0 is 0"));
}
END_TEST

START_TEST(test_label_out_of_range_is_refused)
{
    char path[512];
    long dims[1] = { 3 };
    uint8_t labels[3] = { 1, 10, 2 };
    hetsgd_labels lb;

    path_in_tmp(path, sizeof path, "labels.gz");
    ck_assert_int_eq(hetsgd_idx_write(path, 1, dims, labels), OMNIBATCH_SUCCESS);
    ck_assert_int_eq(hetsgd_idx_read_labels(path, &lb), OMNIBATCH_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(ob_last_error(), "label 1 is 10"));
    ck_assert_ptr_null(lb.labels);
}
END_TEST

START_TEST(test_missing_data_names_the_package)
{
    char dir[512];
    hetsgd_dataset ds;

    path_in_tmp(dir, sizeof dir, "nowhere");
    ck_assert_int_eq(hetsgd_dataset_load(dir, &ds), OMNIBATCH_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(ob_last_error(), dir));
    ck_assert_ptr_nonnull(strstr(ob_last_error(), "apt-get install dataset-fashion-mnist"));

    /* The directory exists but holds nothing. */
    ck_assert_int_eq(hetsgd_dataset_load(tmpdir, &ds), OMNIBATCH_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(ob_last_error(), "train-images-idx3-ubyte.gz: no such file"));
    ck_assert_ptr_nonnull(strstr(ob_last_error(), "dataset-fashion-mnist"));
}
END_TEST

START_TEST(test_dataset_loads_and_checks_agreement)
{
    hetsgd_dataset ds;

    write_dataset(30, 12, 4, 3, 30);
    ck_assert_int_eq(hetsgd_dataset_load(tmpdir, &ds), OMNIBATCH_SUCCESS);
    ck_assert_int_eq(ds.train_images.count, 30);
    ck_assert_int_eq(ds.test_images.count, 12);
    ck_assert_int_eq(ds.test_labels.count, 12);
    ck_assert_int_eq(ds.train_images.rows, 4);
    ck_assert_int_eq(ds.train_images.cols, 3);
    ck_assert_int_eq(ds.train_labels.labels[13], 3);
    ck_assert_int_eq(hetsgd_dataset_subset(&ds, 31), OMNIBATCH_ERR_ARG);
    ck_assert_int_eq(hetsgd_dataset_subset(&ds, 8), OMNIBATCH_SUCCESS);
    ck_assert_int_eq(ds.train_images.count, 8);
    ck_assert_int_eq(ds.train_labels.count, 8);
    hetsgd_dataset_free(&ds);
    ck_assert_ptr_null(ds.train_images.pixels);

    /* One label short of the images. */
    write_dataset(30, 12, 4, 3, 29);
    ck_assert_int_eq(hetsgd_dataset_load(tmpdir, &ds), OMNIBATCH_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(ob_last_error(), "30 images but"));
    ck_assert_ptr_nonnull(strstr(ob_last_error(), "29 labels"));
    ck_assert_ptr_null(ds.train_images.pixels);
}
END_TEST

START_TEST(test_gather_scales_pixels_to_unit_interval)
{
    uint8_t pixels[3 * 2] = { 0, 255, 51, 102, 204, 153 };
    uint8_t labels[3] = { 4, 5, 6 };
    hetsgd_images im = { 3, 1, 2, pixels };
    hetsgd_labels lb = { 3, labels };
    long index[2] = { 2, 0 };
    float x[4];
    uint8_t y[2];

    hetsgd_gather(&im, &lb, index, 2, x, y);
    ck_assert_double_eq_tol((double) x[0], 0.8, 1e-6);
    ck_assert_double_eq_tol((double) x[1], 0.6, 1e-6);
    ck_assert_double_eq((double) x[2], 0.0);
    ck_assert_double_eq((double) x[3], 1.0);
    ck_assert_int_eq(y[0], 6);
    ck_assert_int_eq(y[1], 4);
}
END_TEST

static Suite *make_hetsgd_idx_suite(void)
{
    Suite *s = suite_create("hetsgd_idx");
    TCase *tc = tcase_create("core");

    tcase_add_checked_fixture(tc, make_tmpdir, remove_tmpdir);
    tcase_add_test(tc, test_images_round_trip_gzip_and_plain);
    tcase_add_test(tc, test_plain_file_has_the_documented_header);
    tcase_add_test(tc, test_bad_magic_is_refused);
    tcase_add_test(tc, test_truncated_payload_and_header_are_refused);
    tcase_add_test(tc, test_cut_gzip_stream_is_refused);
    tcase_add_test(tc, test_trailing_bytes_and_zero_sizes_are_refused);
    tcase_add_test(tc, test_label_out_of_range_is_refused);
    tcase_add_test(tc, test_missing_data_names_the_package);
    tcase_add_test(tc, test_dataset_loads_and_checks_agreement);
    tcase_add_test(tc, test_gather_scales_pixels_to_unit_interval);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(make_hetsgd_idx_suite());
    int failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = ob_check_failed(sr);
    srunner_free(sr);
    return 0 == failed ? 0 : 1;
}
