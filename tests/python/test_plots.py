"""perfprof.plots: the plots drawn from hand-made Tables, the plot configuration and its
priority chain, the layout of runs, the engine and its log, auto-plot through
tensorboard_trace_handler and through `perfprof run`, and `perfprof plot`."""
import dataclasses
import json
import logging
import os
import statistics
import subprocess
import sys
import time

import pytest

pytest.importorskip("matplotlib")
pytest.importorskip("yaml")

import perfprof  # noqa: E402
from child_process import child_env  # noqa: E402
from perfprof import analysis  # noqa: E402
from perfprof.analysis import Table  # noqa: E402
from perfprof.plots import NoRunError, PlotConfigError, _multi_run, _single_run, prepare  # noqa: E402
from perfprof.plots._config import DEFAULT_CONFIG, RUN_CONFIG_FILE, config_path_for, load_config, parse_config  # noqa: E402
from perfprof.plots._style import save, themed  # noqa: E402

TIMEOUT_S = 120
MS = 1_000_000


@pytest.fixture(autouse=True)
def home(tmp_path, monkeypatch):
    """A HOME of the test's own: ~/.perfprof/plot_config.yaml is made there."""
    path = tmp_path / "home"
    path.mkdir()
    monkeypatch.setenv("HOME", str(path))
    return path


# -- hand-made tables, as the analyses return them ------------------------------------------------

def step_times(durations_ms=(9, 11, 10, 12, 10)):
    return Table.of("step_times", "Step times", ["step", "start_ns", "end_ns", "duration_ns"],
                    [(step, step * 20 * MS, step * 20 * MS + ms * MS, ms * MS) for step, ms in enumerate(durations_ms)])


def step_times_plotted(durations_ms=(9, 11, 10, 12, 10)):
    """step_times as the step_times plot loads it: with the run's median step on every row."""
    table = step_times(durations_ms)
    return Table.of(table.name, table.title, table.columns + ("median_ns",),
                    [row + (statistics.median(durations_ms) * MS,) for row in table.rows])


def step_statistics(durations_ms=(9, 11, 10, 12, 10)):
    return Table.of("step_statistics", "", ["count", "median_ns"],
                    [(len(durations_ms), statistics.median(durations_ms) * MS)])


def step_time_breakdown():
    return Table.of("step_time_breakdown", "", ["step", "duration_ns", "operators_ns", "gc_ns", "other_ns"],
                    [(step, 10 * MS, 7 * MS, step * MS // 2, 3 * MS - step * MS // 2) for step in range(5)])


def top_kernels(scale=1.0, names=("gemm_kernel", "softmax_kernel", "elementwise_kernel")):
    return Table.of("top_kernels", "", ["name", "type", "count", "total_ns", "avg_ns", "median_ns", "min_ns",
                                        "max_ns", "stddev_ns", "pct"],
                    [(name, "compute", 4, scale * MS * (3 - i), 0, 0, 0, 0, 0, 50 - 15 * i)
                     for i, name in enumerate(names)])


def top_operators(scale=1.0):
    return Table.of("top_operators", "", ["name", "count", "total_ns", "self_ns", "avg_ns", "median_ns", "min_ns",
                                          "max_ns", "stddev_ns", "pct"],
                    [(f"aten::op{i}", 4, scale * MS * (4 - i), scale * MS * (2 - i / 2), 0, 0, 0, 0, 0, 40 - 10 * i)
                     for i in range(4)])


def gpu_utilization():
    return Table.of("gpu_utilization", "", ["deviceId", "bin_start_ns", "bin_end_ns", "busy_ns", "utilization_pct"],
                    [(0, i * MS, (i + 1) * MS, (i % 4) * MS // 4, 25.0 * (i % 4)) for i in range(20)])


def memory_over_time():
    rows = [("CUDA", t * MS, category, (t % 5 + 1) * size) for t in range(10)
            for category, size in (("parameters", 2 ** 26), ("activations", 2 ** 25))]
    return Table.of("memory_over_time", "", ["deviceType", "timestamp_ns", "category", "bytes"], rows)


def idle_time_breakdown():
    return Table.of("idle_time_breakdown", "", ["deviceId", "streamId", "category", "idle_ns", "idle_pct"],
                    [(0, 7, "host_wait", 4 * MS, 40), (0, 7, "kernel_wait", MS, 10), (0, 7, "other", 5 * MS, 50),
                     (0, 13, "other", 2 * MS, 100)])


def host_telemetry_over_time():
    rows = [(panel, series, t * 20 * MS, value * (1 + t % 3))
            for panel, series, value in (("cpu", "host", 60.0), ("cpu", "process", 90.0),
                                         ("memory", "host used", 2.0 ** 33), ("memory", "process RSS", 2.0 ** 29),
                                         ("network", "receive", 2.0 ** 20), ("network", "transmit", 2.0 ** 19))
            for t in range(10)]
    return Table.of("host_telemetry_over_time", "", ["panel", "series", "timestamp_ns", "value"], rows)


def gpu_telemetry_over_time():
    return Table.of("gpu_telemetry_over_time", "", ["gpu", "timestamp_ns", "utilization_pct", "memory_used_bytes",
                                                    "power_watts", "sm_clock_mhz"],
                    [(f"GPU {gpu}", t * 20 * MS, 10.0 * (t % 10), (t + 1) * 2.0 ** 30, 100.0 + t,
                      None if gpu else 1980.0) for gpu in (0, 1) for t in range(10)])


def empty(table):
    return Table.of(table.name, table.title, table.columns, [])


SINGLE_RUN_CASES = {
    "step_times": (_single_run.step_times, step_times_plotted),
    "step_time_breakdown": (_single_run.step_time_breakdown, step_time_breakdown),
    "top_kernels": (_single_run.top_kernels, top_kernels),
    "top_operators": (_single_run.top_operators, top_operators),
    "gpu_utilization": (_single_run.gpu_utilization, gpu_utilization),
    "memory_over_time": (_single_run.memory_over_time, memory_over_time),
    "idle_time_breakdown": (_single_run.idle_time_breakdown, idle_time_breakdown),
    "host_telemetry": (_single_run.host_telemetry, host_telemetry_over_time),
    "gpu_telemetry": (_single_run.gpu_telemetry, gpu_telemetry_over_time),
}
RUNS = {"[baseline] base": 1.0, "[treatment] new": 0.7, "other": 1.2}
MULTI_RUN_CASES = {
    "step_time_distribution": lambda: _multi_run.step_time_distribution(
        {label: step_times([ms * scale for ms in (9, 11, 10, 12)]) for label, scale in RUNS.items()}),
    "kernel_time_across_runs": lambda: _multi_run.kernel_time_across_runs(
        {label: top_kernels(scale) for label, scale in RUNS.items()}, top_n=2),
    "operator_time_across_runs": lambda: _multi_run.operator_time_across_runs(
        {label: top_operators(scale) for label, scale in RUNS.items()}, top_n=3),
}


def pixel_variance(path):
    import matplotlib.image

    return float(matplotlib.image.imread(path)[..., :3].var())


# A blank PNG has variance 0; a drawn plot's bars, lines and text give ~0.01 or more.
NOT_BLANK = 1e-3


# -- the plots ------------------------------------------------------------------------------------

@pytest.mark.parametrize("theme", ["light", "dark"])
@pytest.mark.parametrize("name", sorted(SINGLE_RUN_CASES))
def test_single_run_plots_draw_non_blank_pngs(tmp_path, name, theme):
    draw, table = SINGLE_RUN_CASES[name]
    path = str(tmp_path / f"{name}.png")
    with themed(theme):
        save(draw(table()), path)
    assert pixel_variance(path) > NOT_BLANK


@pytest.mark.parametrize("name", sorted(MULTI_RUN_CASES))
def test_multi_run_plots_draw_non_blank_pngs(tmp_path, name):
    path = str(tmp_path / f"{name}.png")
    with themed("light"):
        save(MULTI_RUN_CASES[name](), path)
    assert pixel_variance(path) > NOT_BLANK


def test_the_themes_differ(tmp_path):
    import matplotlib.image

    backgrounds = []
    for theme in ("light", "dark"):
        with themed(theme):
            save(_single_run.step_times(step_times_plotted()), str(tmp_path / f"{theme}.png"))
        backgrounds.append(matplotlib.image.imread(str(tmp_path / f"{theme}.png"))[0, 0, :3].mean())
    assert backgrounds[0] > 0.9 > 0.2 > backgrounds[1]  # a white corner, a near-black one


def test_step_times_draws_the_median_step_time_of_step_statistics():
    # An even count: the median is the mean of the two middle steps (10.5 ms), not the larger (11).
    figure = _single_run.step_times(step_times_plotted((9, 11, 10, 12)))
    assert [text.get_text() for text in figure.axes[0].get_legend().get_texts()] == ["median 10.5 ms"]


def test_the_step_times_plot_reads_the_runs_step_statistics(tmp_path):
    from perfprof.plots._catalogue import step_times_with_median

    (run_dir,) = cpu_run(tmp_path, export_type=["text", "db"]).run_dirs
    with analysis.open_run(run_dir) as run:
        table = step_times_with_median(run)
        (expected,) = analysis.step_statistics(run).to_dicts()
        assert table.column("duration_ns") == [row["duration_ns"] for row in analysis.step_times(run)]
    assert set(table.column("median_ns")) == {expected["median_ns"]}


def test_a_run_without_data_is_still_listed_in_a_comparison():
    figure = _multi_run.step_time_distribution({"a": step_times(), "b": empty(step_times())})
    assert [label.get_text() for label in figure.axes[0].get_yticklabels()] == ["b", "a"]  # the first on top


# -- the configuration ----------------------------------------------------------------------------

def test_the_shipped_default_is_valid_and_lists_every_plot():
    from perfprof.plots._catalogue import MULTI_RUN_PLOTS, SINGLE_RUN_PLOTS

    config = load_config(DEFAULT_CONFIG)
    assert (config.theme, config.top_n) == ("light", 10)
    assert list(config.single_run_plots) == list(SINGLE_RUN_PLOTS)
    assert list(config.multi_run_plots) == list(MULTI_RUN_PLOTS)


@pytest.mark.parametrize("content, names", [
    ({"thme": "dark"}, ["unknown key 'thme'", "did you mean 'theme'?"]),
    ({"top-n": 5}, ["unknown key 'top-n'", "did you mean 'top_n'?"]),
    ({"single_run_plots": ["step_time"]}, ["has no plot 'step_time'", "did you mean 'step_times'?"]),
    ({"theme": "drak"}, ["'theme' must be one of light, dark", "did you mean 'dark'?"]),
    ({"top_n": 0}, ["'top_n' must be an integer of 1 or more"]),
])
def test_a_bad_key_or_value_names_the_closest_valid_one(content, names):
    with pytest.raises(PlotConfigError) as error:
        parse_config(content, "cfg.yaml")
    assert str(error.value).startswith("cfg.yaml: ")
    for name in names:
        assert name in str(error.value)


def test_keys_left_out_keep_the_shipped_defaults():
    config = parse_config({"theme": "dark", "baselines": None}, "cfg.yaml")
    assert (config.theme, config.top_n, config.baselines) == ("dark", 10, ())


def test_the_priority_chain(tmp_path, home):
    run = tmp_path / "run"
    run.mkdir()
    user = home / ".perfprof" / "plot_config.yaml"
    assert config_path_for(None, str(run)) == str(user)  # made on first use, from the shipped default
    # Every setting of the shipped default is there, commented out: the defaults apply, plots a
    # later version adds included, until the user uncomments one.
    made = user.read_text()
    assert load_config(str(user)) == dataclasses.replace(load_config(DEFAULT_CONFIG), source=str(user))
    assert "#   - step_times" in made and "# theme: light" in made
    assert [line for line in made.splitlines() if line.strip() and not line.startswith("#")] == []
    user.write_text("theme: dark\n")
    assert config_path_for(None, str(run)) == str(user)  # never replaced
    (run / RUN_CONFIG_FILE).write_text("top_n: 3\n")
    assert config_path_for(None, str(run)) == str(run / RUN_CONFIG_FILE)
    assert config_path_for("explicit.yaml", str(run)) == "explicit.yaml"


def test_an_unwritable_home_falls_back_to_the_shipped_default(tmp_path, home):
    (home / ".perfprof").write_text("a file where the folder should be")
    notes = []
    assert config_path_for(None, str(tmp_path), notes.append) == DEFAULT_CONFIG
    assert "the shipped default is used" in notes[0]


# -- the layout of runs ---------------------------------------------------------------------------

def make_run(parent, name):
    run = parent / f"{name}_perfprof"
    (run / "PERFPROF_OUTPUT").mkdir(parents=True)
    return run


def test_one_run_is_single_run_mode_and_a_folder_of_several_is_multi_run(tmp_path):
    base, new = make_run(tmp_path / "result", "base_1"), make_run(tmp_path / "result", "new_1")
    (tmp_path / "result" / "notes").mkdir()
    single = prepare([str(base)])
    assert not single.multi_run and single.output_dir == os.path.join(str(base), "plots")
    assert single.plot_names[0] == "step_times"
    folder = prepare([str(tmp_path / "result")])
    assert folder.multi_run and folder.output_dir == str(tmp_path / "result" / "plots")
    assert [run.path for run in folder.runs] == [str(base), str(new)]
    assert folder.plot_names[0] == "step_time_distribution"
    assert prepare([str(new), str(base)], output=str(tmp_path / "cmp")).output_dir == str(tmp_path / "cmp")


def test_baselines_and_treatments_group_the_runs(tmp_path):
    for name in ("a_new", "b_base", "c_other"):
        make_run(tmp_path, name)
    config = tmp_path / "groups.yaml"
    config.write_text("baselines: ['*_base_*']\ntreatments: ['*_new_*']\n")
    job = prepare([str(tmp_path)], config_file=str(config))
    # Labelled at drawing time by what tells the runs apart (test_run_labels.py), the group first.
    assert [(os.path.basename(run.path).rsplit("_", 1)[0], run.group) for run in job.runs] == [
        ("b_base", "baseline"), ("a_new", "treatment"), ("c_other", "")]


def test_a_path_without_a_run_is_an_error_that_says_so(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(NoRunError, match="no run directory there"):
        prepare([str(tmp_path / "empty")])


# -- the engine on real run directories ----------------------------------------------------------

def cpu_run(directory, export_type=("text",), **handler_args):
    """Profile two steps on the CPU into `directory`; the handler."""
    handler = perfprof.tensorboard_trace_handler(str(directory), worker_name="w", **handler_args)
    with perfprof.profile(activities=[perfprof.ProfilerActivity.CPU],
                          experimental_config=perfprof.ExperimentalConfig(export_type=list(export_type)),
                          schedule=perfprof.schedule(wait=0, active=2, repeat=1), on_trace_ready=handler) as prof:
        for _ in range(2):
            with perfprof.record_function("work"):
                pass
            prof.step()
    return handler


@pytest.fixture
def fake_analyses(monkeypatch):
    """The analyses the plots read, answering hand-made tables (GPU ones empty, as on a CPU run)."""
    answers = {"step_times": step_times(), "step_statistics": step_statistics(),
               "step_time_breakdown": step_time_breakdown(),
               "top_kernels": empty(top_kernels()), "top_operators": top_operators(),
               "gpu_utilization": empty(gpu_utilization()), "memory_over_time": empty(memory_over_time()),
               "idle_time_breakdown": empty(idle_time_breakdown()),
               "host_telemetry_over_time": empty(host_telemetry_over_time()),
               "gpu_telemetry_over_time": empty(gpu_telemetry_over_time())}
    for name, table in answers.items():
        monkeypatch.setattr(analysis, name, lambda run, *args, table=table: table, raising=False)


def test_the_engine_writes_what_has_data_and_logs_what_it_skipped(tmp_path, fake_analyses):
    (run_dir,) = cpu_run(tmp_path, export_type=["text", "db"]).run_dirs
    result = perfprof.plots.plot([run_dir], theme="dark")
    assert result.ok
    written = sorted(os.path.basename(path) for path in result.written)
    assert written == ["step_time_breakdown.png", "step_times.png", "top_operators.png"]
    assert all(pixel_variance(path) > NOT_BLANK for path in result.written)
    log = open(result.log_file).read()
    assert "mode: single-run, 1 run(s)" in log and "theme dark" in log
    assert "skipped top_kernels: no data (top_kernels is empty: it needs GPU activity" in log
    assert "skipped memory_over_time: no data (memory_over_time is empty: it needs memory events" in log
    assert "skipped host_telemetry: no data (host_telemetry_over_time is empty: it needs host telemetry" in log
    assert "done: 3 written, 6 skipped, 0 failed" in log


def test_the_engine_draws_a_real_cpu_run(tmp_path):
    (run_dir,) = cpu_run(tmp_path, export_type=["text", "db"]).run_dirs
    result = perfprof.plots.plot([run_dir])
    assert result.ok, open(result.log_file).read()
    assert os.path.join(run_dir, "plots", "step_times.png") in result.written
    assert "top_kernels" in [name for name, _ in result.skipped]  # no GPU in a CPU run


def test_a_run_with_host_telemetry_gets_its_plot(tmp_path):
    handler = perfprof.tensorboard_trace_handler(str(tmp_path), worker_name="w")
    config = perfprof.ExperimentalConfig(export_type=["text", "db"], host_sys=["cpu", "mem", "network"])
    with perfprof.profile(activities=[perfprof.ProfilerActivity.CPU], experimental_config=config,
                          on_trace_ready=handler):
        time.sleep(0.2)  # samples every 20 ms
    (run_dir,) = handler.run_dirs
    with analysis.open_run(run_dir) as run:
        table = analysis.host_telemetry_over_time(run)
    assert [panel for panel in dict.fromkeys(table.column("panel"))] == ["cpu", "memory", "network"]
    assert {series for series in table.column("series")} == {"host", "process", "host used", "process RSS",
                                                             "receive", "transmit"}
    assert len([row for row in table if row["series"] == "host used"]) >= 5
    cpus = os.cpu_count() or 1
    assert all(0 <= row["value"] <= 100 * cpus + 1 for row in table if row["panel"] == "cpu")
    result = perfprof.plots.plot([run_dir])
    assert result.ok, open(result.log_file).read()
    path = os.path.join(run_dir, "plots", "host_telemetry.png")
    assert path in result.written and pixel_variance(path) > NOT_BLANK
    assert "gpu_telemetry" in [name for name, _ in result.skipped]


# -- auto-plot ------------------------------------------------------------------------------------

@pytest.mark.parametrize("auto_plot, envelope, plotted", [
    (True, None, True), (True, {"top_n": 3}, True),
    (False, None, False), (False, {"top_n": 3}, False),
    (None, None, False), (None, {"top_n": 3}, True),
])
def test_auto_plot_resolution_through_the_handler(tmp_path, auto_plot, envelope, plotted, fake_analyses, caplog):
    caplog.set_level(logging.INFO, logger="perfprof")
    handler = cpu_run(tmp_path, auto_plot=auto_plot, plot=envelope)
    (run_dir,) = handler.run_dirs
    assert os.path.isfile(os.path.join(run_dir, "plots", "perfprof_plot.log")) == plotted
    assert os.path.isfile(os.path.join(run_dir, RUN_CONFIG_FILE)) == (plotted and envelope is not None)
    assert os.path.isfile(os.path.join(run_dir, "PERFPROF_OUTPUT", "perfprof.db")) == plotted  # export_type is text
    if auto_plot is False and envelope is not None:
        assert "auto_plot is false: the plot configuration given is not used" in caplog.text


def test_the_materialised_envelope_reproduces_the_plots_later(tmp_path, fake_analyses):
    (run_dir,) = cpu_run(tmp_path, plot={"theme": "dark", "single_run_plots": ["step_times"]}).run_dirs
    assert sorted(os.listdir(os.path.join(run_dir, "plots"))) == ["perfprof_plot.log", "step_times.png"]
    job = prepare([run_dir])  # as `perfprof plot RUN` later: the run's configuration
    assert (job.config.theme, list(job.plot_names)) == ("dark", ["step_times"])


def test_a_failed_auto_plot_is_one_warning_and_the_run_stays_intact(tmp_path, caplog):
    caplog.set_level(logging.WARNING, logger="perfprof")
    (run_dir,) = cpu_run(tmp_path, plot={"thme": "dark"}).run_dirs
    warnings = [record for record in caplog.records if record.levelno >= logging.WARNING]
    assert len(warnings) == 1
    assert "auto-plot of" in warnings[0].getMessage() and "did you mean 'theme'?" in warnings[0].getMessage()
    assert os.path.isfile(os.path.join(run_dir, "profiler_info.json"))
    assert any(name.endswith(".pt.trace.json") for name in os.listdir(os.path.join(run_dir, "PERFPROF_OUTPUT")))


def test_a_required_auto_plot_that_fails_raises(tmp_path):
    with pytest.raises(perfprof.plots.AutoPlotError, match="did you mean 'theme'"):
        cpu_run(tmp_path, plot={"thme": "dark"}, plot_required=True)


def test_a_required_auto_plot_in_async_mode_is_kept_for_the_caller(tmp_path, caplog):
    handler = cpu_run(tmp_path, plot={"thme": "dark"}, plot_required=True, async_mode=True)
    handler.wait()
    assert len(handler.plot_failures) == 1
    assert "(plot_required)" in caplog.text


def test_plot_required_without_auto_plot_does_nothing(tmp_path, caplog):
    caplog.set_level(logging.DEBUG, logger="perfprof")
    (run_dir,) = cpu_run(tmp_path, plot_required=True).run_dirs
    assert not os.path.exists(os.path.join(run_dir, "plots"))
    assert "plot_required has no effect: auto-plot is off" in caplog.text


@pytest.mark.parametrize("kwargs, message", [
    ({"auto_plot": "yes"}, "'auto_plot' must be a bool or None"),
    ({"plot_required": 1}, "'plot_required' must be a bool"),
    ({"plot": 3}, "'plot' must be a mapping or the path of a plot-config file"),
])
def test_auto_plot_arguments_are_checked(tmp_path, kwargs, message):
    with pytest.raises(TypeError, match=message):
        perfprof.tensorboard_trace_handler(str(tmp_path), **kwargs)


def test_the_dynamic_config_takes_the_auto_plot_fields():
    from perfprof._dynamic_config import parse

    config, problems = parse(json.dumps({"auto_plot": False, "plot_required": True, "plot": "plots.yaml"}))
    assert problems == [] and (config.auto_plot, config.plot_required, config.plot) == (False, True, "plots.yaml")
    config, problems = parse(json.dumps({"auto_plot": "on", "plot": 3}))
    assert (config.auto_plot, config.plot) == (None, None)
    assert [problem.split(" ")[0] for problem in problems] == ["'auto_plot'", "'plot'"]


# -- perfprof run and perfprof plot ---------------------------------------------------------------

SCRIPT = "from perfprof import dynamic_profile as dp\nfor _ in range(3):\n    dp.step()\n"


def perfprof_cli(*args, cwd):
    return subprocess.run([sys.executable, "-m", "perfprof", *args], cwd=str(cwd), env=child_env(),
                          capture_output=True, text=True, timeout=TIMEOUT_S)


def perfprof_run(tmp_path, flags, config):
    (tmp_path / "job.py").write_text(SCRIPT)
    (tmp_path / "profiler_config.json").write_text(json.dumps(
        {"start_step": -1, "active": 2, "prof_dir": "out", "analyse": True, "activities": ["CPU"], **config}))
    result = perfprof_cli("run", "--steps-on", "explicit", "--config", "profiler_config.json", *flags, "job.py",
                      cwd=tmp_path)
    (run_dir,) = [entry.path for entry in os.scandir(tmp_path / "out") if entry.name.endswith("_perfprof")]
    return result, run_dir


@pytest.mark.parametrize("flags, config, plotted", [
    (["--auto-plot"], {}, True), (["--auto-plot"], {"plot": {"top_n": 3}}, True),
    (["--no-auto-plot"], {}, False), (["--no-auto-plot"], {"plot": {"top_n": 3}}, False),
    ([], {}, False), ([], {"plot": {"top_n": 3}}, True),
])
def test_auto_plot_resolution_through_perfprof_run(tmp_path, flags, config, plotted):
    result, run_dir = perfprof_run(tmp_path, flags, config)
    assert result.returncode == 0, result.stderr
    assert os.path.isfile(os.path.join(run_dir, "plots", "perfprof_plot.log")) == plotted


def test_perfprof_run_with_a_broken_plot_config_warns_once_and_exits_0(tmp_path):
    result, run_dir = perfprof_run(tmp_path, [], {"plot": {"thme": "dark"}})
    assert result.returncode == 0, result.stderr
    assert result.stderr.count("auto-plot of") == 1 and "did you mean 'theme'?" in result.stderr
    assert os.path.isfile(os.path.join(run_dir, "profiler_info.json"))


def test_perfprof_run_plot_required_makes_a_failed_plot_exit_1(tmp_path):
    result, run_dir = perfprof_run(tmp_path, ["--plot-required"], {"plot": {"thme": "dark"}})
    assert result.returncode == 1
    assert "did you mean 'theme'?" in result.stderr and result.stderr.rstrip().endswith("(--plot-required)")
    assert os.path.isfile(os.path.join(run_dir, "profiler_info.json"))


def test_perfprof_plot_without_a_run_exits_non_zero_and_says_why(tmp_path):
    (tmp_path / "empty").mkdir()
    result = perfprof_cli("plot", "empty", cwd=tmp_path)
    assert result.returncode == 1
    assert "no run directory there" in result.stderr


def test_perfprof_plot_on_a_locked_database_fails_that_run_in_one_line(tmp_path):
    import sqlite3

    _, run_dir = perfprof_run(tmp_path, ["--no-auto-plot"], {})
    assert perfprof_cli("summary", run_dir, cwd=tmp_path).returncode == 0  # builds the run's database
    lock = sqlite3.connect(os.path.join(run_dir, "PERFPROF_OUTPUT", "perfprof.db"))
    lock.execute("BEGIN EXCLUSIVE")  # another process writing it
    try:
        result = perfprof_cli("plot", run_dir, cwd=tmp_path)
    finally:
        lock.close()
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert f"failed {run_dir}: not a readable perfprof database: database is locked" in result.stderr


def test_perfprof_plot_of_many_unreadable_runs_fails_in_a_few_lines(tmp_path):
    runs = [make_run(tmp_path / "result", f"r{index:03d}") for index in range(60)]
    for run in runs:
        (run / "PERFPROF_OUTPUT" / "perfprof.db").write_bytes(b"not a database")
    result = perfprof_cli("plot", "result", cwd=tmp_path)
    assert result.returncode == 1
    log = tmp_path / "result" / "plots" / "perfprof_plot.log"
    first = [str(run) for run in runs[:5]]
    lines = " ".join(result.stderr.split())  # the terminal wraps long lines
    assert lines == " ".join(
        [f"failed {run}: not a readable perfprof database: file is not a database" for run in first]
        + [f"failed … and 55 more: {log} lists every one",
           f"perfprof plot: 60 plot(s) or run(s) failed ({', '.join(first)}, … and 55 more); see {log}"])
    assert log.read_text().count("failed run ") == 60


def test_perfprof_plot_with_a_bad_config_names_the_key(tmp_path):
    make_run(tmp_path, "a")
    (tmp_path / "cfg.yaml").write_text("top_m: 3\n")
    result = perfprof_cli("plot", "--config", "cfg.yaml", ".", cwd=tmp_path)
    assert result.returncode == 1
    assert "unknown key 'top_m' (did you mean 'top_n'?)" in result.stderr
