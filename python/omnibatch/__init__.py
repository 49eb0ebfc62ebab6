# Copyright (c) 2026 The omnibatch authors.
"""omnibatch: per-rank mini-batches for synchronous data-parallel training.

Pure Python over the C library (ctypes), with mpi4py::

    from mpi4py import MPI
    import omnibatch

    with omnibatch.Context(MPI.COMM_WORLD, global_batch=256, dataset_size=N) as ob:
        for step in ob.steps(epochs=3):
            idx = ob.indices(step)             # this rank's samples of the step
            with ob.compute():
                grad = mean_gradient(idx)      # numpy, float32 or float64
            ob.allreduce_gradient(grad)        # now the global batch's gradient
            weights -= lr * grad

With ``chunks=True`` a step is worked in chunks that move to a rank that
is free (a rank that slows down inside the step gives the tail of its
range away); the gradient weight follows the samples each rank did::

        for step in ob.steps(epochs=3):
            total = np.zeros(dim)
            for chunk in ob.chunks():          # until next_chunk() answers count 0
                total += sum_of_gradients(ob.indices(chunk))
            grad = total / max(ob.chunk.done, 1)    # the mean over the samples done
            ob.allreduce_gradient(grad)        # weighted by done/total: the global batch's

Without the library (:func:`available` is False) the same script runs on
an equal split (with chunks, one chunk per step: the rank's slice).
PyTorch: :mod:`omnibatch.torch`.

Asynchronous training, where no rank waits for another (the library
required): :class:`ParameterServer` over a flat numpy array of parameters,
and :class:`omnibatch.torch.AsyncSGD` for a PyTorch model.
"""
from . import _library
from ._context import CONVENTIONS, DEFAULT_SEED, PRIORS, Chunk, Context, Error, Stats, Step
from ._ps import STALENESS, ParameterServer, PSStats, Task, WorkerStats

__all__ = ["Chunk", "Context", "Error", "Stats", "Step", "available", "library_version",
           "library_path", "CONVENTIONS", "PRIORS", "DEFAULT_SEED", "__version__",
           "ParameterServer", "Task", "PSStats", "WorkerStats", "STALENESS"]


def available():
    """True when the C library was found (the plan adapts), False for the equal split."""
    return _library.LIB is not None


def library_version():
    """The version of the library found ("major.minor.patch"), or None."""
    if _library.LIB is None:
        return None
    return _library.version_string(_library.LIB.omnibatch_get_version())


def library_path():
    """Where the library was found: "the process", a path, or None."""
    return _library.WHERE


__version__ = _library.BUILD_VERSION or library_version() or "unknown"
