# Copyright (c) 2026 The omnibatch authors.
"""PyTorch with omnibatch: batches that follow the plan, exact gradients.

Three pieces, each usable alone:

- :class:`PlanBatchSampler`, the ``batch_sampler`` of a ``DataLoader``,
  driven by :meth:`PlanBatchSampler.steps`: every iteration begins the
  training step (``Context.next_step()``) and only then loads that step's
  samples, so the batch, the Step and the time measured always belong to the
  same training step, whatever the workers and their prefetching do.  The
  loader is never iterated on its own (the sampler refuses it).
- :func:`register_ddp`: hooks on a DistributedDataParallel model's
  parameters that scale each rank's gradient by ``P*count/total`` on the
  gradient's device before DDP averages it, so the average is the global
  batch's gradient; a rank with ``count == 0`` runs its (empty) batch and
  still joins the reduction, contributing zeros.
- :func:`allreduce_gradients`: the same result with one mpi4py
  ``Allreduce`` (SUM) of the gradients scaled by ``count/total``.
- :class:`AsyncSGD`: asynchronous training on omnibatch's parameter server,
  an optimizer whose ``step()`` pushes the gradient and brings back the model
  and the next slice (no rank waits for another).

Steps worked in chunks (``Context(..., chunks=True)``): samples move to a
rank that is free while the step runs, so a rank does a number of chunks
known only when ``next_chunk()`` answers count 0.
:meth:`PlanBatchSampler.chunked_steps` yields each step with its chunks
(the sampler hands the loader one list of indices per chunk, claimed as the
loader asks for it).  Each chunk's gradient is weighted by its share of the
global batch, ``chunk.count/total``, as its backward runs (the hooks of
:func:`register_ddp` or :func:`register_chunks`): the chunks' shares add up
to ``done/total``, the rank's final weight, whatever their number, so
nothing waits for the last chunk to be known.  Under DDP every chunk's
forward and backward run under ``no_sync()`` (the gradients accumulate
locally) and the step ends in one reduction per rank, the package's own
``torch.distributed.all_reduce`` (SUM) of the accumulated gradients on the
model's process group; with mpi4py, :func:`allreduce_gradients`.

Neither path hands device memory to the C library: the scaling is done by
torch on the tensors' device, and the mpi4py path reduces a host copy of a
GPU gradient.
"""
import collections
import contextlib
import os
import socket
import weakref

import numpy as np
import torch

from ._context import ERR_ARG, ERR_STATE, Chunk, Error
from ._ps import ParameterServer, join_failed

__all__ = ["PlanBatchSampler", "StepChunks", "register_ddp", "register_chunks",
           "allreduce_gradients", "init_process_group", "AsyncSGD"]


def init_process_group(comm, backend="gloo", **kwargs):
    """torch.distributed.init_process_group on the ranks of an mpi4py communicator.

    Rank 0 picks a free TCP port and broadcasts it with ``MASTER_ADDR``
    (from the environment, else 127.0.0.1 when every rank runs on rank 0's
    host, else rank 0's host name); rank and world size are the
    communicator's.  Extra keyword arguments go to init_process_group.
    """
    import torch.distributed as dist
    host = socket.gethostname()
    hosts = comm.allgather(host)
    where = None
    if 0 == comm.Get_rank():
        addr = os.environ.get("MASTER_ADDR") or \
            ("127.0.0.1" if all(h == hosts[0] for h in hosts) else socket.getfqdn())
        port = os.environ.get("MASTER_PORT")
        if not port:
            with socket.socket() as s:
                s.bind(("", 0))
                port = s.getsockname()[1]
        where = "tcp://%s:%s" % (addr, port)
    where = comm.bcast(where, root=0)
    dist.init_process_group(backend, init_method=where, rank=comm.Get_rank(),
                            world_size=comm.Get_size(), **kwargs)


def _rebuild(like, items):
    """items (a list or a dict) in the container type of like, as
    default_collate builds its batches: a namedtuple stays one."""
    if isinstance(like, tuple):
        return type(like)(*items) if hasattr(like, "_fields") else tuple(items)
    try:
        return type(like)(items)
    except TypeError:
        return items


def _join(parts):
    """One batch from the collated chunks of one step (in the order given)."""
    first = parts[0]
    if len(parts) == 1:
        return first
    if isinstance(first, torch.Tensor):
        return torch.cat(parts)
    if isinstance(first, dict):
        return _rebuild(first, {key: _join([p[key] for p in parts]) for key in first})
    if isinstance(first, (tuple, list)):
        return _rebuild(first, [_join(list(column)) for column in zip(*parts)])
    raise Error(ERR_ARG, "PlanBatchSampler: a collated chunk of type %s cannot be joined: "
                "expected tensors, tuples, lists or dicts, or pass chunks=1"
                % type(first).__name__)


def _empty_like(batch):
    """batch with no samples, the same structure, shapes and dtypes otherwise."""
    if isinstance(batch, torch.Tensor):
        return batch[:0]
    if isinstance(batch, dict):
        return _rebuild(batch, {key: _empty_like(value) for key, value in batch.items()})
    if isinstance(batch, (tuple, list)):
        return _rebuild(batch, [_empty_like(value) for value in batch])
    raise Error(ERR_ARG, "PlanBatchSampler: a collated batch of type %s has no empty form: "
                "expected tensors, tuples, lists or dicts" % type(batch).__name__)


def _direct(loader):
    """True when the loader's batch is exactly its tensors indexed by the step's
    indices: a TensorDataset, the default collate, in this process, nothing
    pinned.  One indexing per tensor then replaces one item per sample and
    the stacking, with the same values."""
    from torch.utils.data import TensorDataset
    from torch.utils.data._utils.collate import default_collate
    return isinstance(loader.dataset, TensorDataset) and loader.collate_fn is default_collate \
        and 0 == loader.num_workers and not loader.pin_memory


class PlanBatchSampler:
    """The batch sampler of a DataLoader whose batches follow omnibatch's plan.

    ::

        sampler = PlanBatchSampler(ob)
        loader = DataLoader(dataset, batch_sampler=sampler, num_workers=2,
                            persistent_workers=True)
        for step, (x, y) in sampler.steps(loader, epochs=3):
            ...                                  # one training step

    Why the loader is driven by the sampler: a DataLoader with workers asks
    its batch sampler for several batches ahead of the one being trained
    on.  A sampler that began a plan step each time it was asked would hand
    out steps ahead of training, so the measured times and the batches
    would belong to different steps.  Here each iteration of steps() first
    begins the training step, then gives the loader exactly that step's
    samples, split into one chunk per worker so the workers load them side
    by side, and joins the chunks in order.  Iterating the loader any other
    way raises Error.  With workers, persistent_workers=True is required
    (the loader is iterated once per step; without it each step would start
    new worker processes).

    A loader over a TensorDataset with the default collate, no workers and no
    pinned memory gets the same batch by indexing its tensors directly.

    A rank whose count is 0 (a short last step) gets a batch with no
    samples and the shapes of the data set's samples: a model that accepts
    an empty batch runs it, so DDP still sees this rank's backward.

    A context that works its steps in chunks (``chunks=True``) is driven by
    chunked_steps() instead (steps() refuses it)::

        for step, chunks in sampler.chunked_steps(loader, epochs=3):
            opt.zero_grad()
            for x, y in chunks:                  # each chunk's batch
                F.cross_entropy(model(x), y).backward()
            ...                                  # DDP: reduced; mpi4py: allreduce_gradients
            opt.step()

    The sampler then hands the loader one list of indices per chunk,
    claiming each chunk (``Context.next_chunk()``) only when the loader asks
    for it: without workers, just before its batch is computed; with
    workers, as far ahead as the loader prefetches (a chunk claimed is no
    longer there for a free rank to take).  ``chunks``, the parts per
    worker of steps(), plays no part there: each chunk is one batch.
    """

    def __init__(self, ob, chunks=None):
        if chunks is not None and (isinstance(chunks, bool) or not isinstance(chunks, int)
                                   or chunks < 1):
            raise Error(ERR_ARG, "PlanBatchSampler: chunks=%r: expected an integer >= 1, or None "
                        "(one chunk per worker)" % (chunks,))
        self.ob = ob
        self.chunks = chunks
        self._armed = None

    def __len__(self):
        return self.ob.steps_per_epoch

    def __iter__(self):
        # Armed by _load() for the length of one pass of the loader (which
        # may call this more than once as it starts).
        armed = self._armed
        if armed is None:
            raise Error(ERR_STATE, "PlanBatchSampler: iterated outside sampler.steps(loader): "
                        "loop over sampler.steps(loader) (or sampler.chunked_steps(loader)) so "
                        "each batch belongs to its step")
        return iter(armed)

    def _check_loader(self, loader):
        if getattr(loader, "batch_sampler", None) is not self:
            raise Error(ERR_ARG, "PlanBatchSampler.steps: loader: expected a DataLoader built "
                        "with batch_sampler=this sampler")
        if loader.num_workers > 0 and not loader.persistent_workers:
            raise Error(ERR_ARG, "PlanBatchSampler.steps: num_workers=%d with "
                        "persistent_workers=False: expected persistent_workers=True"
                        % loader.num_workers)

    def _load(self, loader, step):
        """The collated batch of step: the loader's, or an empty one when count is 0."""
        indices = self.ob.indices(step)
        if 0 == step.count:
            some = int(self.ob.permutation(step.epoch)[0])
            return _empty_like(loader.collate_fn([loader.dataset[some]]))
        if _direct(loader):
            rows = torch.from_numpy(indices)
            return [t[rows] for t in loader.dataset.tensors]     # a list, as default_collate gives
        chunks = self.chunks or max(1, loader.num_workers)
        self._armed = [part.tolist() for part in
                       np.array_split(indices, min(chunks, step.count))]
        try:
            parts = list(iter(loader))
        finally:
            self._armed = None
        return _join(parts)

    def steps(self, loader, epochs=None, count=None):
        """(Step, batch) of each training step: epochs whole epochs, count steps, or forever.

        Begins the step (collective), marks the start of its compute, then
        loads its batch: the compute time the controller sees includes the
        loading, which grows with the batch too.  The compute ends at the
        gradient reduction (register_ddp's hook, allreduce_gradients) or, at
        the latest, when the next step begins.
        """
        self._check_loader(loader)
        if self.ob.chunked:
            raise Error(ERR_STATE, "PlanBatchSampler.steps: the context works each step in chunks "
                        "(chunks=True or OMNIBATCH_CHUNKS=on): loop over "
                        "sampler.chunked_steps(loader) and the chunks of each step")
        for step in self.ob.steps(epochs=epochs, count=count):
            self.ob.compute_begin()
            yield step, self._load(loader, step)

    def chunked_steps(self, loader, epochs=None, count=None):
        """(Step, StepChunks) of each training step, as steps() counts them.

        Begins the step (collective) and its compute; iterating the
        StepChunks, to its end, gives each chunk's batch.  With chunks off
        (the option, or no library and no option) a step is one chunk, the
        rank's batch as steps() gives it, reduced as without chunks: a code
        written for chunks runs either way.
        """
        self._check_loader(loader)
        for step in self.ob.steps(epochs=epochs, count=count):
            self.ob.compute_begin()
            chunks = StepChunks(self, loader, step)
            yield step, chunks
            if not chunks.over:
                raise Error(ERR_STATE, "PlanBatchSampler.chunked_steps: step %d: its chunks were "
                            "not iterated to the end: every chunk claimed must be computed, and "
                            "the step ends after the last" % step.global_step)

    def _chunk_batches(self, loader):
        """(Chunk, collated batch) of each chunk of the running step, claimed
        as the loader asks for its indices."""
        ob = self.ob
        if _direct(loader):
            for chunk in ob.chunks():
                rows = torch.from_numpy(ob.indices(chunk))
                yield chunk, [t[rows] for t in loader.dataset.tensors]
            return
        claimed = collections.deque()

        def indices():
            for chunk in ob.chunks():
                claimed.append(chunk)
                yield ob.indices(chunk).tolist()

        self._armed = indices()
        try:
            for batch in iter(loader):
                # The loader keeps the sampler's order (in_order): the oldest
                # chunk claimed is this batch's.
                yield claimed.popleft(), batch
        finally:
            self._armed = None


class StepChunks:
    """The chunks of one step (PlanBatchSampler.chunked_steps): iterate it,
    once and to the end, for each chunk's batch.

    ``chunk``: the Chunk of the batch in hand; once the iteration has ended,
    the last answer of next_chunk() (count 0, the final ``done`` and
    ``scale``).  ``over``: True once it has ended.  Each batch's forward and
    backward run under ``no_sync()`` of the models register_ddp registered
    with the context, and once the last chunk is done the step's compute
    ends and each such model's accumulated gradients are reduced, once
    (allreduce_gradients(model, ob)).
    """

    def __init__(self, sampler, loader, step):
        self._sampler = sampler
        self._loader = loader
        self.step = step
        self.chunk = None
        self.over = False
        self._started = False

    def __iter__(self):
        if self._started:
            raise Error(ERR_STATE, "StepChunks: step %d: iterated already: the chunks of a step "
                        "are claimed once" % self.step.global_step)
        self._started = True
        if self._sampler.ob.chunked:
            return self._chunked()
        return self._whole()

    def _whole(self):
        """Chunks off: the step's batch as one chunk, reduced as without chunks."""
        ob, step = self._sampler.ob, self.step
        self.chunk = Chunk(step.epoch, step.global_step, step.start, step.count, ob.rank,
                           step.count, step.total, step.nranks, step.scale)
        yield self._sampler._load(self._loader, step)
        self.over = True

    def _chunked(self):
        ob = self._sampler.ob
        cursor = _cursor(ob)
        try:
            for chunk, batch in self._sampler._chunk_batches(self._loader):
                self.chunk = cursor.computing = chunk
                with contextlib.ExitStack() as local:
                    for model in cursor.models:
                        local.enter_context(model.no_sync())
                    yield batch
        finally:
            cursor.computing = None
        self.chunk = ob.chunk
        self.over = True
        if ob.in_compute:
            ob.compute_end()
        for model in cursor.models:
            allreduce_gradients(model, ob)


class _Cursor:
    """What the package's torch side keeps per context: the chunk whose
    samples are computed now (chunked_steps sets it: with workers the loader
    claims chunks ahead of the one computed), and the DDP models whose
    gradients the step's end reduces."""

    def __init__(self):
        self.computing = None
        self.models = []


_CURSORS = weakref.WeakKeyDictionary()


def _cursor(ob):
    cursor = _CURSORS.get(ob)
    if cursor is None:
        cursor = _CURSORS[ob] = _Cursor()
    return cursor


def _chunk_share(ob, cursor):
    """count/total of the chunk whose backward runs: chunked_steps' chunk in
    hand, or, in a loop of the code's own, the last chunk next_chunk() gave."""
    chunk = cursor.computing if cursor.computing is not None else ob.chunk
    if chunk is None or 0 == chunk.count or chunk.global_step != ob.step.global_step:
        raise Error(ERR_STATE, "a backward outside a chunk of step %d: with chunks on, each "
                    "backward is one chunk's, after next_chunk() gave it and before the next "
                    "(PlanBatchSampler.chunked_steps, or for chunk in ob.chunks())"
                    % ob.step.global_step)
    return chunk.share


def _running_step(ob, who):
    """The context's current step for a gradient hook; Error when closed or before one."""
    ob._live()                          # closed: raises, rather than scale by a stale step
    if ob.step is None:
        raise Error(ERR_STATE, "%s: backward before the first step: begin each step with the "
                    "context (PlanBatchSampler.steps or chunked_steps, or next_step)" % who)
    return ob.step


class _DdpScaling:
    """register_ddp's hooks: one on each parameter's gradient, one before
    each forward and one at the end of each backward."""

    def __init__(self, ob):
        self.ob = ob
        self.chunked = ob.chunked       # agreed at create, never changes
        self.cursor = _cursor(ob)
        self.queued = False
        self.syncs = True               # the last forward's: this backward reduces

    def forward(self, model, inputs):
        """DDP decides at the forward whether the backward reduces: not under
        no_sync(), where the step's compute goes on in the next micro-batch."""
        self.syncs = model.require_backward_grad_sync

    def gradient(self, grad):
        """This rank's gradient of one parameter, before DDP's bucket takes
        it: scaled by P*count/total, zeros when count is 0 (whatever an
        empty batch left there, NaN included).  In chunks: scaled by the
        chunk's count/total, for the package's sum at the step's end; a
        backward that DDP would reduce is stopped here, before any of the
        parameters' gradients reaches DDP (every one passes this hook
        first): ranks do different numbers of chunks, so reductions of DDP's
        own would not match."""
        step = _running_step(self.ob, "register_ddp")
        if self.chunked:
            if self.syncs:
                raise Error(ERR_STATE, "register_ddp: the backward of a forward outside no_sync() "
                            "with chunks on: DDP would reduce that chunk alone, and ranks do "
                            "different numbers of chunks: run each chunk under model.no_sync() "
                            "(PlanBatchSampler.chunked_steps does), then "
                            "allreduce_gradients(model, ob)")
            return grad * _chunk_share(self.ob, self.cursor)
        if self.syncs and not self.queued and self.ob.in_compute and _queue_callback is not None:
            # Runs once the local backward is done, before DDP's own end of
            # backward, which waits for the reduction: what follows is waiting.
            _queue_callback(self.backward_done)
            self.queued = True
        if 0 == step.count:
            return torch.zeros_like(grad)
        return grad * step.average_scale

    def backward_done(self):
        self.queued = False
        if self.ob.in_compute:
            self.ob.compute_end()


class _ChunkWeights:
    """register_chunks' hook on each parameter's gradient."""

    def __init__(self, ob):
        self.ob = ob
        self.chunked = ob.chunked
        self.cursor = _cursor(ob)

    def gradient(self, grad):
        """In chunks: scaled by the chunk's count/total; otherwise left as it
        is (allreduce_gradients scales the step's gradient by count/total)."""
        if not self.chunked:
            return grad
        _running_step(self.ob, "register_chunks")
        return grad * _chunk_share(self.ob, self.cursor)


# The autograd engine's callbacks at the end of a backward, run in the order
# queued (DDP's reducer queues its own there once the last bucket is ready);
# in a torch without it, the step's compute ends at the next step instead.
_queue_callback = getattr(getattr(torch.autograd.Variable, "_execution_engine", None),
                          "queue_callback", None)


def _weigh(params, ob, gradient, who):
    """Hook gradient on each parameter that requires a gradient, marked as
    weighted for ob; Error when one is registered already."""
    params = [p for p in params if p.requires_grad]
    if any(getattr(p, "_omnibatch_weighted", None) is not None for p in params):
        raise Error(ERR_ARG, "%s: model: registered already (register_ddp or register_chunks): "
                    "its gradients would be scaled twice" % who)
    for p in params:
        p.register_hook(gradient)
        p._omnibatch_weighted = ob


def register_ddp(model, ob):
    """Make a DistributedDataParallel model's averaged gradient the global batch's.

    Hooks each parameter's gradient: this rank's is scaled on its device by
    P*count/total of the context's current step (zeros when count is 0)
    before DDP's bucket takes it, and DDP's own average (or a communication
    hook that averages, such as torch's fp16 compression) then gives the
    global batch's gradient.  The step's compute ends when the local
    backward of a forward that reduces does (not under ``no_sync()``).  No
    Python runs in the process group's threads (a Python communication
    hook's callback there can abort the process at exit with torch 1.13).
    Use the plain mean loss of the local batch; do not scale it yourself.
    The model's process group must hold the context's ranks; register once.
    Returns model.

    With chunks on (``Context(..., chunks=True)``) each chunk's gradient is
    scaled by the chunk's count/total instead, every forward whose backward
    runs must be under ``no_sync()`` (PlanBatchSampler.chunked_steps enters
    it for each chunk; the backward of a forward outside it raises Error
    before DDP reduces anything), and the step ends in
    one ``torch.distributed.all_reduce`` (SUM) per gradient dtype of the
    accumulated gradients, on the model's process group:
    PlanBatchSampler.chunked_steps runs it after the last chunk, a loop of
    the code's own calls allreduce_gradients(model, ob).  DDP's own
    reduction, and a communication hook of the code's, do not run then.
    The model's buffers are not broadcast at a forward then either: a model
    with buffers needs ``broadcast_buffers=False`` (ranks do different
    numbers of forwards in chunks, so the broadcasts would not match).
    """
    import torch.distributed as dist
    if not isinstance(model, torch.nn.parallel.DistributedDataParallel):
        raise Error(ERR_ARG, "register_ddp: model: %s: expected a DistributedDataParallel"
                    % type(model).__name__)
    group = model.process_group
    if dist.get_world_size(group) != ob.nranks:
        raise Error(ERR_ARG, "register_ddp: the model's process group has %d ranks, the context "
                    "%d: expected the same ranks" % (dist.get_world_size(group), ob.nranks))
    if getattr(model, "_omnibatch_scaling", None) is not None:
        raise Error(ERR_ARG, "register_ddp: model: registered already: its gradients would be "
                    "scaled twice")
    buffers = sum(1 for _ in model.module.buffers())
    if ob.chunked and model.broadcast_buffers and buffers > 0:
        raise Error(ERR_ARG, "register_ddp: model: broadcast_buffers=True and %d buffers with "
                    "chunks on: DDP broadcasts them at a forward, and ranks do different numbers "
                    "of forwards in chunks: build the DistributedDataParallel with "
                    "broadcast_buffers=False" % buffers)
    scaling = _DdpScaling(ob)
    _weigh(model.module.parameters(), ob, scaling.gradient, "register_ddp")
    model.register_forward_pre_hook(scaling.forward)
    model._omnibatch_scaling = scaling
    if ob.chunked:
        _cursor(ob).models.append(model)
    return model


def register_chunks(model, ob):
    """Weight each chunk's gradient as its backward runs, for allreduce_gradients.

    ``model``: a module (not a DistributedDataParallel: register_ddp does
    this for it).  With chunks on, each parameter's gradient of a chunk's
    backward is scaled on its device by the chunk's count/total, so the
    gradients accumulated over the step's chunks are the rank's mean
    gradient over the samples it did times done/total, whatever the number
    of chunks; allreduce_gradients then sums them.  With chunks off the
    hooks leave the gradients alone (allreduce_gradients scales them by the
    step's count/total), so a code may register either way.  Use the plain
    mean loss of each chunk's batch.  Register once, before training.
    Returns model.
    """
    if isinstance(model, torch.nn.parallel.DistributedDataParallel):
        raise Error(ERR_ARG, "register_chunks: model: a DistributedDataParallel: register_ddp "
                    "weighs its chunks")
    if not isinstance(model, torch.nn.Module):
        raise Error(ERR_ARG, "register_chunks: model: %s: expected a torch.nn.Module"
                    % type(model).__name__)
    weights = _ChunkWeights(ob)
    _weigh(model.parameters(), ob, weights.gradient, "register_chunks")
    return model


def _gradients(params):
    """(parameter, gradient, whether backward left one) of each parameter
    that requires one; a zero gradient stands in for a missing one."""
    grads = []
    for i, p in enumerate(params):
        if not p.requires_grad:
            continue
        had = p.grad is not None
        if not had:
            p.grad = torch.zeros_like(p)
        if p.grad.dtype not in (torch.float32, torch.float64):
            raise Error(ERR_ARG, "allreduce_gradients: params[%d] (shape %s): a gradient of "
                        "dtype %s: expected float32 or float64"
                        % (i, tuple(p.shape), p.grad.dtype))
        if p.grad.layout != torch.strided:
            raise Error(ERR_ARG, "allreduce_gradients: params[%d] (shape %s): a gradient of "
                        "layout %s: expected a dense one (torch.strided)"
                        % (i, tuple(p.shape), p.grad.layout))
        grads.append((p, p.grad, had))
    return grads


def _mpi_sum(comm):
    """Sum a flat tensor over comm with one mpi4py Allreduce (through a host copy)."""
    from mpi4py import MPI

    def reduce(flat):
        host = flat if flat.device.type == "cpu" else flat.cpu()
        comm.Allreduce(MPI.IN_PLACE, host.numpy(), op=MPI.SUM)
        if host is not flat:
            flat.copy_(host)
    return reduce


def _group_sum(group):
    """Sum a flat tensor over a torch.distributed process group, on its device."""
    import torch.distributed as dist

    def reduce(flat):
        dist.all_reduce(flat, group=group)
    return reduce


def _chunked_weight(ob, params, model):
    """The factor of gradients weighted chunk by chunk: 1, or 0 when the rank
    did no sample; Error unless the step's chunks are over, the gradients
    were weighted as their backward ran, and (DDP) the step is not reduced yet."""
    fn = "allreduce_gradients"
    if not ob.chunks_over:
        raise Error(ERR_STATE, "%s: step %d is worked in chunks and some are left: iterate them "
                    "to the end (next_chunk() answers count 0) first" % (fn, ob.step.global_step))
    if any(p.requires_grad and getattr(p, "_omnibatch_weighted", None) is not ob for p in params):
        raise Error(ERR_STATE, "%s: chunks on and the gradients not weighted chunk by chunk: "
                    "call register_chunks(model, ob) (or register_ddp) once before training" % fn)
    if model is not None and getattr(model, "_omnibatch_reduced", None) == ob.step.global_step:
        raise Error(ERR_STATE, "%s: step %d: reduced already: chunked_steps reduces a model "
                    "register_ddp registered at the end of its chunks" % (fn, ob.step.global_step))
    return 1.0 if ob.chunk.done > 0 else 0.0


def _sum_gradients(grads, scale, reduce):
    """Each dtype's gradients times scale (zeroed when 0) in one flat buffer,
    summed by reduce, written back; None where no rank's backward gave one."""
    for dtype in (torch.float32, torch.float64):
        group = [(p, g, had) for p, g, had in grads if g.dtype == dtype]
        if not group:
            continue
        with torch.no_grad():
            # After the gradients, one count per parameter, summed in the same
            # reduction: how many ranks' backward gave it a gradient.
            device = group[0][1].device
            had = torch.tensor([float(h) for _, _, h in group], dtype=dtype, device=device)
            flat = torch.cat([g.reshape(-1) for _, g, _ in group] + [had])
            grad = flat[:flat.numel() - len(group)]
            if 0 == scale:
                grad.zero_()
            elif 1 != scale:
                grad.mul_(scale)
            reduce(flat)
            offset = 0
            for (p, g, _), ranks in zip(group, flat[grad.numel():].tolist()):
                if 0 == ranks:
                    p.grad = None       # no rank's backward reached it
                else:
                    g.copy_(grad[offset:offset + g.numel()].view_as(g))
                offset += g.numel()


def allreduce_gradients(params, ob, step=None):
    """Replace each gradient by the global batch's with one reduction per dtype.

    ``params``: a module or an iterable of parameters holding this rank's
    mean gradient (of its step.count samples).  Each is scaled by
    count/total on its device (zeroed when count is 0), flattened into one
    buffer per dtype, summed over the context's communicator with one
    mpi4py Allreduce, and written back.  A GPU buffer is reduced through a
    host copy.  A parameter that no rank's backward reached keeps no
    gradient (None), as in one process training on the global batch and
    under DDP, so the optimizer skips it.  Collective.

    With chunks on, the step's chunks must be over (next_chunk() answered
    count 0) and the gradients weighted chunk by chunk as their backward ran
    (register_chunks, or register_ddp): they are summed as they are (zeroed
    where the rank did no sample).  A DistributedDataParallel model
    (register_ddp) is then summed on its process group with one
    ``torch.distributed.all_reduce`` per dtype, on the gradients' device:
    the step's one reduction (PlanBatchSampler.chunked_steps calls this at
    the end of each step's chunks).  Without chunks DDP reduces in its own
    backward, and a DistributedDataParallel is refused here.
    """
    step = step or ob.step
    if step is None:
        raise Error(ERR_STATE, "allreduce_gradients: no step yet: call next_step() first")
    model = params if isinstance(params, torch.nn.parallel.DistributedDataParallel) else None
    if model is not None and not ob.chunked:
        raise Error(ERR_ARG, "allreduce_gradients: model: a DistributedDataParallel reduces its "
                    "gradients in its own backward (register_ddp): nothing is left to reduce")
    params = list(params.parameters() if isinstance(params, torch.nn.Module) else params)
    if ob.chunked:
        scale = _chunked_weight(ob, params, model)
    else:
        scale = step.mean_scale if step.count > 0 else 0
    if ob.in_compute:
        ob.compute_end()
    grads = _gradients(params)
    _sum_gradients(grads, scale, _group_sum(model.process_group) if model is not None
                   else _mpi_sum(ob.comm))
    if model is not None:
        model._omnibatch_reduced = ob.step.global_step


def _flat_params(params):
    """The parameters that require a gradient, all on the CPU and of one float dtype."""
    if isinstance(params, torch.nn.Module):
        params = params.parameters()
    params = [p for p in params if p.requires_grad]
    if not params:
        raise Error(ERR_ARG, "AsyncSGD: params: no parameter requires a gradient")
    dtype = params[0].dtype
    for i, p in enumerate(params):
        if p.device.type != "cpu":
            raise Error(ERR_ARG, "AsyncSGD: params[%d] is on %s: expected every parameter on the "
                        "CPU (the model travels through host memory)" % (i, p.device))
        if p.dtype != dtype or dtype not in (torch.float32, torch.float64):
            raise Error(ERR_ARG, "AsyncSGD: params[%d] is %s: expected every parameter float32, or "
                        "every one float64" % (i, p.dtype))
    return params


class AsyncSGD:
    """Asynchronous SGD of a PyTorch model on omnibatch's parameter server.

    ::

        opt = AsyncSGD(comm, model, global_batch=256, dataset_size=N, lr=0.05, momentum=0.5)
        if opt.is_server:
            opt.serve()                           # until every worker is done
        else:
            task = opt.pull()                     # the model, and the first slice
            while not task.done:
                x, y = data[opt.indices(task)]
                opt.zero_grad()
                loss_fn(model(x), y).backward()   # the mean loss of the slice
                task = opt.step()                 # push; the new model and the next slice
        opt.close()

    The model's parameters (CPU, all float32 or all float64) become views of
    one flat buffer, which the servers update and each worker receives: the
    update (SGD with momentum and weight decay, the step scaled by the batch
    and shrunk for stale gradients, drops past the bound) is the server's,
    so no torch optimizer runs.  The options are ParameterServer's.
    Creation and close() are collective over ``comm``.
    """

    def __init__(self, comm, params, global_batch, dataset_size, **options):
        try:
            self.params = _flat_params(params)
        except Error:
            join_failed(comm)
            raise
        n = sum(p.numel() for p in self.params)
        dtype = np.float32 if self.params[0].dtype == torch.float32 else np.float64
        self.flat = np.empty(n, dtype=dtype)
        self.grad = np.zeros(n, dtype=dtype)
        flat, self._grad = torch.from_numpy(self.flat), torch.from_numpy(self.grad)
        self._slices = []
        offset = 0
        with torch.no_grad():
            for p in self.params:
                k = p.numel()
                flat[offset:offset + k].copy_(p.reshape(-1))
                p.data = flat[offset:offset + k].view_as(p)
                self._slices.append((offset, k))
                offset += k
        self.ps = ParameterServer(comm, self.flat, global_batch, dataset_size, **options)
        self.is_server = self.ps.is_server

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def zero_grad(self):
        for p in self.params:
            p.grad = None

    def serve(self, max_pushes=0):
        """Servers: ParameterServer.serve()."""
        return self.ps.serve(max_pushes)

    def pull(self):
        """Workers: the first task; the model is in the parameters."""
        return self.ps.pull()

    def step(self):
        """Workers: push the gradients (a parameter without one counts zero); the next task,
        with the new model in the parameters."""
        with torch.no_grad():
            for p, (offset, k) in zip(self.params, self._slices):
                if p.grad is None:
                    self._grad[offset:offset + k].zero_()
                else:
                    self._grad[offset:offset + k].copy_(p.grad.reshape(-1))
        return self.ps.push(self.grad)

    def indices(self, task):
        return self.ps.indices(task)

    def stats(self):
        return self.ps.stats()

    def worker_stats(self, worker):
        return self.ps.worker_stats(worker)

    def close(self):
        self.ps.close()
