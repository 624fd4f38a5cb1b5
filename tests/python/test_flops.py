"""with_flops against torch.profiler on the same calls: every operator torch counts (matrix
products, mul and add with and without broadcasting, conv2d), the composites it does not count
(attention, matmul, linear, conv1d/3d), transformer models' totals, and no FLOPs without
with_flops. A count must also read the same in perfprof's trace, events, key_averages and database.
"""
from __future__ import annotations

import warnings
from collections import Counter
from typing import Any, Callable, Dict, List, Tuple

import pytest

torch = pytest.importorskip("torch")
from torch import nn  # noqa: E402
from torch.nn import functional as F  # noqa: E402

import perfprof  # noqa: E402
from database_checks import query  # noqa: E402
from trace_checks import load_trace  # noqa: E402

Work = Callable[[], Any]


def randn(*shape: int) -> Any:
    return torch.randn(*shape)


# Each call, made of fresh inputs, once under each profiler.
OPERATOR_CALLS: Dict[str, Work] = {
    "mm": lambda: torch.mm(randn(3, 4), randn(4, 5)),
    "addmm": lambda: torch.addmm(randn(5), randn(3, 4), randn(4, 5)),
    "linear_2d": lambda: F.linear(randn(6, 4), randn(5, 4), randn(5)),
    "linear_3d": lambda: F.linear(randn(2, 6, 4), randn(5, 4), randn(5)),
    "matmul_batched": lambda: randn(2, 3, 4) @ randn(2, 4, 5),
    "matmul_broadcast": lambda: randn(2, 3, 4) @ randn(4, 5),
    "bmm": lambda: torch.bmm(randn(2, 3, 4), randn(2, 4, 5)),
    "baddbmm": lambda: torch.baddbmm(randn(2, 3, 5), randn(2, 3, 4), randn(2, 4, 5)),
    "einsum": lambda: torch.einsum("bij,bjk->bik", randn(2, 3, 4), randn(2, 4, 5)),
    "mul_same": lambda: randn(2, 3, 4) * randn(2, 3, 4),
    "mul_first_broadcast": lambda: randn(2, 3, 1) * randn(2, 3, 4),
    "mul_second_broadcast": lambda: randn(2, 3, 4) * randn(2, 3, 1),
    "mul_scalar": lambda: randn(2, 3) * 2.5,
    "mul_zero_dim_first": lambda: torch.mul(torch.tensor(2.0), randn(3, 4)),
    "mul_out": lambda: torch.mul(randn(3, 4), randn(3, 4), out=torch.empty(3, 4)),
    "mul_in_place": lambda: randn(3, 4).mul_(randn(4)),
    "add_first_broadcast": lambda: randn(3, 1) + randn(3, 4),
    "add_alpha": lambda: torch.add(randn(4, 5), randn(5), alpha=2),
    "add_scalar": lambda: randn(4, 5) + 1,
    "add_in_place": lambda: randn(4, 5).add_(randn(4, 5)),
    "conv2d": lambda: F.conv2d(randn(2, 3, 8, 8), randn(4, 3, 3, 3), randn(4)),
    "conv2d_strided_padded": lambda: F.conv2d(randn(2, 3, 8, 8), randn(4, 3, 3, 3), stride=2, padding=1),
    "conv2d_groups_dilation": lambda: F.conv2d(randn(2, 16, 15, 17), randn(32, 4, 3, 5), randn(32), stride=(2, 3),
                                               padding=(1, 2), dilation=(2, 1), groups=4),
    "conv2d_same": lambda: F.conv2d(randn(1, 3, 8, 8), randn(4, 3, 3, 3), padding="same"),
    "conv2d_unbatched": lambda: F.conv2d(randn(3, 8, 8), randn(4, 3, 3, 3)),
    "conv2d_module": lambda: nn.Conv2d(3, 8, 3, padding=1)(randn(2, 3, 10, 10)),
    "conv1d": lambda: F.conv1d(randn(2, 6, 50), randn(8, 3, 5), groups=2),
    "conv3d": lambda: F.conv3d(randn(1, 2, 4, 4, 4), randn(3, 2, 2, 2, 2)),
    "sdpa": lambda: F.scaled_dot_product_attention(randn(2, 4, 5, 8), randn(2, 4, 6, 8), randn(2, 4, 6, 8)),
    "sdpa_causal": lambda: F.scaled_dot_product_attention(randn(1, 2, 6, 8), randn(1, 2, 6, 8), randn(1, 2, 6, 8),
                                                         is_causal=True),
}

# What torch.profiler (torch 2.13) counts for some of them, by hand: the test relies on torch's
# numbers, so that they are the ones meant is checked here.
HAND_COUNTS = {
    "mm": {"aten::mm": 2 * 3 * 4 * 5},
    "bmm": {"aten::bmm": 2 * 2 * 3 * 4 * 5},
    "mul_first_broadcast": {"aten::mul": 2 * 3 * 1},  # the first input's elements, not the output's 24
    "mul_second_broadcast": {"aten::mul": 2 * 3 * 4},
    "add_first_broadcast": {"aten::add": 3},
    "conv2d_strided_padded": {"aten::conv2d": 2 * 2 * 4 * 4 * 4 * 3 * 3 * 3},  # output [2, 4, 4, 4]
    "sdpa": {},
    "conv1d": {},
}


def run(profiler: Any, work: Work, **options: Any) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch's notes on ops it cannot count
        with profiler.profile(activities=[profiler.ProfilerActivity.CPU], **options) as prof:
            work()
    return prof


def event_flops(prof: Any) -> List[Tuple[str, int]]:
    """(name, flops) of each operator call that has any, sorted."""
    return sorted((e.name, e.flops) for e in prof.events() if e.flops)


def row_flops(prof: Any) -> Dict[str, int]:
    return {row.key: row.flops for row in prof.key_averages() if row.flops}


@pytest.mark.parametrize("call", list(OPERATOR_CALLS))
def test_each_operator_counts_what_torch_profiler_counts(call):
    work = OPERATOR_CALLS[call]
    theirs = run(torch.profiler, work, record_shapes=True, with_flops=True)
    mine = run(perfprof, work, record_shapes=True, with_flops=True)
    if call in HAND_COUNTS:
        assert row_flops(theirs) == HAND_COUNTS[call]
    assert event_flops(mine) == event_flops(theirs)
    assert row_flops(mine) == row_flops(theirs)


def test_attention_counts_zero_on_the_outer_and_the_inner_operator():
    work = OPERATOR_CALLS["sdpa"]
    theirs, mine = (run(p, work, record_shapes=True, with_flops=True) for p in (torch.profiler, perfprof))
    names = {"aten::scaled_dot_product_attention", "aten::_scaled_dot_product_flash_attention_for_cpu"}
    for prof in (theirs, mine):
        attention = [(e.name, e.flops) for e in prof.events() if e.name in names]
        assert sorted(attention) == sorted((name, 0) for name in names)


def mlp_step() -> Work:
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4))
    x = torch.randn(8, 16)

    def step() -> None:
        (model(x) * 0.5 + 1).sum().backward()

    return step


def test_no_flops_without_with_flops(tmp_path):
    step = mlp_step()
    theirs = run(torch.profiler, step, record_shapes=True)
    mine = run(perfprof, step, record_shapes=True)
    assert [row.flops for row in theirs.key_averages() if row.flops] == []
    assert [row.flops for row in mine.key_averages() if row.flops] == []
    assert [e.flops for e in mine.events() if e.flops] == []
    mine.export_chrome_trace(str(tmp_path / "trace.json"))
    assert [e for e in load_trace(str(tmp_path / "trace.json"))["traceEvents"] if "flops" in e.get("args", {})] == []
    database = str(tmp_path / "run.db")
    mine.trace.export_database(database, [])
    assert query(database, "SELECT count(*) FROM PYTORCH_API WHERE flops IS NOT NULL") == [(0,)]
    # The same loop with with_flops does count (the test above is no empty comparison).
    assert sum(row.flops for row in run(perfprof, step, record_shapes=True, with_flops=True).key_averages()) > 0


def test_a_count_reads_the_same_in_trace_events_rows_and_database(tmp_path):
    mine = run(perfprof, mlp_step(), with_flops=True)
    mine.export_chrome_trace(str(tmp_path / "trace.json"))
    in_trace = Counter()
    for event in load_trace(str(tmp_path / "trace.json"))["traceEvents"]:
        if event.get("args", {}).get("flops"):
            in_trace[event["name"]] += event["args"]["flops"]
    database = str(tmp_path / "run.db")
    mine.trace.export_database(database, [])
    in_database = dict(query(database, """SELECT n.value, sum(a.flops) FROM PYTORCH_API a
                                          JOIN StringIds n ON n.id = a.name WHERE a.flops IS NOT NULL
                                          GROUP BY n.value"""))
    assert dict(in_trace) == in_database == row_flops(mine)
    assert set(in_database) == {"aten::addmm", "aten::mm", "aten::mul", "aten::add"}


# -- transformer models (small configs, random weights: no download) ------------------------------

def t5_training() -> Work:
    transformers = pytest.importorskip("transformers")
    torch.manual_seed(0)
    config = transformers.T5Config(vocab_size=1000, d_model=64, d_kv=32, d_ff=128, num_layers=2, num_heads=2,
                                   decoder_start_token_id=0, pad_token_id=0)
    model = transformers.T5ForConditionalGeneration(config)
    tokens = torch.randint(1, config.vocab_size, (2, 16))

    def step() -> None:
        model(input_ids=tokens, labels=tokens).loss.backward()

    return step


def gpt2_training() -> Work:
    transformers = pytest.importorskip("transformers")
    torch.manual_seed(0)
    config = transformers.GPT2Config(n_layer=2, n_embd=64, n_head=2, vocab_size=1000, n_positions=64,
                                     bos_token_id=0, eos_token_id=0)
    model = transformers.GPT2LMHeadModel(config)
    tokens = torch.randint(0, config.vocab_size, (2, 32))

    def step() -> None:
        model(tokens, labels=tokens).loss.backward()

    return step


@pytest.mark.parametrize("make_step", [t5_training, gpt2_training])
def test_transformer_total_flops_equal_torch_profilers(make_step):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # transformers' notes on random configs
        step = make_step()
        step()  # first-call work outside both
    theirs = run(torch.profiler, step, with_flops=True)
    mine = run(perfprof, step, with_flops=True)
    total = sum(row.flops for row in theirs.key_averages())
    assert total > 0
    assert sum(row.flops for row in mine.key_averages()) == total
    assert row_flops(mine) == row_flops(theirs)
