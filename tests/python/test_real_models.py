"""Third-party models, not toy loops: perfprof beside torch.profiler on the same loop, in the same test.

Models come from the `transformers` package, built from small configs with random weights (no
download): GPT-2 training with AdamW, BERT inference under no_grad and under inference_mode; plus a
torch.compile'd model and a DataLoader with two worker processes. Each runs under every option set,
cumulatively (operators; +shapes; +memory; +stack; +modules), and must give what torch.profiler
gives: the same operators (multiset overlap >= 99% both ways), the same inputs for >= 99% of
them, every memory category's peak to the byte, and the same key_averages rows and counts.
"""
from __future__ import annotations

import warnings
from collections import Counter, defaultdict
from typing import Any, Callable, Dict, List, Optional, Set, Tuple

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
from torch import nn  # noqa: E402
from torch.profiler._memory_profiler import MemoryProfile, MemoryProfileTimeline  # noqa: E402

import perfprof  # noqa: E402
from perfprof.memory import CATEGORIES  # noqa: E402
from python_calls import masked_address, split_torch_calls  # noqa: E402
from trace_checks import load_trace  # noqa: E402

Step = Callable[[], None]

SCHEDULE = dict(wait=1, warmup=1, active=2)
STEPS = 4
OPTION_SETS: Dict[str, Dict[str, bool]] = {
    "ops": {},
    "shapes": dict(record_shapes=True),
    "memory": dict(record_shapes=True, profile_memory=True),
    "stack": dict(record_shapes=True, profile_memory=True, with_stack=True),
    "modules": dict(record_shapes=True, profile_memory=True, with_stack=True, with_modules=True),
}


# -- workloads ------------------------------------------------------------------------------------

def gpt2_training() -> Step:
    torch.manual_seed(0)
    config = transformers.GPT2Config(n_layer=2, n_embd=64, n_head=2, vocab_size=1000, n_positions=64,
                                     bos_token_id=0, eos_token_id=0)
    model = transformers.GPT2LMHeadModel(config)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    tokens = torch.randint(0, config.vocab_size, (2, 32))

    def step() -> None:
        model(tokens, labels=tokens).loss.backward()
        optimizer.step()
        optimizer.zero_grad()

    return step


def bert(grad_mode: Callable[[], Any]) -> Callable[[], Step]:
    def make() -> Step:
        torch.manual_seed(0)
        config = transformers.BertConfig(num_hidden_layers=2, hidden_size=64, num_attention_heads=2,
                                         intermediate_size=128, vocab_size=1000, max_position_embeddings=64)
        model = transformers.BertModel(config).eval()
        tokens = torch.randint(0, config.vocab_size, (2, 32))

        def step() -> None:
            with grad_mode():
                model(tokens)

        return step

    return make


def compiled_model() -> Step:
    torch.manual_seed(0)
    model = torch.compile(nn.Sequential(nn.Linear(32, 64), nn.LayerNorm(64), nn.GELU(), nn.Linear(64, 8)))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.randn(16, 32)

    def step() -> None:
        model(x).sum().backward()
        optimizer.step()
        optimizer.zero_grad()

    step()  # compiles before profiling
    return step


def dataloader_workers() -> Step:
    torch.manual_seed(0)
    dataset = torch.utils.data.TensorDataset(torch.randn(64, 16), torch.randint(0, 4, (64,)))
    loader = torch.utils.data.DataLoader(dataset, batch_size=16, num_workers=2, persistent_workers=True)
    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

    def step() -> None:
        # All batches are fetched first: how many prefetched batches are alive at once would
        # otherwise depend on the workers' timing, and so would the INPUT peak of either profiler.
        for x, y in list(loader):
            nn.functional.cross_entropy(model(x), y).backward()
            optimizer.step()
            optimizer.zero_grad()

    return step


WORKLOADS: Dict[str, Callable[[], Step]] = {
    "gpt2_training": gpt2_training,
    "bert_no_grad": bert(torch.no_grad),
    "bert_inference_mode": bert(torch.inference_mode),
    "compiled": compiled_model,
    "dataloader": dataloader_workers,
}


# -- running both profilers -----------------------------------------------------------------------

def run(profiler: Any, step: Step, path: str, options: Dict[str, bool]) -> Any:
    with profiler.profile(activities=[profiler.ProfilerActivity.CPU], schedule=profiler.schedule(**SCHEDULE),
                          **options) as prof:
        for _ in range(STEPS):
            step()
            prof.step()
    prof.export_chrome_trace(path)
    return prof


@pytest.fixture(scope="module", params=sorted(WORKLOADS))
def workload(request) -> Tuple[str, Step]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # transformers' notes on random configs
        return request.param, WORKLOADS[request.param]()


def cpu_ops(trace: Dict[str, Any]) -> List[Dict[str, Any]]:
    """The operators, whether written as slices or as async ranges (ph "b"): ranges that do not
    nest (torch.compile's "Pregraph bytecode" begins in one Python call and ends in another)."""
    ops = [e for e in trace["traceEvents"] if e.get("cat") == "cpu_op" and e.get("ph") in ("X", "b")]
    return sorted(ops, key=lambda e: e["ts"])


def overlap(mine: Counter, theirs: Counter) -> Tuple[float, float]:
    common = sum((mine & theirs).values())
    return common / max(1, sum(mine.values())), common / max(1, sum(theirs.values()))


def paired_by_occurrence(mine: List[Dict[str, Any]], theirs: List[Dict[str, Any]]):
    """(mine, theirs) pairs of the same operator name, the k-th occurrence with the k-th."""
    by_name: Dict[str, List[Dict[str, Any]]] = defaultdict(list)
    for op in theirs:
        by_name[op["name"]].append(op)
    seen: Counter = Counter()
    for op in mine:
        candidates = by_name.get(op["name"], [])
        if seen[op["name"]] < len(candidates):
            yield op, candidates[seen[op["name"]]]
        seen[op["name"]] += 1


def torch_category_peaks(prof: Any) -> Dict[str, int]:
    timeline = MemoryProfileTimeline(MemoryProfile(prof.profiler.kineto_results))
    _, sizes = timeline._coalesce_timeline("cpu")
    return {name: max((point[i + 1] for point in sizes), default=0) for i, name in enumerate(CATEGORIES)}


def perfprof_category_peaks(prof: perfprof.profile) -> Dict[str, int]:
    _, sizes, _, _ = prof.trace.memory_timeline(0, -1)
    return {name: max((point[i] for point in sizes), default=0) for i, name in enumerate(CATEGORIES)}


# The DataLoader's main process polls its workers' results as they come (len() in _next_data),
# so its Python calls vary between two torch.profiler runs too (396 to 400 calls of len): the
# rows of Python functions are not compared for it.
PYTHON_CALLS_TIMED_BY_WORKERS = {"dataloader"}


def rows_by_count(rows: Any, leave_out: Optional[Counter] = None,
                  drop: Set[str] = frozenset()) -> List[Tuple[str, int]]:
    """(key, count), most calls first, without the keys in `drop`. With with_stack: built-in
    names without their object address, and the calls `leave_out` counts taken out (torch.profiler's
    own, its other threads'; python_calls.py)."""
    counts: Counter = Counter()
    for row in rows:
        if row.key not in drop:
            counts[masked_address(row.key)] += row.count - (leave_out or {}).get(row.key, 0)
    return sorted(((key, count) for key, count in counts.items() if count > 0), key=lambda row: (-row[1], row[0]))


def python_function_names(trace: Dict[str, Any]) -> Set[str]:
    return {event["name"] for event in trace["traceEvents"] if event.get("cat") == "python_function"}


@pytest.mark.parametrize("option_set", list(OPTION_SETS))
def test_real_model_matches_torch_profiler(workload, option_set, tmp_path):
    name, step = workload
    options = OPTION_SETS[option_set]
    theirs = run(torch.profiler, step, str(tmp_path / "torch.json"), options)
    mine = run(perfprof, step, str(tmp_path / "perfprof.json"), options)
    their_trace, my_trace = load_trace(str(tmp_path / "torch.json")), load_trace(str(tmp_path / "perfprof.json"))

    their_ops, my_ops = cpu_ops(their_trace), cpu_ops(my_trace)
    precision, recall = overlap(Counter(op["name"] for op in my_ops), Counter(op["name"] for op in their_ops))
    assert precision >= 0.99 and recall >= 0.99, (name, option_set, precision, recall)
    assert not any(my_trace["perfprofStats"][key] for key in ("unreadable_torch_events", "unreadable_torch_fields",
                                                             "dropped_events"))

    if options.get("record_shapes"):
        pairs = list(paired_by_occurrence(my_ops, their_ops))
        same = sum(1 for a, b in pairs if (a.get("args", {}).get("Input Dims"), a.get("args", {}).get("Input type"))
                   == (b.get("args", {}).get("Input Dims"), b.get("args", {}).get("Input type")))
        assert same >= 0.99 * len(pairs), (name, option_set, same, len(pairs))

    if options.get("profile_memory"):
        # torch's memory categories need its Python tracer (with_stack) to know the parameters.
        reference = theirs if options.get("with_stack") else run(
            torch.profiler, step, str(tmp_path / "torch_memory.json"), dict(options, with_stack=True))
        assert perfprof_category_peaks(mine) == torch_category_peaks(reference), (name, option_set)

    _, torch_other_calls = split_torch_calls(their_trace)
    timed = name in PYTHON_CALLS_TIMED_BY_WORKERS
    drop = python_function_names(their_trace) | python_function_names(my_trace) if timed else set()
    top_mine = rows_by_count(mine.key_averages(), drop=drop)[:10]
    top_theirs = rows_by_count(theirs.key_averages(), torch_other_calls, drop)[:10]
    assert top_mine == top_theirs, (name, option_set)
