# Copyright (c) 2026 The omnibatch authors.
"""Asynchronous training: omnibatch's parameter server (omnibatch_ps_* in
omnibatch.h) over an mpi4py communicator and a flat numpy array of
parameters.

Ranks 0 .. servers - 1 serve, the others work::

    ps = omnibatch.ParameterServer(comm, w, global_batch=256, dataset_size=N, lr=0.05)
    if ps.is_server:
        ps.serve()                          # until every worker is done
    else:
        task = ps.pull()                    # the model into w, and the first slice
        while not task.done:
            idx = ps.indices(task)
            task = ps.push(mean_gradient(w, idx))
    ps.close()

The library is required: there is no asynchronous mode without it.
"""
import ctypes
import dataclasses
import os

import numpy as np

from . import _library
from ._context import (ERR_ARG, ERR_STATE, Error, _as_int, _buffer, _check, _handle,
                       _option_value)

STALENESS = {"constant": 0, "inverse": 1, "adaptive": 2}
AUTO = -1

_REAL = ("lr", "momentum", "weight_decay", "gain", "deadband", "forget")
_INT = ("ref_batch", "min_batch", "max_batch", "granularity", "period", "warmup", "epochs",
        "max_pushes", "max_global_batch")


@dataclasses.dataclass(frozen=True)
class Task:
    """A worker's task: samples ``permutation(epoch)[start:start + count]``
    (``ParameterServer.indices``), on the model of ``version`` now in the
    parameters; ``done``: nothing more to do."""
    epoch: int
    start: int
    count: int
    version: int
    done: bool


@dataclasses.dataclass(frozen=True)
class PSStats:
    """omnibatch_ps_stats: this rank's view of the run."""
    role: str
    index: int
    version: int
    pushes: int
    dropped: int
    epoch: int
    slices: int
    decisions: int
    changes: int
    elapsed_s: float
    busy_s: float
    busy_fraction: float
    compute_s: float
    wait_s: float
    finished: bool


@dataclasses.dataclass(frozen=True)
class WorkerStats:
    """omnibatch_ps_worker_stats: server 0's count of one worker's pushes."""
    rank: int
    pushes: int
    applied: int
    dropped: int
    samples: int
    batch: int
    staleness_mean: float
    staleness_p99: int
    staleness_max: int
    pushes_per_s: float
    samples_per_s: float
    compute_s: float
    alpha: float
    beta: float


def _ps_option(name, value):
    """The C field's value of keyword option name, or Error naming it."""
    if name in _REAL:
        return _real(name, value)
    if name in _INT:
        return _as_int(name, value, 0)
    if name == "servers":
        return _as_int(name, value, 1)
    if name == "max_staleness":
        return AUTO if value is None else _as_int(name, value, 0)
    if name == "staleness":
        if value not in STALENESS:
            raise Error(ERR_ARG, "staleness=%r: expected one of %s" % (value, ", ".join(STALENESS)))
        return STALENESS[value]
    if name == "adaptive":
        return _option_value("adaptive", value)
    if name == "seed":
        return _option_value("seed", value)
    raise Error(ERR_ARG, "option %s=%r: unknown; expected one of %s" % (
        name, value, ", ".join(_REAL + _INT + ("servers", "max_staleness", "staleness",
                                               "adaptive", "seed"))))


def _real(name, value):
    if isinstance(value, bool) or not isinstance(value, (int, float, np.floating, np.integer)):
        raise Error(ERR_ARG, "%s=%r: expected a number" % (name, value))
    try:
        return float(value)
    except OverflowError:
        raise Error(ERR_ARG, "%s=%r: expected a number a C double holds" % (name, value)) from None


def join_failed(comm):
    """This rank rejected its arguments already: the others are in omnibatch_ps_create, which
    agrees on the outcome, so join it with a size it rejects and every rank fails, with a line
    naming this one."""
    lib = _library.LIB
    if lib is None:
        return
    from mpi4py import MPI
    _library.declare_handles(lib)
    ps = ctypes.c_void_p()
    if 0 == lib.omnibatch_ps_create(_handle(comm), None, 0, _handle(MPI.FLOAT), 0, 0, None,
                                    ctypes.byref(ps)):
        lib.omnibatch_ps_destroy(ctypes.byref(ps))


class ParameterServer:
    """omnibatch's parameter server over an mpi4py communicator.

    ``ParameterServer(comm, params, global_batch=B, dataset_size=N, **options)``:
    ``params`` is the model as one C-contiguous float32 or float64 numpy
    array, the same size on every rank: the servers' starting model (each
    updates its range of it), the workers' copy (``pull`` and ``push`` write
    the model they bring into it); it must stay alive while the server
    does.  The options are omnibatch_ps_options' fields: servers, lr,
    momentum, weight_decay, ref_batch, staleness ("constant", "inverse",
    "adaptive"), max_staleness (None: 4 x workers), adaptive, min_batch,
    max_batch, granularity, gain, deadband, forget, period, warmup, epochs,
    max_pushes, seed, max_global_batch.  Creation and close() are
    collective; a bad option or a size that differs between ranks fails
    every rank with one line.
    """

    def __init__(self, comm, params, global_batch, dataset_size, **options):
        if comm is None or not hasattr(comm, "Get_size"):
            raise Error(ERR_ARG, "comm=%r: expected an mpi4py communicator" % (comm,))
        lib = _library.LIB
        if lib is None:
            raise Error(ERR_STATE, "ParameterServer: the asynchronous mode needs libomnibatch, "
                        "which was not found (%s)" % (_library.PROBLEM or "omnibatch.available() "
                                                      "is False"))
        _library.declare_handles(lib)
        self._lib = lib
        self.ps = ctypes.c_void_p()
        try:
            params = _buffer("params", params)
            global_batch = _as_int("global_batch", global_batch, 1)
            dataset_size = _as_int("dataset_size", dataset_size, 1)
            opt = _library.PSOptions()
            _check(lib.omnibatch_ps_options_init(ctypes.byref(opt)))
            for name, value in options.items():
                setattr(opt, name, _ps_option(name, value))
        except Error:
            join_failed(comm)
            raise
        from mpi4py import MPI
        dtype = MPI.FLOAT if params.dtype == np.float32 else MPI.DOUBLE
        _check(lib.omnibatch_ps_create(_handle(comm), ctypes.c_void_p(params.ctypes.data),
                                       params.size, _handle(dtype), global_batch, dataset_size,
                                       ctypes.byref(opt), ctypes.byref(self.ps)))
        self.params = params
        self.dataset_size = dataset_size
        role, index = ctypes.c_int(), ctypes.c_int()
        _check(lib.omnibatch_ps_role_of(self.ps, ctypes.byref(role), ctypes.byref(index)))
        self.is_server = 0 == role.value
        self.index = index.value
        self.workers = comm.Get_size() - opt.servers
        self._task = _library.CPSTask()
        self._perm_epoch, self._perm = None, None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def _live(self):
        if not self.ps:
            raise Error(ERR_STATE, "ParameterServer: closed: create a new one")
        return self.ps

    @property
    def role(self):
        """"server" or "worker"."""
        return "server" if self.is_server else "worker"

    def serve(self, max_pushes=0):
        """Serve up to max_pushes pushes (0: to the end); True when every worker is done."""
        done = ctypes.c_int()
        _check(self._lib.omnibatch_ps_serve(self._live(), _as_int("max_pushes", max_pushes, 0),
                                            ctypes.byref(done)))
        return bool(done.value)

    def _task_of(self):
        t = self._task
        return Task(t.epoch, t.start, t.count, t.version, bool(t.done))

    def pull(self):
        """A worker's first task; the model is now in params."""
        _check(self._lib.omnibatch_ps_pull(self._live(), ctypes.byref(self._task)))
        return self._task_of()

    def push(self, gradient):
        """Push the mean gradient of the current task (an array of params' size and dtype);
        the next task, with the model in params."""
        gradient = np.ascontiguousarray(gradient)
        if gradient.dtype != self.params.dtype or gradient.size != self.params.size:
            raise Error(ERR_ARG, "push: gradient of %d %s elements: expected %d %s, as params"
                        % (gradient.size, gradient.dtype, self.params.size, self.params.dtype))
        _check(self._lib.omnibatch_ps_push(self._live(), ctypes.c_void_p(gradient.ctypes.data),
                                           ctypes.byref(self._task)))
        return self._task_of()

    def permutation(self, epoch):
        """The epoch's permutation of 0..N-1 (int64), the same on every rank."""
        epoch = _as_int("epoch", epoch, 0)
        if epoch != self._perm_epoch:
            perm = np.empty(self.dataset_size, dtype=np.dtype(ctypes.c_long))
            _check(self._lib.omnibatch_ps_permutation(self._live(), epoch,
                                                       perm.ctypes.data_as(_library.c_long_p)))
            self._perm_epoch, self._perm = epoch, perm
        return self._perm

    def indices(self, task):
        """The sample indices of a task."""
        if not isinstance(task, Task):
            raise Error(ERR_ARG, "indices: task=%r: expected a Task of pull() or push()" % (task,))
        return self.permutation(task.epoch)[task.start:task.start + task.count]

    @property
    def plan(self):
        """Server 0: the batch each worker is handed next."""
        plan = (ctypes.c_long * self.workers)()
        _check(self._lib.omnibatch_ps_get_plan(self._live(), plan, self.workers))
        return np.array(plan[:], dtype=np.int64)

    def set_plan(self, plan):
        """Server 0: set the workers' batches (summing to the global batch)."""
        plan = [_as_int("plan[%d]" % i, b, 0) for i, b in enumerate(plan)]
        cplan = (ctypes.c_long * len(plan))(*plan)
        _check(self._lib.omnibatch_ps_set_plan(self._live(), cplan, len(plan)))

    def stats(self):
        """This rank's PSStats."""
        s = _library.CPSStats()
        _check(self._lib.omnibatch_ps_get_stats(self._live(), ctypes.byref(s)))
        values = [getattr(s, f) for f, _ in _library.CPSStats._fields_]
        values[0] = "server" if 0 == values[0] else "worker"
        values[-1] = bool(values[-1])
        return PSStats(*values)

    def worker_stats(self, worker):
        """Server 0: WorkerStats of one worker (0-based)."""
        s = _library.CPSWorkerStats()
        _check(self._lib.omnibatch_ps_get_worker_stats(self._live(),
                                                        _as_int("worker", worker, 0),
                                                        ctypes.byref(s)))
        return WorkerStats(*(getattr(s, f) for f, _ in _library.CPSWorkerStats._fields_))

    def save(self, path):
        """Server 0, between serve() calls: save the servers' state (omnibatch_ps_save: this
        server's to path, the others' to path.s when they come to the order)."""
        _check(self._lib.omnibatch_ps_save(self._live(), self._path("save", path)))

    def restore(self, path):
        """A server, before its first serve(): resume from what save() wrote."""
        _check(self._lib.omnibatch_ps_restore(self._live(), self._path("restore", path)))

    @staticmethod
    def _path(how, path):
        try:
            encoded = os.fsencode(path)
        except TypeError:
            encoded = b""
        if 0 == len(encoded) or b"\0" in encoded:
            raise Error(ERR_ARG, "%s: path=%r: expected a file name (str, bytes or os.PathLike, not "
                        "empty, without NUL)" % (how, path))
        return encoded

    def close(self):
        """Destroy the context (every rank; before MPI is finalised)."""
        if self.ps:
            _check(self._lib.omnibatch_ps_destroy(ctypes.byref(self.ps)))
