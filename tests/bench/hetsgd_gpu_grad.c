/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * hetsgd's GPU backend computes the function the CPU path computes: the
 * same loss and gradient of the same parameters and samples, to float
 * rounding (cuBLAS and OpenBLAS sum in different orders).  Also: an empty
 * batch gives an exact zero gradient, a batch over the memory bound is
 * refused with a line.  Built with CUDA only; exit 77 (skipped) without a
 * GPU.
 */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mlp.h"
#include "mlp_cuda.h"

#define SKIPPED 77
#define SAMPLES 300L
#define MAX_BATCH 512L
/* Largest gradient difference allowed, relative to the largest gradient
 * entry: float sums of up to SAMPLES terms in another order. */
#define GRAD_TOLERANCE 1e-4
#define LOSS_TOLERANCE 1e-5

static int failures;

static void expect(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "hetsgd_gpu_grad: FAILED: %s\n", what);
        failures++;
    }
}

static void compare(hetsgd_mlp *m, hetsgd_gpu *g, const float *x, const uint8_t *y, long n)
{
    long np = hetsgd_mlp_nparams(m);
    float *cpu = malloc((size_t) np * sizeof *cpu);
    float *gpu = malloc((size_t) np * sizeof *gpu);
    char msg[256] = "";
    double lc, lg, worst = 0.0, largest = 0.0;

    if (NULL == cpu || NULL == gpu) {
        expect(0, "memory");
        free(cpu);
        free(gpu);
        return;
    }
    lc = hetsgd_mlp_loss_grad(m, x, y, n, cpu);
    lg = hetsgd_gpu_loss_grad(g, hetsgd_mlp_params(m), x, y, n, gpu, msg, sizeof msg);
    if (isnan(lg)) {
        fprintf(stderr, "hetsgd_gpu_grad: %s\n", msg);
    }
    for (long i = 0; i < np; i++) {
        double d = fabs((double) cpu[i] - (double) gpu[i]);

        worst = d > worst ? d : worst;
        largest = fabs((double) cpu[i]) > largest ? fabs((double) cpu[i]) : largest;
    }
    printf("hetsgd_gpu_grad: n=%ld loss cpu %.8f gpu %.8f, largest gradient %.3g, worst difference %.3g\n",
           n, lc, lg, largest, worst);
    expect(fabs(lc - lg) <= LOSS_TOLERANCE * fabs(lc), "the GPU loss is the CPU loss");
    expect(worst <= GRAD_TOLERANCE * largest, "the GPU gradient is the CPU gradient");
    free(cpu);
    free(gpu);
}

int main(void)
{
    const int dims[HETSGD_MLP_LAYERS + 1] = { 784, 256, 128, 10 };
    char msg[256] = "";
    hetsgd_mlp *m = NULL;
    hetsgd_gpu *g = NULL;
    float *x = malloc((size_t) SAMPLES * 784 * sizeof *x);
    uint8_t y[SAMPLES];
    float *grad;
    uint64_t s = 7;
    double loss;
    long nonzero = 0;

    if (hetsgd_gpu_count(msg, sizeof msg) < 1) {
        printf("hetsgd_gpu_grad: SKIP: %s\n", msg);
        return SKIPPED;
    }
    if (NULL == x || 0 != hetsgd_mlp_create(dims, MAX_BATCH, 3, &m)
        || 0 != hetsgd_gpu_create(dims, MAX_BATCH, 0, &g, msg, sizeof msg)) {
        fprintf(stderr, "hetsgd_gpu_grad: setup failed: %s\n", msg);
        return EXIT_FAILURE;
    }
    for (long i = 0; i < SAMPLES * 784; i++) {
        s = s * 6364136223846793005ULL + 1442695040888963407ULL;
        x[i] = (float) (s >> 40) / 16777216.0f;
    }
    for (long i = 0; i < SAMPLES; i++) {
        y[i] = (uint8_t) (i * 7 % 10);
    }
    compare(m, g, x, y, SAMPLES);
    compare(m, g, x, y, 1);
    grad = malloc((size_t) hetsgd_mlp_nparams(m) * sizeof *grad);
    expect(NULL != grad, "memory");
    if (NULL != grad) {
        memset(grad, 0xff, (size_t) hetsgd_mlp_nparams(m) * sizeof *grad);
        loss = hetsgd_gpu_loss_grad(g, hetsgd_mlp_params(m), x, y, 0, grad, msg, sizeof msg);
        for (long i = 0; i < hetsgd_mlp_nparams(m); i++) {
            nonzero += 0.0f != grad[i];
        }
        expect(0.0 == loss && 0 == nonzero, "an empty batch gives a zero loss and gradient");
        loss = hetsgd_gpu_loss_grad(g, hetsgd_mlp_params(m), x, y, MAX_BATCH + 1, grad, msg, sizeof msg);
        expect(isnan(loss) && NULL != strstr(msg, "expected at most max_batch=512"),
               "a batch over the memory bound is refused");
        free(grad);
    }
    hetsgd_gpu_destroy(g);
    hetsgd_mlp_destroy(m);
    free(x);
    if (0 == failures) {
        printf("hetsgd_gpu_grad: PASS\n");
    }
    return 0 == failures ? EXIT_SUCCESS : EXIT_FAILURE;
}
