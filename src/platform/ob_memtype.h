/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * Where a buffer lives: host memory, or device memory of a GPU that the CPU
 * must not touch.  Scaling a gradient with the CPU is only safe on host
 * memory; a CUDA-aware code hands its reductions device pointers.
 *
 * No CUDA dependency at build or link time, and nothing loaded at run time:
 * a device pointer can only exist in a process that has the CUDA driver
 * (libcuda.so.1) loaded already (the CUDA runtime, PyTorch, CuPy all load
 * it), so the driver is looked up with dlopen(RTLD_NOLOAD), never loaded by
 * us.  A process without it classifies every pointer as host memory at the
 * cost of one check of the dynamic loader's load counter (the negative
 * answer is cached until another library is loaded); once found, the
 * driver's functions are kept for the life of the process.
 */
#ifndef OB_MEMTYPE_H
#define OB_MEMTYPE_H

#include <stddef.h>

typedef enum ob_memtype {
    OB_MEMTYPE_HOST = 0,         /* the CPU may read and write it (also pinned and managed memory) */
    OB_MEMTYPE_DEVICE = 1        /* GPU memory: only the device (or a CUDA-aware MPI) may touch it */
} ob_memtype;

/**
 * \brief Where \p ptr lives.  Host unless the CUDA driver is loaded in this process and reports
 *        device memory for it; managed (unified) memory counts as host, since the CPU may touch it.
 *        Thread-safe; NULL is host.
 */
ob_memtype ob_memtype_of(const void *ptr);

/**
 * \brief Is the CUDA driver loaded in this process with the functions omnibatch uses?
 *        Looks (cached), never loads.
 */
int ob_memtype_driver_present(void);

/**
 * \brief out[i] = in[i] * w on the device that holds \p in and \p out, for \p count elements of
 *        \p elem bytes (4: float, rounded once from the double product exactly as the host path
 *        does; 8: double); in == out scales in place.  Returns when the result is in memory.
 * \return OMNIBATCH_SUCCESS; OMNIBATCH_ERR_DEVICE with one line when there is no driver or the
 *         driver refuses (the line names the driver call and its code); OMNIBATCH_ERR_ARG for an
 *         elem other than 4 or 8 or a negative count.
 */
int ob_memtype_device_scale(const void *in, void *out, long count, int elem, double w);

/** \brief Fill \p bytes of device memory at \p out with zeros; returns as ob_memtype_device_scale(). */
int ob_memtype_device_zero(void *out, size_t bytes);

/** \brief The PTX of the scaling kernels (loaded by the driver's JIT; tests assemble it with ptxas). */
const char *ob_memtype_ptx(void);

#endif /* OB_MEMTYPE_H */
