/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * Compile-only, where the CUDA toolkit is installed: the driver API's
 * pieces that src/platform/ob_memtype_cuda.h declares by hand (so the library
 * builds without CUDA's headers) match cuda.h.  A mismatch fails the build
 * of this test.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include <cuda.h>

#include "ob_memtype_cuda.h"

_Static_assert(OB_CUDA_SUCCESS == CUDA_SUCCESS, "CUDA_SUCCESS");
_Static_assert(OB_CU_POINTER_ATTRIBUTE_CONTEXT == CU_POINTER_ATTRIBUTE_CONTEXT, "CONTEXT");
_Static_assert(OB_CU_POINTER_ATTRIBUTE_MEMORY_TYPE == CU_POINTER_ATTRIBUTE_MEMORY_TYPE, "MEMORY_TYPE");
_Static_assert(OB_CU_POINTER_ATTRIBUTE_IS_MANAGED == CU_POINTER_ATTRIBUTE_IS_MANAGED, "IS_MANAGED");
_Static_assert(OB_CU_MEMORYTYPE_HOST == CU_MEMORYTYPE_HOST, "CU_MEMORYTYPE_HOST");
_Static_assert(OB_CU_MEMORYTYPE_DEVICE == CU_MEMORYTYPE_DEVICE, "CU_MEMORYTYPE_DEVICE");
_Static_assert(sizeof(ob_cu_deviceptr) == sizeof(CUdeviceptr), "CUdeviceptr");
_Static_assert(sizeof(ob_cu_result) == sizeof(CUresult), "CUresult");
_Static_assert(sizeof(ob_cu_context) == sizeof(CUcontext), "CUcontext");
_Static_assert(sizeof(ob_cu_function) == sizeof(CUfunction), "CUfunction");
_Static_assert(sizeof(ob_cu_stream) == sizeof(CUstream), "CUstream");
/* The memory type is written as an unsigned int. */
_Static_assert(sizeof(unsigned int) == sizeof(CUmemorytype), "CUmemorytype");

/* The symbol a call of cuda.h resolves to: its macro, expanded, as text. */
#define OB_SYMBOL_TEXT(x) #x
#define OB_SYMBOL(x) OB_SYMBOL_TEXT(x)

int main(void)
{
    /* The versioned names memtype.c looks up are those cuda.h maps its calls to. */
    static const char *const pairs[][2] = {
        { OB_SYMBOL(cuCtxPushCurrent), "cuCtxPushCurrent_v2" },
        { OB_SYMBOL(cuCtxPopCurrent), "cuCtxPopCurrent_v2" },
        { OB_SYMBOL(cuMemsetD8), "cuMemsetD8_v2" },
        { OB_SYMBOL(cuPointerGetAttribute), "cuPointerGetAttribute" },
        { OB_SYMBOL(cuModuleLoadData), "cuModuleLoadData" },
        { OB_SYMBOL(cuModuleGetFunction), "cuModuleGetFunction" },
        { OB_SYMBOL(cuLaunchKernel), "cuLaunchKernel" },
        { OB_SYMBOL(cuCtxSynchronize), "cuCtxSynchronize" },
    };
    int wrong = 0;

    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
        if (0 != strcmp(pairs[i][0], pairs[i][1])) {
            fprintf(stderr, "check_memtype_abi: cuda.h calls %s, memtype.c looks up %s\n", pairs[i][0],
                    pairs[i][1]);
            wrong++;
        }
    }
    if (0 == wrong) {
        printf("check_memtype_abi: the driver ABI in ob_memtype_cuda.h matches %s\n", "cuda.h");
    }
    return 0 == wrong ? 0 : 1;
}
