#!/usr/bin/env python3
# Copyright (c) 2026 The omnibatch authors.
"""The training loop of lsq_train.c in Python, reaching omnibatch through
ctypes: no binding to build.  With the library preloaded it takes
omnibatch's plan and weighted allreduce; without, it splits equally:

    mpirun -np 4 python3 omnibatch_ctypes.py
    mpirun -np 4 -x LD_PRELOAD=/usr/local/lib/libomnibatch.so python3 omnibatch_ctypes.py

Needs mpi4py and numpy.
"""
import ctypes

import numpy as np
from mpi4py import MPI

N, B, D, EPOCHS, LR = 4096, 128, 8, 3, 0.2


class Step(ctypes.Structure):
    """omnibatch_step"""
    _fields_ = [(name, ctypes.c_long) for name in
                ("epoch", "step", "global_step", "start", "count", "total")]


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
    ctx_p = ctypes.POINTER(ctypes.c_void_p)
    long_p = ctypes.POINTER(ctypes.c_long)
    lib.omnibatch_create.argtypes = [MPI_HANDLE, ctypes.c_long, ctypes.c_long,
                                     ctypes.c_void_p, ctx_p]
    lib.omnibatch_next_step.argtypes = [ctypes.c_void_p, ctypes.POINTER(Step)]
    lib.omnibatch_permutation.argtypes = [ctypes.c_void_p, ctypes.c_long, long_p]
    lib.omnibatch_allreduce_gradient.argtypes = [ctypes.c_void_p, ctypes.c_void_p,
                                                 ctypes.c_void_p, ctypes.c_int, MPI_HANDLE]
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
        idx = perm[step.start:step.start + step.count]
        g[:] = x[idx].T @ (x[idx] @ w - y[idx]) / max(step.count, 1)
        if ob:
            check(ob.omnibatch_allreduce_gradient(ctx, g.ctypes.data, total.ctypes.data, D,
                                                  handle(MPI.DOUBLE)))
        else:
            comm.Allreduce(g * (step.count / step.total), total, op=MPI.SUM)
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
