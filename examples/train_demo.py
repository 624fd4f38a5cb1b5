"""Profile a small PyTorch training loop with perfprof and write a run directory.

    python examples/train_demo.py --out result

Steps 0 (skipped) and 1 (wait) run unprofiled, step 2 warms up, steps 3 and 4 are recorded and
saved: the run directory under --out holds the Chrome trace (open it in https://ui.perfetto.dev),
the run database (PERFPROF_OUTPUT/perfprof.db), the memory tables (memory_record.csv,
operator_memory.csv), memory_timeline.html (memory by category over time), the plots drawn
right after the run (plots/*.png, with matplotlib installed), profiler_info.json and
profiler_metadata.json. `perfprof summary RUN_DIR` prints what the time and memory went to.
Data loading runs in a worker thread, marked with mstx ranges; the training phases are
record_function ranges.

The recorded steps are written to the run directory's capture as they end; with --keep-capture
it stays there once the trace is written, and `perfprof analyse --keep-capture RUN_DIR` builds
the same trace from it again.
"""
from __future__ import annotations

import argparse
import os
import queue
import threading

import perfprof

try:
    import torch
    from torch import nn
except ImportError as missing:  # pragma: no cover - the demo needs torch, perfprof does not
    raise SystemExit("this demo needs PyTorch: pip install torch==2.13.0") from missing


MEMORY_PLOT = "memory_timeline.html"


def make_model() -> nn.Module:
    return nn.Sequential(nn.Linear(256, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 10))


def load_batches(batches: "queue.Queue[tuple[torch.Tensor, torch.Tensor]]", count: int) -> None:
    """Producer thread: each batch is an mstx range on the 'data' domain."""
    for index in range(count):
        with perfprof.mstx.mstx_range(f"load batch {index}", domain="data"):
            inputs = torch.randn(64, 256)
            targets = torch.randint(0, 10, (64,))
        batches.put((inputs, targets))


def train(out_dir: str, steps: int, keep_capture: bool = False) -> perfprof.TraceHandler:
    model = make_model()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    loss_fn = nn.CrossEntropyLoss()
    batches: "queue.Queue[tuple[torch.Tensor, torch.Tensor]]" = queue.Queue(maxsize=1)
    loader = threading.Thread(target=load_batches, args=(batches, steps), name="data-loader")

    # The run directory: capture, trace, database, memory tables, metadata, and its plots.
    handler = perfprof.tensorboard_trace_handler(out_dir, auto_plot=True)
    with perfprof.profile(
        activities=[perfprof.ProfilerActivity.CPU],
        schedule=perfprof.schedule(wait=1, warmup=1, active=2, repeat=1, skip_first=1),
        on_trace_ready=handler,
        profile_memory=True,
        with_modules=True,
        experimental_config=perfprof.ExperimentalConfig(
            mstx=True, export_type=[perfprof.ExportType.Text, perfprof.ExportType.Db],
            host_sys=["cpu", "mem"], data_simplification=not keep_capture),
    ) as prof:
        prof.add_metadata("model", "mlp-256-512-512-10")
        prof.add_metadata_json("hyperparameters", '{"lr": 0.001, "batch_size": 64}')
        loader.start()
        for step in range(steps):
            wait_id = perfprof.mstx.range_start("wait for batch")
            inputs, targets = batches.get()
            perfprof.mstx.range_end(wait_id)
            with perfprof.record_function("forward"):
                loss = loss_fn(model(inputs), targets)
            with perfprof.record_function("backward"):
                optimizer.zero_grad(set_to_none=True)
                loss.backward()
            with perfprof.record_function("optimizer"):
                optimizer.step()
            perfprof.mstx.mark(f"step {step} loss {loss.item():.3f}")
            prof.step()
        loader.join()
    prof.export_memory_timeline(os.path.join(handler.run_dirs[-1], MEMORY_PLOT))
    return handler


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default="result", help="folder for run directories (default: result)")
    parser.add_argument("--steps", type=int, default=8, help="training steps (default: 8)")
    parser.add_argument("--keep-capture", action="store_true",
                        help="keep the run directory's capture once its trace is written")
    args = parser.parse_args()
    handler = train(args.out, args.steps, args.keep_capture)
    for run_dir in handler.run_dirs:
        print(f"run directory: {run_dir}")
        print(f"  trace for Perfetto UI / HolisticTraceAnalysis: {perfprof.trace_dir_of(run_dir)}")
        print(f"  memory by category over time: {os.path.join(run_dir, MEMORY_PLOT)}")
        print(f"  plots: {os.path.join(run_dir, 'plots')}")
        print(f"  what the time went to: perfprof summary {run_dir}")
        print(f"  the same in a browser: perfprof ui {run_dir}")
        print(f"  ... or in one HTML file: perfprof report {run_dir} -o report.html")


if __name__ == "__main__":
    main()
