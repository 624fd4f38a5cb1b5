"""Experiments across runs: sweep a script over a grid of configurations, compare runs, and
aggregate sweep results into dashboard metrics (docs/experiments.md).
"""
from __future__ import annotations

from ._results import (FAIL, PASS, RESULTS_FILE, SKIP, STATUSES, TIMEOUT, RunRecord, config_text,
                       configuration_fingerprint, read_results)
from ._aggregate import (METRIC_COLUMNS, Aggregation, Baseline, BaselineError, Flag, SeriesMetrics, Speedup,
                         Verification, aggregate, check_thresholds, check_tolerance, parse_baseline,
                         write_csvs)
from ._charts import CHART_REPORTS, Chart, ascii_chart, chart_of, draw_chart
from ._outputs import record_output
from ._compare import (SECTIONS, CompareError, ComparedRun, ComparedSection, Comparison,
                       RunNotFound, SectionSpec, Slowdown, compare_runs, resolve_run)

__all__ = [
    "FAIL", "PASS", "RESULTS_FILE", "SKIP", "STATUSES", "TIMEOUT", "RunRecord", "config_text",
    "configuration_fingerprint", "read_results",
    "METRIC_COLUMNS", "Aggregation", "Baseline", "BaselineError", "Flag", "SeriesMetrics", "Speedup", "aggregate",
    "check_thresholds", "parse_baseline", "write_csvs",
    "CHART_REPORTS", "Chart", "ascii_chart", "chart_of", "draw_chart",
    "SECTIONS", "CompareError", "ComparedRun", "ComparedSection", "Comparison", "SectionSpec",
    "RunNotFound", "Slowdown", "compare_runs", "resolve_run",
    "record_output", "Verification", "check_tolerance",
]
