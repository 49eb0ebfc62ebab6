/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * IDX files (the MNIST family's format): a big-endian magic 0x000008TD
 * (T = 0x08 unsigned bytes, D = number of dimensions), D big-endian 32-bit
 * sizes, then the bytes.  Read gzip'd or plain through zlib; every header
 * field and the payload size are checked, so a truncated download or a
 * wrong file fails with one line instead of training on garbage.
 */
#ifndef HETSGD_IDX_H
#define HETSGD_IDX_H

#include <stdint.h>

/** Images of one split: count images of rows x cols unsigned bytes, row-major. */
typedef struct hetsgd_images {
    long count;
    int rows;
    int cols;
    uint8_t *pixels;             /* count * rows * cols bytes */
} hetsgd_images;

/** Labels of one split, each in 0..9. */
typedef struct hetsgd_labels {
    long count;
    uint8_t *labels;
} hetsgd_labels;

/** A data set: the training and the test split. */
typedef struct hetsgd_dataset {
    hetsgd_images train_images;
    hetsgd_labels train_labels;
    hetsgd_images test_images;
    hetsgd_labels test_labels;
} hetsgd_dataset;

/** The IDX magic of an unsigned-byte array of \p ndims dimensions. */
#define HETSGD_IDX_MAGIC(ndims) (0x00000800u | (unsigned) (ndims))

/** Classes of Fashion-MNIST (and MNIST). */
#define HETSGD_CLASSES 10

/**
 * \brief Read an IDX image file (magic 0x00000803: count, rows, cols).
 * \return OMNIBATCH_SUCCESS, or OMNIBATCH_ERR_ARG with a detail line naming the file
 *         (missing, bad magic, bad sizes, truncated, trailing bytes).
 */
int hetsgd_idx_read_images(const char *path, hetsgd_images *out);

/** \brief Read an IDX label file (magic 0x00000801: count); every label must be < 10. */
int hetsgd_idx_read_labels(const char *path, hetsgd_labels *out);

/**
 * \brief Read the four files of a data set in \p dir (train-images-idx3-ubyte[.gz], ...),
 *        checking that images and labels agree in count and the splits in image size.
 *        A missing directory or file names the Debian package dataset-fashion-mnist.
 */
int hetsgd_dataset_load(const char *dir, hetsgd_dataset *ds);

/** \brief Keep only the first \p n training samples (n >= 1, <= count). */
int hetsgd_dataset_subset(hetsgd_dataset *ds, long n);

/**
 * \brief Copy samples index[0..n-1] into a batch: \p x gets n rows of rows*cols floats scaled
 *        to [0, 1], \p y their labels.
 */
void hetsgd_gather(const hetsgd_images *images, const hetsgd_labels *labels, const long *index,
                   long n, float *x, uint8_t *y);

/** \brief Free what a load allocated; safe on a zeroed or partly loaded set. */
void hetsgd_dataset_free(hetsgd_dataset *ds);

/**
 * \brief Write an IDX file of unsigned bytes, gzip'd when \p path ends in ".gz".
 * \param[in] dims  \p ndims sizes (1 to 3); the payload holds their product in bytes.
 */
int hetsgd_idx_write(const char *path, int ndims, const long *dims, const uint8_t *data);

#endif /* HETSGD_IDX_H */
