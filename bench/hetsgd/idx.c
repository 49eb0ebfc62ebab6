/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * IDX reader and writer (see idx.h).
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

#include "idx.h"
#include "ob_error.h"

/* Far above any real data set, low enough that count * rows * cols cannot
 * overflow a long on the way to malloc. */
#define IDX_MAX_COUNT 100000000L
#define IDX_MAX_SIDE 4096L

#define PACKAGE_HINT "install the Debian package dataset-fashion-mnist " \
    "(apt-get install dataset-fashion-mnist) or pass --data DIR"

static int file_exists(const char *path)
{
    struct stat st;

    return 0 == stat(path, &st) && S_ISREG(st.st_mode);
}

static int read_exact(gzFile gz, const char *path, void *buf, size_t n, const char *what)
{
    size_t done = 0;

    while (done < n) {
        /* gzread takes an unsigned count; read in slices well below its limit. */
        unsigned chunk = (unsigned) (n - done > (1u << 30) ? (1u << 30) : n - done);
        int got = gzread(gz, (char *) buf + done, chunk);

        if (got < 0) {
            int zerr;
            const char *msg = gzerror(gz, &zerr);
            return ob_fail(OMNIBATCH_ERR_ARG, "%s: cannot read the %s: %s", path, what, msg);
        }
        if (0 == got) {
            return ob_fail(OMNIBATCH_ERR_ARG,
                           "%s: truncated: the %s needs %zu bytes, the file ends after %zu",
                           path, what, n, done);
        }
        done += (size_t) got;
    }
    return OMNIBATCH_SUCCESS;
}

static uint32_t big_endian_u32(const unsigned char *b)
{
    return ((uint32_t) b[0] << 24) | ((uint32_t) b[1] << 16) | ((uint32_t) b[2] << 8) | (uint32_t) b[3];
}

/* Read one IDX file of unsigned bytes with exactly ndims dimensions into a
 * fresh buffer. */
static int idx_read(const char *path, int ndims, long *dims, uint8_t **data)
{
    unsigned char header[4 + 4 * 3];
    unsigned char extra;
    gzFile gz;
    uint32_t magic;
    long total = 1;
    int rc;

    *data = NULL;
    if (!file_exists(path)) {
        return ob_fail(OMNIBATCH_ERR_ARG, "%s: no such file; %s", path, PACKAGE_HINT);
    }
    gz = gzopen(path, "rb");
    if (NULL == gz) {
        return ob_fail(OMNIBATCH_ERR_ARG, "%s: cannot open: %s", path, strerror(errno));
    }
    rc = read_exact(gz, path, header, 4, "magic number");
    if (OMNIBATCH_SUCCESS != rc) {
        gzclose(gz);
        return rc;
    }
    magic = big_endian_u32(header);
    if (HETSGD_IDX_MAGIC(ndims) != magic) {
        gzclose(gz);
        return ob_fail(OMNIBATCH_ERR_ARG,
                       "%s: magic number 0x%08x: expected 0x%08x (IDX, unsigned bytes, %d dimension%s)",
                       path, (unsigned) magic, HETSGD_IDX_MAGIC(ndims), ndims, 1 == ndims ? "" : "s");
    }
    rc = read_exact(gz, path, header + 4, 4 * (size_t) ndims, "dimension sizes");
    if (OMNIBATCH_SUCCESS != rc) {
        gzclose(gz);
        return rc;
    }
    for (int d = 0; d < ndims; d++) {
        uint32_t size = big_endian_u32(header + 4 + 4 * d);
        long limit = 0 == d ? IDX_MAX_COUNT : IDX_MAX_SIDE;

        if (0 == size || size > (uint32_t) limit) {
            gzclose(gz);
            return ob_fail(OMNIBATCH_ERR_ARG, "%s: dimension %d is %u: expected 1 to %ld",
                           path, d, (unsigned) size, limit);
        }
        dims[d] = (long) size;
        total *= (long) size;
    }
    *data = malloc((size_t) total);
    if (NULL == *data) {
        gzclose(gz);
        return ob_fail(OMNIBATCH_ERR_NOMEM, "%s: cannot allocate %ld bytes", path, total);
    }
    rc = read_exact(gz, path, *data, (size_t) total, "payload");
    if (OMNIBATCH_SUCCESS == rc && gzread(gz, &extra, 1) > 0) {
        rc = ob_fail(OMNIBATCH_ERR_ARG, "%s: trailing bytes after the %ld the header announces",
                     path, total);
    }
    gzclose(gz);
    if (OMNIBATCH_SUCCESS != rc) {
        free(*data);
        *data = NULL;
    }
    return rc;
}

int hetsgd_idx_read_images(const char *path, hetsgd_images *out)
{
    long dims[3];
    int rc;

    memset(out, 0, sizeof *out);
    rc = idx_read(path, 3, dims, &out->pixels);
    if (OMNIBATCH_SUCCESS != rc) {
        return rc;
    }
    out->count = dims[0];
    out->rows = (int) dims[1];
    out->cols = (int) dims[2];
    return OMNIBATCH_SUCCESS;
}

int hetsgd_idx_read_labels(const char *path, hetsgd_labels *out)
{
    long dims[1];
    int rc;

    memset(out, 0, sizeof *out);
    rc = idx_read(path, 1, dims, &out->labels);
    if (OMNIBATCH_SUCCESS != rc) {
        return rc;
    }
    out->count = dims[0];
    for (long i = 0; i < out->count; i++) {
        if (out->labels[i] >= HETSGD_CLASSES) {
            int bad = out->labels[i];
            free(out->labels);
            out->labels = NULL;
            return ob_fail(OMNIBATCH_ERR_ARG, "%s: label %ld is %d: expected 0 to %d",
                           path, i, bad, HETSGD_CLASSES - 1);
        }
    }
    return OMNIBATCH_SUCCESS;
}

/* dir/name.gz, or dir/name when only the uncompressed file is there. */
static void data_path(const char *dir, const char *name, char *path, size_t size)
{
    snprintf(path, size, "%s/%s", dir, name);
    if (!file_exists(path)) {
        snprintf(path, size, "%s/%s.gz", dir, name);
    }
}

static int load_split(const char *dir, const char *images_name, const char *labels_name,
                      hetsgd_images *images, hetsgd_labels *labels)
{
    char path[4096];
    char lpath[4096];
    int rc;

    data_path(dir, images_name, path, sizeof path);
    rc = hetsgd_idx_read_images(path, images);
    if (OMNIBATCH_SUCCESS != rc) {
        return rc;
    }
    data_path(dir, labels_name, lpath, sizeof lpath);
    rc = hetsgd_idx_read_labels(lpath, labels);
    if (OMNIBATCH_SUCCESS != rc) {
        return rc;
    }
    if (images->count != labels->count) {
        return ob_fail(OMNIBATCH_ERR_ARG, "%s holds %ld images but %s holds %ld labels: expected as many",
                       path, images->count, lpath, labels->count);
    }
    return OMNIBATCH_SUCCESS;
}

int hetsgd_dataset_load(const char *dir, hetsgd_dataset *ds)
{
    struct stat st;
    int rc;

    memset(ds, 0, sizeof *ds);
    if (0 != stat(dir, &st) || !S_ISDIR(st.st_mode)) {
        return ob_fail(OMNIBATCH_ERR_ARG, "data directory %s not found; %s", dir, PACKAGE_HINT);
    }
    rc = load_split(dir, "train-images-idx3-ubyte", "train-labels-idx1-ubyte",
                    &ds->train_images, &ds->train_labels);
    if (OMNIBATCH_SUCCESS == rc) {
        rc = load_split(dir, "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte",
                        &ds->test_images, &ds->test_labels);
    }
    if (OMNIBATCH_SUCCESS == rc && (ds->train_images.rows != ds->test_images.rows ||
                                    ds->train_images.cols != ds->test_images.cols)) {
        rc = ob_fail(OMNIBATCH_ERR_ARG,
                     "%s: training images are %dx%d but test images %dx%d: expected the same", dir,
                     ds->train_images.rows, ds->train_images.cols, ds->test_images.rows, ds->test_images.cols);
    }
    if (OMNIBATCH_SUCCESS != rc) {
        hetsgd_dataset_free(ds);
    }
    return rc;
}

int hetsgd_dataset_subset(hetsgd_dataset *ds, long n)
{
    if (n < 1 || n > ds->train_images.count) {
        return ob_fail(OMNIBATCH_ERR_ARG, "--subset %ld: expected 1 to %ld (the training samples)",
                       n, ds->train_images.count);
    }
    /* The first n samples; the buffers keep their size, only the counts shrink. */
    ds->train_images.count = n;
    ds->train_labels.count = n;
    return OMNIBATCH_SUCCESS;
}

void hetsgd_gather(const hetsgd_images *images, const hetsgd_labels *labels, const long *index,
                   long n, float *x, uint8_t *y)
{
    const long size = (long) images->rows * images->cols;

    for (long r = 0; r < n; r++) {
        const uint8_t *src = images->pixels + index[r] * size;
        float *dst = x + r * size;

        for (long i = 0; i < size; i++) {
            dst[i] = (float) src[i] * (1.0f / 255.0f);
        }
        y[r] = labels->labels[index[r]];
    }
}

void hetsgd_dataset_free(hetsgd_dataset *ds)
{
    free(ds->train_images.pixels);
    free(ds->train_labels.labels);
    free(ds->test_images.pixels);
    free(ds->test_labels.labels);
    memset(ds, 0, sizeof *ds);
}

int hetsgd_idx_write(const char *path, int ndims, const long *dims, const uint8_t *data)
{
    unsigned char header[4 + 4 * 3];
    size_t len = strlen(path);
    int gzipped = len > 3 && 0 == strcmp(path + len - 3, ".gz");
    long total = 1;
    gzFile gz;
    int ok;

    if (ndims < 1 || ndims > 3) {
        return ob_fail(OMNIBATCH_ERR_ARG, "ndims=%d: expected 1 to 3", ndims);
    }
    header[0] = header[1] = 0;
    header[2] = 0x08;
    header[3] = (unsigned char) ndims;
    for (int d = 0; d < ndims; d++) {
        uint32_t v = (uint32_t) dims[d];
        header[4 + 4 * d] = (unsigned char) (v >> 24);
        header[5 + 4 * d] = (unsigned char) (v >> 16);
        header[6 + 4 * d] = (unsigned char) (v >> 8);
        header[7 + 4 * d] = (unsigned char) v;
        total *= dims[d];
    }
    /* "wbT" writes plain bytes through the same code path. */
    gz = gzopen(path, gzipped ? "wb" : "wbT");
    if (NULL == gz) {
        return ob_fail(OMNIBATCH_ERR_ARG, "%s: cannot create: %s", path, strerror(errno));
    }
    ok = gzwrite(gz, header, (unsigned) (4 + 4 * ndims)) == 4 + 4 * ndims;
    if (ok && total > 0) {
        ok = gzwrite(gz, data, (unsigned) total) == (int) total;
    }
    if (Z_OK != gzclose(gz) || !ok) {
        return ob_fail(OMNIBATCH_ERR_ARG, "%s: cannot write %ld bytes", path, total);
    }
    return OMNIBATCH_SUCCESS;
}
