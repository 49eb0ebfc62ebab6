/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * For the tests that need a GPU: the CUDA driver loaded by the test itself
 * (the library never loads it), its few entry points, and GPU 0's primary
 * context made current.  Types from src/platform/ob_memtype_cuda.h.
 */
#ifndef OB_TEST_CUDA_H
#define OB_TEST_CUDA_H

#include <dlfcn.h>
#include <stddef.h>
#include <string.h>

#include "ob_memtype_cuda.h"

typedef struct ob_test_cuda {
    ob_cu_result (*init)(unsigned flags);
    ob_cu_result (*device_get_count)(int *n);
    ob_cu_result (*device_get)(int *dev, int ordinal);
    ob_cu_result (*primary_ctx_retain)(ob_cu_context *ctx, int dev);
    ob_cu_result (*ctx_set_current)(ob_cu_context ctx);
    ob_cu_result (*mem_alloc)(ob_cu_deviceptr *p, size_t bytes);
    ob_cu_result (*mem_free)(ob_cu_deviceptr p);
    ob_cu_result (*mem_alloc_host)(void **p, size_t bytes);
    ob_cu_result (*mem_free_host)(void *p);
    ob_cu_result (*mem_alloc_managed)(ob_cu_deviceptr *p, size_t bytes, unsigned flags);
    ob_cu_result (*htod)(ob_cu_deviceptr dst, const void *src, size_t bytes);
    ob_cu_result (*dtoh)(void *dst, ob_cu_deviceptr src, size_t bytes);
    int gpus; /* the devices the driver counted (0 without a driver) */
} ob_test_cuda;

static inline int ob_test_cuda_resolve(void *lib, ob_test_cuda *d)
{
    *(void **) &d->init = dlsym(lib, "cuInit");
    *(void **) &d->device_get_count = dlsym(lib, "cuDeviceGetCount");
    *(void **) &d->device_get = dlsym(lib, "cuDeviceGet");
    *(void **) &d->primary_ctx_retain = dlsym(lib, "cuDevicePrimaryCtxRetain");
    *(void **) &d->ctx_set_current = dlsym(lib, "cuCtxSetCurrent");
    *(void **) &d->mem_alloc = dlsym(lib, "cuMemAlloc_v2");
    *(void **) &d->mem_free = dlsym(lib, "cuMemFree_v2");
    *(void **) &d->mem_alloc_host = dlsym(lib, "cuMemAllocHost_v2");
    *(void **) &d->mem_free_host = dlsym(lib, "cuMemFreeHost");
    *(void **) &d->mem_alloc_managed = dlsym(lib, "cuMemAllocManaged");
    *(void **) &d->htod = dlsym(lib, "cuMemcpyHtoD_v2");
    *(void **) &d->dtoh = dlsym(lib, "cuMemcpyDtoH_v2");
    return NULL != d->init && NULL != d->device_get_count && NULL != d->device_get
           && NULL != d->primary_ctx_retain && NULL != d->ctx_set_current && NULL != d->mem_alloc
           && NULL != d->mem_free && NULL != d->mem_alloc_host && NULL != d->mem_free_host
           && NULL != d->mem_alloc_managed && NULL != d->htod && NULL != d->dtoh;
}

/* GPU 0 made current (NULL), or why not: a reason to skip while d->gpus is
 * 0; with a GPU counted, a reason to fail. */
static inline const char *ob_test_cuda_open(ob_test_cuda *d)
{
    void *lib = dlopen(OB_CUDA_DRIVER_SONAME, RTLD_NOW | RTLD_LOCAL);
    ob_cu_context ctx;
    int n = 0;
    int dev;

    memset(d, 0, sizeof *d);
    if (NULL == lib) {
        return "no CUDA driver (" OB_CUDA_DRIVER_SONAME ")";
    }
    if (!ob_test_cuda_resolve(lib, d)) {
        return "the CUDA driver lacks a function this test uses";
    }
    if (OB_CUDA_SUCCESS != d->init(0) || OB_CUDA_SUCCESS != d->device_get_count(&n) || n < 1) {
        return "no GPU (cuInit or cuDeviceGetCount failed, or 0 devices)";
    }
    d->gpus = n;
    if (OB_CUDA_SUCCESS != d->device_get(&dev, 0) || OB_CUDA_SUCCESS != d->primary_ctx_retain(&ctx, dev)
        || OB_CUDA_SUCCESS != d->ctx_set_current(ctx)) {
        return "cannot make GPU 0's primary context current";
    }
    return NULL;
}

#endif /* OB_TEST_CUDA_H */
