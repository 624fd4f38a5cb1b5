"""``perfprof aggregate``'s computation: sweep records -> per-workload speedups and the dashboard
metrics of each series at each sweep (docs/experiments.md, "perfprof aggregate").

Nothing here reads results files or draws: :func:`aggregate` takes records, :func:`write_csvs`
writes its two CSV files. numpy is imported only where percentiles are taken.
"""
from __future__ import annotations

import csv
import dataclasses
import math
import os
import statistics
from collections import defaultdict
from datetime import datetime, timezone
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple

from .._files import make_directory, replaced_whole
from .._messages import listed
from ._results import PASS, RunRecord, config_text

#: ``--baseline``'s keywords; anything else is a CONFIG (NAME=VALUE[,NAME=VALUE]).
OLDEST, LATEST = "oldest", "latest"

#: The files :func:`write_csvs` writes (verification.csv only for the results of sweep --verify).
METRIC_REPORT_FILE = "metric_report.csv"
SPEEDUPS_FILE = "speedups.csv"
VERIFICATION_FILE = "verification.csv"


class BaselineError(ValueError):
    """``--baseline`` does not fit the records (an unknown grid name, values no series has)."""


@dataclasses.dataclass(frozen=True)
class Baseline:
    """What each speedup is relative to: ``oldest``, ``latest``, or a CONFIG's series.

    `values` holds the CONFIG's (NAME, VALUE) pairs in the order given; empty for the keywords.
    """

    kind: str
    values: Tuple[Tuple[str, str], ...] = ()

    @property
    def names(self) -> List[str]:
        """The compared grid names of a CONFIG baseline (none for oldest and latest)."""
        return [name for name, _ in self.values]

    def __str__(self) -> str:
        return config_text(dict(self.values)) if self.values else self.kind


def parse_baseline(text: str) -> Baseline:
    """``--baseline``'s value as a :class:`Baseline`; ``ValueError`` when it is neither a keyword
    nor NAME=VALUE[,NAME=VALUE] with distinct, non-empty names."""
    if text in (OLDEST, LATEST):
        return Baseline(text)
    values: List[Tuple[str, str]] = []
    for item in text.split(","):
        name, equals, value = (part.strip() for part in item.partition("="))
        if not equals or not name:
            raise ValueError(f"{item!r} is not NAME=VALUE (give oldest, latest or NAME=VALUE[,NAME=VALUE])")
        if name in dict(values):
            raise ValueError(f"{name!r} is given twice")
        values.append((name, value))
    return Baseline("config", tuple(values))


def default_baseline(records: Sequence[RunRecord]) -> Baseline:
    """``--baseline``'s default: each configuration's oldest sweep when `records` hold several
    sweeps. With one sweep every configuration would be its own baseline (every speedup 1.000):
    ``BaselineError`` then says how to pick one, with the grid's values as examples."""
    if len({record.timestamp for record in records}) > 1:
        return Baseline(OLDEST)
    values: Dict[str, List[str]] = defaultdict(list)
    for record in records:
        for name, value in record.config.items():
            if value not in values[name]:
                values[name].append(value)
    varied = [f"{name}={given[0]}" for name, given in values.items() if len(given) > 1]
    example = f"--baseline {varied[0]}" if varied else "--baseline NAME=VALUE"
    choices = f" (the grid varies {', '.join(name for name, given in values.items() if len(given) > 1)})" \
        if varied else ""
    raise BaselineError(f"the results hold one sweep, so each configuration's oldest sweep is itself and every "
                        f"speedup would be 1.000: give the configuration to compare with, e.g. {example}{choices}, "
                        "or aggregate the results of several sweeps")


@dataclasses.dataclass(frozen=True)
class Sample:
    """The pooled steps of a (series, workload, timestamp)'s PASS records."""

    mean_ns: float
    std_ns: float                       # sample standard deviation; 0 for a single step
    peak_device_bytes: Optional[int]    # the largest of its records' (None when none has it)
    peak_host_bytes: Optional[int]
    outputs_dir: Optional[str]          # its first PASS record's (by repeat) recorded outputs: what runs verify against


@dataclasses.dataclass(frozen=True)
class Speedup:
    """One workload of one series at one sweep against its baseline (a line of speedups.csv)."""

    series: str
    workload: str
    timestamp: str
    speedup: float
    speedup_error: float
    baseline_mean_ns: float
    mean_ns: float


@dataclasses.dataclass(frozen=True)
class Verification:
    """One verified run (``perfprof sweep --verify``): its outputs against those of its workload's
    baseline sample (a line of verification.csv)."""

    series: str
    workload: str
    timestamp: str
    repeat: int
    code: str                        # VERIFIED, NO_OUTPUT, NO_BASELINE_OUTPUT or MISMATCH (_outputs.py)
    mean_rel_error: Optional[float]  # VERIFIED only


@dataclasses.dataclass(frozen=True)
class SeriesMetrics:
    """The dashboard metrics of one series at one sweep (a line of metric_report.csv).

    The speedup statistics and the compression ratio are None when no workload had a sample and
    a baseline; mean_compile_time_s when no PASS record measured one.
    """

    series: str
    timestamp: str
    workloads: int                      # workloads with a speedup
    left_out: int                       # workloads without a PASS sample or a baseline
    geomean_speedup: Optional[float]
    p5_speedup: Optional[float]
    p50_speedup: Optional[float]
    p95_speedup: Optional[float]
    passed: int
    total: int
    mean_compile_time_s: Optional[float]
    compile_time_source: Optional[str]  # what the compile times are: "dynamo", "first_step_excess" or both ("+")
    compression_ratio: Optional[float]

    @property
    def pass_rate_pct(self) -> float:
        """PASS records over all records, in percent."""
        return 100.0 * self.passed / self.total

    @property
    def pass_rate_text(self) -> str:
        """The pass rate as people read it: ``75%, 3/4``."""
        return f"{self.pass_rate_pct:.3g}%, {self.passed}/{self.total}"


@dataclasses.dataclass(frozen=True)
class Aggregation:
    """What :func:`aggregate` found: the metrics by series and time, and every speedup."""

    baseline: Baseline
    baseline_series: Optional[str]      # a CONFIG baseline's series; None for oldest and latest
    series: List[str]                   # the baseline series first, then by name
    metrics: List[SeriesMetrics]        # by series (in the order above), then time
    speedups: List[Speedup]             # likewise, then workload
    unplaced: int                       # records whose configuration lacks a compared name
    verifications: List[Verification]   # the PASS runs of a sweep --verify, as the speedups are ordered

    def latest_metrics(self) -> List[SeriesMetrics]:
        """Each series' metrics at its most recent sweep, in series order."""
        latest: Dict[str, SeriesMetrics] = {}
        for metrics in self.metrics:
            latest[metrics.series] = metrics  # time order: the last one wins
        return [latest[series] for series in self.series]

    def latest_speedups(self, series: str) -> List[Speedup]:
        """The speedups of `series` at its most recent sweep, smallest first."""
        timestamp = next(m.timestamp for m in self.latest_metrics() if m.series == series)
        return sorted((s for s in self.speedups if s.series == series and s.timestamp == timestamp),
                      key=lambda s: (s.speedup, s.workload))


def instant(timestamp: str) -> datetime:
    """A record's ISO 8601 timestamp as a datetime in UTC (no zone given: UTC), for ordering and charts."""
    try:
        moment = datetime.fromisoformat(timestamp[:-1] + "+00:00" if timestamp.endswith("Z") else timestamp)
    except ValueError:
        raise ValueError(f"timestamp {timestamp!r} is not ISO 8601") from None
    return moment.astimezone(timezone.utc) if moment.tzinfo else moment.replace(tzinfo=timezone.utc)


# -- grouping -----------------------------------------------------------------------------------

_Key = Tuple[str, str]  # (series, workload)


def _placer(baseline: Baseline) -> Callable[[RunRecord], Optional[_Key]]:
    """How a record is placed: its (series, workload), or None when it lacks a compared name."""
    if not baseline.values:
        return lambda record: (config_text(record.config), record.workload)
    names = baseline.names

    def place(record: RunRecord) -> Optional[_Key]:
        if any(name not in record.config for name in names):
            return None
        others = {name: value for name, value in record.config.items() if name not in names}
        workload = f"{record.workload} [{config_text(others)}]" if others else record.workload
        return config_text({name: record.config[name] for name in names}), workload
    return place


def _sample(records: Sequence[RunRecord]) -> Optional[Sample]:
    """The pooled sample of `records`' PASS runs (their steps, the runs' step_times); None
    without a step. With one run its mean is the run's mean_step_ns."""
    passed = [record for record in records if record.status == PASS]
    steps = [float(step) for record in passed for step in record.step_times_ns]
    if not steps:
        return None
    recorded = sorted((record for record in passed if record.outputs_dir), key=lambda record: record.repeat)
    return Sample(mean_ns=statistics.fmean(steps), std_ns=statistics.stdev(steps) if len(steps) > 1 else 0.0,
                  peak_device_bytes=_largest(record.peak_device_bytes for record in passed),
                  peak_host_bytes=_largest(record.peak_host_bytes for record in passed),
                  outputs_dir=recorded[0].outputs_dir if recorded else None)


def _largest(values: Iterable[Optional[int]]) -> Optional[int]:
    known = [value for value in values if value is not None]
    return max(known) if known else None


def _check_baseline(baseline: Baseline, records: Sequence[RunRecord], series: Iterable[str]) -> Optional[str]:
    """A CONFIG baseline's series (``BaselineError`` for an unknown name or values no series has)."""
    if not baseline.values:
        return None
    known = list(dict.fromkeys(name for record in records for name in record.config))
    for name in baseline.names:
        if name not in known:
            raise BaselineError(f"unknown grid name {name!r} in --baseline {baseline}; "
                                f"the grid names are: {listed(known, ', ') or '(none)'}")
    wanted = config_text(dict(baseline.values))
    if wanted not in series:
        raise BaselineError(f"no record has {wanted}; the series are: {listed(sorted(series), ', ')}")
    return wanted


# -- the metrics --------------------------------------------------------------------------------

def speedup_of(baseline: Sample, run: Sample) -> Tuple[float, float]:
    """S = m_b / m_r and its propagated error S * sqrt((s_b/m_b)^2 + (s_r/m_r)^2)."""
    speedup = baseline.mean_ns / run.mean_ns
    error = speedup * math.hypot(baseline.std_ns / baseline.mean_ns, run.std_ns / run.mean_ns)
    return speedup, error


def geomean(values: Sequence[float]) -> Optional[float]:
    """exp(mean(ln v)); None for no values."""
    return math.exp(statistics.fmean(math.log(value) for value in values)) if values else None


def _compression(baseline: Sample, run: Sample) -> Optional[float]:
    """baseline peak / run peak: device bytes when both have them, else host bytes, else None."""
    for base, peak in ((baseline.peak_device_bytes, run.peak_device_bytes),
                       (baseline.peak_host_bytes, run.peak_host_bytes)):
        if base is not None and peak is not None:
            return base / peak if base > 0 and peak > 0 else None
    return None


def _metrics(series: str, timestamp: str, records: Sequence[RunRecord], speedups: Sequence[Speedup],
             compressions: Sequence[float], left_out: int) -> SeriesMetrics:
    import numpy

    values = [speedup.speedup for speedup in speedups]
    p5, p50, p95 = (float(p) for p in numpy.percentile(values, [5, 50, 95])) if values else (None, None, None)
    compiled = [(time, record.compile_source) for record in records
                if record.status == PASS and (time := record.compile_time_ns) is not None]
    compile_times = [time for time, _ in compiled]
    sources = sorted({source or "unknown" for _, source in compiled})
    return SeriesMetrics(
        series=series, timestamp=timestamp, workloads=len(values), left_out=left_out,
        geomean_speedup=geomean(values), p5_speedup=p5, p50_speedup=p50, p95_speedup=p95,
        passed=sum(record.status == PASS for record in records), total=len(records),
        mean_compile_time_s=statistics.fmean(compile_times) / 1e9 if compile_times else None,
        compile_time_source="+".join(sources) if sources else None, compression_ratio=geomean(compressions))


def aggregate(records: Sequence[RunRecord], baseline: Optional[Baseline] = None) -> Aggregation:
    """The speedups and dashboard metrics of `records` against `baseline` (docs/experiments.md;
    None: :func:`default_baseline`).

    ``BaselineError`` when a CONFIG baseline names an unknown grid name or values no series has,
    or when no baseline is given for the records of one sweep; ``ValueError`` when no record
    passed or a timestamp is not ISO 8601.
    """
    if not any(record.status == PASS for record in records):
        raise ValueError("no PASS record in the results: nothing to aggregate")
    baseline = baseline or default_baseline(records)
    place = _placer(baseline)
    groups: Dict[Tuple[str, str, str], List[RunRecord]] = defaultdict(list)  # (series, workload, timestamp)
    unplaced = 0
    for record in records:
        key = place(record)
        if key is None:
            unplaced += 1
        else:
            groups[(key[0], key[1], record.timestamp)].append(record)
    baseline_series = _check_baseline(baseline, records, {series for series, _, _ in groups})
    samples = {key: sample for key, group in groups.items() if (sample := _sample(group)) is not None}
    baselines = _baseline_samples(baseline, baseline_series, samples)

    series_order = sorted({key[0] for key in groups}, key=lambda series: (series != baseline_series, series))
    by_sweep: Dict[Tuple[str, str], List[str]] = defaultdict(list)  # (series, timestamp) -> workloads
    for series, workload, timestamp in groups:
        by_sweep[(series, timestamp)].append(workload)
    all_metrics, all_speedups, verifications = [], [], []
    for series, timestamp in sorted(by_sweep, key=lambda key: (series_order.index(key[0]), instant(key[1]))):
        speedups, compressions = [], []
        for workload in sorted(by_sweep[(series, timestamp)]):
            run = samples.get((series, workload, timestamp))
            base = baselines.get((series if baseline_series is None else baseline_series, workload))
            if run is None or base is None:
                continue
            speedup, error = (1.0, 0.0) if run is base else speedup_of(base, run)
            speedups.append(Speedup(series, workload, timestamp, speedup, error, base.mean_ns, run.mean_ns))
            verifications += _verified(series, workload, timestamp, groups[(series, workload, timestamp)], base)
            if (ratio := _compression(base, run)) is not None:
                compressions.append(ratio)
        sweep_records = [record for workload in by_sweep[(series, timestamp)]
                         for record in groups[(series, workload, timestamp)]]
        left_out = len(by_sweep[(series, timestamp)]) - len(speedups)
        all_metrics.append(_metrics(series, timestamp, sweep_records, speedups, compressions, left_out))
        all_speedups.extend(speedups)
    return Aggregation(baseline, baseline_series, series_order, all_metrics, all_speedups, unplaced, verifications)


def _verified(series: str, workload: str, timestamp: str, records: Sequence[RunRecord],
              base: Sample) -> List[Verification]:
    """The verification of each PASS run of `records` against `base`'s outputs, when the sweep
    verified (some run of the group or the baseline recorded outputs)."""
    from ._outputs import verify

    passed = [record for record in records if record.status == PASS]
    if base.outputs_dir is None and not any(record.outputs_dir for record in passed):
        return []
    return [Verification(series, workload, timestamp, record.repeat, *verify(record.outputs_dir, base.outputs_dir))
            for record in sorted(passed, key=lambda record: record.repeat)]


def _baseline_samples(baseline: Baseline, baseline_series: Optional[str],
                      samples: Dict[Tuple[str, str, str], Sample]) -> Dict[_Key, Sample]:
    """Each (series, workload)'s baseline sample: the sample at its oldest (latest for ``latest``)
    timestamp that has one; a CONFIG baseline keeps only its series' workloads."""
    chosen: Dict[_Key, Tuple[datetime, Sample]] = {}
    later = baseline.kind == LATEST
    for (series, workload, timestamp), sample in samples.items():
        if baseline_series is not None and series != baseline_series:
            continue
        moment = instant(timestamp)
        current = chosen.get((series, workload))
        if current is None or (moment > current[0] if later else moment < current[0]):
            chosen[(series, workload)] = (moment, sample)
    return {key: sample for key, (_, sample) in chosen.items()}


# -- thresholds ---------------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class Flag:
    """A series whose latest sweep is below a dashboard threshold."""

    series: str
    metric: str      # "geomean speedup", "compression ratio" or "pass rate"
    value: str       # as printed
    threshold: str

    def __str__(self) -> str:
        return f"FLAG series={self.series}: {self.metric} {self.value} < {self.threshold}"


def check_thresholds(aggregation: Aggregation, min_speedup: Optional[float] = None,
                     min_compression: Optional[float] = None, min_pass_rate: Optional[float] = None) -> List[Flag]:
    """The flags of each series at its latest sweep: geomean speedup below `min_speedup`,
    compression ratio below `min_compression`, pass rate (percent) below `min_pass_rate`; a
    threshold that is None is not checked. A CONFIG baseline's own series is flagged for its pass
    rate only; a metric that is None is not compared."""
    flags = []
    for metrics in aggregation.latest_metrics():
        if metrics.series != aggregation.baseline_series:
            for name, value, least in (("geomean speedup", metrics.geomean_speedup, min_speedup),
                                       ("compression ratio", metrics.compression_ratio, min_compression)):
                if value is not None and least is not None and value < least:
                    flags.append(Flag(metrics.series, name, _below(value, least), f"{least:g}"))
        if min_pass_rate is not None and metrics.pass_rate_pct < min_pass_rate:
            flags.append(Flag(metrics.series, "pass rate", metrics.pass_rate_text, f"{min_pass_rate:g}%"))
    return flags


@dataclasses.dataclass(frozen=True)
class ToleranceFlag:
    """A verified run whose outputs are past the tolerance, or could not be compared."""

    verification: Verification
    tolerance: float

    def __str__(self) -> str:
        v = self.verification
        where = f"FLAG series={v.series} workload={v.workload} repeat {v.repeat}"
        if v.mean_rel_error is None:
            return f"{where}: outputs not verified ({v.code})"
        return f"{where}: mean relative error {v.mean_rel_error:.3g} > tolerance {self.tolerance:g}"


def check_tolerance(aggregation: Aggregation, tolerance: Optional[float]) -> List[ToleranceFlag]:
    """The verified runs at each series' latest sweep whose mean relative error is above
    `tolerance`, or whose outputs could not be compared with their baseline's (not a check
    when `tolerance` is None)."""
    if tolerance is None:
        return []
    latest = {(metrics.series, metrics.timestamp) for metrics in aggregation.latest_metrics()}
    return [ToleranceFlag(v, tolerance) for v in aggregation.verifications if (v.series, v.timestamp) in latest
            and (v.mean_rel_error is None or v.mean_rel_error > tolerance)]


def _below(value: float, threshold: float) -> str:
    """`value` with the fewest decimals (two or more) that still read below `threshold`."""
    for decimals in range(2, 7):
        text = f"{value:.{decimals}f}"
        if float(text) < threshold:
            return text
    return repr(value)


# -- the columns and the CSV files --------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class MetricColumn:
    """A column of the metrics: its heading in the table, its CSV fields, their values and its text."""

    heading: str
    fields: Tuple[str, ...]
    values: Callable[[SeriesMetrics], Tuple[object, ...]]
    text: Callable[[SeriesMetrics], str]


def _number(value: Optional[float], spec: str = ".3f") -> str:
    return "-" if value is None else format(value, spec)


def _compile_time_text(metrics: SeriesMetrics) -> str:
    """The mean compile time with what it is: ``0.427 (dynamo)``, ``0.016 (first_step_excess)``."""
    if metrics.mean_compile_time_s is None:
        return "-"
    return f"{metrics.mean_compile_time_s:.3g} ({metrics.compile_time_source})"


def _field(name: str, spec: str = ".3f", heading: str = "") -> MetricColumn:
    """A column of one SeriesMetrics field, its heading the field's name in words unless given."""
    return MetricColumn(heading or name.replace("_", " "), (name,), lambda m: (getattr(m, name),),
                        lambda m: str(getattr(m, name)) if spec == "" else _number(getattr(m, name), spec))


#: The metrics' columns, for metric_report.csv (their fields, in order) and the table alike.
METRIC_COLUMNS: Tuple[MetricColumn, ...] = (
    _field("series", ""),
    MetricColumn("sweep (UTC)", ("timestamp",), lambda m: (m.timestamp,),
                 lambda m: f"{instant(m.timestamp):%Y-%m-%d %H:%M:%S}"),
    _field("workloads", ""), _field("left_out", ""),
    _field("geomean_speedup"), _field("p5_speedup"), _field("p50_speedup"), _field("p95_speedup"),
    MetricColumn("pass rate", ("passed", "total", "pass_rate_pct"),
                 lambda m: (m.passed, m.total, m.pass_rate_pct), lambda m: m.pass_rate_text),
    MetricColumn("mean compile time (s)", ("mean_compile_time_s", "compile_time_source"),
                 lambda m: (m.mean_compile_time_s, m.compile_time_source), lambda m: _compile_time_text(m)),
    _field("compression_ratio"),
)

def _dataclass_rows(kind: type, items: Iterable[Any]) -> List[List[object]]:
    """A CSV of dataclass `items`: the field names, then each item's values (None as an empty cell)."""
    rows: List[List[object]] = [[field.name for field in dataclasses.fields(kind)]]
    rows += [[_cell(value) for value in dataclasses.astuple(item)] for item in items]
    return rows


def metric_rows(metrics: Iterable[SeriesMetrics]) -> List[List[object]]:
    """metric_report.csv's header and rows (None as an empty cell)."""
    rows: List[List[object]] = [[field for column in METRIC_COLUMNS for field in column.fields]]
    for item in metrics:
        rows.append([_cell(value) for column in METRIC_COLUMNS for value in column.values(item)])
    return rows


def speedup_rows(speedups: Iterable[Speedup]) -> List[List[object]]:
    """speedups.csv's header and rows (None as an empty cell)."""
    return _dataclass_rows(Speedup, speedups)


def _cell(value: object) -> object:
    return "" if value is None else value


def write_csvs(aggregation: Aggregation, output_dir: str) -> List[str]:
    """Write metric_report.csv and speedups.csv into `output_dir` (created if need be), and
    verification.csv when runs were verified; their paths."""
    make_directory(output_dir, follow_link=True)
    files = [(METRIC_REPORT_FILE, metric_rows(aggregation.metrics)),
             (SPEEDUPS_FILE, speedup_rows(aggregation.speedups))]
    if aggregation.verifications:
        files.append((VERIFICATION_FILE, _dataclass_rows(Verification, aggregation.verifications)))
    paths = []
    for name, rows in files:
        path = os.path.join(output_dir, name)
        with replaced_whole(path, newline="") as file:
            csv.writer(file).writerows(rows)
        paths.append(path)
    return paths
