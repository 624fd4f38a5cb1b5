"""Experiments across runs: sweep a script over a grid of configurations, compare runs, and
aggregate sweep results into dashboard metrics (docs/experiments.md).
"""
from __future__ import annotations

from ._results import (FAIL, PASS, RESULTS_FILE, SKIP, STATUSES, TIMEOUT, RunRecord, config_text,
                       configuration_fingerprint, read_results)
from ._compare import (SECTIONS, WARMUP_MIN_STEPS, CompareError, ComparedRun, ComparedSection, Comparison,
                       SectionSpec, Slowdown, compare_runs, resolve_run)

__all__ = [
    "FAIL", "PASS", "RESULTS_FILE", "SKIP", "STATUSES", "TIMEOUT", "RunRecord", "config_text",
    "configuration_fingerprint", "read_results",
    "SECTIONS", "WARMUP_MIN_STEPS", "CompareError", "ComparedRun", "ComparedSection", "Comparison", "SectionSpec",
    "Slowdown", "compare_runs", "resolve_run",
]
