# Copyright (c) 2026 The omnibatch authors.
"""Steps worked in chunks through PyTorch, run by torch_chunks.sh under mpirun:

    test_torch_chunks.py TEST...     (several tests share one start of the processes)

    exact   the last rank sleeps inside its first chunk of every step, so the
            others take the tail of its range; through DDP (gloo; the sampler's
            chunked_steps, and a loop of the code's own over ob.chunks()) and
            mpi4py (register_chunks, allreduce_gradients), float32 and float64:
            every position of every step done by exactly one rank, every sample
            once per epoch, each step's reduced gradient the global batch's
            (every component within 1e-6 (float32) or 1e-12 (float64) times
            1 + its size, against float64 on the whole global batch), exactly one reduction per rank per step (DDP: one
            torch.distributed.all_reduce, none of DDP's own, counted by a
            communication hook; mpi4py: one Allreduce), samples moved
    loader  chunked_steps over a DataLoader with worker processes: each batch
            is its chunk's samples, every position of a step once, every
            sample once per epoch; with chunks off, one chunk per step, the
            step's batch
    misuse  each way of getting chunks wrong raises Error with its line
            before any rank enters a collective
"""
import sys
import time

import numpy as np
import torch
import torch.distributed as dist
import torch.nn.functional as F
from mpi4py import MPI
from torch.distributed.algorithms.ddp_comm_hooks import default_hooks
from torch.utils.data import DataLoader, Dataset, TensorDataset

import omnibatch
import omnibatch.torch as obt

comm = MPI.COMM_WORLD
P, rank = comm.Get_size(), comm.Get_rank()
# 5 steps per epoch, the last one of 11 samples.
N, B, D, CLASSES, EPOCHS, LR = 203, 48, 6, 3, 2, 0.5
TOLERANCE = {torch.float32: 1e-6, torch.float64: 1e-12}
SLEEPER = P - 1
# The sleeper's nap inside its first chunk: long beside a chunk's compute, so
# the others finish their ranges and take from its tail.
NAP_S = 0.05


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


def step_positions(ob, step):
    """The samples of the whole step, in the order of the epoch's permutation."""
    return ob.permutation(step.epoch)[step.step * B:step.step * B + step.total]


class Count:
    """The reductions of a step: torch.distributed.all_reduce calls (the
    package's, and those of DDP's reducer, which the communication hook
    routes through it), the hook's calls, and mpi4py Allreduce calls on the
    context's communicator."""

    def __init__(self):
        self.all_reduce = self.ddp = self.mpi = 0
        self.real = dist.all_reduce

    def install(self):
        def all_reduce(*args, **kwargs):
            self.all_reduce += 1
            return self.real(*args, **kwargs)
        dist.all_reduce = all_reduce

    def uninstall(self):
        dist.all_reduce = self.real

    def hook(self, state, bucket):
        self.ddp += 1
        return default_hooks.allreduce_hook(state, bucket)

    def reset(self):
        self.all_reduce = self.ddp = self.mpi = 0


class CountingComm:
    """The context's communicator, counting its Allreduce calls."""

    def __init__(self, inner, count):
        self._inner, self._count = inner, count

    def Allreduce(self, *args, **kwargs):
        self._count.mpi += 1
        return self._inner.Allreduce(*args, **kwargs)

    def __getattr__(self, name):
        return getattr(self._inner, name)


def reference_gradient(module, x, y, positions, dtype=torch.float64):
    """The gradient of the whole global batch's mean loss in one process,
    from module's parameters, computed in dtype."""
    copy = torch.nn.Sequential(torch.nn.Linear(D, 8), torch.nn.Tanh(),
                               torch.nn.Linear(8, CLASSES)).to(dtype)
    with torch.no_grad():
        for c, p in zip(copy.parameters(), module.parameters()):
            c.copy_(p.detach())
    idx = torch.from_numpy(positions)
    F.cross_entropy(copy(x[idx].to(dtype)), y[idx]).backward()
    return [c.grad.to(torch.float64) for c in copy.parameters()]


def gradient_error(module, ref):
    """max |g - want| / (1 + |want|) over every component, as
    tests/mpi/mpi_api_chunks.c judges the C API's gradient; and the error
    of the whole gradient relative to its norm, to print."""
    return gradients_apart([p.grad for p in module.parameters()], ref)


def gradients_apart(grads, ref):
    worst = max(float(((g.to(torch.float64) - r).abs() / (1 + r.abs())).max())
                for g, r in zip(grads, ref))
    norm = max(float((g.to(torch.float64) - r).norm() / r.norm()) for g, r in zip(grads, ref))
    return worst, norm


class StepCheck:
    """What one rank saw of each step, judged on every rank."""

    def __init__(self, ob):
        self.ob = ob
        self.epoch_seen = []
        self.failures = []
        self.worst = self.worst_norm = self.floor = 0.0

    def positions(self, step, mine):
        everyone = sum(comm.allgather(list(mine)), [])
        want = step_positions(self.ob, step).tolist()
        if sorted(everyone) != sorted(want) or len(set(everyone)) != len(everyone):
            self.failures.append("step %d: samples %s, the step's %s"
                                 % (step.global_step, sorted(everyone), sorted(want)))
        self.epoch_seen.extend(mine)
        if step.step + 1 == self.ob.steps_per_epoch:
            seen = sorted(sum(comm.allgather(self.epoch_seen), []))
            if seen != list(range(N)):
                self.failures.append("epoch %d: samples seen %s" % (step.epoch, seen))
            self.epoch_seen = []

    def gradient(self, step, module, x, y, dtype):
        positions = step_positions(self.ob, step)
        ref = reference_gradient(module, x, y, positions)
        err, norm = gradient_error(module, ref)
        # What one process computing in the model's dtype is off by: the floor.
        _, floor = gradients_apart(reference_gradient(module, x, y, positions, dtype), ref)
        err, norm = comm.allreduce(err, op=MPI.MAX), comm.allreduce(norm, op=MPI.MAX)
        self.worst, self.worst_norm = max(self.worst, err), max(self.worst_norm, norm)
        self.floor = max(self.floor, floor)
        if not err <= TOLERANCE[dtype]:
            self.failures.append("step %d: gradient error %.3g (limit %g)"
                                 % (step.global_step, err, TOLERANCE[dtype]))

    def reductions(self, step, count, want):
        got = (count.all_reduce, count.ddp, count.mpi)
        agreed = comm.allgather(got)
        if any(g != want for g in agreed):
            self.failures.append("step %d: (all_reduce, DDP's, mpi4py) per rank %s: expected %s"
                                 % (step.global_step, agreed, want))


def nap_in_first_chunk(first):
    if first and rank == SLEEPER:
        time.sleep(NAP_S)


def run_sampler(ob, model, module, x, y, dtype, path, check, count):
    """chunked_steps: DDP reduces at the end of the chunks, mpi4py here."""
    opt = torch.optim.SGD(module.parameters(), lr=LR)
    sampler = obt.PlanBatchSampler(ob)
    ids = torch.arange(N)
    loader = DataLoader(TensorDataset(x, y, ids), batch_sampler=sampler)
    for step, chunks in sampler.chunked_steps(loader, epochs=EPOCHS):
        count.reset()
        opt.zero_grad()
        mine = []
        for xb, yb, ib in chunks:
            nap_in_first_chunk(not mine)
            assert ib.tolist() == ob.indices(chunks.chunk).tolist(), (chunks.chunk, ib)
            mine.extend(ib.tolist())
            F.cross_entropy(model(xb), yb).backward()     # the chunk's plain mean loss
        if path == "mpi4py":
            obt.allreduce_gradients(model, ob)
        assert chunks.chunk.count == 0 and chunks.chunk.done == len(mine), chunks.chunk
        check.positions(step, mine)
        check.reductions(step, count, (1, 0, 0) if path == "ddp" else (0, 0, 1))
        check.gradient(step, module, x, y, dtype)
        opt.step()


def run_own_loop(ob, model, module, x, y, dtype, check, count):
    """DDP in a loop of the code's own: next_chunk() until count 0, each
    chunk under no_sync(), then allreduce_gradients(model, ob)."""
    opt = torch.optim.SGD(module.parameters(), lr=LR)
    for step in ob.steps(epochs=EPOCHS):
        count.reset()
        opt.zero_grad()
        mine = []
        for chunk in ob.chunks():
            nap_in_first_chunk(not mine)
            idx = ob.indices(chunk)
            mine.extend(idx.tolist())
            rows = torch.from_numpy(idx)
            with model.no_sync():
                F.cross_entropy(model(x[rows]), y[rows]).backward()
        obt.allreduce_gradients(model, ob)
        check.positions(step, mine)
        check.reductions(step, count, (1, 0, 0))
        check.gradient(step, module, x, y, dtype)
        opt.step()


def exact():
    obt.init_process_group(comm, backend="gloo")
    count = Count()
    count.install()
    failures = 0
    for dtype in (torch.float32, torch.float64):
        for path in ("ddp", "ddp-own-loop", "mpi4py"):
            model, x, y = model_and_data(dtype)
            module = model
            with omnibatch.Context(comm, global_batch=B, dataset_size=N, adaptive=False,
                                   chunks=True) as ob:
                ob.comm = CountingComm(ob.comm, count)
                ob.set_plan(unequal_plan())
                if path.startswith("ddp"):
                    model = torch.nn.parallel.DistributedDataParallel(model)
                    model.register_comm_hook(model.process_group, count.hook)
                    obt.register_ddp(model, ob)
                else:
                    obt.register_chunks(model, ob)
                check = StepCheck(ob)
                if path == "ddp-own-loop":
                    run_own_loop(ob, model, module, x, y, dtype, check, count)
                else:
                    run_sampler(ob, model, module, x, y, dtype, path, check, count)
                stats = ob.stats()
            taken = comm.allreduce(stats.samples_taken)
            given = comm.allreduce(stats.samples_given)
            if not (taken > 0 and taken == given):
                check.failures.append("samples taken %d, given %d: expected some moved, as many "
                                      "given as taken" % (taken, given))
            # Every rank applied the same gradient: the same parameters.
            flat = torch.cat([p.detach().reshape(-1) for p in module.parameters()]).numpy()
            if not all(np.array_equal(flat, other) for other in comm.allgather(flat)):
                check.failures.append("the ranks' parameters differ")
            failures += bool(check.failures)
            if rank == 0:
                print("test_torch_chunks: exact: np %d %s %-12s %d steps, samples moved %d, "
                      "gradient error <= %.3g (limit %g; relative to its norm %.3g, one "
                      "process in %s %.3g), one reduction per step %s"
                      % (P, str(dtype).split(".")[1], path, EPOCHS * ob.steps_per_epoch, taken,
                         check.worst, TOLERANCE[dtype], check.worst_norm,
                         str(dtype).split(".")[1], check.floor,
                         "ok" if not check.failures else "FAILED: " + "; ".join(check.failures)),
                      flush=True)
    count.uninstall()
    dist.destroy_process_group()
    return failures


class Numbered(Dataset):
    """Sample i is (i, a tensor of i): a batch says which samples it holds."""

    def __len__(self):
        return N

    def __getitem__(self, i):
        return i, torch.full((2,), float(i))


def loader():
    failures = 0
    for chunked in (True, False):
        with omnibatch.Context(comm, global_batch=B, dataset_size=N, adaptive=False,
                               chunks=chunked) as ob:
            ob.set_plan(unequal_plan())
            sampler = obt.PlanBatchSampler(ob)
            data = DataLoader(Numbered(), batch_sampler=sampler, num_workers=2,
                              prefetch_factor=2, persistent_workers=True)
            check = StepCheck(ob)
            batches = 0
            for step, chunks in sampler.chunked_steps(data, epochs=EPOCHS):
                mine = []
                for ids, values in chunks:
                    nap_in_first_chunk(chunked and not mine)
                    want = ob.indices(chunks.chunk).tolist()
                    assert ids.tolist() == want, (chunks.chunk, ids.tolist(), want)
                    assert values.shape == (len(want), 2) and values[:, 0].tolist() == want
                    mine.extend(want)
                    batches += 1
                assert chunks.over and chunks.chunk.done == len(mine), chunks.chunk
                if not chunked:
                    assert chunks.chunk.start == step.start and chunks.chunk.count == step.count
                check.positions(step, mine)
            steps = EPOCHS * ob.steps_per_epoch
            if not chunked and batches != steps:
                check.failures.append("chunks off: %d batches in %d steps" % (batches, steps))
            failures += bool(check.failures)
            if rank == 0:
                print("test_torch_chunks: loader: np %d, 2 workers, chunks %s: %d batches in %d "
                      "steps, each its chunk's, every sample once per step and epoch %s"
                      % (P, "on" if chunked else "off", batches, steps,
                         "ok" if not check.failures else "FAILED: " + "; ".join(check.failures)),
                      flush=True)
    return failures


def expect_error(what, fn, needle):
    try:
        fn()
    except omnibatch.Error as e:
        assert needle in str(e) and "\n" not in str(e), (what, str(e))
        return
    raise AssertionError("%s: no omnibatch.Error" % what)


def misuse():
    obt.init_process_group(comm, backend="gloo")
    model, x, y = model_and_data(torch.float32)
    with omnibatch.Context(comm, global_batch=B, dataset_size=N, chunks=True) as ob:
        sampler = obt.PlanBatchSampler(ob)
        loader = DataLoader(TensorDataset(x, y), batch_sampler=sampler)
        expect_error("steps() in chunks", lambda: next(sampler.steps(loader)), "chunked_steps")
        with_buffers = torch.nn.Sequential(torch.nn.Linear(D, 4), torch.nn.BatchNorm1d(4))
        expect_error("buffers broadcast",
                     lambda: obt.register_ddp(
                         torch.nn.parallel.DistributedDataParallel(with_buffers), ob),
                     "broadcast_buffers=False")
        obt.register_ddp(torch.nn.parallel.DistributedDataParallel(
            with_buffers, broadcast_buffers=False), ob)
        expect_error("register_chunks on DDP",
                     lambda: obt.register_chunks(torch.nn.parallel.DistributedDataParallel(model),
                                                 ob), "register_ddp")
        step = ob.next_step()
        expect_error("indices of a chunked step", lambda: ob.indices(step), "indices(next_chunk())")
        expect_error("reduced before the chunks are over",
                     lambda: obt.allreduce_gradients(model, ob), "some are left")
        expect_error("next step with chunks left", ob.next_step, "some are left")
        for _ in ob.chunks():
            pass
        expect_error("next_chunk after count 0", ob.next_chunk, "none was left already")
        expect_error("not weighted by chunk", lambda: obt.allreduce_gradients(model, ob),
                     "register_chunks(model, ob)")
        obt.register_chunks(model, ob)
        expect_error("registered twice", lambda: obt.register_chunks(model, ob),
                     "registered already")
        expect_error("backward outside a chunk",
                     lambda: F.cross_entropy(model(x[:2]), y[:2]).backward(), "outside a chunk")
        model.zero_grad()
        obt.allreduce_gradients(model, ob)      # everyone: the step ends
        ddp = torch.nn.parallel.DistributedDataParallel(model_and_data(torch.float32)[0])
        obt.register_ddp(ddp, ob)
        ob.next_step()
        with torch.no_grad():
            ddp(x[:2])                  # a forward alone: nothing for DDP to reduce
        expect_error("backward outside no_sync",
                     lambda: F.cross_entropy(ddp(x[:2]), y[:2]).backward(), "no_sync()")
        for _ in ob.chunks():
            pass
        obt.allreduce_gradients(ddp, ob)
        expect_error("DDP reduced twice", lambda: obt.allreduce_gradients(ddp, ob),
                     "reduced already")
        # A step's chunks left before their end: the sampler says so.
        loader = DataLoader(TensorDataset(x, y), batch_sampler=obt.PlanBatchSampler(ob))
        steps = loader.batch_sampler.chunked_steps(loader)
        _, chunks = next(steps)
        expect_error("StepChunks iterated twice", lambda: (iter(chunks), iter(chunks)),
                     "iterated already")
        expect_error("chunks not iterated to the end", lambda: next(steps),
                     "not iterated to the end")
    with omnibatch.Context(comm, global_batch=B, dataset_size=N) as ob:
        ob.next_step()
        expect_error("DDP reduced without chunks",
                     lambda: obt.allreduce_gradients(ddp, ob), "own backward")
        expect_error("next_chunk with chunks off", ob.next_chunk, "chunks are off")
    dist.destroy_process_group()
    if rank == 0:
        print("test_torch_chunks: misuse: np %d: every misuse one line, no rank left waiting ok"
              % P, flush=True)
    return 0


if __name__ == "__main__":
    torch.set_num_threads(1)
    tests = {"exact": exact, "loader": loader, "misuse": misuse}
    sys.exit(1 if sum(tests[name]() for name in sys.argv[1:]) else 0)
