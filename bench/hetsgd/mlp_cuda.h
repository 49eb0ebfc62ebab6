/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * hetsgd's GPU backend (built when configure finds CUDA: HAVE_CUDA): the
 * forward and backward pass of mlp.h's network with cuBLAS, for a rank of
 * --devices ...,gpu.  The model stays on the host, where every rank takes
 * the same SGD step on the same reduced gradient: each pass uploads the
 * parameters and the batch and brings the gradient back, so a GPU rank and
 * a CPU rank compute the same function of the same parameters (to float
 * rounding) and reduce host buffers through any MPI.
 */
#ifndef HETSGD_MLP_CUDA_H
#define HETSGD_MLP_CUDA_H

#include <stddef.h>
#include <stdint.h>

#include "mlp.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hetsgd_gpu hetsgd_gpu;

/**
 * \brief A GPU pass for the network of widths \p dims on CUDA device \p device, with room for
 *        \p max_batch samples (its memory bound: OMNIBATCH_MAX_BATCH of the rank).
 * \param[out] out  the backend, freed by hetsgd_gpu_destroy().
 * \param[out] msg  on failure, one line naming the call and CUDA's or cuBLAS's reason.
 * \return 0, or -1 with \p msg filled.
 */
int hetsgd_gpu_create(const int dims[HETSGD_MLP_LAYERS + 1], long max_batch, int device,
                      hetsgd_gpu **out, char *msg, size_t size);

/** \brief Free a backend (NULL is fine). */
void hetsgd_gpu_destroy(hetsgd_gpu *g);

/** \brief The device's name and memory, e.g. "NVIDIA H200, 139 GiB", for the setup line. */
void hetsgd_gpu_describe(const hetsgd_gpu *g, char *out, size_t size);

/**
 * \brief As hetsgd_mlp_loss_grad(): mean cross-entropy of \p n samples (0 <= n <= max_batch)
 *        and its gradient into \p grad (host, nparams floats), for the host \p params.
 * \return the mean loss, or NaN with \p msg filled when CUDA fails.
 */
double hetsgd_gpu_loss_grad(hetsgd_gpu *g, const float *params, const float *x, const uint8_t *y,
                            long n, float *grad, char *msg, size_t size);

/** \brief Number of CUDA devices this process sees (0 with \p msg filled when none or no driver). */
int hetsgd_gpu_count(char *msg, size_t size);

#ifdef __cplusplus
}
#endif

#endif /* HETSGD_MLP_CUDA_H */
