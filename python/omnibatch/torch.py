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

Neither path hands device memory to the C library: the scaling is done by
torch on the tensors' device, and the mpi4py path reduces a host copy of a
GPU gradient.
"""
import os
import socket

import numpy as np
import torch

from ._context import ERR_ARG, ERR_STATE, Error
from ._ps import ParameterServer, join_failed

__all__ = ["PlanBatchSampler", "register_ddp", "allreduce_gradients", "init_process_group",
           "AsyncSGD"]


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
                        "loop over sampler.steps(loader) so each batch belongs to its step")
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
        for step in self.ob.steps(epochs=epochs, count=count):
            self.ob.compute_begin()
            yield step, self._load(loader, step)


class _DdpScaling:
    """register_ddp's hooks: one on each parameter's gradient, and one at
    the end of each backward."""

    def __init__(self, ob):
        self.ob = ob
        self.queued = False
        self.syncs = True               # the last forward's: this backward reduces

    def forward(self, model, inputs):
        """DDP decides at the forward whether the backward reduces: not under
        no_sync(), where the step's compute goes on in the next micro-batch."""
        self.syncs = model.require_backward_grad_sync

    def gradient(self, grad):
        """This rank's gradient of one parameter, before DDP's bucket takes
        it: scaled by P*count/total, zeros when count is 0 (whatever an
        empty batch left there, NaN included)."""
        self.ob._live()                 # closed: raises, rather than scale by a stale step
        step = self.ob.step
        if step is None:
            raise Error(ERR_STATE, "register_ddp: backward before the first step: begin each "
                        "step with the context (PlanBatchSampler.steps or next_step)")
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


# The autograd engine's callbacks at the end of a backward, run in the order
# queued (DDP's reducer queues its own there once the last bucket is ready);
# in a torch without it, the step's compute ends at the next step instead.
_queue_callback = getattr(getattr(torch.autograd.Variable, "_execution_engine", None),
                          "queue_callback", None)


def register_ddp(model, ob):
    """Make a DistributedDataParallel model's averaged gradient the global batch's.

    Hooks each parameter's gradient: this rank's is scaled on its device by
    P*count/total of the context's current step (zeros when count is 0)
    before DDP's bucket takes it, and DDP's own average (or a communication
    hook that averages, such as torch's fp16 compression) then gives the
    global batch's gradient.  The step's compute ends when the local
    backward of a forward that reduces does (not under ``no_sync()``).  No Python runs in the process group's threads (a Python
    communication hook's callback there can abort the process at exit with
    torch 1.13).  Use the plain mean loss of the local batch; do not scale
    it yourself.  The model's process group must hold the context's ranks;
    register once.  Returns model.
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
    scaling = _DdpScaling(ob)
    for p in model.module.parameters():
        if p.requires_grad:
            p.register_hook(scaling.gradient)
    model.register_forward_pre_hook(scaling.forward)
    model._omnibatch_scaling = scaling
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


def allreduce_gradients(params, ob, step=None):
    """Replace each gradient by the global batch's with one mpi4py Allreduce per dtype.

    ``params``: a module or an iterable of parameters holding this rank's
    mean gradient (of its step.count samples).  Each is scaled by
    count/total on its device (zeroed when count is 0), flattened into one
    buffer per dtype, summed over the context's communicator, and written
    back.  A GPU buffer is reduced through a host copy.  A parameter that
    no rank's backward reached keeps no gradient (None), as in one process
    training on the global batch and under DDP, so the optimizer skips it.
    Collective.
    """
    from mpi4py import MPI
    step = step or ob.step
    if step is None:
        raise Error(ERR_STATE, "allreduce_gradients: no step yet: call next_step() first")
    if isinstance(params, torch.nn.Module):
        params = params.parameters()
    if ob.in_compute:
        ob.compute_end()
    grads = _gradients(params)
    for dtype in (torch.float32, torch.float64):
        group = [(p, g, had) for p, g, had in grads if g.dtype == dtype]
        if not group:
            continue
        with torch.no_grad():
            # After the gradients, one count per parameter, summed in the same
            # Allreduce: how many ranks' backward gave it a gradient.
            device = group[0][1].device
            had = torch.tensor([float(h) for _, _, h in group], dtype=dtype, device=device)
            flat = torch.cat([g.reshape(-1) for _, g, _ in group] + [had])
            grad = flat[:flat.numel() - len(group)]
            if 0 == step.count:
                grad.zero_()
            else:
                grad.mul_(step.mean_scale)
            host = flat if flat.device.type == "cpu" else flat.cpu()
            ob.comm.Allreduce(MPI.IN_PLACE, host.numpy(), op=MPI.SUM)
            if host is not flat:
                flat.copy_(host)
            offset = 0
            for (p, g, _), ranks in zip(group, host[grad.numel():].tolist()):
                if 0 == ranks:
                    p.grad = None       # no rank's backward reached it
                else:
                    g.copy_(grad[offset:offset + g.numel()].view_as(g))
                offset += g.numel()


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
