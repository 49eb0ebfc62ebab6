# examples/torch_chunks.py: mpirun -np 4 python3 examples/torch_chunks.py [ddp|mpi4py]
# Each step worked in chunks that move to a rank that is free (chunks=True): a
# rank that slows down inside a step gives the tail of its samples away, and
# the gradient is still exactly the global batch's.
import sys

import torch
import torch.nn.functional as F
from mpi4py import MPI
from torch.utils.data import DataLoader, TensorDataset

import omnibatch
import omnibatch.torch as obt

comm, reduce = MPI.COMM_WORLD, (sys.argv[1:] or ["ddp"])[0]
torch.manual_seed(0)                            # the same data and model on every rank
x = torch.randn(4096, 20)
y = (x[:, :10].sum(1) > 0).long()
model = torch.nn.Sequential(torch.nn.Linear(20, 32), torch.nn.ReLU(), torch.nn.Linear(32, 2))

with omnibatch.Context(comm, global_batch=256, dataset_size=len(x), chunks=True) as ob:
    if reduce == "ddp":
        obt.init_process_group(comm, backend="gloo")
        model = obt.register_ddp(torch.nn.parallel.DistributedDataParallel(model), ob)
    else:
        obt.register_chunks(model, ob)          # each chunk's gradient weighted by its samples
    opt = torch.optim.SGD(model.parameters(), lr=0.5)
    sampler = obt.PlanBatchSampler(ob)
    loader = DataLoader(TensorDataset(x, y), batch_sampler=sampler)
    for step, chunks in sampler.chunked_steps(loader, epochs=3):
        opt.zero_grad()
        for xb, yb in chunks:                   # until none is left; DDP: each under no_sync()
            F.cross_entropy(model(xb), yb).backward()   # the chunk's mean loss, not scaled
        if reduce == "mpi4py":
            obt.allreduce_gradients(model, ob)  # one Allreduce (DDP: one, at the chunks' end)
        opt.step()
    with torch.no_grad():
        loss = F.cross_entropy(model(x), y).item()
    stats = ob.stats()
    if comm.rank == 0:
        print(f"{reduce}: omnibatch {'found' if omnibatch.available() else 'absent'}: "
              f"loss {loss:.4f}, {stats.chunks} chunks on rank 0, "
              f"{stats.samples_taken} samples taken from other ranks")
