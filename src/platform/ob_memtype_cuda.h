/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * The few pieces of the CUDA driver API that memtype.c calls, declared here
 * so that omnibatch builds without CUDA's headers.  The values are fixed by
 * the driver's ABI; tests/unit/platform/check_memtype_abi.c compares each with
 * cuda.h wherever the toolkit is installed.
 */
#ifndef OB_MEMTYPE_CUDA_H
#define OB_MEMTYPE_CUDA_H

#include <stddef.h>

/* The driver's soname: the one name under which every CUDA program loads it. */
#define OB_CUDA_DRIVER_SONAME "libcuda.so.1"

typedef int ob_cu_result;                 /* CUresult */
typedef unsigned long long ob_cu_deviceptr; /* CUdeviceptr (64-bit) */
typedef void *ob_cu_context;              /* CUcontext */
typedef void *ob_cu_module;               /* CUmodule */
typedef void *ob_cu_function;             /* CUfunction */
typedef void *ob_cu_stream;               /* CUstream */

#define OB_CUDA_SUCCESS 0                 /* CUDA_SUCCESS */
#define OB_CU_POINTER_ATTRIBUTE_CONTEXT 1 /* CU_POINTER_ATTRIBUTE_CONTEXT */
#define OB_CU_POINTER_ATTRIBUTE_MEMORY_TYPE 2 /* CU_POINTER_ATTRIBUTE_MEMORY_TYPE */
#define OB_CU_POINTER_ATTRIBUTE_IS_MANAGED 8  /* CU_POINTER_ATTRIBUTE_IS_MANAGED */
#define OB_CU_MEMORYTYPE_HOST 1           /* CU_MEMORYTYPE_HOST */
#define OB_CU_MEMORYTYPE_DEVICE 2         /* CU_MEMORYTYPE_DEVICE */

/* The entry points, by the names the driver exports (cuda.h maps the
 * unversioned names of the first three to these _v2 symbols). */
typedef ob_cu_result (*ob_cu_pointer_get_attribute_fn)(void *data, int attribute, ob_cu_deviceptr ptr);
typedef ob_cu_result (*ob_cu_ctx_push_current_fn)(ob_cu_context ctx);       /* cuCtxPushCurrent_v2 */
typedef ob_cu_result (*ob_cu_ctx_pop_current_fn)(ob_cu_context *ctx);       /* cuCtxPopCurrent_v2 */
typedef ob_cu_result (*ob_cu_memset_d8_fn)(ob_cu_deviceptr dst, unsigned char value, size_t n); /* cuMemsetD8_v2 */
typedef ob_cu_result (*ob_cu_module_load_data_fn)(ob_cu_module *module, const void *image);
typedef ob_cu_result (*ob_cu_module_get_function_fn)(ob_cu_function *fn, ob_cu_module module,
                                                     const char *name);
typedef ob_cu_result (*ob_cu_launch_kernel_fn)(ob_cu_function fn, unsigned gx, unsigned gy, unsigned gz,
                                               unsigned bx, unsigned by, unsigned bz, unsigned shared_bytes,
                                               ob_cu_stream stream, void **params, void **extra);
typedef ob_cu_result (*ob_cu_ctx_synchronize_fn)(void);

#endif /* OB_MEMTYPE_CUDA_H */
