/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * An unmodified data-parallel trainer, built with plain mpicc and nothing
 * of omnibatch: softmax (multinomial logistic) regression on Fashion-MNIST,
 * each rank a few samples a step (about a tenth of a millisecond of
 * compute), its one layer's gradient (weights and biases, 7,850 doubles)
 * summed by one MPI_Allreduce, then plain SGD on the mean gradient; the
 * mean loss of the step rides in the same reduction.  The small step of
 * the trainers a rank starved of CPU hurts most (issue 35).
 *
 *   mpi_logreg DATA_DIR STEPS [SAMPLES_PER_RANK]
 *
 * DATA_DIR holds train-images-idx3-ubyte.gz and train-labels-idx1-ubyte.gz
 * (Debian's dataset-fashion-mnist: /usr/share/datasets/fashion-mnist).
 * Rank 0 prints the mean loss of the first and the last tenth of the
 * steps; the program fails if the loss did not fall or a rank's model
 * differs from rank 0's (the reductions must give every rank the same
 * sums), so it fails if a layer in between disturbed the data.
 */
#include "config.h"

#include <math.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#define PIXELS 784
#define CLASSES 10
#define PARAMS (CLASSES * PIXELS + CLASSES)
/* The images read: enough for every rank's distinct samples over a run of
 * a few hundred steps to cycle without loading the whole set. */
#define IMAGES 8192
#define LEARNING_RATE 0.05

/* Read \p n bytes after a header of \p header big-endian 32-bit words whose
 * first is \p magic; 0 on a short or wrong file. */
static int read_idx(const char *path, uint32_t magic, int header, unsigned char *out, size_t n)
{
    gzFile f = gzopen(path, "rb");
    unsigned char head[16];
    int ok;

    if (NULL == f) {
        return 0;
    }
    ok = 4 * header == gzread(f, head, (unsigned) (4 * header))
         && magic == ((uint32_t) head[0] << 24 | (uint32_t) head[1] << 16 | (uint32_t) head[2] << 8 | head[3])
         && (int) n == gzread(f, out, (unsigned) n);
    gzclose(f);
    return ok;
}

/* The gradient of the summed cross-entropy of samples [first, first + b)
 * (cyclic over the images read) into \p g (PARAMS: weights, then biases);
 * their summed loss. */
static double gradient(const double *w, const unsigned char *images, const unsigned char *labels, long first,
                       int b, double *g)
{
    double loss = 0.0;

    memset(g, 0, PARAMS * sizeof *g);
    for (int s = 0; s < b; s++) {
        long k = (first + s) % IMAGES;
        const unsigned char *x = images + (size_t) k * PIXELS;
        double z[CLASSES], zmax = -INFINITY, sum = 0.0;

        for (int c = 0; c < CLASSES; c++) {
            const double *wc = w + (size_t) c * PIXELS;
            double a = w[CLASSES * PIXELS + c];

            for (int p = 0; p < PIXELS; p++) {
                a += wc[p] * (x[p] * (1.0 / 255.0));
            }
            z[c] = a;
            zmax = a > zmax ? a : zmax;
        }
        for (int c = 0; c < CLASSES; c++) {
            z[c] = exp(z[c] - zmax);
            sum += z[c];
        }
        loss -= log(z[labels[k]] / sum);
        for (int c = 0; c < CLASSES; c++) {
            double d = z[c] / sum - (c == labels[k] ? 1.0 : 0.0);
            double *gc = g + (size_t) c * PIXELS;

            for (int p = 0; p < PIXELS; p++) {
                gc[p] += d * (x[p] * (1.0 / 255.0));
            }
            g[CLASSES * PIXELS + c] += d;
        }
    }
    return loss;
}

static void fail(int rank, const char *why)
{
    if (0 == rank) {
        fprintf(stderr, "mpi_logreg: %s\n", why);
    }
    MPI_Abort(MPI_COMM_WORLD, 2);
}

int main(int argc, char **argv)
{
    char path[4096];
    unsigned char *images = malloc((size_t) IMAGES * PIXELS), labels[IMAGES];
    double *w = calloc(PARAMS + 1, sizeof *w), *g = malloc((PARAMS + 1) * sizeof *g);
    double first_loss = 0.0, last_loss = 0.0, w0 = 0.0, differs = 0.0;
    int rank, size, steps = 0, b = 0, tenth;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc >= 3) {
        steps = atoi(argv[2]);
        b = argc > 3 ? atoi(argv[3]) : 4;
    }
    if (steps < 10 || b < 1 || b > 64) {
        fail(rank, "usage: mpi_logreg DATA_DIR STEPS(>= 10) [SAMPLES_PER_RANK (1-64, default 4)]");
    }
    if (NULL == images || NULL == w || NULL == g) {
        fail(rank, "out of memory");
    }
    snprintf(path, sizeof path, "%s/train-images-idx3-ubyte.gz", argv[1]);
    if (!read_idx(path, 0x803, 4, images, (size_t) IMAGES * PIXELS)) {
        fail(rank, "cannot read the images (Debian's dataset-fashion-mnist)");
    }
    snprintf(path, sizeof path, "%s/train-labels-idx1-ubyte.gz", argv[1]);
    if (!read_idx(path, 0x801, 2, labels, IMAGES)) {
        fail(rank, "cannot read the labels (Debian's dataset-fashion-mnist)");
    }
    tenth = steps / 10;
    for (int k = 0; k < steps; k++) {
        /* This rank's samples of global step k. */
        g[PARAMS] = gradient(w, images, labels, ((long) k * size + rank) * b, b, g);
        MPI_Allreduce(MPI_IN_PLACE, g, PARAMS + 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        for (int p = 0; p < PARAMS; p++) {
            w[p] -= LEARNING_RATE * g[p] / (double) (size * b);
        }
        first_loss += k < tenth ? g[PARAMS] / (double) (size * b * tenth) : 0.0;
        last_loss += k >= steps - tenth ? g[PARAMS] / (double) (size * b * tenth) : 0.0;
    }
    /* Every rank applied the same sums: the same model, bit for bit. */
    for (int p = 0; p < PARAMS; p++) {
        w0 += w[p] * (double) (p % 7 + 1);
    }
    g[0] = w0;
    MPI_Bcast(g, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    differs = g[0] != w0;
    MPI_Allreduce(MPI_IN_PLACE, &differs, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (0 == rank) {
        printf("mpi_logreg: %d ranks, %d steps of %d samples a rank: mean loss %.4f first, %.4f last: %s\n",
               size, steps, b, first_loss, last_loss,
               0.0 == differs && last_loss < first_loss ? "results right" : "RESULTS WRONG");
    }
    free(images);
    free(w);
    free(g);
    MPI_Finalize();
    return 0.0 == differs && last_loss < first_loss ? 0 : 1;
}
