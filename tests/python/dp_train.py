"""A small torch (CPU) training loop that knows nothing of perfprof: dynamic profiling and
`perfprof run` tests profile it from outside.

    python dp_train.py [--steps N] [--until FILE] [--step-seconds S] [--distributed] [--exit-code C]
                       [--slow-rank R --slow-factor F]

Trains until N optimizer steps are done (default 1000), or, given --until and no --steps, until
FILE exists (the loop stops at the next step; a test that waits on a slow machine must not see
the job end first); prints "rank R trained K steps" at the end and exits with C. Each step
sleeps S seconds (its "data loading"), F times that on rank R (a slow rank for cluster analysis).
"""
import argparse
import gc
import os
import sys
import time

import torch


def stop_requested(stop_file, distributed: bool) -> bool:
    """Whether `stop_file` exists; distributed, whether it exists for any rank, so that all ranks
    stop after the same step (a rank that stopped alone would leave the others waiting in DDP's
    all-reduce)."""
    exists = bool(stop_file) and os.path.exists(stop_file)
    if not distributed or not stop_file:
        return exists
    flag = torch.tensor([1 if exists else 0])
    torch.distributed.all_reduce(flag, op=torch.distributed.ReduceOp.MAX)
    return bool(flag.item())


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=None)
    parser.add_argument("--until", default=None)
    parser.add_argument("--step-seconds", type=float, default=0.02)
    parser.add_argument("--distributed", action="store_true")
    parser.add_argument("--exit-code", type=int, default=0)
    parser.add_argument("--slow-rank", type=int, default=None)
    parser.add_argument("--slow-factor", type=float, default=1.0)
    args = parser.parse_args()
    if args.steps is None:
        args.steps = sys.maxsize if args.until else 1000
    rank = 0
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4))
    if args.distributed:
        torch.distributed.init_process_group("gloo")
        rank = torch.distributed.get_rank()
        model = torch.nn.parallel.DistributedDataParallel(model)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    step_seconds = args.step_seconds * (args.slow_factor if rank == args.slow_rank else 1.0)
    steps = 0
    while steps < args.steps and not stop_requested(args.until, args.distributed):
        loss = model(torch.randn(8, 16)).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        steps += 1
        time.sleep(step_seconds)
    if args.distributed:
        torch.distributed.barrier()
        # DDP holds the process group and the work of its last all-reduce: freed here, while Python
        # runs, rather than at interpreter exit, where gloo's worker thread, dropping that work's
        # tensors, needs the GIL Python is tearing down and aborts the process ("terminate called
        # without an active exception"; seen in 4 of 24 runs of test_dynamic_jobs' torchrun job
        # under load, and on the code before this change too; 0 of 36 with these lines).
        del model, optimizer
        gc.collect()
        torch.distributed.destroy_process_group()
    print(f"rank {rank} trained {steps} steps", flush=True)
    return args.exit_code


if __name__ == "__main__":
    sys.exit(main())
