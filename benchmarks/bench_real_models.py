"""perfprof beside torch.profiler on third-party models: step overhead, stop, export, key_averages.

    python benchmarks/bench_real_models.py [--steps 8] [--rounds 3] [--models gpt2,bert]

Models from the `transformers` package, built from configs with random weights (no download):
  gpt2   GPT2LMHeadModel training, 4 layers, n_embd 256, AdamW, batch 4 x 128 tokens
  bert   BertModel inference under torch.no_grad(), 4 layers, hidden 256, batch 8 x 128 tokens
Option sets: ops (CPU activity only), +shapes (record_shapes), +memory (record_shapes and
profile_memory). For each model and option set, one process runs the loop un-profiled, under
torch.profiler and under perfprof; rounds alternate which profiler runs first, and each figure is
the median over the rounds:
  overhead/step   time per step under the profiler minus the un-profiled time per step
  stop            profile.stop(): torch's results read, the trace built (what a user waits for)
  export          export_chrome_trace to a .json file
  key_averages    key_averages() (torch parses its events here, on first use)
Ratio = torch / perfprof (> 1: perfprof takes less).
"""
from __future__ import annotations

import argparse
import gc
import os
import statistics
import tempfile
import time
import warnings
from typing import Any, Callable, Dict, List

import torch
import transformers

import perfprof

Step = Callable[[], None]

OPTION_SETS: Dict[str, Dict[str, bool]] = {
    "ops": {},
    "+shapes": {"record_shapes": True},
    "+memory": {"record_shapes": True, "profile_memory": True},
}
FIGURES = ("overhead/step", "stop", "export", "key_averages")


def gpt2_training() -> Step:
    config = transformers.GPT2Config(n_layer=4, n_embd=256, n_head=4, vocab_size=5000, n_positions=128,
                                     bos_token_id=0, eos_token_id=0)
    model = transformers.GPT2LMHeadModel(config)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    tokens = torch.randint(0, config.vocab_size, (4, 128))

    def step() -> None:
        model(tokens, labels=tokens).loss.backward()
        optimizer.step()
        optimizer.zero_grad()

    return step


def bert_inference() -> Step:
    config = transformers.BertConfig(num_hidden_layers=4, hidden_size=256, num_attention_heads=4,
                                     intermediate_size=1024, vocab_size=5000, max_position_embeddings=128)
    model = transformers.BertModel(config).eval()
    tokens = torch.randint(0, config.vocab_size, (8, 128))

    def step() -> None:
        with torch.no_grad():
            model(tokens)

    return step


MODELS: Dict[str, Callable[[], Step]] = {"gpt2": gpt2_training, "bert": bert_inference}


def seconds_per_step(step: Step, steps: int, on_step: Callable[[], None] = lambda: None) -> float:
    start = time.perf_counter()
    for _ in range(steps):
        step()
        on_step()
    return (time.perf_counter() - start) / steps


def timed(action: Callable[[], Any]) -> float:
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def profiled(profiler: Any, step: Step, steps: int, options: Dict[str, bool], baseline: float,
             directory: str) -> Dict[str, float]:
    """The four figures for one profiler, in seconds."""
    gc.collect()
    prof = profiler.profile(activities=[profiler.ProfilerActivity.CPU], **options)
    prof.start()
    per_step = seconds_per_step(step, steps, prof.step)
    figures = {"overhead/step": per_step - baseline, "stop": timed(prof.stop)}
    figures["export"] = timed(lambda: prof.export_chrome_trace(os.path.join(directory, "trace.json")))
    figures["key_averages"] = timed(prof.key_averages)
    return figures


def compare(model: str, step: Step, steps: int, rounds: int) -> None:
    print(f"\n{model}: {steps} profiled steps per round, median of {rounds} rounds")
    print(f"{'options':<9} {'figure':<14} {'torch.profiler':>15} {'perfprof':>10} {'torch / perfprof':>17}")
    for name, options in OPTION_SETS.items():
        samples: Dict[str, Dict[str, List[float]]] = {"torch": {f: [] for f in FIGURES},
                                                      "perfprof": {f: [] for f in FIGURES}}
        for round_ in range(rounds):
            order = [("torch", torch.profiler), ("perfprof", perfprof)]
            if round_ % 2:
                order.reverse()
            baseline = seconds_per_step(step, steps)
            for label, profiler in order:
                with tempfile.TemporaryDirectory() as directory:
                    for figure, value in profiled(profiler, step, steps, options, baseline, directory).items():
                        samples[label][figure].append(value)
        for figure in FIGURES:
            theirs, ours = (statistics.median(samples[label][figure]) for label in ("torch", "perfprof"))
            ratio = f"{theirs / ours:.1f}x" if ours > 0 else "-"
            print(f"{name:<9} {figure:<14} {theirs * 1e3:>12.1f} ms {ours * 1e3:>7.1f} ms {ratio:>17}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=8, help="profiled steps per round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--models", default=",".join(MODELS), help="comma-separated: " + ", ".join(MODELS))
    args = parser.parse_args()
    torch.manual_seed(0)
    warnings.filterwarnings("ignore")  # transformers' notes on random configs, torch's deprecations
    print(f"torch {torch.__version__}, transformers {transformers.__version__}, {os.cpu_count()} CPUs")
    for model in args.models.split(","):
        if model not in MODELS:
            parser.error(f"unknown model {model!r}; expected one of {', '.join(MODELS)}")
        step = MODELS[model]()
        step()  # warm: first-call allocations and lazy initialisation outside the figures
        compare(model, step, args.steps, args.rounds)


if __name__ == "__main__":
    main()
