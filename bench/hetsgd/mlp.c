/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * The MLP of mlp.h.  Row-major throughout: a batch is n rows, a weight
 * matrix W_l is dims[l] x dims[l+1], so a layer is A_{l+1} = A_l W_l + b_l.
 */
#include "config.h"

#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mlp.h"
#include "ob_error.h"
#include "rng.h"

struct hetsgd_mlp {
    int dims[HETSGD_MLP_LAYERS + 1];
    long max_batch;
    long nparams;
    long w_off[HETSGD_MLP_LAYERS];   /* offset of W_l in params */
    long b_off[HETSGD_MLP_LAYERS];   /* offset of b_l in params */
    float *params;
    float *velocity;
    /* Per layer output of the forward pass (after ReLU for hidden layers,
     * softmax probabilities for the last), then the backward deltas. */
    float *act[HETSGD_MLP_LAYERS];
    float *delta[HETSGD_MLP_LAYERS];
};

/* Uniform in [-1, 1): 24 random bits, exactly representable in a float. */
static float uniform_pm1(uint64_t *state)
{
    uint32_t bits = (uint32_t) (hetsgd_rng_next(state) >> 40);

    return (float) bits * (2.0f / 16777216.0f) - 1.0f;
}

int hetsgd_mlp_create(const int dims[HETSGD_MLP_LAYERS + 1], long max_batch, uint64_t seed,
                      hetsgd_mlp **out)
{
    hetsgd_mlp *m;
    uint64_t state = seed;
    long off = 0;
    int ok = 1;

    *out = NULL;
    for (int l = 0; l <= HETSGD_MLP_LAYERS; l++) {
        if (dims[l] < 1 || dims[l] > 65536) {
            return ob_fail(OMNIBATCH_ERR_ARG, "layer width %d is %d: expected 1 to 65536", l, dims[l]);
        }
    }
    if (max_batch < 1) {
        return ob_fail(OMNIBATCH_ERR_ARG, "max_batch=%ld: expected >= 1", max_batch);
    }
    m = calloc(1, sizeof *m);
    if (NULL == m) {
        return ob_fail(OMNIBATCH_ERR_NOMEM, "cannot allocate the network");
    }
    memcpy(m->dims, dims, sizeof m->dims);
    m->max_batch = max_batch;
    for (int l = 0; l < HETSGD_MLP_LAYERS; l++) {
        m->w_off[l] = off;
        off += (long) dims[l] * dims[l + 1];
        m->b_off[l] = off;
        off += dims[l + 1];
    }
    m->nparams = off;
    m->params = malloc((size_t) off * sizeof(float));
    m->velocity = calloc((size_t) off, sizeof(float));
    ok = NULL != m->params && NULL != m->velocity;
    for (int l = 0; ok && l < HETSGD_MLP_LAYERS; l++) {
        m->act[l] = malloc((size_t) max_batch * (size_t) dims[l + 1] * sizeof(float));
        m->delta[l] = malloc((size_t) max_batch * (size_t) dims[l + 1] * sizeof(float));
        ok = NULL != m->act[l] && NULL != m->delta[l];
    }
    if (!ok) {
        hetsgd_mlp_destroy(m);
        return ob_fail(OMNIBATCH_ERR_NOMEM, "cannot allocate a network of %ld parameters for batches of %ld",
                       off, max_batch);
    }
    /* He-uniform weights (ReLU layers keep their variance), zero biases. */
    for (int l = 0; l < HETSGD_MLP_LAYERS; l++) {
        float limit = sqrtf(6.0f / (float) dims[l]);
        float *w = m->params + m->w_off[l];

        for (long i = 0; i < (long) dims[l] * dims[l + 1]; i++) {
            w[i] = limit * uniform_pm1(&state);
        }
        memset(m->params + m->b_off[l], 0, (size_t) dims[l + 1] * sizeof(float));
    }
    *out = m;
    return OMNIBATCH_SUCCESS;
}

void hetsgd_mlp_destroy(hetsgd_mlp *m)
{
    if (NULL == m) {
        return;
    }
    for (int l = 0; l < HETSGD_MLP_LAYERS; l++) {
        free(m->act[l]);
        free(m->delta[l]);
    }
    free(m->params);
    free(m->velocity);
    free(m);
}

long hetsgd_mlp_nparams(const hetsgd_mlp *m)
{
    return m->nparams;
}

float *hetsgd_mlp_params(hetsgd_mlp *m)
{
    return m->params;
}

/* Forward pass of n <= max_batch rows: act[l] filled, the last with the
 * logits turned into probabilities.  Returns the summed cross-entropy and
 * adds the number of right answers to *correct (when not NULL). */
static double forward(hetsgd_mlp *m, const float *x, const uint8_t *y, long n, long *correct)
{
    const float *in = x;
    const int out_dim = m->dims[HETSGD_MLP_LAYERS];
    double loss = 0.0;

    for (int l = 0; l < HETSGD_MLP_LAYERS; l++) {
        const int k = m->dims[l];
        const int width = m->dims[l + 1];
        const float *bias = m->params + m->b_off[l];
        float *a = m->act[l];

        /* Bias first, then accumulate: one sgemm with beta = 1. */
        for (long r = 0; r < n; r++) {
            memcpy(a + r * width, bias, (size_t) width * sizeof(float));
        }
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int) n, width, k,
                    1.0f, in, k, m->params + m->w_off[l], width, 1.0f, a, width);
        if (l + 1 < HETSGD_MLP_LAYERS) {
            for (long i = 0; i < n * width; i++) {
                a[i] = a[i] > 0.0f ? a[i] : 0.0f;
            }
        }
        in = a;
    }
    /* Softmax and cross-entropy, with the log-sum-exp in double so the loss
     * of a confident right answer does not round to 0 or log(0). */
    for (long r = 0; r < n; r++) {
        float *z = m->act[HETSGD_MLP_LAYERS - 1] + r * out_dim;
        float zmax = z[0];
        int best = 0;
        double sum = 0.0;

        for (int c = 1; c < out_dim; c++) {
            if (z[c] > zmax) {
                zmax = z[c];
                best = c;
            }
        }
        for (int c = 0; c < out_dim; c++) {
            sum += exp((double) z[c] - (double) zmax);
        }
        loss += log(sum) - ((double) z[y[r]] - (double) zmax);
        for (int c = 0; c < out_dim; c++) {
            z[c] = (float) (exp((double) z[c] - (double) zmax) / sum);
        }
        if (NULL != correct && best == y[r]) {
            (*correct)++;
        }
    }
    return loss;
}

/* Forward and backward of n >= 1 samples: the gradient of the loss summed
 * over them times \p scale, written to grad (\p beta 0) or added to it
 * (\p beta 1: one sgemm with beta = 1 a weight matrix, no second pass over
 * the gradient).  Returns the summed loss. */
static double backward(hetsgd_mlp *m, const float *x, const uint8_t *y, long n, float *grad, float scale,
                       float beta)
{
    const int out_dim = m->dims[HETSGD_MLP_LAYERS];
    double loss = forward(m, x, y, n, NULL);

    /* d(scale x summed loss)/d(logits) = (p - onehot(y)) x scale */
    {
        float *dz = m->delta[HETSGD_MLP_LAYERS - 1];
        const float *p = m->act[HETSGD_MLP_LAYERS - 1];

        for (long r = 0; r < n; r++) {
            for (int c = 0; c < out_dim; c++) {
                float target = c == y[r] ? 1.0f : 0.0f;
                dz[r * out_dim + c] = (p[r * out_dim + c] - target) * scale;
            }
        }
    }
    for (int l = HETSGD_MLP_LAYERS - 1; l >= 0; l--) {
        const int k = m->dims[l];
        const int width = m->dims[l + 1];
        const float *in = 0 == l ? x : m->act[l - 1];
        const float *d = m->delta[l];
        float *gb = grad + m->b_off[l];

        /* dW_l = in^T d ;  db_l = column sums of d */
        cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, k, width, (int) n,
                    1.0f, in, k, d, width, beta, grad + m->w_off[l], width);
        if (0.0f == beta) {
            memset(gb, 0, (size_t) width * sizeof(float));
        }
        for (long r = 0; r < n; r++) {
            for (int c = 0; c < width; c++) {
                gb[c] += d[r * width + c];
            }
        }
        if (l > 0) {
            /* delta_{l-1} = (d W_l^T) masked by the ReLU of layer l-1 */
            float *dprev = m->delta[l - 1];
            const float *aprev = m->act[l - 1];

            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int) n, k, width,
                        1.0f, d, width, m->params + m->w_off[l], width, 0.0f, dprev, k);
            for (long i = 0; i < n * k; i++) {
                if (aprev[i] <= 0.0f) {
                    dprev[i] = 0.0f;
                }
            }
        }
    }
    return loss;
}

double hetsgd_mlp_loss_grad(hetsgd_mlp *m, const float *x, const uint8_t *y, long n, float *grad)
{
    if (n <= 0) {
        memset(grad, 0, (size_t) m->nparams * sizeof(float));
        return 0.0;
    }
    return backward(m, x, y, n, grad, 1.0f / (float) n, 0.0f) / (double) n;
}

double hetsgd_mlp_loss_grad_add(hetsgd_mlp *m, const float *x, const uint8_t *y, long n, float *sum)
{
    return n > 0 ? backward(m, x, y, n, sum, 1.0f, 1.0f) : 0.0;
}

double hetsgd_mlp_evaluate(hetsgd_mlp *m, const float *x, const uint8_t *y, long n, long *correct)
{
    double loss = 0.0;

    *correct = 0;
    for (long first = 0; first < n; first += m->max_batch) {
        long rows = n - first < m->max_batch ? n - first : m->max_batch;

        loss += forward(m, x + first * m->dims[0], y + first, rows, correct);
    }
    return loss;
}

void hetsgd_mlp_sgd_step(hetsgd_mlp *m, const float *grad, float lr, float momentum)
{
    float *p = m->params;
    float *v = m->velocity;

    if (0.0f == momentum) {
        for (long i = 0; i < m->nparams; i++) {
            p[i] -= lr * grad[i];
        }
        return;
    }
    for (long i = 0; i < m->nparams; i++) {
        v[i] = momentum * v[i] + grad[i];
        p[i] -= lr * v[i];
    }
}
