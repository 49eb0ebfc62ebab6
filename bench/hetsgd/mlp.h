/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * A multi-layer perceptron in->h1->h2->out with ReLU and softmax
 * cross-entropy, forward and backward through OpenBLAS cblas_sgemm.  All
 * parameters live in one contiguous array (W1, b1, W2, b2, W3, b3), and a
 * gradient has the same layout, so a rank reduces its whole gradient in a
 * single allreduce.  The initialisation depends only on the seed (integer
 * arithmetic and exact conversions), so every rank starts bit-identical.
 */
#ifndef HETSGD_MLP_H
#define HETSGD_MLP_H

#include <stdint.h>

#define HETSGD_MLP_LAYERS 3

typedef struct hetsgd_mlp hetsgd_mlp;

/**
 * \brief Create a network with layer widths \p dims (in, h1, h2, out), each >= 1, able to
 *        process up to \p max_batch samples at once.
 * \param[out] out the network, freed by hetsgd_mlp_destroy().
 */
int hetsgd_mlp_create(const int dims[HETSGD_MLP_LAYERS + 1], long max_batch, uint64_t seed,
                      hetsgd_mlp **out);

/** \brief Free a network (NULL is fine). */
void hetsgd_mlp_destroy(hetsgd_mlp *m);

/** \brief Number of parameters: the length of the parameter and gradient arrays. */
long hetsgd_mlp_nparams(const hetsgd_mlp *m);

/** \brief The parameter array (nparams floats), writable (tests perturb it). */
float *hetsgd_mlp_params(hetsgd_mlp *m);

/**
 * \brief Mean cross-entropy of \p n samples and its gradient.
 * \param[in] x     n rows of in floats.
 * \param[in] y     n labels in 0..out-1.
 * \param[in] n     0 <= n <= max_batch; with n = 0 the gradient is zero and the loss 0.
 * \param[out] grad nparams floats: the gradient of the mean loss.
 * \return the mean loss.
 */
double hetsgd_mlp_loss_grad(hetsgd_mlp *m, const float *x, const uint8_t *y, long n, float *grad);

/**
 * \brief The gradient of the cross-entropy *summed* over \p n samples, added to \p sum: a
 *        step worked in chunks accumulates its chunks' gradients in place, with no pass over
 *        the gradient beside the backward's own (n = 0: nothing added).
 * \return the summed loss.
 */
double hetsgd_mlp_loss_grad_add(hetsgd_mlp *m, const float *x, const uint8_t *y, long n, float *sum);

/**
 * \brief Forward pass only: the summed cross-entropy of \p n samples (any n >= 0, taken in
 *        slices of max_batch) and how many are classified right.
 */
double hetsgd_mlp_evaluate(hetsgd_mlp *m, const float *x, const uint8_t *y, long n, long *correct);

/**
 * \brief One SGD step: v = momentum * v + grad; params -= lr * v (plain SGD when momentum is 0).
 */
void hetsgd_mlp_sgd_step(hetsgd_mlp *m, const float *grad, float lr, float momentum);

#endif /* HETSGD_MLP_H */
