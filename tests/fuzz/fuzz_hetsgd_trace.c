/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * libFuzzer target: the benchmark's trace reader, hetsgd_read_trace()
 * (bench/hetsgd/report.c).  The input is the file.  Besides the
 * sanitizers' findings it checks the reader's promise: on success a
 * steps x ranks record array that one row of the file filled per entry,
 * on failure nothing returned and a line naming the file.
 */
#include "config.h"

#define _GNU_SOURCE 1 /* memfd_create */

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ob_error.h"
#include "report.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The file the reader opens by name: an in-memory one, rewritten per input. */
static int fuzz_fd = -1;
static char fuzz_path[64];

/* Where the records are summed to, so that reading them is not optimised away. */
static volatile double fuzz_sink;

static void fuzz_open_file(void)
{
    fuzz_fd = memfd_create("hetsgd-trace", 0);
    if (fuzz_fd < 0) {
        perror("fuzz_hetsgd_trace: memfd_create");
        abort();
    }
    snprintf(fuzz_path, sizeof fuzz_path, "/proc/self/fd/%d", fuzz_fd);
}

static long fuzz_lines(const uint8_t *data, size_t size)
{
    long n = 0;

    for (size_t i = 0; i < size; i++) {
        n += '\n' == data[i];
    }
    return n + 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    double *record = (double *) &fuzz_fd; /* must become NULL or an array */
    long steps = -1;
    int P = -1;
    int rc;

    if (fuzz_fd < 0) {
        fuzz_open_file();
    }
    if (0 != ftruncate(fuzz_fd, 0) || (ssize_t) size != pwrite(fuzz_fd, data, size, 0)) {
        perror("fuzz_hetsgd_trace: rewriting the file");
        abort();
    }
    ob_clear_error();
    rc = hetsgd_read_trace(fuzz_path, &steps, &P, &record);
    if (OMNIBATCH_SUCCESS == rc) {
        double sum = 0.0;

        /* Each record from one row, the header being a line too. */
        if (NULL == record || steps < 1 || P < 1 || steps > fuzz_lines(data, size) / P) {
            abort();
        }
        /* Every entry is there: the sanitizer sees a short array. */
        for (long j = 0; j < steps * P * HETSGD_TRACE_FIELDS; j++) {
            sum += record[j];
        }
        fuzz_sink = sum;
        free(record);
        return 0;
    }
    if (NULL != record || (OMNIBATCH_ERR_ARG != rc && OMNIBATCH_ERR_NOMEM != rc)
        || NULL == strstr(ob_last_error(), fuzz_path)) {
        abort();
    }
    return 0;
}
