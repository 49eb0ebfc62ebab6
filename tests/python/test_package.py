# Copyright (c) 2026 The omnibatch authors.
"""The package with and without the library: import, version, steps, plan,
permutation, allreduce, steps in chunks and errors.  Run by package.sh under mpirun:

    test_package.py MODE VERSION      MODE: library | preloaded | fallback | bad-library
"""
import sys
import time

import numpy as np
from mpi4py import MPI

import omnibatch

MODE, VERSION = sys.argv[1], sys.argv[2]
comm = MPI.COMM_WORLD
P, rank = comm.Get_size(), comm.Get_rank()
N, B = 47, 12


def expect_error(what, fn, *needles):
    """fn() raises omnibatch.Error whose one-line detail names every needle."""
    try:
        fn()
    except omnibatch.Error as e:
        line = str(e)
        assert "\n" not in line and all(n in line for n in needles), (what, line)
        return e
    raise AssertionError("%s: no omnibatch.Error" % what)


LIBRARY = MODE in ("library", "preloaded")


def check_import():
    assert omnibatch.available() == LIBRARY, (MODE, omnibatch.available())
    assert omnibatch.__version__ == VERSION, (omnibatch.__version__, VERSION)
    if LIBRARY:
        assert omnibatch.library_version() == VERSION, omnibatch.library_version()
        where = omnibatch.library_path()
        assert (where == "the process") == (MODE == "preloaded"), where
    else:
        assert omnibatch.library_version() is None and omnibatch.library_path() is None


def unequal_plan():
    """A plan far from the equal split: rank i gets weight i + 1."""
    weights = np.arange(1, P + 1)
    plan = (B * weights) // weights.sum()
    plan[-1] += B - plan.sum()
    return [int(b) for b in plan]


def check_epochs(ob, epochs):
    """Every sample once per epoch, slices follow the plan, the scale factors add up."""
    plan = unequal_plan()
    ob.set_plan(plan)
    assert list(ob.plan) == plan, (list(ob.plan), plan)
    for epoch in range(epochs):
        mine = []
        for _ in range(ob.steps_per_epoch):
            s = ob.next_step()
            assert s.epoch == epoch and s.nranks == P
            if s.total == B:
                assert s.count == plan[rank], (s, plan)
            counts = comm.allgather(s.count)
            assert sum(counts) == s.total, counts
            assert abs(comm.allreduce(s.mean_scale) - 1.0) < 1e-12
            assert abs(s.scale - s.mean_scale) < 1e-15     # convention mean (default)
            mine.extend(ob.indices(s).tolist())
        everyone = sorted(sum(comm.allgather(mine), []))
        assert everyone == list(range(N)), everyone
        perm = ob.permutation(epoch)
        assert perm.dtype == np.int64 and sorted(perm.tolist()) == list(range(N))
        assert comm.allgather(perm.tolist()).count(perm.tolist()) == P


def check_allreduce(ob):
    """The weighted sum is the global batch's mean: each rank's mean gradient
    is its own rank number, so the result is sum(count_i * i) / total."""
    s = ob.next_step()
    counts = comm.allgather(s.count)
    want = sum(c * i for i, c in enumerate(counts)) / s.total
    for dtype in (np.float32, np.float64):
        g = np.full(5, float(rank), dtype=dtype)
        ob.allreduce_gradient(g)
        assert np.allclose(g, want, rtol=1e-6), (g, want)
        send = np.full(5, float(rank), dtype=dtype)
        out = np.empty_like(send)
        ob.allreduce_gradient(send, out=out)
        assert np.all(send == rank) and np.allclose(out, want, rtol=1e-6)
    with ob.compute():
        pass
    stats = ob.stats()
    assert stats.steps == ob.step.global_step + 1, stats


def check_divide_by_p():
    """Under divide-by-p the step's scale (the library's field, or the
    fallback's) is P*count/total, 0 on an empty rank, and sums to P."""
    with omnibatch.Context(comm, global_batch=B, dataset_size=N, adaptive=False,
                           convention="divide-by-p") as ob:
        ob.set_plan(unequal_plan())
        for s in ob.steps(epochs=1):
            assert abs(s.scale - P * s.count / s.total) < 1e-15, s
            assert abs(comm.allreduce(s.scale) - P) < 1e-12


def sample_gradient(i):
    """Sample i's gradient: a vector only it has (as tests/mpi/mpi_api_chunks.c's)."""
    d = np.arange(1, 6)
    return np.sin(0.37 * (i + 1) * d) + 0.01 * i


def check_chunk_step(ob, s, sleeper):
    """One step in chunks: every position by one rank, the weighted mean
    gradient over the samples each rank did the global batch's (float64
    1e-12, float32 1e-6).  The samples this rank did."""
    mine, total = [], np.zeros(5)
    for chunk in ob.chunks():
        if sleeper and not mine:
            time.sleep(0.05)            # slows down inside its first chunk
        idx = ob.indices(chunk).tolist()
        assert chunk.done == len(mine) + chunk.count and chunk.global_step == s.global_step
        mine.extend(idx)
        total += sum(sample_gradient(i) for i in idx)
    final = ob.chunk
    assert final.count == 0 and final.done == len(mine), (final, len(mine))
    assert abs(final.scale - len(mine) / s.total) < 1e-15, final
    if not LIBRARY:                     # the equal split: one chunk, the rank's slice
        assert mine == ob.permutation(s.epoch)[s.start:s.start + s.count].tolist()
    want = ob.permutation(s.epoch)[s.step * B:s.step * B + s.total].tolist()
    everyone = sum(comm.allgather(mine), [])
    assert sorted(everyone) == sorted(want) and len(set(everyone)) == len(everyone), \
        (s, sorted(everyone), sorted(want))
    exact = np.mean([sample_gradient(i) for i in want], axis=0)
    mean = total / max(1, len(mine))
    for dtype, tol in ((np.float64, 1e-12), (np.float32, 1e-6)):
        g = mean.astype(dtype)
        ob.allreduce_gradient(g)
        assert np.all(np.abs(g - exact) <= tol * (1 + np.abs(exact))), (s, dtype, g, exact)
    return mine


def check_chunks():
    """Steps worked in chunks (chunks=True), the last rank sleeping inside
    its first chunk of every step: with the library the others take from
    its range; every sample once per step and per epoch; the exact gradient."""
    with omnibatch.Context(comm, global_batch=B, dataset_size=N, adaptive=False,
                           chunks=True) as ob:
        assert ob.chunked
        ob.set_plan(unequal_plan())
        for epoch in range(2):
            seen = []
            for s in ob.steps(count=ob.steps_per_epoch):
                seen.extend(check_chunk_step(ob, s, P > 1 and rank == P - 1))
            everyone = sorted(sum(comm.allgather(seen), []))
            assert everyone == list(range(N)), (epoch, everyone)
        stats = ob.stats()
    if LIBRARY and P > 1:
        taken = comm.allreduce(stats.samples_taken)
        assert taken > 0 and taken == comm.allreduce(stats.samples_given), stats


def check_chunk_errors():
    expect_error("chunks", lambda: omnibatch.Context(comm, global_batch=B, dataset_size=N,
                                                     chunks=2), "chunks=2", "True or False")
    expect_error("chunk_floor", lambda: omnibatch.Context(comm, global_batch=B, dataset_size=N,
                                                          chunk_floor=-1), "chunk_floor=-1")
    with omnibatch.Context(comm, global_batch=B, dataset_size=N) as ob:
        assert not ob.chunked
        ob.next_step()
        expect_error("chunks off", ob.next_chunk, "chunks are off")
    with omnibatch.Context(comm, global_batch=B, dataset_size=N, chunks=True) as ob:
        expect_error("chunk before a step", ob.next_chunk, "no step")
        s = ob.next_step()
        expect_error("indices of a chunked step", lambda: ob.indices(s), "indices(next_chunk())")
        expect_error("reduced with chunks left", lambda: ob.allreduce_gradient(np.zeros(3)),
                     "some are left")
        expect_error("next step with chunks left", ob.next_step, "some are left")
        for _ in ob.chunks():
            pass
        expect_error("a chunk after count 0", ob.next_chunk, "none was left already")
        ob.allreduce_gradient(np.zeros(3))
        ob.next_step()                  # the step before ended: the next one begins
        assert ob.chunk is None


def check_errors(ob):
    expect_error("global_batch", lambda: omnibatch.Context(comm, global_batch=0, dataset_size=N),
                 "global_batch=0", ">= 1")
    expect_error("option", lambda: omnibatch.Context(comm, global_batch=B, dataset_size=N,
                                                     speed=3), "speed", "min_batch")
    expect_error("convention", lambda: omnibatch.Context(comm, global_batch=B, dataset_size=N,
                                                         convention="sum"),
                 "convention='sum'", "divide-by-p")
    expect_error("comm", lambda: omnibatch.Context(None, global_batch=B, dataset_size=N),
                 "comm=None")
    expect_error("dtype", lambda: ob.allreduce_gradient(np.zeros(3, dtype=np.int32)), "int32")
    expect_error("not numpy", lambda: ob.allreduce_gradient([1.0]), "numpy")
    expect_error("strided", lambda: ob.allreduce_gradient(np.zeros(6)[::2]), "contiguous")
    e = expect_error("plan sum", lambda: ob.set_plan([1] * P), "plan", str(B))
    assert e.code == 1 and e.name, (e.code, e.name)
    if P > 1:
        # Rank 0's valid plan differs from the others': every rank hears of it.
        plan = unequal_plan()
        mine = list(reversed(plan)) if rank == 0 else plan
        expect_error("plans differ", lambda: ob.set_plan(mine), "plan")
    # Past a C long: ctypes would store them modulo 2^64 (min_batch 1, a plan
    # of 2^64 + b taken for b, epoch 0's permutation) instead of refusing.
    big = 2 ** 64
    expect_error("min_batch past a long",
                 lambda: omnibatch.Context(comm, global_batch=B, dataset_size=N, min_batch=big + 1),
                 "min_batch=%d" % (big + 1))
    expect_error("dataset_size", lambda: omnibatch.Context(comm, global_batch=B,
                                                           dataset_size=big + N), str(big + N))
    plan = unequal_plan()
    expect_error("plan past a long", lambda: ob.set_plan([plan[0] + big] + plan[1:]),
                 "plan[0]=%d" % (plan[0] + big))
    expect_error("epoch past a long", lambda: ob.permutation(big), "epoch=%d" % big)
    expect_error("plan not a sequence", lambda: ob.set_plan(B), "plan=%d" % B)
    expect_error("indices of no step", lambda: ob.indices(3), "step=3")
    omnibatch.Context(comm, global_batch=B, dataset_size=N, adaptive=np.False_).close()
    if LIBRARY:
        # The library's own check, its one line.
        expect_error("min_batch", lambda: omnibatch.Context(comm, global_batch=B, dataset_size=N,
                                                            min_batch=B + 1), str(B + 1))


def check_one_rank_wrong(ob):
    """An argument only the last rank gets wrong fails every rank, as the
    library's own checks do (omnibatch_create and omnibatch_set_plan agree
    on the outcome); a rank that raised alone would leave the others
    waiting in the collective."""
    last = rank == P - 1
    if LIBRARY:                         # the equal split's creation is not collective
        expect_error("one rank's option", lambda: omnibatch.Context(
            comm, global_batch=B, dataset_size=N, **({"min_batch": -1} if last else {})),
            "min_batch=-1" if last else "rank %d" % (P - 1))
    plan = unequal_plan()
    mine = [float(plan[0])] + plan[1:] if last else plan
    expect_error("one rank's plan", lambda: ob.set_plan(mine),
                 "plan[0]=" if last else "rank %d" % (P - 1))
    assert list(ob.plan) == plan, list(ob.plan)    # unchanged, and everyone still here


def check_state():
    """A checkpoint resumes at the same sample: from the bytes and from a file."""
    def fresh():
        return omnibatch.Context(comm, global_batch=B, dataset_size=N, adaptive=False, seed=7)

    if not LIBRARY:
        with fresh() as ob:
            expect_error("get_state", ob.get_state, "library")
        return
    import os
    import tempfile
    path = comm.bcast(tempfile.mkdtemp() if 0 == rank else None)
    path = os.path.join(path, "state.bin")
    with fresh() as ob:
        for _ in range(5):
            ob.next_step()
        blob = ob.get_state()
        ob.save(path)
        want = ob.next_step()
    for how in ("bytes", "file"):
        with fresh() as ob:
            if "bytes" == how:
                ob.set_state(blob)
            else:
                ob.restore(path)
            got = ob.next_step()
        assert (got.global_step, got.start, got.count) == (want.global_step, want.start, want.count), \
            (how, got, want)
    with fresh() as ob:
        expect_error("set_state", lambda: ob.set_state(b"not a state"), "omnibatch_set_state")
        # Not bytes on the last rank only: every rank fails (the others would
        # wait in the collective for ever), and the context resumes nothing.
        last = rank == P - 1
        expect_error("one rank's state", lambda: ob.set_state("text" if last else blob),
                     "blob: str" if last else "omnibatch_set_state")
        assert ob.next_step().global_step == 0
    with fresh() as ob:
        # A path that is no file name on one rank only (rank 0's is the one
        # read): every rank fails, none waits, the file stays as it was.
        last = rank == P - 1
        for how, call in (("restore", ob.restore), ("save", ob.save)):
            for bad in (7, "a\0b", ""):
                expect_error("one rank's %s path %r" % (how, bad),
                             lambda: call(bad if last else path),
                             ("%s: path=%r" % (how, bad)) if last else "omnibatch_%s" % how)
        ob.restore(path)
        got = ob.next_step()
        assert (got.global_step, got.start, got.count) == (want.global_step, want.start, want.count), \
            ("restored after the failures", got, want)
    comm.Barrier()
    if 0 == rank:
        os.remove(path)
        os.rmdir(os.path.dirname(path))


def main():
    if MODE == "bad-library":
        assert not omnibatch.available()
        expect_error("OMNIBATCH_LIBRARY", lambda: omnibatch.Context(comm, global_batch=B,
                                                                    dataset_size=N),
                     "OMNIBATCH_LIBRARY=", "not a loadable libomnibatch")
        print("test_package: bad-library: rank %d ok" % rank, flush=True)
        return
    check_import()
    with omnibatch.Context(comm, global_batch=B, dataset_size=N, adaptive=False, seed=7) as ob:
        assert ob.uses_library == LIBRARY
        check_epochs(ob, 2)
        check_allreduce(ob)
        check_errors(ob)
        if P > 1:
            check_one_rank_wrong(ob)
    expect_error("closed", lambda: ob.next_step(), "closed")
    check_divide_by_p()
    check_chunks()
    check_chunk_errors()
    check_state()
    print("test_package: %s: rank %d of %d ok" % (MODE, rank, P), flush=True)


if __name__ == "__main__":
    main()
