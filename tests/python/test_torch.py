# Copyright (c) 2026 The omnibatch authors.
"""PyTorch with omnibatch, run by torch.sh under mpirun:

    test_torch.py TEST...      (several tests share one start of the processes)

    exact   DDP (gloo) and mpi4py training under an unequal plan with a short last
            step end on the parameters of one process training on the whole global
            batch (float32 and float64)
    loader  DataLoader with worker processes: each batch is its step's slice, of the
            collate's type (a namedtuple), every sample once per epoch; misuse
            raises Error
    unused  allreduce_gradients with a parameter no rank uses: it keeps no
            gradient, as in one process (weight decay leaves it alone)
    exit    register_ddp ends each step's compute with the local backward that
            reduces (not one under no_sync()), refuses
            a second registration and a backward after the context is closed,
            and the process then exits at once: nothing of
            the package may still run in the process group's threads (torch.sh
            runs it several times: a Python callback there aborted the
            interpreter's exit in about half of the runs)
"""
import collections
import sys

import numpy as np
import torch
import torch.distributed as dist
import torch.nn.functional as F
from mpi4py import MPI
from torch.utils.data import DataLoader, Dataset, TensorDataset

import omnibatch
import omnibatch.torch as obt

comm = MPI.COMM_WORLD
P, rank = comm.Get_size(), comm.Get_rank()
# 3 steps per epoch, the last one of 1 sample: every rank but one gets none.
N, B, D, CLASSES, EPOCHS, LR = 41, 20, 6, 3, 2, 0.5
TOLERANCE = {torch.float32: 1e-5, torch.float64: 1e-12}


def unequal_plan():
    """Rank i's weight is 2^(P-1-i): far from equal, every rank at least 1."""
    weights = 2 ** np.arange(P - 1, -1, -1)
    plan = np.maximum(1, (B * weights) // weights.sum())
    plan[0] += B - plan.sum()
    return [int(b) for b in plan]


def model_and_data(dtype):
    torch.manual_seed(3)
    model = torch.nn.Sequential(torch.nn.Linear(D, 8), torch.nn.Tanh(),
                                torch.nn.Linear(8, CLASSES)).to(dtype)
    x = torch.randn(N, D, dtype=dtype)
    y = torch.randint(0, CLASSES, (N,))
    return model, x, y


def reference(ob, dtype):
    """One process, the whole global batch of every step, the same order."""
    model, x, y = model_and_data(dtype)
    opt = torch.optim.SGD(model.parameters(), lr=LR)
    for k in range(EPOCHS * ob.steps_per_epoch):
        epoch, step = divmod(k, ob.steps_per_epoch)
        idx = torch.from_numpy(ob.permutation(epoch)[step * B:(step + 1) * B])
        opt.zero_grad()
        F.cross_entropy(model(x[idx]), y[idx]).backward()
        opt.step()
    return [p.detach() for p in model.parameters()]


def train(ob, dtype, path):
    """EPOCHS of SGD through the sampler: path "ddp" (register_ddp) or "mpi4py"."""
    model, x, y = model_and_data(dtype)
    if path == "ddp":
        model = obt.register_ddp(torch.nn.parallel.DistributedDataParallel(model), ob)
    opt = torch.optim.SGD(model.parameters(), lr=LR)
    sampler = obt.PlanBatchSampler(ob)
    loader = DataLoader(TensorDataset(x, y), batch_sampler=sampler)
    saw_empty = False
    for step, (xb, yb) in sampler.steps(loader, epochs=EPOCHS):
        saw_empty |= step.count == 0
        assert len(xb) == step.count
        opt.zero_grad()
        F.cross_entropy(model(xb), yb).backward()  # the plain mean loss; NaN on an empty batch
        if path == "mpi4py":
            obt.allreduce_gradients(model, ob)
        opt.step()
    module = model.module if path == "ddp" else model
    return [p.detach() for p in module.parameters()], comm.allreduce(saw_empty, op=MPI.LOR)


def relative_error(params, ref):
    return max(float((p - r).norm() / r.norm()) for p, r in zip(params, ref))


def exact():
    obt.init_process_group(comm, backend="gloo")
    plan = unequal_plan()
    failures = 0
    for dtype in (torch.float32, torch.float64):
        for path in ("ddp", "mpi4py"):
            with omnibatch.Context(comm, global_batch=B, dataset_size=N, adaptive=False) as ob:
                ob.set_plan(plan)
                params, saw_empty = train(ob, dtype, path)
                ref = reference(ob, dtype)
            assert saw_empty, "the plan gave no rank an empty batch: the test misses that path"
            err = comm.allreduce(relative_error(params, ref), op=MPI.MAX)
            ok = err <= TOLERANCE[dtype] and all(torch.isfinite(p).all() for p in params)
            failures += not ok
            if rank == 0:
                print("test_torch: exact: np %d %s %-6s plan %s rel_err %.3g (limit %g) %s"
                      % (P, str(dtype).split(".")[1], path, plan, err, TOLERANCE[dtype],
                         "ok" if ok else "FAILED"), flush=True)
    dist.destroy_process_group()
    return failures


class Branches(torch.nn.Module):
    """A model with a branch no sample takes (as a condition that never holds)."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(5)
        self.used = torch.nn.Linear(D, CLASSES)
        self.unused = torch.nn.Linear(D, CLASSES)

    def forward(self, x):
        return self.used(x)


def unused():
    """A parameter no rank's backward reaches has no gradient in one process
    training on the global batch: SGD with weight decay leaves it alone.
    allreduce_gradients must leave its gradient None too, not a zero that
    the decay acts on; a sparse gradient is refused by name."""
    _, x, y = model_and_data(torch.float32)
    failures = 0
    with omnibatch.Context(comm, global_batch=B, dataset_size=N, adaptive=False) as ob:
        ob.set_plan(unequal_plan())
        model = Branches()
        opt = torch.optim.SGD(model.parameters(), lr=LR, weight_decay=0.1)
        sampler = obt.PlanBatchSampler(ob)
        loader = DataLoader(TensorDataset(x, y), batch_sampler=sampler)
        for step, (xb, yb) in sampler.steps(loader, epochs=1):
            opt.zero_grad()
            F.cross_entropy(model(xb), yb).backward()
            obt.allreduce_gradients(model, ob)
            opt.step()
        ref = Branches()
        ref_opt = torch.optim.SGD(ref.parameters(), lr=LR, weight_decay=0.1)
        for k in range(ob.steps_per_epoch):
            idx = torch.from_numpy(ob.permutation(0)[k * B:(k + 1) * B])
            ref_opt.zero_grad()
            F.cross_entropy(ref(x[idx]), y[idx]).backward()
            ref_opt.step()
        for (name, p), r in zip(model.named_parameters(), ref.parameters()):
            err = comm.allreduce(float((p - r).norm() / r.norm()), op=MPI.MAX)
            ok = err <= TOLERANCE[torch.float32] and (p.grad is None) == (r.grad is None)
            failures += not ok
            if rank == 0:
                print("test_torch: unused: np %d %-13s rel_err %.3g grad %s (one process: %s) %s"
                      % (P, name, err, "None" if p.grad is None else "set",
                         "None" if r.grad is None else "set", "ok" if ok else "FAILED"), flush=True)
        ob.next_step()
        emb = torch.nn.Embedding(4, 2, sparse=True)
        emb(torch.tensor([1])).sum().backward()
        expect_error("sparse", lambda: obt.allreduce_gradients(emb, ob), "sparse")
    return failures


class Numbered(Dataset):
    """Sample i is (i, a tensor of i): a batch says which samples it holds."""

    def __len__(self):
        return N

    def __getitem__(self, i):
        return i, torch.full((2,), float(i))


Sample = collections.namedtuple("Sample", "index value")


class NamedNumbered(Numbered):
    """Numbered's samples as a namedtuple: default_collate keeps the type."""

    def __getitem__(self, i):
        return Sample(*super().__getitem__(i))


def expect_error(what, fn, needle):
    try:
        fn()
    except omnibatch.Error as e:
        assert needle in str(e), (what, str(e))
        return
    raise AssertionError("%s: no omnibatch.Error" % what)


def loader():
    with omnibatch.Context(comm, global_batch=B, dataset_size=N) as ob:
        ob.set_plan(unequal_plan())
        sampler = obt.PlanBatchSampler(ob)
        data = DataLoader(Numbered(), batch_sampler=sampler, num_workers=2, prefetch_factor=2,
                          persistent_workers=True)
        seen = []
        for step, (ids, values) in sampler.steps(data, epochs=EPOCHS):
            want = ob.indices(step).tolist()
            assert ids.tolist() == want, (step, ids.tolist(), want)
            assert values.shape == (step.count, 2) and values[:, 0].tolist() == want
            seen.extend(want)
            with ob.compute():          # inside the compute steps() began: only ends it
                pass
            if step.step + 1 == ob.steps_per_epoch:
                everyone = sorted(sum(comm.allgather(seen), []))
                assert everyone == list(range(N)), (step.epoch, everyone)
                seen = []
        expect_error("loader iterated alone", lambda: next(iter(data)), "sampler.steps(loader)")
        plain = DataLoader(Numbered(), batch_sampler=sampler, num_workers=1)
        expect_error("workers not persistent", lambda: next(sampler.steps(plain)),
                     "persistent_workers=True")
        other = DataLoader(Numbered(), batch_size=4)
        expect_error("another loader", lambda: next(sampler.steps(other)), "batch_sampler")
        expect_error("not DDP", lambda: obt.register_ddp(torch.nn.Linear(2, 2), ob),
                     "DistributedDataParallel")
        expect_error("chunks", lambda: obt.PlanBatchSampler(ob, chunks=-1), "chunks=-1")
        # The batch's type is the collate's with workers (chunks joined) and on an
        # empty step alike, as without them.
        sampler = obt.PlanBatchSampler(ob)
        named = DataLoader(NamedNumbered(), batch_sampler=sampler, num_workers=2,
                           persistent_workers=True)
        for step, batch in sampler.steps(named, epochs=1):
            assert isinstance(batch, Sample), (step, type(batch))
            assert batch.index.tolist() == ob.indices(step).tolist(), (step, batch)
    if rank == 0:
        print("test_torch: loader: np %d, 2 workers: each batch its step's, every sample "
              "once per epoch ok" % P, flush=True)
    return 0


def exit_after_ddp():
    obt.init_process_group(comm, backend="gloo")
    ob = omnibatch.Context(comm, global_batch=B, dataset_size=N)
    model, x, y = model_and_data(torch.float32)
    model = obt.register_ddp(torch.nn.parallel.DistributedDataParallel(model), ob)
    expect_error("registered twice", lambda: obt.register_ddp(model, ob), "registered already")
    opt = torch.optim.SGD(model.parameters(), lr=LR)
    for _ in range(3 * ob.steps_per_epoch):
        step = ob.next_step()
        ob.compute_begin()              # as PlanBatchSampler.steps does
        idx = torch.from_numpy(ob.indices(step))
        opt.zero_grad()
        # Two backwards, the first under no_sync(): the compute goes on.
        with model.no_sync():
            F.cross_entropy(model(x[idx]), y[idx]).backward()
        assert ob.in_compute, "a backward under no_sync() ended the step's compute"
        F.cross_entropy(model(x[idx]), y[idx]).backward()
        assert not ob.in_compute, "the local backward did not end the step's compute"
        opt.step()
    ob.close()
    expect_error("backward after close",
                 lambda: F.cross_entropy(model(x[:2]), y[:2]).backward(), "closed")
    if rank == 0:
        print("test_torch: exit: np %d: compute ends with the backward; exiting now" % P,
              flush=True)
    return 0                            # no destroy_process_group: exit as a script does


if __name__ == "__main__":
    torch.set_num_threads(1)
    tests = {"exact": exact, "loader": loader, "unused": unused, "exit": exit_after_ddp}
    sys.exit(1 if sum(tests[name]() for name in sys.argv[1:]) else 0)
