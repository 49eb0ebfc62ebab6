# Copyright (c) 2026 The omnibatch authors.
"""The context: omnibatch's plan for one training run on one communicator.

Two backends behind one class: the C library through ctypes when it was
found (_library.py), otherwise the equal split computed here, so one
training script runs with or without the library (as omnibatch_dl.h does
for C).
"""
import contextlib
import ctypes
import dataclasses
import math
import os

import numpy as np

from . import _library
from ._library import ERR_ARG, ERR_STATE, SUCCESS

# omnibatch.h's OMNIBATCH_DEFAULT_SEED: the fallback draws its permutation from it too.
DEFAULT_SEED = 20260101

CONVENTIONS = {"mean": 0, "divide-by-p": 1}
PRIORS = {"equal": 0, "cores": 1, "gpus": 2}

# The largest C long: ctypes stores a larger Python int modulo 2^64 without a word.
LONG_MAX = 2 ** (8 * ctypes.sizeof(ctypes.c_long) - 1) - 1

# Keyword options: name -> (what is allowed, converter to the C field's value).
_INT_OPTIONS = ("min_batch", "max_batch", "granularity", "period", "warmup", "chunk_floor")
_BOOL_OPTIONS = ("adaptive", "verify", "chunks")
_REAL_OPTIONS = ("gain", "deadband", "forget")


class Error(Exception):
    """A failed omnibatch call: ``code`` (omnibatch_status), ``name``
    (omnibatch_strerror's) and ``detail``, the library's one line naming the
    argument, its value and what is allowed."""

    def __init__(self, code, detail, name=None):
        super().__init__(detail)
        self.code = code
        self.detail = detail
        self.name = name or _status_name(code)


def _status_name(code):
    if _library.LIB is not None:
        return _library.LIB.omnibatch_strerror(code).decode()
    return {SUCCESS: "success", ERR_ARG: "invalid argument", ERR_STATE: "call out of order"} \
        .get(code, "error %d" % code)


def _check(rc):
    """Raise Error with the library's detail line unless rc is OMNIBATCH_SUCCESS."""
    if SUCCESS != rc:
        detail = _library.LIB.omnibatch_last_error()
        raise Error(rc, detail.decode() if detail else _status_name(rc))


@dataclasses.dataclass(frozen=True)
class Step:
    """This rank's share of one training step.

    Use samples ``permutation(epoch)[start:start + count]`` (``Context.indices``).
    ``scale`` is the factor of the context's convention: the mean gradient
    (or loss) times ``scale``, summed over the ranks, is the gradient of the
    global batch (``mean``), or P times it (``divide-by-p``).
    ``mean_scale`` (count/total) and ``average_scale`` (P*count/total) are the
    two factors by name, for a code whose reduction sums or averages.
    """
    epoch: int
    step: int
    global_step: int
    start: int
    count: int
    total: int
    nranks: int
    scale: float

    @property
    def mean_scale(self):
        """count / total: for a reduction that sums (MPI_SUM)."""
        return self.count / self.total

    @property
    def average_scale(self):
        """P * count / total: for a reduction that averages (DistributedDataParallel)."""
        return self.nranks * self.count / self.total


@dataclasses.dataclass(frozen=True)
class Chunk:
    """A chunk of the running step (``Context.next_chunk()``), with chunks on.

    Use samples ``permutation(epoch)[start:start + count]``
    (``Context.indices(chunk)``).  ``count`` 0: none left, every sample of
    the step is claimed by some rank.  ``owner``: the rank whose range it
    came from (this rank's own, or a slower rank's it was taken from).
    ``done``: the samples this rank has claimed in the step, this chunk's
    included; ``scale``: the factor of the context's convention for this
    rank's mean gradient over its ``done`` samples, final once count is 0.
    ``share`` (count/total) is this chunk's part of the global batch: the
    chunks' mean gradients weighted by their shares add up to the rank's
    gradient weighted by done/total, whatever the number of chunks.
    """
    epoch: int
    global_step: int
    start: int
    count: int
    owner: int
    done: int
    total: int
    nranks: int
    scale: float

    @property
    def share(self):
        """count / total: this chunk's weight in a reduction that sums."""
        return self.count / self.total

    @property
    def mean_scale(self):
        """done / total: the rank's weight in a reduction that sums (MPI_SUM)."""
        return self.done / self.total

    @property
    def average_scale(self):
        """P * done / total: the rank's weight in a reduction that averages."""
        return self.nranks * self.done / self.total


@dataclasses.dataclass(frozen=True)
class Stats:
    """What the context has measured and decided so far (omnibatch_stats)."""
    steps: int
    exchanges: int
    decisions: int
    changes: int
    compute_s: float
    blocked_s: float
    compute_total_s: float
    blocked_total_s: float
    alpha: float
    beta: float
    predicted_step_s: float
    optimum_step_s: float
    parked_steps: int = 0
    early_exchanges: int = 0
    react_total_s: float = 0.0
    chunks: int = 0
    samples_taken: int = 0
    samples_given: int = 0


def _as_int(name, value, least):
    """value as a Python int in [least, LONG_MAX] (a C long), or Error naming it."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) \
            or not least <= value <= LONG_MAX:
        raise Error(ERR_ARG, "%s=%r: expected an integer >= %d and <= %d (a C long)"
                    % (name, value, least, LONG_MAX))
    return int(value)


def _as_choice(name, value, choices):
    if value not in choices:
        raise Error(ERR_ARG, "%s=%r: expected one of %s" % (name, value, ", ".join(choices)))
    return choices[value]


def _option_value(name, value):
    """The C field's value of keyword option name, or Error naming it."""
    if name in _INT_OPTIONS:
        return _as_int(name, value, 0)
    if name in _REAL_OPTIONS:
        if isinstance(value, bool) or not isinstance(value, (int, float, np.floating, np.integer)):
            raise Error(ERR_ARG, "%s=%r: expected a number" % (name, value))
        try:
            return float(value)
        except OverflowError:
            raise Error(ERR_ARG, "%s=%r: expected a number a C double holds"
                        % (name, value)) from None
    if name in _BOOL_OPTIONS:
        if not isinstance(value, (bool, np.bool_, int, np.integer)) or value not in (0, 1):
            raise Error(ERR_ARG, "%s=%r: expected True or False" % (name, value))
        return int(value)
    if name == "convention":
        return _as_choice(name, value, CONVENTIONS)
    if name == "prior":
        return _as_choice(name, value, PRIORS)
    if name == "seed":
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) \
                or not 0 <= value < 2 ** 64:
            raise Error(ERR_ARG, "seed=%r: expected an integer in [0, 2^64)" % (value,))
        return int(value)
    allowed = _INT_OPTIONS + _REAL_OPTIONS + _BOOL_OPTIONS + ("convention", "prior", "seed")
    raise Error(ERR_ARG, "option %s=%r: unknown; expected one of %s"
                % (name, value, ", ".join(allowed)))


def _handle(obj):
    """The C handle (MPI_Comm, MPI_Datatype) of an mpi4py object, by value."""
    from mpi4py import MPI
    return _library._handle_type()(MPI._handleof(obj))


def _buffer(name, array):
    """array as a C-contiguous float32/float64 numpy array that can be written, or Error."""
    if not isinstance(array, np.ndarray):
        raise Error(ERR_ARG, "%s: %s: expected a numpy array (torch: tensor.numpy() on the CPU)"
                    % (name, type(array).__name__))
    if array.dtype not in (np.float32, np.float64):
        raise Error(ERR_ARG, "%s: dtype %s: expected float32 or float64" % (name, array.dtype))
    if not array.flags.c_contiguous or not array.flags.writeable:
        raise Error(ERR_ARG, "%s: expected a C-contiguous, writable array" % name)
    if array.size > 2 ** 31 - 1:
        raise Error(ERR_ARG, "%s: %d elements: expected at most 2^31-1 per call"
                    % (name, array.size))
    return array


class _CBackend:
    """The library's context."""

    def __init__(self, comm, global_batch, dataset_size, options):
        lib = _library.LIB
        _library.declare_handles(lib)
        opt = _library.Options()
        _check(lib.omnibatch_options_init(ctypes.byref(opt)))
        for name, value in options.items():
            setattr(opt, name, value)
        self.convention = opt.convention
        self.chunked = bool(opt.chunks)      # the option or OMNIBATCH_CHUNKS, agreed at create
        self.ctx = ctypes.c_void_p()
        _check(lib.omnibatch_create(_handle(comm), global_batch, dataset_size,
                                    ctypes.byref(opt), ctypes.byref(self.ctx)))
        self.lib = lib
        self.cstep = _library.CStep()
        self.cchunk = _library.CChunk()

    @staticmethod
    def fail(comm):
        """Take part in omnibatch_create with a global batch it rejects, so
        the other ranks' creation fails with this one's instead of waiting."""
        lib = _library.LIB
        _library.declare_handles(lib)
        ctx = ctypes.c_void_p()
        if SUCCESS == lib.omnibatch_create(_handle(comm), 0, 0, None, ctypes.byref(ctx)):
            lib.omnibatch_destroy(ctypes.byref(ctx))

    def next_step(self, nranks):
        s = self.cstep
        s.scale = math.nan              # left alone by a library without the field
        _check(self.lib.omnibatch_next_step(self.ctx, ctypes.byref(s)))
        scale = s.scale
        if math.isnan(scale):
            scale = (nranks if self.convention else 1) * s.count / s.total
        return Step(s.epoch, s.step, s.global_step, s.start, s.count, s.total, nranks, scale)

    def next_chunk(self, step):
        c = self.cchunk
        _check(self.lib.omnibatch_next_chunk(self.ctx, ctypes.byref(c)))
        return Chunk(step.epoch, step.global_step, c.start, c.count, c.owner, c.done, step.total,
                     step.nranks, c.scale)

    def compute_begin(self):
        _check(self.lib.omnibatch_compute_begin(self.ctx))

    def compute_end(self):
        _check(self.lib.omnibatch_compute_end(self.ctx))

    def permutation(self, epoch, n):
        perm = np.empty(n, dtype=np.dtype(ctypes.c_long))
        _check(self.lib.omnibatch_permutation(self.ctx, epoch,
                                              perm.ctypes.data_as(_library.c_long_p)))
        return perm

    def plan(self, nranks):
        plan = (ctypes.c_long * nranks)()
        _check(self.lib.omnibatch_get_plan(self.ctx, plan, nranks))
        return np.array(plan[:], dtype=np.int64)

    def set_plan(self, plan, nranks):
        """plan None: this rank's plan was rejected before; the call still
        joins the others' (NULL fails it everywhere) and leaves the raising
        to the caller."""
        if plan is None:
            self.lib.omnibatch_set_plan(self.ctx, None, nranks)
            return
        cplan = (ctypes.c_long * len(plan))(*plan)
        _check(self.lib.omnibatch_set_plan(self.ctx, cplan, len(plan)))

    def stats(self):
        s = _library.CStats()
        _check(self.lib.omnibatch_get_stats(self.ctx, ctypes.byref(s)))
        return Stats(*(getattr(s, f[0]) for f in _library.CStats._fields_))

    def allreduce(self, send, recv):
        from mpi4py import MPI
        dtype = MPI.FLOAT if recv.dtype == np.float32 else MPI.DOUBLE
        sendptr = ctypes.c_void_p(int(MPI.IN_PLACE)) if send is None \
            else ctypes.c_void_p(send.ctypes.data)
        _check(self.lib.omnibatch_allreduce_gradient(self.ctx, sendptr,
                                                     ctypes.c_void_p(recv.ctypes.data),
                                                     recv.size, _handle(dtype)))

    def get_state(self):
        size = ctypes.c_size_t()
        _check(self.lib.omnibatch_state_size(self.ctx, ctypes.byref(size)))
        buf = ctypes.create_string_buffer(size.value)
        _check(self.lib.omnibatch_get_state(self.ctx, buf, size.value))
        return buf.raw

    def set_state(self, blob):
        buf = ctypes.create_string_buffer(bytes(blob), len(blob))
        _check(self.lib.omnibatch_set_state(self.ctx, buf, len(blob)))

    def save(self, path):
        """path None: this rank's path was rejected before; the call still
        joins the others' (NULL fails it everywhere) and leaves the raising
        to the caller."""
        rc = self.lib.omnibatch_save(self.ctx, path)
        if path is not None:
            _check(rc)

    def restore(self, path):
        """As save(): a None path fails every rank."""
        rc = self.lib.omnibatch_restore(self.ctx, path)
        if path is not None:
            _check(rc)

    def close(self):
        if self.ctx:
            _check(self.lib.omnibatch_destroy(ctypes.byref(self.ctx)))


def _split(total, plan):
    """total samples in proportion to plan (summing to B): floors, then the
    remainder one each to the lowest ranks; the equal split when plan is."""
    weight = sum(plan)
    shares = [total * b // weight for b in plan]
    for i in range(total - sum(shares)):
        shares[i] += 1
    return shares


class _EqualBackend:
    """Without the library: equal shares (or a plan set_plan() imposed),
    and a permutation of its own drawn from the seed.  With chunks on, each
    step is one chunk, the rank's whole slice: nothing moves between ranks,
    and a code written for chunks runs unchanged."""

    def __init__(self, comm, global_batch, dataset_size, options):
        self.comm = comm
        self.rank = comm.Get_rank()
        self.B, self.N = global_batch, dataset_size
        self.convention = options.get("convention", 0)
        self.seed = options.get("seed", DEFAULT_SEED)
        self.chunked = bool(options.get("chunks", 0))
        self.chunks_given = 0           # in the step: 0, 1 (the slice), 2 (count 0 answered)
        P = comm.Get_size()
        self.current = [global_batch // P + (i < global_batch % P) for i in range(P)]
        self.pending = None
        self.k = -1
        self.step_count = 0

    def next_step(self, nranks):
        self.k += 1
        if self.pending is not None:
            self.current, self.pending = self.pending, None
        per_epoch = -(-self.N // self.B)
        epoch, step = divmod(self.k, per_epoch)
        total = min(self.B, self.N - step * self.B)
        shares = self.current if total == self.B else _split(total, self.current)
        self.count = shares[self.rank]
        self.total = total
        start = step * self.B + sum(shares[:self.rank])
        scale = (nranks if self.convention else 1) * self.count / total
        self.chunks_given = 0
        return Step(epoch, step, self.k, start, self.count, total, nranks, scale)

    def next_chunk(self, step):
        """The step's slice as its one chunk, then count 0 (omnibatch_next_chunk's errors)."""
        fn = "omnibatch_next_chunk"
        if not self.chunked:
            raise Error(ERR_STATE, "%s: chunks are off: create the context with chunks=True "
                        "(OMNIBATCH_CHUNKS=on)" % fn)
        if self.k < 0:
            raise Error(ERR_STATE, "%s: no step is running: call next_step() first" % fn)
        if 2 == self.chunks_given:
            raise Error(ERR_STATE, "%s: step %d: none was left already: the step ends with the "
                        "gradient's reduction, then next_step()" % (fn, step.global_step))
        self.chunks_given = 1 if 0 == self.chunks_given and step.count > 0 else 2
        count = step.count if 1 == self.chunks_given else 0
        return Chunk(step.epoch, step.global_step, step.start, count, self.rank, step.count,
                     step.total, step.nranks, step.scale)

    def compute_begin(self):
        pass

    def compute_end(self):
        pass

    def permutation(self, epoch, n):
        return np.random.default_rng([self.seed, epoch]).permutation(n).astype(np.int64)

    def plan(self, nranks):
        return np.array(self.pending or self.current, dtype=np.int64)

    def set_plan(self, plan, nranks):
        agreed = self.comm.allgather(plan)
        if plan is None:                # rejected here already: the caller raises
            return
        if None in agreed:
            raise Error(ERR_ARG, "plan: rank %d rejected the plan: see its message"
                        % agreed.index(None))
        if len(plan) != len(self.current) or sum(plan) != self.B or min(plan) < 0:
            raise Error(ERR_ARG, "plan=%s: expected %d non-negative batches summing to %d"
                        % (list(plan), len(self.current), self.B))
        if any(other != agreed[0] for other in agreed):
            raise Error(ERR_ARG, "plan: ranks passed different plans (rank 0: %s)" % agreed[0])
        self.pending = list(plan)

    def stats(self):
        return Stats(self.k + 1, 0, 0, 0, -1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)

    def _no_state(self, *args):
        raise Error(ERR_STATE, "checkpoint state: the equal split keeps none: load the library "
                    "(omnibatch.available() is False)")

    get_state = set_state = save = restore = _no_state

    def allreduce(self, send, recv):
        from mpi4py import MPI
        if self.k < 0:
            raise Error(ERR_STATE, "allreduce_gradient: no step yet: call next_step() first")
        if self.chunked and 2 != self.chunks_given:
            raise Error(ERR_STATE, "allreduce_gradient: step %d is worked in chunks and some are "
                        "left: call next_chunk() until it answers count 0 first" % self.k)
        if send is not None:
            recv[...] = send
        factor = (self.comm.Get_size() if self.convention else 1) * self.count / self.total
        if 0 == self.count:
            recv[...] = 0
        else:
            recv *= recv.dtype.type(factor)
        self.comm.Allreduce(MPI.IN_PLACE, recv, op=MPI.SUM)

    def close(self):
        pass


class Context:
    """omnibatch's plan for one training run on an mpi4py communicator.

    ``Context(comm, global_batch=B, dataset_size=N, **options)``; the
    options are the fields of omnibatch_options (min_batch, max_batch,
    granularity, gain, deadband, forget, period, warmup, convention
    ("mean" or "divide-by-p"), prior ("equal", "cores", "gpus"), adaptive,
    verify, seed, chunks, chunk_floor); unset ones come from the
    OMNIBATCH_* environment.  With ``chunks=True`` each step is worked in
    chunks that move to a rank that is free (next_chunk(), chunks()).
    Creating, next_step(), set_plan(), allreduce_gradient() and close() are
    collective: every rank calls them in the same order.  A context manager:
    ``with Context(...) as ob:`` closes it (collectively) on the way out.
    """

    def __init__(self, comm, global_batch, dataset_size, **options):
        if comm is None or not hasattr(comm, "Get_size"):
            raise Error(ERR_ARG, "comm=%r: expected an mpi4py communicator" % (comm,))
        try:
            global_batch = _as_int("global_batch", global_batch, 1)
            dataset_size = _as_int("dataset_size", dataset_size, 1)
            values = {name: _option_value(name, value) for name, value in options.items()}
        except Error:
            # The others are already in omnibatch_create, which agrees on the
            # outcome: join it with an argument it rejects, so every rank fails.
            if _library.LIB is not None:
                _CBackend.fail(comm)
            raise
        if _library.PROBLEM and _library.LIB is None:
            raise Error(ERR_ARG, _library.PROBLEM)
        self.comm = comm
        self.rank = comm.Get_rank()
        self.nranks = comm.Get_size()
        self.global_batch = global_batch
        self.dataset_size = dataset_size
        self.steps_per_epoch = -(-dataset_size // global_batch)
        backend = _CBackend if _library.LIB is not None else _EqualBackend
        self._backend = backend(comm, global_batch, dataset_size, values)
        self._perm_epoch, self._perm = None, None
        self.step = None
        self.chunk = None               # the last chunk next_chunk() answered in the step
        self._in_compute = False

    @property
    def uses_library(self):
        """True when the C library plans the batches, False for the equal split."""
        return isinstance(self._backend, _CBackend)

    @property
    def chunked(self):
        """True when each step is worked in chunks (the option chunks, or
        OMNIBATCH_CHUNKS with the library): call next_chunk() until it
        answers count 0 before the gradient's reduction."""
        return self._live().chunked

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def close(self):
        """Destroy the context (collective); call it before MPI is finalised."""
        if self._backend is not None:
            backend, self._backend = self._backend, None
            backend.close()

    def _live(self):
        if self._backend is None:
            raise Error(ERR_STATE, "context: closed: create a new one")
        return self._backend

    def next_step(self):
        """Begin the next step (collective): this rank's Step.

        With chunks on, the step before must have been worked to its end
        (next_chunk() answered count 0): samples it left would be lost, and
        a rank that begins a step while another still claims chunks of the
        one before breaks what makes every sample go to one rank."""
        backend = self._live()
        if backend.chunked and self.step is not None and not self.chunks_over:
            raise Error(ERR_STATE, "next_step: step %d is worked in chunks and some are left: "
                        "call next_chunk() until it answers count 0, and reduce the gradient, "
                        "first" % self.step.global_step)
        if self._in_compute:
            self.compute_end()
        self.step = backend.next_step(self.nranks)
        self.chunk = None
        return self.step

    def next_chunk(self):
        """The next chunk of the running step (a Chunk; count 0: none left).

        With chunks on (``chunks=True``): this rank's own range first, in
        chunks that shrink toward its end, then the tail of a slower rank's
        range (omnibatch_next_chunk()).  Every sample of the step is done by
        exactly one rank once every rank has been answered count 0; the
        rank's weight follows the samples it did (the final chunk's done
        and scale).  Without the library the step is one chunk, the rank's
        whole slice.  Local."""
        backend = self._live()
        step = self.step
        if step is None and backend.chunked:
            raise Error(ERR_STATE, "next_chunk: no step is running: call next_step() first")
        self.chunk = backend.next_chunk(step)
        return self.chunk

    def chunks(self):
        """Iterate next_chunk() until it answers count 0 (the chunks with
        samples; the last answer stays in ``chunk``)."""
        while self.next_chunk().count > 0:
            yield self.chunk

    @property
    def chunks_over(self):
        """True once next_chunk() answered count 0 in the running step."""
        return self.chunk is not None and 0 == self.chunk.count

    def steps(self, epochs=None, count=None):
        """Iterate next_step() epochs * steps_per_epoch times, or count times (None: forever).

        The steps are counted from where the context is: after a restore in
        the middle of an epoch, epochs=k ends in the middle of one too."""
        if epochs is not None:
            count = _as_int("epochs", epochs, 0) * self.steps_per_epoch
        elif count is not None:
            count = _as_int("count", count, 0)
        k = 0
        while count is None or k < count:
            yield self.next_step()
            k += 1

    def permutation(self, epoch):
        """The epoch's permutation of 0..N-1 (int64 numpy array), the same on every rank."""
        epoch = _as_int("epoch", epoch, 0)
        if epoch != self._perm_epoch:
            self._perm = self._live().permutation(epoch, self.dataset_size)
            self._perm_epoch = epoch
        return self._perm

    def indices(self, step=None):
        """This rank's sample indices of step (default: the current one), or of a Chunk."""
        step = self.step if step is None else step
        if step is None:
            raise Error(ERR_STATE, "indices: no step yet: call next_step() first")
        if not isinstance(step, (Step, Chunk)):
            raise Error(ERR_ARG, "indices: step=%r: expected a Step of next_step() or a Chunk "
                        "of next_chunk()" % (step,))
        if isinstance(step, Step) and self.chunked:
            raise Error(ERR_STATE, "indices: step %d is worked in chunks: its samples move between "
                        "ranks: take those of each chunk, indices(next_chunk())"
                        % step.global_step)
        return self.permutation(step.epoch)[step.start:step.start + step.count]

    def compute_begin(self):
        self._live().compute_begin()
        self._in_compute = True

    def compute_end(self):
        self._in_compute = False
        self._live().compute_end()

    @contextlib.contextmanager
    def compute(self):
        """Mark the step's compute: ``with ob.compute(): ...`` (optional).

        Inside a compute already begun (PlanBatchSampler.steps() begins one
        with each step) it only marks the end."""
        if not self._in_compute:
            self.compute_begin()
        try:
            yield
        finally:
            if self._in_compute:
                self.compute_end()

    @property
    def in_compute(self):
        return self._in_compute

    @property
    def plan(self):
        """The local batch of every rank (numpy int64 array summing to the global batch)."""
        return self._live().plan(self.nranks)

    def set_plan(self, plan):
        """Impose a plan from the next step on (collective; the same on every rank)."""
        backend = self._live()
        try:
            if isinstance(plan, (str, bytes)) or not hasattr(plan, "__iter__"):
                raise Error(ERR_ARG, "plan=%r: expected a sequence of %d integers"
                            % (plan, self.nranks))
            plan = [_as_int("plan[%d]" % i, b, 0) for i, b in enumerate(plan)]
        except Error:
            backend.set_plan(None, self.nranks)     # the others fail with this rank
            raise
        backend.set_plan(plan, self.nranks)

    def stats(self):
        """This rank's Stats so far."""
        return self._live().stats()

    def get_state(self):
        """The context's state as bytes to keep in the code's own checkpoint
        (omnibatch_get_state: the data position, the seed and the learned
        models keyed by host and cores).  Collective."""
        return self._live().get_state()

    def set_state(self, blob):
        """Resume from get_state()'s bytes, after creation and before the
        first step, on the same or another number of ranks (omnibatch_set_state).
        Collective."""
        backend = self._live()
        try:
            blob = bytes(memoryview(blob))
        except TypeError:
            # The others are in omnibatch_set_state, which agrees on the
            # outcome: join it with an empty state, refused on every rank.
            try:
                backend.set_state(b"")
            except Error:
                pass
            raise Error(ERR_ARG, "set_state: blob: %s: expected the bytes of get_state()"
                        % type(blob).__name__) from None
        backend.set_state(blob)

    def save(self, path):
        """get_state() into the file ``path`` (str, bytes or os.PathLike),
        written by rank 0 (omnibatch_save).  Collective."""
        self._state_file("save", path)

    def restore(self, path):
        """set_state() from a file save() wrote (omnibatch_restore).  Collective."""
        self._state_file("restore", path)

    def _state_file(self, how, path):
        backend = self._live()
        call = getattr(backend, how)
        if isinstance(backend, _EqualBackend):
            call(path)                  # raises: the equal split keeps no state
        try:
            encoded = os.fsencode(path)
            if 0 == len(encoded) or b"\0" in encoded:
                raise ValueError
        except (TypeError, ValueError):
            # The others are in omnibatch_save/_restore, collective: join it with no
            # path, which fails every rank, instead of leaving them waiting.
            call(None)
            raise Error(ERR_ARG, "%s: path=%r: expected a file name (str, bytes or os.PathLike, "
                        "not empty, without NUL)" % (how, path)) from None
        call(encoded)

    def allreduce_gradient(self, gradient, out=None):
        """Weight this rank's mean gradient by its share and sum it over the ranks.

        ``gradient``: a C-contiguous float32/float64 numpy array (a CPU
        tensor's ``.numpy()``).  Without ``out`` it is reduced in place;
        with ``out`` (same shape and dtype) gradient is left untouched.
        Returns the array holding the result.  Collective.
        """
        backend = self._live()
        if self._in_compute:
            self.compute_end()
        gradient = _buffer("gradient", gradient)
        if out is None:
            backend.allreduce(None, gradient)
            return gradient
        out = _buffer("out", out)
        if out.shape != gradient.shape or out.dtype != gradient.dtype:
            raise Error(ERR_ARG, "out: shape %s dtype %s: expected those of gradient, %s %s"
                        % (out.shape, out.dtype, gradient.shape, gradient.dtype))
        backend.allreduce(gradient, out)
        return out
