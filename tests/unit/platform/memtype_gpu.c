/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * Memory types on a real GPU: device memory is device; pinned and managed
 * memory are host (the CPU may touch them); the device scaling gives the
 * bits of the host path (float: one double product rounded once), in place
 * and out of place, and zeroing zeroes.  The test loads the CUDA driver
 * itself (the library never does).  Exit 77 (skipped) without a driver or a
 * GPU, as on every CPU-only machine.
 */
#include "config.h"

#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ob_error.h"
#include "ob_memtype.h"
#include "ob_memtype_cuda.h"
#include "ob_cuda_test.h"

#define SKIPPED 77
/* Odd, and more than one launch's worth of blocks: the grid-stride loop runs. */
#define COUNT (4096L * 256L * 2L + 77L)

static int failures;

static void expect(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "memtype_gpu: FAILED: %s (last error: %s)\n", what, ob_last_error());
        failures++;
    }
}

/* Values that round differently in float and double arithmetic: subnormals,
 * large values, ties.  Deterministic. */
static void fill(float *f, double *g, long n)
{
    uint64_t s = 12345;

    for (long i = 0; i < n; i++) {
        s = s * 6364136223846793005ULL + 1442695040888963407ULL;
        f[i] = ldexpf((float) (int32_t) (s >> 32) / 2147483648.0f, (int) (s % 300) - 150);
        g[i] = ldexp((double) (int64_t) s / 9.2e18, (int) (s % 2000) - 1000);
    }
}

static void check_scaling(const ob_test_cuda *d, float *hf, double *hg, float *back_f, double *back_g)
{
    const double w = 0.3 * 4.0 / 3.0;   /* not a power of two: every product rounds */
    ob_cu_deviceptr df, dg, dout;
    size_t fbytes = (size_t) COUNT * sizeof(float);
    size_t gbytes = (size_t) COUNT * sizeof(double);
    long wrong = 0;

    expect(OB_CUDA_SUCCESS == d->mem_alloc(&df, fbytes) && OB_CUDA_SUCCESS == d->mem_alloc(&dg, gbytes)
           && OB_CUDA_SUCCESS == d->mem_alloc(&dout, fbytes), "cuMemAlloc");
    expect(OB_MEMTYPE_DEVICE == ob_memtype_of((void *) (uintptr_t) df), "cuMemAlloc'd memory is device");
    expect(OB_MEMTYPE_DEVICE == ob_memtype_of((void *) (uintptr_t) (dg + 8)), "an interior device pointer is device");
    d->htod(df, hf, fbytes);
    d->htod(dg, hg, gbytes);
    /* Out of place (float), then in place (double). */
    expect(OMNIBATCH_SUCCESS == ob_memtype_device_scale((void *) (uintptr_t) df, (void *) (uintptr_t) dout,
                                                        COUNT, 4, w), "float scaling out of place");
    expect(OMNIBATCH_SUCCESS == ob_memtype_device_scale((void *) (uintptr_t) dg, (void *) (uintptr_t) dg,
                                                        COUNT, 8, w), "double scaling in place");
    d->dtoh(back_f, dout, fbytes);
    d->dtoh(back_g, dg, gbytes);
    for (long i = 0; i < COUNT; i++) {
        float want_f = (float) ((double) hf[i] * w);
        double want_g = hg[i] * w;

        wrong += 0 != memcmp(&want_f, &back_f[i], sizeof want_f) || 0 != memcmp(&want_g, &back_g[i], sizeof want_g);
    }
    expect(0 == wrong, "device scaling gives the host path's bits");
    d->dtoh(back_f, df, fbytes);
    expect(0 == memcmp(back_f, hf, fbytes), "the out-of-place source is untouched");
    expect(OMNIBATCH_SUCCESS == ob_memtype_device_zero((void *) (uintptr_t) dout, fbytes), "zeroing");
    d->dtoh(back_f, dout, fbytes);
    wrong = 0;
    for (long i = 0; i < COUNT; i++) {
        wrong += 0.0f != back_f[i];
    }
    expect(0 == wrong, "zeroing zeroes every element");
    d->mem_free(df);
    d->mem_free(dg);
    d->mem_free(dout);
}

int main(void)
{
    ob_test_cuda d;
    const char *skip = ob_test_cuda_open(&d);
    float *hf, *back_f;
    double *hg, *back_g;
    void *pinned = NULL;
    ob_cu_deviceptr managed = 0;

    if (NULL != skip && d.gpus > 0) {
        /* A GPU is there and cannot be used: not a machine without one. */
        fprintf(stderr, "memtype_gpu: FAIL: the driver counts %d GPU(s), but %s\n", d.gpus, skip);
        return EXIT_FAILURE;
    }
    if (NULL != skip) {
        printf("memtype_gpu: SKIP: %s\n", skip);
        return SKIPPED;
    }
    expect(1 == ob_memtype_driver_present(), "the loaded driver is found");
    expect(OMNIBATCH_SUCCESS == d.mem_alloc_host(&pinned, 4096), "cuMemAllocHost");
    expect(OB_MEMTYPE_HOST == ob_memtype_of(pinned), "pinned host memory is host");
    expect(OMNIBATCH_SUCCESS == d.mem_alloc_managed(&managed, 4096, 1), "cuMemAllocManaged");
    expect(OB_MEMTYPE_HOST == ob_memtype_of((void *) (uintptr_t) managed), "managed memory is host");
    hf = malloc((size_t) COUNT * sizeof *hf);
    back_f = malloc((size_t) COUNT * sizeof *back_f);
    hg = malloc((size_t) COUNT * sizeof *hg);
    back_g = malloc((size_t) COUNT * sizeof *back_g);
    if (NULL == hf || NULL == back_f || NULL == hg || NULL == back_g) {
        fprintf(stderr, "memtype_gpu: no memory\n");
        return EXIT_FAILURE;
    }
    expect(OB_MEMTYPE_HOST == ob_memtype_of(hf), "malloc'd memory is host with a GPU present");
    fill(hf, hg, COUNT);
    check_scaling(&d, hf, hg, back_f, back_g);
    d.mem_free_host(pinned);
    d.mem_free(managed);
    free(hf);
    free(back_f);
    free(hg);
    free(back_g);
    if (0 == failures) {
        printf("memtype_gpu: PASS: device/pinned/managed classified, scaling bit-exact on %ld elements\n", COUNT);
    }
    return 0 == failures ? EXIT_SUCCESS : EXIT_FAILURE;
}
