# Copyright (c) 2026 The omnibatch authors.
"""How a step worked in chunks ends under DDP: the ways side by side.

A rank's number of chunks is known only when next_chunk() answers count 0,
after its last chunk's backward, so that backward cannot be the one DDP
reduces in.  The step must still end in one reduction per rank.  Measured
here, on the same chunked steps (Context(chunks=True), the library's
chunks), Fashion-MNIST (Debian's dataset-fashion-mnist), every rank on
MPI_COMM_WORLD:

    package     omnibatch.torch as shipped: register_ddp weighs each chunk's
                gradient by count/total, every chunk under no_sync(), then one
                torch.distributed.all_reduce (SUM) of the accumulated gradients
                (PlanBatchSampler.chunked_steps)
    zero-loss   each chunk under no_sync(), its gradient scaled by P*count/total
                by hooks on the parameters (as package's), then a forward of an
                empty batch and a backward of 0 * its sum outside no_sync():
                DDP's own bucketed reduction (an average) of what the chunks
                accumulated
    loss-scaled zero-loss with each chunk's loss scaled by P*count/total instead
                of hooks: what weighting the gradients chunk by chunk costs
    mpi4py      register_chunks, then allreduce_gradients: one mpi4py
                Allreduce of a host buffer
    unchunked   no chunks: one forward and backward of the rank's batch, DDP's
                reduction overlapping the backward (register_ddp, steps()):
                what chunks cost beside the usual step

Rounds interleave the ways (the order rotates); each round times --steps
steps of each.  Printed per way: the median step (rank 0's wall time) and
the median end of the step (from the end of the rank's last backward to the
gradients reduced; the least over the ranks, the rank that arrived last,
which waits for no one), and their ratios to package's in the same round:
median of the rounds and their spread (least-most).

    mpirun -np 4 python3 bench/torch/chunk_reduce.py [--model mlp|cnn] [options]
"""
import argparse
import gzip
import os
import sys
import time

import numpy as np
import torch
import torch.distributed as dist
import torch.nn.functional as F
from mpi4py import MPI
from torch.utils.data import DataLoader, TensorDataset

import omnibatch
import omnibatch.torch as obt

comm = MPI.COMM_WORLD
P, rank = comm.Get_size(), comm.Get_rank()
WAYS = ("package", "zero-loss", "loss-scaled", "mpi4py", "unchunked")


def read_idx(path, ndims):
    """An IDX file of unsigned bytes (gzip'd or not) as a numpy array."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        raw = f.read()
    dims = [int.from_bytes(raw[4 + 4 * i:8 + 4 * i], "big") for i in range(ndims)]
    return np.frombuffer(raw, dtype=np.uint8, offset=4 + 4 * ndims).reshape(dims)


def load(data, n):
    def find(stem):
        for name in (stem, stem + ".gz"):
            if os.path.exists(os.path.join(data, name)):
                return os.path.join(data, name)
        sys.exit("chunk_reduce: %s: no %s: install dataset-fashion-mnist or pass --data"
                 % (data, stem))
    x = read_idx(find("train-images-idx3-ubyte"), 3)[:n].astype(np.float32) / 255.0
    y = read_idx(find("train-labels-idx1-ubyte"), 1)[:n].astype(np.int64)
    return torch.from_numpy((x - 0.2860) / 0.3530).unsqueeze(1), torch.from_numpy(y)


def model(kind):
    torch.manual_seed(1)
    if kind == "cnn":                   # bench_torch.py's
        return torch.nn.Sequential(
            torch.nn.Conv2d(1, 8, 5), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
            torch.nn.Conv2d(8, 16, 5), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
            torch.nn.Flatten(), torch.nn.Linear(256, 10))
    return torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(784, 1024), torch.nn.ReLU(),
                               torch.nn.Linear(1024, 1024), torch.nn.ReLU(),
                               torch.nn.Linear(1024, 10))


class Way:
    """One way of ending the step: its context, model and loop."""

    def __init__(self, name, a, x, y):
        self.name = name
        chunked = {"chunks": True, "chunk_floor": a.chunk_floor} if name != "unchunked" else {}
        self.ob = omnibatch.Context(comm, global_batch=a.global_batch, dataset_size=len(x),
                                    **chunked)
        net = model(a.model)
        self.module = net
        if name == "mpi4py":
            self.model = obt.register_chunks(net, self.ob)
        else:
            self.model = torch.nn.parallel.DistributedDataParallel(net)
            if name in ("package", "unchunked"):
                obt.register_ddp(self.model, self.ob)
            elif name == "zero-loss":
                for p in net.parameters():
                    p.register_hook(self._weigh)
        self.weight = None
        self.x, self.y = x, y
        self.sampler = obt.PlanBatchSampler(self.ob)
        self.loader = DataLoader(TensorDataset(x, y), batch_sampler=self.sampler)
        self.empty = x[:0]
        self.kind = a.model
        # zero-loss and loss-scaled drive the context themselves.
        self._iter = self.sampler.steps(self.loader) if name == "unchunked" \
            else self.sampler.chunked_steps(self.loader)

    def steps(self, n):
        """n steps; (step wall times, end-of-step times) of this rank."""
        walls, ends = [], []
        run = {"package": self._package, "zero-loss": self._zero_loss,
               "loss-scaled": self._zero_loss, "mpi4py": self._mpi4py,
               "unchunked": self._unchunked}[self.name]
        comm.Barrier()
        for _ in range(n):
            t0 = time.perf_counter()
            last = run()
            t1 = time.perf_counter()
            walls.append(t1 - t0)
            ends.append(t1 - last)
        return walls, ends

    def _package(self):
        _, chunks = next(self._iter)
        self.model.zero_grad()
        last = time.perf_counter()
        for xb, yb in chunks:
            F.cross_entropy(self.model(xb), yb).backward()
            last = time.perf_counter()
        return last                     # the loop's end was the reduction

    def _weigh(self, grad):
        return grad * self.weight

    def _zero_loss(self):
        ob = self.ob
        step = ob.next_step()
        self.model.zero_grad()
        last = time.perf_counter()
        for chunk in ob.chunks():
            rows = torch.from_numpy(ob.indices(chunk))
            weight = P * chunk.count / step.total
            with self.model.no_sync():
                loss = F.cross_entropy(self.model(self.x[rows]), self.y[rows])
                if self.name == "zero-loss":
                    self.weight = weight        # the hooks scale each gradient
                else:
                    loss = loss * weight
                loss.backward()
            last = time.perf_counter()
        self.weight = 0.0
        (self.model(self.empty).sum() * 0).backward()    # DDP averages what accumulated
        return last

    def _mpi4py(self):
        _, chunks = next(self._iter)
        self.model.zero_grad()
        last = time.perf_counter()
        for xb, yb in chunks:
            F.cross_entropy(self.model(xb), yb).backward()
            last = time.perf_counter()
        obt.allreduce_gradients(self.model, self.ob)
        return last

    def _unchunked(self):
        _, (xb, yb) = next(self._iter)
        self.model.zero_grad()
        loss = F.cross_entropy(self.model(xb), yb)
        # The backward's end is not seen from here: DDP reduces inside it.
        last = time.perf_counter()
        loss.backward()
        return last

    def error(self):
        """The last step's reduced gradient against one process's on the
        step's whole global batch: max |g - want| / (1 + |want|)."""
        step, ob = self.ob.step, self.ob
        B = ob.global_batch
        idx = torch.from_numpy(ob.permutation(step.epoch)[step.step * B:step.step * B + step.total])
        one = model(self.kind)
        one.load_state_dict(self.module.state_dict())
        F.cross_entropy(one(self.x[idx]), self.y[idx]).backward()
        return max(float(((p.grad - q.grad).abs() / (1 + q.grad.abs())).max())
                   for p, q in zip(self.module.parameters(), one.parameters()))


def summary(values):
    return float(np.median(values)), float(min(values)), float(max(values))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    ap.add_argument("--subset", type=int, default=8192)
    ap.add_argument("--global-batch", type=int, default=256)
    ap.add_argument("--model", choices=("mlp", "cnn"), default="mlp")
    ap.add_argument("--chunk-floor", type=int, default=0,
                    help="the context's chunk_floor (0: the library's automatic floor)")
    ap.add_argument("--steps", type=int, default=12, help="timed steps per way and round")
    ap.add_argument("--repeat", type=int, default=3, help="rounds")
    ap.add_argument("--warmup", type=int, default=3, help="steps per way before the rounds")
    a = ap.parse_args()
    torch.set_num_threads(1)
    if not omnibatch.available():
        sys.exit("chunk_reduce: no libomnibatch (OMNIBATCH_LIBRARY): chunks need the library")
    x, y = load(a.data, a.subset)
    obt.init_process_group(comm, backend="gloo")
    ways = [Way(name, a, x, y) for name in WAYS]
    params = sum(p.numel() for p in ways[0].module.parameters())
    for way in ways:
        way.steps(a.warmup)
    rounds = {name: {"wall": [], "end": []} for name in WAYS}
    for r in range(a.repeat):
        order = WAYS[r % len(WAYS):] + WAYS[:r % len(WAYS)]
        for name in order:
            walls, ends = ways[WAYS.index(name)].steps(a.steps)
            # The end of the step: the rank that arrived last waited for no one.
            ends = [comm.allreduce(e, op=MPI.MIN) for e in ends]
            rounds[name]["wall"].append(float(np.median(walls)))
            rounds[name]["end"].append(float(np.median(ends)))
    chunks = comm.allreduce(ways[0].ob.stats().chunks) / max(1, ways[0].ob.stats().steps)
    if rank == 0:
        print("chunk_reduce: np %d, %s (%d parameters, %.1f MB of float32 gradient), global "
              "batch %d, chunk_floor %d, %d rounds of %d steps per way; package: %.1f chunks "
              "per step (all ranks)" % (P, a.model, params, params * 4 / 1e6, a.global_batch,
                                        a.chunk_floor, a.repeat, a.steps, chunks))
        print("%-11s %12s %14s %20s %20s" % ("way", "step ms", "end ms", "step / package",
                                            "end / package"))
        base = rounds["package"]
        for name in WAYS:
            got = rounds[name]
            wall = summary(got["wall"])
            rw = summary([g / b for g, b in zip(got["wall"], base["wall"])])
            if name == "unchunked":     # its end is inside the backward: not comparable
                print("%-11s %12.2f %14s %8.3f (%.3f-%.3f) %20s"
                      % (name, wall[0] * 1e3, "-", *rw, "-"))
                continue
            end = summary(got["end"])
            re = summary([g / b for g, b in zip(got["end"], base["end"])])
            print("%-11s %12.2f %14.2f %8.3f (%.3f-%.3f) %8.3f (%.3f-%.3f)"
                  % (name, wall[0] * 1e3, end[0] * 1e3, *rw, *re))
    # Each way's last step is the global batch's gradient (float32).
    errors = [comm.allreduce(w.error(), op=MPI.MAX) for w in ways]
    if rank == 0:
        print("chunk_reduce: the last step's gradient against one process on its global batch, "
              "max |g - want| / (1 + |want|): %s"
              % ", ".join("%s %.2g" % (n, e) for n, e in zip(WAYS, errors)))
    for way in ways:
        way.ob.close()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
