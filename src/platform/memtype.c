/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * Where a buffer lives, and scaling it where it lives (ob_memtype.h).
 *
 * Device buffers are scaled by a kernel of our own, written in PTX and
 * handed to the driver's JIT, rather than by cuBLAS's scal: the driver is
 * already loaded wherever device memory exists, while cuBLAS would add a
 * library of hundreds of MiB to the process; and the kernel rounds as the
 * host path does (float -> double, one double product, rounded once back
 * to float), so a gradient is weighted to the same bits on either side,
 * where cuBLAS's Sscal multiplies in float by a factor already rounded.
 */
/* RTLD_NOLOAD and dl_iterate_phdr are GNU extensions: asked for before any
 * header (config.h included) can pull in <features.h>. */
#define _GNU_SOURCE 1

#include "config.h"

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "ob_error.h"
#include "ob_memtype.h"
#include "ob_memtype_cuda.h"

/* Threads per block of the scaling kernels, and most blocks: the kernels
 * stride over the rest, so any count fits one launch. */
#define OB_SCALE_THREADS 256U
#define OB_SCALE_MAX_BLOCKS 4096UL
/* Contexts whose loaded module is kept (one per device in practice). */
#define OB_MODULE_CACHE 8

/* Both kernels: out[i] = in[i] * w, i < n, over a grid-stride loop.  PTX
 * 6.0 for sm_50 and later: every driver of the last years JIT-compiles it
 * for the GPU it runs on. */
static const char ob_scale_ptx[] =
    ".version 6.0\n"
    ".target sm_50\n"
    ".address_size 64\n"
    "\n"
    ".visible .entry ob_scale_f32(.param .u64 in_p, .param .u64 out_p, .param .u64 n_p, .param .f64 w_p)\n"
    "{\n"
    "    .reg .pred %p;\n"
    "    .reg .b32 %r<4>;\n"
    "    .reg .b64 %rd<10>;\n"
    "    .reg .f32 %f;\n"
    "    .reg .f64 %d<3>;\n"
    "\n"
    "    ld.param.u64 %rd1, [in_p];\n"
    "    ld.param.u64 %rd2, [out_p];\n"
    "    ld.param.u64 %rd3, [n_p];\n"
    "    ld.param.f64 %d1, [w_p];\n"
    "    cvta.to.global.u64 %rd1, %rd1;\n"
    "    cvta.to.global.u64 %rd2, %rd2;\n"
    "    mov.u32 %r1, %ctaid.x;\n"
    "    mov.u32 %r2, %ntid.x;\n"
    "    mov.u32 %r3, %tid.x;\n"
    "    mul.wide.u32 %rd4, %r1, %r2;\n"
    "    cvt.u64.u32 %rd5, %r3;\n"
    "    add.u64 %rd4, %rd4, %rd5;\n"
    "    mov.u32 %r1, %nctaid.x;\n"
    "    mul.wide.u32 %rd6, %r1, %r2;\n"
    "LOOP:\n"
    "    setp.ge.u64 %p, %rd4, %rd3;\n"
    "    @%p bra DONE;\n"
    "    shl.b64 %rd7, %rd4, 2;\n"
    "    add.u64 %rd8, %rd1, %rd7;\n"
    "    ld.global.f32 %f, [%rd8];\n"
    "    cvt.f64.f32 %d2, %f;\n"
    "    mul.rn.f64 %d2, %d2, %d1;\n"
    "    cvt.rn.f32.f64 %f, %d2;\n"
    "    add.u64 %rd9, %rd2, %rd7;\n"
    "    st.global.f32 [%rd9], %f;\n"
    "    add.u64 %rd4, %rd4, %rd6;\n"
    "    bra LOOP;\n"
    "DONE:\n"
    "    ret;\n"
    "}\n"
    "\n"
    ".visible .entry ob_scale_f64(.param .u64 in_p, .param .u64 out_p, .param .u64 n_p, .param .f64 w_p)\n"
    "{\n"
    "    .reg .pred %p;\n"
    "    .reg .b32 %r<4>;\n"
    "    .reg .b64 %rd<10>;\n"
    "    .reg .f64 %d<3>;\n"
    "\n"
    "    ld.param.u64 %rd1, [in_p];\n"
    "    ld.param.u64 %rd2, [out_p];\n"
    "    ld.param.u64 %rd3, [n_p];\n"
    "    ld.param.f64 %d1, [w_p];\n"
    "    cvta.to.global.u64 %rd1, %rd1;\n"
    "    cvta.to.global.u64 %rd2, %rd2;\n"
    "    mov.u32 %r1, %ctaid.x;\n"
    "    mov.u32 %r2, %ntid.x;\n"
    "    mov.u32 %r3, %tid.x;\n"
    "    mul.wide.u32 %rd4, %r1, %r2;\n"
    "    cvt.u64.u32 %rd5, %r3;\n"
    "    add.u64 %rd4, %rd4, %rd5;\n"
    "    mov.u32 %r1, %nctaid.x;\n"
    "    mul.wide.u32 %rd6, %r1, %r2;\n"
    "LOOP:\n"
    "    setp.ge.u64 %p, %rd4, %rd3;\n"
    "    @%p bra DONE;\n"
    "    shl.b64 %rd7, %rd4, 3;\n"
    "    add.u64 %rd8, %rd1, %rd7;\n"
    "    ld.global.f64 %d2, [%rd8];\n"
    "    mul.rn.f64 %d2, %d2, %d1;\n"
    "    add.u64 %rd9, %rd2, %rd7;\n"
    "    st.global.f64 [%rd9], %d2;\n"
    "    add.u64 %rd4, %rd4, %rd6;\n"
    "    bra LOOP;\n"
    "DONE:\n"
    "    ret;\n"
    "}\n";

typedef struct ob_cuda_driver {
    ob_cu_pointer_get_attribute_fn pointer_get_attribute;
    ob_cu_ctx_push_current_fn ctx_push_current;
    ob_cu_ctx_pop_current_fn ctx_pop_current;
    ob_cu_memset_d8_fn memset_d8;
    ob_cu_module_load_data_fn module_load_data;
    ob_cu_module_get_function_fn module_get_function;
    ob_cu_launch_kernel_fn launch_kernel;
    ob_cu_ctx_synchronize_fn ctx_synchronize;
} ob_cuda_driver;

typedef struct ob_cuda_module {
    ob_cu_context ctx;
    ob_cu_function scale_f32;
    ob_cu_function scale_f64;
} ob_cuda_module;

static ob_cuda_driver ob_driver;
/* The driver once found (then never NULL again); before that, the loader's
 * load count at the last look that found none (0: never looked). */
static const ob_cuda_driver *ob_driver_found;
static unsigned long long ob_driver_absent_at;
static pthread_mutex_t ob_driver_lock = PTHREAD_MUTEX_INITIALIZER;
static ob_cuda_module ob_modules[OB_MODULE_CACHE];
static int ob_nmodules;

const char *ob_memtype_ptx(void)
{
    return ob_scale_ptx;
}

static int ob_first_object_adds(struct dl_phdr_info *info, size_t size, void *data)
{
    (void) size;
    *(unsigned long long *) data = info->dlpi_adds;
    return 1;
}

/* How many objects the dynamic loader has loaded so far: it only grows, so
 * an unchanged count means the driver is still absent. */
static unsigned long long ob_loader_adds(void)
{
    unsigned long long adds = 0;

    dl_iterate_phdr(ob_first_object_adds, &adds);
    return adds;
}

static int ob_driver_resolve(void *lib, ob_cuda_driver *d)
{
    /* dlsym returns void *; POSIX guarantees it converts to a function pointer. */
    *(void **) &d->pointer_get_attribute = dlsym(lib, "cuPointerGetAttribute");
    *(void **) &d->ctx_push_current = dlsym(lib, "cuCtxPushCurrent_v2");
    *(void **) &d->ctx_pop_current = dlsym(lib, "cuCtxPopCurrent_v2");
    *(void **) &d->memset_d8 = dlsym(lib, "cuMemsetD8_v2");
    *(void **) &d->module_load_data = dlsym(lib, "cuModuleLoadData");
    *(void **) &d->module_get_function = dlsym(lib, "cuModuleGetFunction");
    *(void **) &d->launch_kernel = dlsym(lib, "cuLaunchKernel");
    *(void **) &d->ctx_synchronize = dlsym(lib, "cuCtxSynchronize");
    return NULL != d->pointer_get_attribute && NULL != d->ctx_push_current && NULL != d->ctx_pop_current
           && NULL != d->memset_d8 && NULL != d->module_load_data && NULL != d->module_get_function
           && NULL != d->launch_kernel && NULL != d->ctx_synchronize;
}

/* Look for an already loaded driver (RTLD_NOLOAD: never load one). */
static const ob_cuda_driver *ob_driver_lookup(void)
{
    const ob_cuda_driver *d = __atomic_load_n(&ob_driver_found, __ATOMIC_ACQUIRE);
    unsigned long long adds;
    void *lib;

    if (NULL != d) {
        return d;
    }
    adds = ob_loader_adds();
    if (__atomic_load_n(&ob_driver_absent_at, __ATOMIC_RELAXED) == adds) {
        return NULL;
    }
    pthread_mutex_lock(&ob_driver_lock);
    d = ob_driver_found;
    if (NULL == d) {
        lib = dlopen(OB_CUDA_DRIVER_SONAME, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
        /* The handle is kept: the driver stays loaded as long as we use it. */
        if (NULL != lib && ob_driver_resolve(lib, &ob_driver)) {
            d = &ob_driver;
            __atomic_store_n(&ob_driver_found, d, __ATOMIC_RELEASE);
        } else {
            if (NULL != lib) {
                dlclose(lib);
            }
            __atomic_store_n(&ob_driver_absent_at, adds, __ATOMIC_RELAXED);
        }
    }
    pthread_mutex_unlock(&ob_driver_lock);
    return d;
}

int ob_memtype_driver_present(void)
{
    return NULL != ob_driver_lookup();
}

ob_memtype ob_memtype_of(const void *ptr)
{
    const ob_cuda_driver *d;
    ob_cu_deviceptr p = (ob_cu_deviceptr) (uintptr_t) ptr;
    unsigned int type = 0;
    unsigned int managed = 0;

    if (NULL == ptr) {
        return OB_MEMTYPE_HOST;
    }
    d = ob_driver_lookup();
    /* Any failure (not initialised, a pointer the driver does not know,
     * a stub library) means memory the driver did not hand out: host. */
    if (NULL == d || OB_CUDA_SUCCESS != d->pointer_get_attribute(&type, OB_CU_POINTER_ATTRIBUTE_MEMORY_TYPE, p)
        || OB_CU_MEMORYTYPE_DEVICE != type) {
        return OB_MEMTYPE_HOST;
    }
    if (OB_CUDA_SUCCESS == d->pointer_get_attribute(&managed, OB_CU_POINTER_ATTRIBUTE_IS_MANAGED, p)
        && 0 != managed) {
        return OB_MEMTYPE_HOST;
    }
    return OB_MEMTYPE_DEVICE;
}

static int ob_cuda_fail(const char *call, ob_cu_result rc)
{
    return ob_fail(OMNIBATCH_ERR_DEVICE, "CUDA driver: %s returned %d: the device buffer was not "
                   "scaled", call, rc);
}

/* The kernels in \p ctx (current): loaded once per context, under the lock. */
static int ob_module_load(const ob_cuda_driver *d, ob_cu_context ctx, const ob_cuda_module **out)
{
    ob_cuda_module m;
    ob_cu_module mod;
    ob_cu_result rc;

    for (int i = 0; i < ob_nmodules; i++) {
        if (ob_modules[i].ctx == ctx) {
            *out = &ob_modules[i];
            return OMNIBATCH_SUCCESS;
        }
    }
    if (OB_MODULE_CACHE == ob_nmodules) {
        return ob_fail(OMNIBATCH_ERR_DEVICE, "CUDA driver: buffers of more than %d contexts: "
                       "expected at most that many", OB_MODULE_CACHE);
    }
    rc = d->module_load_data(&mod, ob_scale_ptx);
    if (OB_CUDA_SUCCESS != rc) {
        return ob_cuda_fail("cuModuleLoadData", rc);
    }
    m.ctx = ctx;
    rc = d->module_get_function(&m.scale_f32, mod, "ob_scale_f32");
    if (OB_CUDA_SUCCESS == rc) {
        rc = d->module_get_function(&m.scale_f64, mod, "ob_scale_f64");
    }
    if (OB_CUDA_SUCCESS != rc) {
        return ob_cuda_fail("cuModuleGetFunction", rc);
    }
    ob_modules[ob_nmodules] = m;
    *out = &ob_modules[ob_nmodules++];
    return OMNIBATCH_SUCCESS;
}

/* Make the context that owns \p ptr current (pushed: the caller's stays as it was). */
static int ob_push_context_of(const ob_cuda_driver *d, const void *ptr, ob_cu_context *ctx)
{
    ob_cu_result rc = d->pointer_get_attribute(ctx, OB_CU_POINTER_ATTRIBUTE_CONTEXT,
                                               (ob_cu_deviceptr) (uintptr_t) ptr);

    if (OB_CUDA_SUCCESS != rc) {
        return ob_cuda_fail("cuPointerGetAttribute(CONTEXT)", rc);
    }
    rc = d->ctx_push_current(*ctx);
    return OB_CUDA_SUCCESS == rc ? OMNIBATCH_SUCCESS : ob_cuda_fail("cuCtxPushCurrent", rc);
}

static int ob_launch_scale(const ob_cuda_driver *d, const ob_cuda_module *m, const void *in, void *out,
                           long count, int elem, double w)
{
    ob_cu_deviceptr src = (ob_cu_deviceptr) (uintptr_t) in;
    ob_cu_deviceptr dst = (ob_cu_deviceptr) (uintptr_t) out;
    unsigned long long n = (unsigned long long) count;
    unsigned long blocks = ((unsigned long) count + OB_SCALE_THREADS - 1) / OB_SCALE_THREADS;
    void *params[] = { &src, &dst, &n, &w };
    ob_cu_result rc;

    blocks = blocks < OB_SCALE_MAX_BLOCKS ? blocks : OB_SCALE_MAX_BLOCKS;
    /* The legacy default stream: it waits for the work of the code's
     * blocking streams, which produced the gradient. */
    rc = d->launch_kernel(4 == elem ? m->scale_f32 : m->scale_f64, (unsigned) blocks, 1, 1,
                          OB_SCALE_THREADS, 1, 1, 0, NULL, params, NULL);
    if (OB_CUDA_SUCCESS != rc) {
        return ob_cuda_fail("cuLaunchKernel", rc);
    }
    rc = d->ctx_synchronize();
    return OB_CUDA_SUCCESS == rc ? OMNIBATCH_SUCCESS : ob_cuda_fail("cuCtxSynchronize", rc);
}

static const ob_cuda_driver *ob_driver_or_fail(int *rc)
{
    const ob_cuda_driver *d = ob_driver_lookup();

    *rc = NULL != d ? OMNIBATCH_SUCCESS
                    : ob_fail(OMNIBATCH_ERR_DEVICE, "a device buffer but no CUDA driver (%s) in this "
                              "process: expected host memory", OB_CUDA_DRIVER_SONAME);
    return d;
}

int ob_memtype_device_scale(const void *in, void *out, long count, int elem, double w)
{
    const ob_cuda_module *m = NULL;
    const ob_cuda_driver *d;
    ob_cu_context ctx = NULL;
    ob_cu_context popped;
    int rc;

    if (4 != elem && 8 != elem) {
        return ob_fail(OMNIBATCH_ERR_ARG, "elem=%d: expected 4 (float) or 8 (double)", elem);
    }
    if (count < 0) {
        return ob_fail(OMNIBATCH_ERR_ARG, "count=%ld: expected >= 0", count);
    }
    d = ob_driver_or_fail(&rc);
    if (NULL == d || 0 == count) {
        return rc;
    }
    rc = ob_push_context_of(d, out, &ctx);
    if (OMNIBATCH_SUCCESS != rc) {
        return rc;
    }
    pthread_mutex_lock(&ob_driver_lock);
    rc = ob_module_load(d, ctx, &m);
    pthread_mutex_unlock(&ob_driver_lock);
    if (OMNIBATCH_SUCCESS == rc && NULL != m) {
        rc = ob_launch_scale(d, m, in, out, count, elem, w);
    }
    d->ctx_pop_current(&popped);
    return rc;
}

int ob_memtype_device_zero(void *out, size_t bytes)
{
    const ob_cuda_driver *d;
    ob_cu_context ctx = NULL;
    ob_cu_context popped;
    ob_cu_result cu;
    int rc;

    d = ob_driver_or_fail(&rc);
    if (NULL == d || 0 == bytes) {
        return rc;
    }
    rc = ob_push_context_of(d, out, &ctx);
    if (OMNIBATCH_SUCCESS != rc) {
        return rc;
    }
    cu = d->memset_d8((ob_cu_deviceptr) (uintptr_t) out, 0, bytes);
    if (OB_CUDA_SUCCESS == cu) {
        /* cuMemsetD8 may return before the zeros are in memory. */
        cu = d->ctx_synchronize();
        rc = OB_CUDA_SUCCESS == cu ? OMNIBATCH_SUCCESS : ob_cuda_fail("cuCtxSynchronize", cu);
    } else {
        rc = ob_cuda_fail("cuMemsetD8", cu);
    }
    d->ctx_pop_current(&popped);
    return rc;
}
