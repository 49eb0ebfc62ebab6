/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * The GPU pass of mlp_cuda.h.  The layout is mlp.c's: row-major batches,
 * W_l of dims[l] x dims[l+1], parameters W1 b1 W2 b2 W3 b3 in one array.
 * cuBLAS is column-major, so each row-major product C = A B is computed as
 * its transpose C^T = B^T A^T, which is the same memory.
 */
#include "config.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mlp_cuda.h"

/* Threads per block of the element-wise kernels. */
#define GPU_THREADS 256

struct hetsgd_gpu {
    int dims[HETSGD_MLP_LAYERS + 1];
    long max_batch;
    long nparams;
    long w_off[HETSGD_MLP_LAYERS];
    long b_off[HETSGD_MLP_LAYERS];
    int device;
    cublasHandle_t blas;
    float *params;                   /* nparams */
    float *grad;                     /* nparams */
    float *x;                        /* max_batch x dims[0] */
    unsigned char *y;                /* max_batch */
    double *row_loss;                /* max_batch */
    double *host_loss;               /* max_batch, pinned */
    float *act[HETSGD_MLP_LAYERS];   /* max_batch x dims[l+1] */
    float *delta[HETSGD_MLP_LAYERS];
};

static unsigned blocks_for(long n)
{
    return (unsigned) ((n + GPU_THREADS - 1) / GPU_THREADS);
}

__global__ static void bias_rows(float *a, const float *bias, long n, int width)
{
    long i = (long) blockIdx.x * blockDim.x + threadIdx.x;

    if (i < n * width) {
        a[i] = bias[i % width];
    }
}

__global__ static void relu(float *a, long count)
{
    long i = (long) blockIdx.x * blockDim.x + threadIdx.x;

    if (i < count) {
        a[i] = a[i] > 0.0f ? a[i] : 0.0f;
    }
}

/* One row per thread, as mlp.c: log-sum-exp in double, probabilities
 * rounded to float, then d(mean loss)/d(logits) = (p - onehot(y)) / n. */
__global__ static void softmax_xent(const float *z, const unsigned char *y, long n, int classes,
                                    float inv_n, float *dz, double *row_loss)
{
    long r = (long) blockIdx.x * blockDim.x + threadIdx.x;
    const float *zr;
    float zmax;
    double sum = 0.0;

    if (r >= n) {
        return;
    }
    zr = z + r * classes;
    zmax = zr[0];
    for (int c = 1; c < classes; c++) {
        zmax = zr[c] > zmax ? zr[c] : zmax;
    }
    for (int c = 0; c < classes; c++) {
        sum += exp((double) zr[c] - (double) zmax);
    }
    row_loss[r] = log(sum) - ((double) zr[y[r]] - (double) zmax);
    for (int c = 0; c < classes; c++) {
        float p = (float) (exp((double) zr[c] - (double) zmax) / sum);
        float target = c == y[r] ? 1.0f : 0.0f;

        dz[r * classes + c] = (p - target) * inv_n;
    }
}

/* db = column sums of d (n x width): one column per thread. */
__global__ static void column_sums(const float *d, long n, int width, float *db)
{
    int c = (int) (blockIdx.x * blockDim.x + threadIdx.x);
    float s = 0.0f;

    if (c >= width) {
        return;
    }
    for (long r = 0; r < n; r++) {
        s += d[r * width + c];
    }
    db[c] = s;
}

__global__ static void relu_mask(float *d, const float *a, long count)
{
    long i = (long) blockIdx.x * blockDim.x + threadIdx.x;

    if (i < count && a[i] <= 0.0f) {
        d[i] = 0.0f;
    }
}

static int cuda_failed(cudaError_t e, const char *call, char *msg, size_t size)
{
    if (cudaSuccess == e) {
        return 0;
    }
    snprintf(msg, size, "CUDA: %s failed: %s", call, cudaGetErrorString(e));
    return -1;
}

static int blas_failed(cublasStatus_t s, const char *call, char *msg, size_t size)
{
    if (CUBLAS_STATUS_SUCCESS == s) {
        return 0;
    }
    snprintf(msg, size, "cuBLAS: %s failed with status %d", call, (int) s);
    return -1;
}

extern "C" int hetsgd_gpu_count(char *msg, size_t size)
{
    int n = 0;

    if (0 != cuda_failed(cudaGetDeviceCount(&n), "cudaGetDeviceCount", msg, size)) {
        return 0;
    }
    if (0 == n) {
        snprintf(msg, size, "CUDA: no GPU visible to this process");
    }
    return n;
}

extern "C" void hetsgd_gpu_destroy(hetsgd_gpu *g)
{
    if (NULL == g) {
        return;
    }
    for (int l = 0; l < HETSGD_MLP_LAYERS; l++) {
        cudaFree(g->act[l]);
        cudaFree(g->delta[l]);
    }
    cudaFree(g->params);
    cudaFree(g->grad);
    cudaFree(g->x);
    cudaFree(g->y);
    cudaFree(g->row_loss);
    cudaFreeHost(g->host_loss);
    if (NULL != g->blas) {
        cublasDestroy(g->blas);
    }
    free(g);
}

static int gpu_alloc(hetsgd_gpu *g, char *msg, size_t size)
{
    const size_t b = (size_t) g->max_batch;
    int rc = 0;

    rc = rc || cuda_failed(cudaMalloc((void **) &g->params, (size_t) g->nparams * sizeof(float)), "cudaMalloc", msg, size);
    rc = rc || cuda_failed(cudaMalloc((void **) &g->grad, (size_t) g->nparams * sizeof(float)), "cudaMalloc", msg, size);
    rc = rc || cuda_failed(cudaMalloc((void **) &g->x, b * (size_t) g->dims[0] * sizeof(float)), "cudaMalloc", msg, size);
    rc = rc || cuda_failed(cudaMalloc((void **) &g->y, b), "cudaMalloc", msg, size);
    rc = rc || cuda_failed(cudaMalloc((void **) &g->row_loss, b * sizeof(double)), "cudaMalloc", msg, size);
    rc = rc || cuda_failed(cudaMallocHost((void **) &g->host_loss, b * sizeof(double)), "cudaMallocHost", msg, size);
    for (int l = 0; 0 == rc && l < HETSGD_MLP_LAYERS; l++) {
        size_t bytes = b * (size_t) g->dims[l + 1] * sizeof(float);

        rc = rc || cuda_failed(cudaMalloc((void **) &g->act[l], bytes), "cudaMalloc", msg, size);
        rc = rc || cuda_failed(cudaMalloc((void **) &g->delta[l], bytes), "cudaMalloc", msg, size);
    }
    return rc ? -1 : 0;
}

extern "C" int hetsgd_gpu_create(const int dims[HETSGD_MLP_LAYERS + 1], long max_batch, int device,
                                 hetsgd_gpu **out, char *msg, size_t size)
{
    hetsgd_gpu *g;
    long off = 0;

    *out = NULL;
    if (max_batch < 1) {
        snprintf(msg, size, "max_batch=%ld: expected >= 1", max_batch);
        return -1;
    }
    if (0 != cuda_failed(cudaSetDevice(device), "cudaSetDevice", msg, size)) {
        return -1;
    }
    g = (hetsgd_gpu *) calloc(1, sizeof *g);
    if (NULL == g) {
        snprintf(msg, size, "cannot allocate the GPU backend");
        return -1;
    }
    memcpy(g->dims, dims, sizeof g->dims);
    g->max_batch = max_batch;
    g->device = device;
    for (int l = 0; l < HETSGD_MLP_LAYERS; l++) {
        g->w_off[l] = off;
        off += (long) dims[l] * dims[l + 1];
        g->b_off[l] = off;
        off += dims[l + 1];
    }
    g->nparams = off;
    if (0 != blas_failed(cublasCreate(&g->blas), "cublasCreate", msg, size) || 0 != gpu_alloc(g, msg, size)) {
        hetsgd_gpu_destroy(g);
        return -1;
    }
    *out = g;
    return 0;
}

extern "C" void hetsgd_gpu_describe(const hetsgd_gpu *g, char *out, size_t size)
{
    cudaDeviceProp prop;

    if (cudaSuccess != cudaGetDeviceProperties(&prop, g->device)) {
        snprintf(out, size, "CUDA device %d", g->device);
        return;
    }
    snprintf(out, size, "%s (device %d, %.0f GiB, %d SMs)", prop.name, g->device,
             (double) prop.totalGlobalMem / (1024.0 * 1024.0 * 1024.0), prop.multiProcessorCount);
}

/* Forward through the hidden and output layers: act[l] = act[l-1] W_l + b_l. */
static int forward(hetsgd_gpu *g, long n, char *msg, size_t size)
{
    const float one = 1.0f;
    const float *in = g->x;

    for (int l = 0; l < HETSGD_MLP_LAYERS; l++) {
        const int k = g->dims[l];
        const int width = g->dims[l + 1];

        bias_rows<<<blocks_for(n * width), GPU_THREADS>>>(g->act[l], g->params + g->b_off[l], n, width);
        if (0 != blas_failed(cublasSgemm(g->blas, CUBLAS_OP_N, CUBLAS_OP_N, width, (int) n, k, &one,
                                         g->params + g->w_off[l], width, in, k, &one, g->act[l], width),
                             "cublasSgemm (forward)", msg, size)) {
            return -1;
        }
        if (l + 1 < HETSGD_MLP_LAYERS) {
            relu<<<blocks_for(n * width), GPU_THREADS>>>(g->act[l], n * width);
        }
        in = g->act[l];
    }
    return 0;
}

/* Backward from delta[last] (set by softmax_xent) into g->grad. */
static int backward(hetsgd_gpu *g, long n, char *msg, size_t size)
{
    const float one = 1.0f;
    const float zero = 0.0f;

    for (int l = HETSGD_MLP_LAYERS - 1; l >= 0; l--) {
        const int k = g->dims[l];
        const int width = g->dims[l + 1];
        const float *in = 0 == l ? g->x : g->act[l - 1];
        const float *d = g->delta[l];

        /* dW_l (k x width) = in^T d */
        if (0 != blas_failed(cublasSgemm(g->blas, CUBLAS_OP_N, CUBLAS_OP_T, width, k, (int) n, &one, d, width,
                                         in, k, &zero, g->grad + g->w_off[l], width),
                             "cublasSgemm (weights)", msg, size)) {
            return -1;
        }
        column_sums<<<blocks_for(width), GPU_THREADS>>>(d, n, width, g->grad + g->b_off[l]);
        if (l > 0) {
            /* delta_{l-1} (n x k) = d W_l^T, masked by the ReLU of layer l-1 */
            if (0 != blas_failed(cublasSgemm(g->blas, CUBLAS_OP_T, CUBLAS_OP_N, k, (int) n, width, &one,
                                             g->params + g->w_off[l], width, d, width, &zero,
                                             g->delta[l - 1], k),
                                 "cublasSgemm (deltas)", msg, size)) {
                return -1;
            }
            relu_mask<<<blocks_for(n * k), GPU_THREADS>>>(g->delta[l - 1], g->act[l - 1], n * k);
        }
    }
    return 0;
}

static int upload(hetsgd_gpu *g, const float *params, const float *x, const uint8_t *y, long n,
                  char *msg, size_t size)
{
    int rc = 0;

    rc = rc || cuda_failed(cudaMemcpy(g->params, params, (size_t) g->nparams * sizeof(float),
                                      cudaMemcpyHostToDevice), "cudaMemcpy (parameters)", msg, size);
    rc = rc || cuda_failed(cudaMemcpy(g->x, x, (size_t) n * (size_t) g->dims[0] * sizeof(float),
                                      cudaMemcpyHostToDevice), "cudaMemcpy (samples)", msg, size);
    rc = rc || cuda_failed(cudaMemcpy(g->y, y, (size_t) n, cudaMemcpyHostToDevice), "cudaMemcpy (labels)",
                           msg, size);
    return rc ? -1 : 0;
}

extern "C" double hetsgd_gpu_loss_grad(hetsgd_gpu *g, const float *params, const float *x, const uint8_t *y,
                                       long n, float *grad, char *msg, size_t size)
{
    const int classes = g->dims[HETSGD_MLP_LAYERS];
    double loss = 0.0;

    if (n <= 0) {
        memset(grad, 0, (size_t) g->nparams * sizeof(float));
        return 0.0;
    }
    if (n > g->max_batch) {
        snprintf(msg, size, "GPU pass of %ld samples: expected at most max_batch=%ld", n, g->max_batch);
        return NAN;
    }
    if (0 != upload(g, params, x, y, n, msg, size) || 0 != forward(g, n, msg, size)) {
        return NAN;
    }
    softmax_xent<<<blocks_for(n), GPU_THREADS>>>(g->act[HETSGD_MLP_LAYERS - 1], g->y, n, classes,
                                                 1.0f / (float) n, g->delta[HETSGD_MLP_LAYERS - 1],
                                                 g->row_loss);
    if (0 != backward(g, n, msg, size)
        || 0 != cuda_failed(cudaGetLastError(), "a kernel launch", msg, size)
        || 0 != cuda_failed(cudaMemcpy(grad, g->grad, (size_t) g->nparams * sizeof(float),
                                       cudaMemcpyDeviceToHost), "cudaMemcpy (gradient)", msg, size)
        || 0 != cuda_failed(cudaMemcpy(g->host_loss, g->row_loss, (size_t) n * sizeof(double),
                                       cudaMemcpyDeviceToHost), "cudaMemcpy (losses)", msg, size)) {
        return NAN;
    }
    for (long r = 0; r < n; r++) {
        loss += g->host_loss[r];
    }
    return loss / (double) n;
}
