"""Should a default run write its database at stop? What writing it costs when the profiled
cycle ends, beside what building it costs later, at the run's first `perfprof summary` (from the
Chrome trace the run wrote: a default run keeps no capture).

    python benchmarks/bench_database_at_stop.py [--steps 3] [--rounds 3]

The model is GPT-2 small (transformers' GPT2Config defaults: 12 layers, n_embd 768, 124M
parameters, built locally without weights) training on CPU with AdamW, batch 1 x 128 tokens,
profiled by perfprof with the default options apart from export_type (a schedule of one wait,
one warm-up and --steps active steps, tensorboard_trace_handler). Per round, in a fresh process
each:
- at stop: from the prof.step() that ends the cycle until the handler has written the run
  directory (the trace model built, the trace and tables written, in the background: the
  training loop goes on meanwhile, but the process's exit waits for it), with export_type text
  (the default) and text + db;
- later: opening the text-only run for the analyses (perfprof.analysis.open_run: the database
  built from its Chrome trace), and the whole first `perfprof summary` command.
The best of --rounds is reported for each.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

PROFILED = """
import json, sys, time
import torch, transformers
import perfprof

torch.manual_seed(0)
model = transformers.GPT2LMHeadModel(transformers.GPT2Config())
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
tokens = torch.randint(0, model.config.vocab_size, (1, 128))
out, export, steps = sys.argv[1], sys.argv[2].split(","), int(sys.argv[3])
handler = perfprof.tensorboard_trace_handler(out, worker_name="gpt2")
with perfprof.profile(schedule=perfprof.schedule(wait=1, warmup=1, active=steps, repeat=1), on_trace_ready=handler,
                      experimental_config=perfprof.ExperimentalConfig(export_type=export)) as prof:
    for step in range(steps + 2):
        model(tokens, labels=tokens).loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        started = time.perf_counter()
        prof.step()  # the last one ends the cycle: its run directory is written (in the background)
handler.wait()
stop_s = time.perf_counter() - started
print(json.dumps({"stop_s": stop_s, "parameters": sum(p.numel() for p in model.parameters())}))
"""

OPEN_RUN = """
import os, sys, time
from perfprof.analysis import open_run
started = time.perf_counter()
with open_run(sys.argv[1]) as run:
    print(time.perf_counter() - started, os.path.getsize(run.path))
"""


def profiled(out: str, export: str, steps: int) -> dict:
    result = subprocess.run([sys.executable, "-c", PROFILED, out, export, str(steps)], capture_output=True, text=True,
                            check=True)
    return json.loads(result.stdout.strip().splitlines()[-1])


def the_run_dir(out: str) -> str:
    (run_dir,) = [os.path.join(out, name) for name in os.listdir(out) if name.endswith("_perfprof")]
    return run_dir


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    best = {"stop, text": float("inf"), "stop, text + db": float("inf"), "open_run (import + database)": float("inf"),
            "first perfprof summary": float("inf")}
    facts = {}
    for _ in range(args.rounds):
        work = tempfile.mkdtemp(prefix="perfprof-bench-db-at-stop-")
        try:
            for export, key in (("text", "stop, text"), ("text,db", "stop, text + db")):
                out = os.path.join(work, export.replace(",", "_"))
                measured = profiled(out, export, args.steps)
                best[key] = min(best[key], measured["stop_s"])
                facts["parameters"] = measured["parameters"]
            run_dir = the_run_dir(os.path.join(work, "text"))
            (trace,) = [name for name in os.listdir(os.path.join(run_dir, "PERFPROF_OUTPUT"))
                        if name.endswith(".pt.trace.json")]
            facts["trace MB"] = os.path.getsize(os.path.join(run_dir, "PERFPROF_OUTPUT", trace)) / 1e6
            opened = subprocess.run([sys.executable, "-c", OPEN_RUN, run_dir], capture_output=True, text=True,
                                    check=True).stdout.split()
            best["open_run (import + database)"] = min(best["open_run (import + database)"], float(opened[0]))
            facts["database MB"] = int(opened[1]) / 1e6
            os.remove(os.path.join(run_dir, "PERFPROF_OUTPUT", "perfprof.db"))
            started = time.perf_counter()
            subprocess.run([sys.executable, "-m", "perfprof", "summary", run_dir], capture_output=True, check=True)
            best["first perfprof summary"] = min(best["first perfprof summary"], time.perf_counter() - started)
            print("round:", {name: round(seconds, 3) for name, seconds in best.items()}, flush=True)
        finally:
            shutil.rmtree(work, ignore_errors=True)
    print(f"GPT-2 small ({facts['parameters'] / 1e6:.0f}M parameters), {args.steps} active steps: "
          f"trace {facts['trace MB']:.1f} MB, database {facts['database MB']:.1f} MB; best of {args.rounds}")
    for name, seconds in best.items():
        print(f"{name:32} {seconds:8.3f} s")
    print(f"{'database at stop costs':32} {best['stop, text + db'] - best['stop, text']:8.3f} s")


if __name__ == "__main__":
    main()
