/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * Memory types with a CUDA driver loaded but no GPU: the CUDA toolkit's
 * stub libcuda.so (soname libcuda.so.1, every call fails).  The lookup must
 * find a driver loaded after its first negative answer (that answer is
 * cached only until the next library load), classify host memory as host,
 * and make the device calls fail with a line naming the driver call, the
 * buffer untouched.  Exit 77 (skipped) where the toolkit is not installed.
 */
#include "config.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ob_error.h"
#include "ob_maps.h"
#include "ob_memtype.h"

#define SKIPPED 77

static int failures;

static void expect(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "memtype_stub: FAILED: %s (last error: %s)\n", what, ob_last_error());
        failures++;
    }
}

int main(void)
{
    const char *stub = OB_TEST_CUDA_STUB;
    float x[4] = { 1.0f, 2.0f, 3.0f, 4.0f };
    void *lib;

    if ('\0' == stub[0]) {
        printf("memtype_stub: SKIP: configure found no CUDA toolkit with a stub libcuda.so\n");
        return SKIPPED;
    }
    expect(0 == ob_test_mapped("libcuda"), "no libcuda mapped at the start");
    expect(0 == ob_memtype_driver_present(), "no driver before the stub is loaded");
    expect(OB_MEMTYPE_HOST == ob_memtype_of(x), "host memory is host before the load");

    lib = dlopen(stub, RTLD_NOW | RTLD_LOCAL);
    if (NULL == lib) {
        /* configure found this file: one that does not load is broken, not missing. */
        fprintf(stderr, "memtype_stub: FAIL: cannot load %s (found by configure): %s\n", stub, dlerror());
        return EXIT_FAILURE;
    }
    expect(1 == ob_memtype_driver_present(), "the driver loaded after a negative answer is found");
    expect(OB_MEMTYPE_HOST == ob_memtype_of(x), "host memory is host with the driver loaded");
    expect(OB_MEMTYPE_HOST == ob_memtype_of(x + 2), "an interior host pointer is host");

    expect(OMNIBATCH_ERR_DEVICE == ob_memtype_device_scale(x, x, 4, 4, 0.5), "scaling fails with ERR_DEVICE");
    expect(NULL != strstr(ob_last_error(), "CUDA driver: cuPointerGetAttribute(CONTEXT) returned"),
           "the line names the driver call that failed");
    expect(OMNIBATCH_ERR_DEVICE == ob_memtype_device_zero(x, sizeof x), "zeroing fails with ERR_DEVICE");
    expect(1.0f == x[0] && 2.0f == x[1] && 3.0f == x[2] && 4.0f == x[3], "the buffer is untouched");
    if (0 == failures) {
        printf("memtype_stub: PASS: %s found after loading, host memory host, device calls refused\n", stub);
    }
    return 0 == failures ? EXIT_SUCCESS : EXIT_FAILURE;
}
