/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * Writes a small, learnable data set in the layout of Debian's
 * dataset-fashion-mnist (gzip'd IDX, 28x28), so the training benchmark can
 * be tested without the real files:
 *
 *     hetsgd_mkdata DIR [TRAIN [TEST]]      (defaults 512 and 128)
 *
 * Image i shows class i % 10 as a bright 7x7 square at one of ten places,
 * on faint noise drawn from a fixed seed.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "idx.h"
#include "ob_error.h"
#include "rng.h"

#define SIDE 28

static int write_split(const char *dir, const char *images_name, const char *labels_name, long n,
                       uint64_t *state)
{
    char path[4096];
    long dims[3] = { n, SIDE, SIDE };
    uint8_t *pixels = malloc((size_t) n * SIDE * SIDE);
    uint8_t *labels = malloc((size_t) n);
    int rc;

    if (NULL == pixels || NULL == labels) {
        free(pixels);
        free(labels);
        return ob_fail(OMNIBATCH_ERR_NOMEM, "cannot allocate %ld images", n);
    }
    for (long i = 0; i < n; i++) {
        int c = (int) (i % HETSGD_CLASSES);
        int top = 2 + 7 * (c / 4) + (c % 2);
        int left = 2 + 6 * (c % 4);
        uint8_t *img = pixels + i * SIDE * SIDE;

        labels[i] = (uint8_t) c;
        for (int p = 0; p < SIDE * SIDE; p++) {
            img[p] = (uint8_t) hetsgd_rng_range(state, 0, 40);
        }
        for (int y = top; y < top + 7; y++) {
            for (int x = left; x < left + 7; x++) {
                img[y * SIDE + x] = (uint8_t) hetsgd_rng_range(state, 180, 255);
            }
        }
    }
    snprintf(path, sizeof path, "%s/%s", dir, images_name);
    rc = hetsgd_idx_write(path, 3, dims, pixels);
    if (OMNIBATCH_SUCCESS == rc) {
        snprintf(path, sizeof path, "%s/%s", dir, labels_name);
        rc = hetsgd_idx_write(path, 1, dims, labels);
    }
    free(pixels);
    free(labels);
    return rc;
}

int main(int argc, char **argv)
{
    long train = argc > 2 ? atol(argv[2]) : 512;
    long test = argc > 3 ? atol(argv[3]) : 128;
    uint64_t state = 2026;
    int rc;

    if (argc < 2 || train < 1 || test < 1) {
        fprintf(stderr, "usage: %s DIR [TRAIN [TEST]] (sample counts >= 1)\n", argv[0]);
        return 2;
    }
    mkdir(argv[1], 0755);
    rc = write_split(argv[1], "train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz", train, &state);
    if (OMNIBATCH_SUCCESS == rc) {
        rc = write_split(argv[1], "t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz", test, &state);
    }
    if (OMNIBATCH_SUCCESS != rc) {
        fprintf(stderr, "hetsgd_mkdata: %s\n", ob_last_error());
        return 1;
    }
    return 0;
}
