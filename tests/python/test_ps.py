# Copyright (c) 2026 The omnibatch authors.
"""The asynchronous mode from Python (omnibatch.ParameterServer on numpy,
omnibatch.torch.AsyncSGD on a PyTorch model).  Run by ps.sh under mpirun:

    test_ps.py numpy     one worker is plain SGD to 1e-12 (every other rank a server);
                         every sample once per epoch with four speeds; the errors
    test_ps.py torch     AsyncSGD with one worker is torch.optim.SGD to 1e-12 in float64;
                         several workers train a classifier; a bad parameter fails every rank
"""
import sys
import time

import numpy as np
from mpi4py import MPI

import omnibatch

comm = MPI.COMM_WORLD
P, rank = comm.Get_size(), comm.Get_rank()
DIM = 9


def expect_error(what, fn, *needles):
    """fn() raises omnibatch.Error whose one-line detail names every needle."""
    try:
        fn()
    except omnibatch.Error as e:
        line = str(e)
        assert "\n" not in line and all(n in line for n in needles), (what, line)
        return e
    raise AssertionError("%s: no omnibatch.Error" % what)


def features(i):
    return np.sin(0.37 * i[:, None] + 1.3 * np.arange(DIM)[None, :])


def targets(i):
    return features(i) @ (np.arange(1, DIM + 1) / DIM) + 0.01 * np.cos(i)


def lsq_gradient(w, idx):
    x = features(idx)
    return x.T @ (x @ w - targets(idx)) / len(idx)


def one_worker_is_sgd():
    """The last rank works alone; the others serve a range each."""
    B, N, epochs = 20, 200, 3
    opts = dict(servers=P - 1, lr=0.05, momentum=0.9, weight_decay=1e-3, epochs=epochs, seed=5)
    w = 0.1 * np.arange(DIM, dtype=np.float64)
    with omnibatch.ParameterServer(comm, w, B, N, **opts) as ps:
        assert ps.role == ("worker" if rank == P - 1 else "server"), ps.role
        if ps.is_server:
            assert ps.serve()
            st = ps.stats()
            assert st.role == "server" and st.version == epochs * N // B and st.dropped == 0, st
        else:
            task = ps.pull()
            while not task.done:
                assert task.count == B, task
                task = ps.push(lsq_gradient(w, ps.indices(task)))
        # Plain SGD (PyTorch's form) on the same batches in the same order.
        replay, m = 0.1 * np.arange(DIM, dtype=np.float64), np.zeros(DIM)
        for e in range(epochs):
            perm = ps.permutation(e)
            for k in range(N // B):
                d = lsq_gradient(replay, perm[k * B:(k + 1) * B]) + opts["weight_decay"] * replay
                m = opts["momentum"] * m + d
                replay = replay - opts["lr"] * m
    if rank == P - 1:
        mine = slice(0, DIM)
    else:
        mine = slice(DIM * rank // (P - 1), DIM * (rank + 1) // (P - 1))
    assert np.allclose(w[mine], replay[mine], rtol=0, atol=1e-12), (w, replay)
    print("test_ps: rank %d: one worker against %d server(s) is plain SGD to 1e-12" % (rank, P - 1))


def every_sample_once():
    """One server, P - 1 workers at different speeds, batches moving: every sample of every
    epoch computed once, every push counted."""
    B, N, epochs = 16 * (P - 1), 301, 3
    w = np.zeros(DIM, dtype=np.float32)
    used = np.zeros(N * epochs, dtype=np.int64)
    with omnibatch.ParameterServer(comm, w, B, N, epochs=epochs, lr=1e-3, warmup=0,
                                   period=1) as ps:
        if ps.is_server:
            done = False
            while not done:
                done = ps.serve(max_pushes=2)
            st = ps.stats()
            pushes = 0
            for k in range(P - 1):
                ws = ps.worker_stats(k)
                assert ws.rank == 1 + k and ws.applied + ws.dropped == ws.pushes, ws
                assert 0 <= ws.staleness_p99 <= ws.staleness_max, ws
                pushes += ws.pushes
            assert pushes == st.pushes == st.slices and st.finished, st
            assert len(ps.plan) == P - 1 and sum(ps.plan) == B, ps.plan
        else:
            task = ps.pull()
            while not task.done:
                used[task.epoch * N + ps.indices(task)] += 1
                time.sleep(2e-5 * ps.index * task.count)
                task = ps.push(np.zeros(DIM, dtype=np.float32))
    total = np.zeros_like(used)
    comm.Reduce(used, total, op=MPI.SUM, root=0)
    if 0 == rank:
        assert (total == 1).all(), np.flatnonzero(total != 1)[:10]
        print("test_ps: every sample of %d epochs computed once by %d workers" % (epochs, P - 1))


def save_and_restore():
    """Server 0 saves a few pushes in; a second run restores the version and goes on."""
    import os
    import tempfile
    path = comm.bcast(os.path.join(tempfile.gettempdir(), "test_ps.%d" % os.getpid()), root=0)
    w = np.zeros(DIM, dtype=np.float64)
    saved = None
    with omnibatch.ParameterServer(comm, w, 8 * (P - 1), 100, epochs=2) as ps:
        if ps.is_server:
            expect_error("empty path", lambda: ps.save(""), "save: path='': expected a file name")
            ps.serve(max_pushes=3)
            ps.save(path)
            saved = ps.stats().version
            ps.serve()
        else:
            expect_error("save on a worker", lambda: ps.save(path), "omnibatch_ps_save: rank")
            task = ps.pull()
            while not task.done:
                task = ps.push(np.full(DIM, 0.01))
    with omnibatch.ParameterServer(comm, w, 8 * (P - 1), 100, epochs=2) as ps:
        if ps.is_server:
            ps.restore(path)
            assert ps.stats().version == saved, (ps.stats().version, saved)
            ps.serve()
            os.remove(path)
        else:
            task = ps.pull()
            while not task.done:
                task = ps.push(np.full(DIM, 0.01))
    print("test_ps: rank %d: saved and restored" % rank)


def errors():
    w = np.zeros(DIM, dtype=np.float32)
    expect_error("staleness name", lambda: omnibatch.ParameterServer(comm, w, 64, 100,
                                                                      staleness="eager"),
                 "staleness='eager': expected one of constant, inverse, adaptive")
    expect_error("bad lr", lambda: omnibatch.ParameterServer(comm, w, 64, 100, lr=-1.0),
                 "omnibatch_ps_create: lr=-1: expected a finite number > 0")
    expect_error("unknown option", lambda: omnibatch.ParameterServer(comm, w, 64, 100, speed=2),
                 "option speed=2: unknown")
    expect_error("max_global_batch below the global batch",
                 lambda: omnibatch.ParameterServer(comm, w, 64, 100, max_global_batch=32),
                 "omnibatch_ps_create: max_global_batch=32: expected 0 (the global batch) or 64..")
    # A larger sum allowed: the run is the same where no worker is held back.
    with omnibatch.ParameterServer(comm, w, 64, 100, max_global_batch=256, max_pushes=3, epochs=0) as ps:
        if ps.is_server:
            assert ps.serve()
        else:
            task = ps.pull()
            while not task.done:
                task = ps.push(w)
    # A size that differs on the last rank: every rank fails with the same line.
    mine = np.zeros(DIM + (rank == P - 1), dtype=np.float32)
    expect_error("size differs", lambda: omnibatch.ParameterServer(comm, mine, 64, 100),
                 "count differs between ranks: %d on rank 0, %d on rank %d" % (DIM, DIM + 1, P - 1))
    # One rank's bad Python argument: it has its line, the others one naming it.
    g = 0 if rank == 1 else 64
    if rank == 1:
        expect_error("bad batch", lambda: omnibatch.ParameterServer(comm, w, g, 100),
                     "global_batch=0: expected an integer >= 1")
    else:
        expect_error("rank 1 failed", lambda: omnibatch.ParameterServer(comm, w, g, 100),
                     "rank 1 failed (invalid argument)")
    # The other role's functions: one line each, nothing sent.
    with omnibatch.ParameterServer(comm, w, 64, 100, max_pushes=3, epochs=0) as ps:
        if ps.is_server:
            expect_error("pull on a server", ps.pull, "omnibatch_ps_pull: rank 0 is server 0")
            assert ps.serve()
        else:
            expect_error("serve on a worker", ps.serve, "omnibatch_ps_serve: rank %d is worker" % rank)
            expect_error("push before pull", lambda: ps.push(w), "no task yet")
            task = ps.pull()
            expect_error("wrong gradient", lambda: ps.push(np.zeros(3)), "push: gradient of 3 float64")
            while not task.done:
                task = ps.push(w)
    print("test_ps: rank %d: the errors as expected" % rank)


def torch_one_worker_is_sgd():
    import torch
    import omnibatch.torch as obt
    torch.manual_seed(0)
    B, N, epochs = 16, 128, 3
    opts = dict(lr=0.05, momentum=0.9, weight_decay=1e-3, epochs=epochs, seed=3, servers=P - 1)
    x = torch.sin(torch.arange(N * 8, dtype=torch.float64).reshape(N, 8))
    y = torch.cos(torch.arange(N * 3, dtype=torch.float64).reshape(N, 3))

    def build():
        torch.manual_seed(7)
        return torch.nn.Sequential(torch.nn.Linear(8, 5), torch.nn.Tanh(),
                                   torch.nn.Linear(5, 3)).double()

    model = build()
    opt = obt.AsyncSGD(comm, model, B, N, **opts)
    if opt.is_server:
        opt.serve()
    else:
        task = opt.pull()
        while not task.done:
            idx = torch.from_numpy(opt.indices(task))
            opt.zero_grad()
            torch.nn.functional.mse_loss(model(x[idx]), y[idx]).backward()
            task = opt.step()
    ref = build()
    sgd = torch.optim.SGD(ref.parameters(), lr=opts["lr"], momentum=opts["momentum"],
                          weight_decay=opts["weight_decay"])
    for e in range(epochs):
        perm = torch.from_numpy(opt.ps.permutation(e))
        for k in range(N // B):
            idx = perm[k * B:(k + 1) * B]
            sgd.zero_grad()
            torch.nn.functional.mse_loss(ref(x[idx]), y[idx]).backward()
            sgd.step()
    opt.close()
    got = torch.cat([p.reshape(-1) for p in model.parameters()])
    want = torch.cat([p.reshape(-1) for p in ref.parameters()])
    n = got.numel()
    mine = slice(0, n) if rank == P - 1 else slice(n * rank // (P - 1), n * (rank + 1) // (P - 1))
    assert torch.allclose(got[mine], want[mine], rtol=0, atol=1e-12), (got - want).abs().max()
    print("test_ps: rank %d: AsyncSGD with one worker is torch.optim.SGD to 1e-12" % rank)


def torch_trains():
    """P - 1 workers train a linear classifier on separable data: the loss falls."""
    import torch
    import omnibatch.torch as obt
    N, B = 512, 32 * (P - 1)
    g = torch.Generator().manual_seed(1)
    x = torch.randn(N, 10, generator=g)
    y = (x[:, 0] + x[:, 1] > 0).long()
    model = torch.nn.Linear(10, 2)
    with torch.no_grad():
        model.weight.zero_()
        model.bias.zero_()
    opt = obt.AsyncSGD(comm, model, B, N, lr=0.5, momentum=0.5, epochs=6, seed=2)
    if opt.is_server:
        opt.serve()
        with torch.no_grad():
            loss = torch.nn.functional.cross_entropy(model(x), y).item()
        assert loss < 0.3, loss
        assert opt.stats().version > 0
        print("test_ps: %d workers trained a classifier with AsyncSGD: loss %.3f" % (P - 1, loss))
    else:
        task = opt.pull()
        while not task.done:
            idx = torch.from_numpy(opt.indices(task))
            opt.zero_grad()
            torch.nn.functional.cross_entropy(model(x[idx]), y[idx]).backward()
            task = opt.step()
    opt.close()
    # A half-precision parameter on one rank: every rank fails, no rank waits.
    bad = torch.nn.Linear(4, 2)
    if rank == P - 1:
        bad = bad.half()
        expect_error("half", lambda: obt.AsyncSGD(comm, bad, 8, 64), "AsyncSGD: params[0] is torch.float16")
    else:
        expect_error("half elsewhere", lambda: obt.AsyncSGD(comm, bad, 8, 64),
                     "rank %d failed (invalid argument)" % (P - 1))


def main():
    if sys.argv[1] == "numpy":
        one_worker_is_sgd()
        every_sample_once()
        save_and_restore()
        errors()
    else:
        torch_one_worker_is_sgd()
        torch_trains()


if __name__ == "__main__":
    main()
