"""gc_detect_threshold: Python garbage-collection pauses on their own track."""
from __future__ import annotations

import gc
from typing import Any, Dict, List, Optional

import perfprof
from trace_checks import load_trace

GARBAGE_CYCLES = 3000  # more container allocations than gen0's threshold (700): automatic collections


def make_garbage() -> None:
    for _ in range(GARBAGE_CYCLES):
        node: Dict[str, Any] = {}
        node["self"] = node  # a cycle: only the collector frees it


def profile_collections(tmp_path, threshold_ms: Optional[float], collections: int = 3) -> List[Dict[str, Any]]:
    config = perfprof.ExperimentalConfig(gc_detect_threshold=threshold_ms)
    with perfprof.profile(activities=[perfprof.ProfilerActivity.CPU], experimental_config=config) as prof:
        for _ in range(collections):
            make_garbage()
            gc.collect()
    path = str(tmp_path / "t.json")
    prof.export_chrome_trace(path)
    trace = load_trace(path)
    gc_tids = {e["tid"] for e in trace["traceEvents"] if e.get("name") == "thread_name"
               and e["args"]["name"] == "Python GC"}
    pauses = [e for e in trace["traceEvents"] if e.get("ph") == "X" and e.get("cat") == "gc"]
    assert all(e["tid"] in gc_tids and e["name"] == "Python GC" for e in pauses)
    return pauses


def test_every_collection_is_recorded_with_threshold_zero(tmp_path):
    pauses = profile_collections(tmp_path, 0)
    full = [e for e in pauses if e["args"]["generation"] == 2]
    assert len(full) >= 3  # the explicit gc.collect() calls
    assert sum(e["args"]["collected"] for e in pauses) >= 3 * GARBAGE_CYCLES  # every cycle, freed once
    assert any(e["args"]["generation"] == 0 for e in pauses)  # automatic ones too


def test_pauses_below_the_threshold_are_dropped(tmp_path):
    everything = profile_collections(tmp_path, 0)
    threshold_ms = max(e["dur"] for e in everything) / 2 / 1000  # keeps the full collections
    kept = profile_collections(tmp_path, threshold_ms)
    assert all(e["dur"] >= threshold_ms * 1000 for e in kept)
    assert len(kept) < len(everything)


def test_no_gc_track_without_the_option(tmp_path):
    assert profile_collections(tmp_path, None) == []


def test_collections_are_listed_in_summaries(tmp_path):
    config = perfprof.ExperimentalConfig(gc_detect_threshold=0)
    with perfprof.profile(activities=[perfprof.ProfilerActivity.CPU], experimental_config=config) as prof:
        make_garbage()
        gc.collect()
    row = next(row for row in prof.key_averages() if row.key == "Python GC")
    assert row.count >= 1 and row.cpu_time_total > 0
    assert "Python GC" in prof.key_averages().table()


def test_callback_is_removed_after_profiling():
    before = list(gc.callbacks)
    with perfprof.profile(experimental_config=perfprof.ExperimentalConfig(gc_detect_threshold=1)):
        assert len(gc.callbacks) == len(before) + 1
    assert gc.callbacks == before
