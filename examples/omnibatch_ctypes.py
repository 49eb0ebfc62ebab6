#!/usr/bin/env python3
# Copyright (c) 2026 The omnibatch authors.
"""The training loop of lsq_train.c in Python, reaching omnibatch through
ctypes: no binding to build.  With the library preloaded it takes
omnibatch's plan; without, it splits equally.  Either way it reduces its
gradient itself, with mpi4py: the mean gradient times the step's scale, one
SUM allreduce (no OMNIBATCH_WEIGHT needed):

    mpirun -np 4 python3 omnibatch_ctypes.py
    mpirun -np 4 -x LD_PRELOAD=/usr/local/lib/libomnibatch.so python3 omnibatch_ctypes.py

Needs mpi4py and numpy.
"""
import ctypes

import numpy as np
from mpi4py import MPI

N, B, D, EPOCHS, LR = 4096, 128, 8, 3, 0.2

# The interface these structures describe (omnibatch.h's OMNIBATCH_VERSION
# major and minor): the library writes whole structures, so one of another
# layout must not be used.
OMNIBATCH_INTERFACE = (0, 4)


class Step(ctypes.Structure):
    """omnibatch_step: every field, in order (the library writes it whole)"""
    _fields_ = [(name, ctypes.c_long) for name in
                ("epoch", "step", "global_step", "start", "count", "total")] \
        + [("scale", ctypes.c_double)]


def handle(obj):
    """The C handle of an mpi4py object (a pointer with Open MPI)."""
    return obj.handle if hasattr(obj, "handle") else MPI._handleof(obj)


# MPI_Comm and MPI_Datatype: pointers with Open MPI, ints with MPICH.
MPI_HANDLE = ctypes.c_void_p if MPI._sizeof(MPI.Comm) == ctypes.sizeof(ctypes.c_void_p) \
    else ctypes.c_int


def load_omnibatch():
    """The API from the process itself (LD_PRELOAD or linked), or None."""
    lib = ctypes.CDLL(None)
    try:
        lib.omnibatch_create
    except AttributeError:
        return None
    lib.omnibatch_get_version.restype = ctypes.c_uint
    version = lib.omnibatch_get_version()
    major, minor = version >> 16, (version >> 8) & 0xff
    # As omnibatch_dl_load(): the same major, and the same minor while it is 0.
    if major != OMNIBATCH_INTERFACE[0] or (major == 0 and minor != OMNIBATCH_INTERFACE[1]):
        return None
    ctx_p = ctypes.POINTER(ctypes.c_void_p)
    long_p = ctypes.POINTER(ctypes.c_long)
    lib.omnibatch_create.argtypes = [MPI_HANDLE, ctypes.c_long, ctypes.c_long,
                                     ctypes.c_void_p, ctx_p]
    lib.omnibatch_next_step.argtypes = [ctypes.c_void_p, ctypes.POINTER(Step)]
    lib.omnibatch_permutation.argtypes = [ctypes.c_void_p, ctypes.c_long, long_p]
    lib.omnibatch_compute_begin.argtypes = [ctypes.c_void_p]
    lib.omnibatch_compute_end.argtypes = [ctypes.c_void_p]
    lib.omnibatch_get_plan.argtypes = [ctypes.c_void_p, long_p, ctypes.c_int]
    lib.omnibatch_destroy.argtypes = [ctx_p]
    lib.omnibatch_last_error.restype = ctypes.c_char_p
    return lib


def main():
    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    rng = np.random.RandomState(42)            # the same data on every rank
    w_true = rng.uniform(-2, 2, D)
    x = rng.uniform(-1, 1, (N, D))
    y = x @ w_true + 0.01 * rng.uniform(-1, 1, N)
    w = np.zeros(D)

    def loss():
        return 0.5 * np.mean((x @ w - y) ** 2)

    def check(rc):
        if rc != 0:
            raise RuntimeError(ob.omnibatch_last_error().decode())

    ob = load_omnibatch()
    ctx = ctypes.c_void_p()
    if ob:
        # NULL options: the defaults and OMNIBATCH_* settings.
        check(ob.omnibatch_create(handle(comm), B, N, None, ctypes.byref(ctx)))
    perm = np.arange(N, dtype=np.int64)        # C long on LP64
    step, g, total = Step(), np.empty(D), np.empty(D)
    loss0 = loss()
    steps_per_epoch = (N + B - 1) // B
    for t in range(EPOCHS * steps_per_epoch):
        if ob:
            check(ob.omnibatch_next_step(ctx, ctypes.byref(step)))
            if step.step == 0:
                check(ob.omnibatch_permutation(
                    ctx, step.epoch, perm.ctypes.data_as(ctypes.POINTER(ctypes.c_long))))
        else:                                  # equal shares, identity order
            k = t % steps_per_epoch
            step.total = min(B, N - k * B)
            share, rest = divmod(step.total, size)
            step.count = share + (rank < rest)
            step.start = k * B + rank * share + min(rank, rest)
            step.scale = step.count / step.total
        idx = perm[step.start:step.start + step.count]
        if ob:                                 # this rank's compute time, for the plan
            check(ob.omnibatch_compute_begin(ctx))
        g[:] = x[idx].T @ (x[idx] @ w - y[idx]) / max(step.count, 1)
        if ob:
            check(ob.omnibatch_compute_end(ctx))
        # The default convention (mean): the sum of the scaled means is the
        # global batch's mean gradient; a rank without samples has scale 0.
        comm.Allreduce(g * step.scale, total, op=MPI.SUM)
        w -= LR * total
    plan = (ctypes.c_long * size)()
    if ob:
        check(ob.omnibatch_get_plan(ctx, plan, size))
        check(ob.omnibatch_destroy(ctypes.byref(ctx)))
    else:
        plan[:] = [B // size + (i < B % size) for i in range(size)]
    if rank == 0:
        found = "omnibatch found" if ob else "omnibatch absent, equal batches"
        print("omnibatch_ctypes: %s: loss %.6g -> %.6g, plan %s"
              % (found, loss0, loss(), " ".join(str(b) for b in plan)), flush=True)


if __name__ == "__main__":
    main()
