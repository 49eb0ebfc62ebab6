/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * The model the examples train: linear least squares on a synthetic data
 * set that every rank generates identically (so no data has to be shipped):
 * N samples of LSQ_D features, y = x . w_true + a little noise.  Loss
 * (x . w - y)^2 / 2; its gradient is x (x . w - y).
 */
#ifndef LSQ_PROBLEM_H
#define LSQ_PROBLEM_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#define LSQ_D 8

typedef struct lsq_problem {
    long n;
    double *x;                   /* n * LSQ_D, row-major */
    double *y;                   /* n */
} lsq_problem;

/* A uniform number in [-1, 1) from a 64-bit LCG: the same on every rank. */
static inline double lsq_uniform(uint64_t *state)
{
    *state = *state * UINT64_C(6364136223846793005) + UINT64_C(1442695040888963407);
    return (double) (*state >> 11) * 0x1p-52 - 1.0;
}

static inline int lsq_init(lsq_problem *p, long n)
{
    uint64_t state = 42;
    double w_true[LSQ_D];

    p->n = n;
    p->x = malloc((size_t) n * LSQ_D * sizeof *p->x);
    p->y = malloc((size_t) n * sizeof *p->y);
    if (NULL == p->x || NULL == p->y) {
        free(p->x);
        free(p->y);
        return -1;
    }
    for (int k = 0; k < LSQ_D; k++) {
        w_true[k] = 2.0 * lsq_uniform(&state);
    }
    for (long j = 0; j < n; j++) {
        double t = 0.0;

        for (int k = 0; k < LSQ_D; k++) {
            p->x[j * LSQ_D + k] = lsq_uniform(&state);
            t += p->x[j * LSQ_D + k] * w_true[k];
        }
        p->y[j] = t + 0.01 * lsq_uniform(&state);
    }
    return 0;
}

static inline void lsq_free(lsq_problem *p)
{
    free(p->x);
    free(p->y);
}

/* Mean gradient over samples idx[0..count-1] (zero when count is 0). */
static inline void lsq_mean_gradient(const lsq_problem *p, const double *w, const long *idx,
                                     long count, double *g)
{
    for (int k = 0; k < LSQ_D; k++) {
        g[k] = 0.0;
    }
    for (long i = 0; i < count; i++) {
        const double *x = p->x + idx[i] * LSQ_D;
        double r = -p->y[idx[i]];

        for (int k = 0; k < LSQ_D; k++) {
            r += x[k] * w[k];
        }
        for (int k = 0; k < LSQ_D; k++) {
            g[k] += x[k] * r;
        }
    }
    for (int k = 0; count > 0 && k < LSQ_D; k++) {
        g[k] /= (double) count;
    }
}

/* Mean loss over the whole data set. */
static inline double lsq_loss(const lsq_problem *p, const double *w)
{
    double sum = 0.0;

    for (long j = 0; j < p->n; j++) {
        double r = -p->y[j];

        for (int k = 0; k < LSQ_D; k++) {
            r += p->x[j * LSQ_D + k] * w[k];
        }
        sum += 0.5 * r * r;
    }
    return sum / (double) p->n;
}

#endif /* LSQ_PROBLEM_H */
