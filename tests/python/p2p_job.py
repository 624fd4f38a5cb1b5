"""Two ranks over gloo exchanging tensors point to point, profiled with record_shapes (the peers
are c10d::send's and c10d::recv_'s arguments):

    torchrun --nproc_per_node=2 p2p_job.py OUT

Each of the two recorded steps: rank 0 sends 1000 floats to rank 1 and receives them back, then
both all-reduce them.
"""
import sys

import torch
import torch.distributed as dist

import perfprof


def main() -> None:
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    with perfprof.profile(activities=[perfprof.ProfilerActivity.CPU], record_shapes=True,
                          schedule=perfprof.schedule(wait=0, warmup=1, active=2, repeat=1),
                          on_trace_ready=perfprof.tensorboard_trace_handler(sys.argv[1]),
                          experimental_config=perfprof.ExperimentalConfig(export_type=["text", "db"])) as prof:
        for _ in range(3):
            tensor = torch.ones(1000)
            if rank == 0:
                dist.send(tensor, 1)
                dist.recv(tensor, 1)
            else:
                dist.recv(tensor, 0)
                dist.send(tensor, 0)
            dist.all_reduce(tensor)
            prof.step()
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
