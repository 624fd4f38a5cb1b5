"""perfprof report and perfprof ui in headless Chromium (Playwright on the system's Chromium):
every view loads without a console error, shows the numbers `perfprof summary --format json`
gives for the same run, renders strings from the run as text, and the report fetches nothing.
Screenshots of every view go to $PERFPROF_UI_SCREENSHOTS (default: the test's temporary folder)."""
from __future__ import annotations

import contextlib
import functools
import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any, Dict, Iterator, List

import pytest

import perfprof
from analysis_runs import constructed_run
from chromium_check import find_chromium
from test_analysis_gpu_time import SCENARIO  # its hand-computed numbers are checked there
from perfprof.ui import _server
from perfprof.ui._runs import run_id
from perfprof.ui._views import VIEWS

CHROMIUM = find_chromium()
needs_chromium = pytest.mark.skipif(CHROMIUM is None, reason="no Chromium on PATH (install-deps.sh --test installs it)")
HOSTILE_NAME = "<script>alert(1)</script>"
REPORT_VIEWS = [name for name, view in VIEWS.items() if view.in_report]


# --- runs -------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def gpu_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The hand-computed GPU scenario of test_analysis_gpu_time, profiled through the CUPTI double."""
    return constructed_run(SCENARIO, tmp_path_factory.mktemp("ui_gpu"))


@pytest.fixture(scope="module")
def cpu_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A CPU training loop with memory events, module calls and host telemetry, under a
    record_function named like a script tag."""
    from test_memory import mlp_adam

    folder = tmp_path_factory.mktemp("ui_cpu")
    step = mlp_adam()
    config = perfprof.ExperimentalConfig(export_type=["text", "db"], host_sys=["cpu", "mem"], sample_interval_ms=5)
    with perfprof.profile(activities=[perfprof.ProfilerActivity.CPU], profile_memory=True, record_shapes=True,
                          with_modules=True,
                          experimental_config=config, schedule=perfprof.schedule(wait=0, warmup=1, active=2, repeat=1),
                          on_trace_ready=perfprof.tensorboard_trace_handler(str(folder))) as prof:
        for _ in range(3):
            with perfprof.record_function(HOSTILE_NAME):
                step()
            prof.step()
    (run_dir,) = [path for path in folder.iterdir() if path.is_dir()]
    return run_dir


@functools.lru_cache(maxsize=None)
def summary_json(run: Path, top: int = 10, *names: str) -> Dict[str, Any]:
    """`perfprof summary --format json --top TOP [-a NAME]...` of the run: its analyses by name
    (run once per arguments: the runs do not change)."""
    chosen = [argument for name in names for argument in ("-a", name)]
    result = subprocess.run([sys.executable, "-m", "perfprof", "summary", "--format", "json", "--top", str(top),
                             *chosen, str(run)],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)["analyses"]


# --- the browser --------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if CHROMIUM is None:
        pytest.skip("no Chromium on PATH (install-deps.sh --test installs it)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield launched
        launched.close()


class Page:
    """A browser page that records its console errors, uncaught exceptions, dialogs and requests."""

    def __init__(self, browser: Any) -> None:
        self.page = browser.new_page(viewport={"width": 1400, "height": 900})
        self.errors: List[str] = []
        self.requests: List[str] = []
        self.dialogs: List[str] = []
        self.page.on("console", lambda message: message.type == "error" and self.errors.append(message.text))
        self.page.on("pageerror", lambda error: self.errors.append(str(error)))
        self.page.on("request", lambda request: self.requests.append(request.url))
        self.page.on("dialog", lambda dialog: (self.dialogs.append(dialog.message), dialog.dismiss()))

    def tables(self) -> Dict[str, Dict[str, Any]]:
        """Every table panel now visible: its analysis' columns and rows of raw cell values."""
        return self.page.evaluate("""() => {
            const found = {};
            for (const panel of document.querySelectorAll('section.panel[data-analysis]')) {
                if (!panel.offsetParent) continue;
                const columns = [...panel.querySelectorAll('thead th')].map(th => th.dataset.column);
                const rows = [...panel.querySelectorAll('tbody tr')].filter(tr => !tr.hidden)
                    .map(tr => [...tr.cells].map(td => ({value: td.dataset.value, text: td.textContent})));
                found[panel.dataset.analysis] = {columns, rows};
            }
            return found;
        }""")

    def screenshot(self, name: str, folder: Path) -> None:
        self.page.screenshot(path=str(folder / f"{name}.png"), full_page=True)


@pytest.fixture(scope="module")
def screenshots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = os.environ.get("PERFPROF_UI_SCREENSHOTS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        return Path(folder)
    return tmp_path_factory.mktemp("ui_screenshots")


def raw(value: Any) -> str:
    """A value as the pages carry it in data-value: JSON text, the text itself, "" for NULL."""
    return "" if value is None else value if isinstance(value, str) else json.dumps(value)


def assert_same_numbers(shown: Dict[str, Any], summary: Dict[str, Any], name: str, rows: int = -1) -> None:
    """The table `name` on the page holds the summary's rows (the first `rows` of them; -1: all),
    value for value, in the columns the page shows (those with a value in some row)."""
    table, expected = shown[name], summary[name]
    positions = [expected["columns"].index(column) for column in table["columns"]]
    wanted = expected["rows"] if rows < 0 else expected["rows"][:rows]
    got = table["rows"] if rows < 0 else table["rows"][:rows]
    assert [[cell["value"] for cell in row] for row in got] == [[raw(row[i]) for i in positions] for row in wanted]
    left_out = set(expected["columns"]) - set(table["columns"])
    assert all(row[expected["columns"].index(column)] in (None, "") for row in expected["rows"] for column in left_out)


# --- the report file ------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def gpu_report(gpu_run: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    output = tmp_path_factory.mktemp("report") / "report.html"
    result = subprocess.run([sys.executable, "-m", "perfprof", "report", str(gpu_run), "-o", str(output)],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return output


@needs_chromium
def test_report_views_show_the_summary_numbers_offline(gpu_run, gpu_report, browser, screenshots):
    summary = summary_json(gpu_run)
    page = Page(browser)
    page.page.route("**/*", lambda route: route.continue_() if route.request.url.startswith("file:") else route.abort())
    page.page.goto(gpu_report.as_uri())
    seen = {}
    for view in REPORT_VIEWS:
        page.page.click(f"nav.views a[data-view={view}]")
        page.page.wait_for_function(f"() => !document.getElementById('{view}').hidden")
        page.screenshot(f"report-gpu-{view}", screenshots)
        seen[view] = page.tables()
    assert page.errors == []
    # The network is never asked for anything: the one request is the file itself.
    assert page.requests == [gpu_report.as_uri()]

    overview, kernels = seen["overview"], seen["kernels"]
    for name in ("step_statistics", "temporal_breakdown", "top_kernels"):
        assert_same_numbers(overview, summary, name)
    for name in ("kernel_breakdown", "kernel_launch_stats", "memory_bandwidth"):
        assert_same_numbers(kernels, summary, name)
    assert_same_numbers(kernels, summary, "top_kernels", rows=10)  # summary: the top 10; the view: every kernel
    assert_same_numbers(kernels, summary_json(gpu_run, 100, "kernel_launch_configs"), "kernel_launch_configs")
    # The hand-computed scenario, as a person reads it: gemm 3 kernels, 280 us in all.
    gemm = next(row for row in kernels["top_kernels"]["rows"] if row[0]["text"] == "gemm")
    assert [cell["text"] for cell in gemm[:4]] == ["gemm", "compute", "3", "280.000"]
    (device,) = overview["temporal_breakdown"]["rows"]
    assert [cell["text"] for cell in device[1:5]] == ["340.000", "140.000", "50.000", "530.000"]
    # Charts drawn: the step stacks and GPU utilisation on the Overview.
    page.page.click("nav.views a[data-view=overview]")
    assert page.page.locator("#overview .chart.js-plotly-plot").count() == 3
    page.page.close()


@needs_chromium
def test_report_recommendations_carry_their_evidence(gpu_report, browser):
    page = Page(browser)
    page.page.goto(gpu_report.as_uri())
    advice = page.page.locator("#overview .advice li").all_inner_texts()
    # The all-reduce (140 us) overlaps compute for 30 + 20 us: 35.7%; copies and sets ran 50 of
    # the 480 us busy: 10.4%; the GPU was idle 9.4% (under 20%) and stream 7 waited 45% of its idle
    # time for the host (under 50%): those two rules stay quiet.
    assert len(advice) == 2
    assert "Memory copies take device time" in advice[0]
    assert "copies and sets ran 10.4% of the GPUs' busy time (0.050 ms)" in advice[0]
    assert "Communication is not overlapped" in advice[1]
    assert "GPU 0: 35.7% of 0.140 ms of communication overlapped by computation" in advice[1]
    assert page.errors == []
    page.page.close()


@needs_chromium
def test_report_of_a_cpu_run_shows_run_strings_as_text(cpu_run, browser, screenshots, tmp_path):
    output = tmp_path / "cpu.html"
    perfprof.ui.write_report(str(cpu_run), str(output))
    summary = summary_json(cpu_run)
    page = Page(browser)
    page.page.goto(output.as_uri())
    for view in REPORT_VIEWS:
        page.page.click(f"nav.views a[data-view={view}]")
        page.screenshot(f"report-cpu-{view}", screenshots)
        if view == "operators":
            operators = page.tables()
        if view == "memory":
            memory = page.tables()
            assert page.page.locator("#memory .chart.js-plotly-plot").count() == 1  # the CPU's timeline
        if view == "modules":
            assert_same_numbers(page.tables(), summary_json(cpu_run, 10, "module_tree"), "module_tree")
        if view == "telemetry":
            telemetry = page.tables()
            assert page.page.locator("#telemetry .chart.js-plotly-plot").count() == 2  # CPU, memory
    assert page.errors == [] and page.dialogs == []
    names = [row[1]["text"] for row in operators["nvtx_ranges"]["rows"]]
    assert HOSTILE_NAME in names  # shown as the text it is
    assert page.page.evaluate("() => [...document.scripts].some(s => s.textContent.includes('alert(1)'))") is False
    assert_same_numbers(operators, summary, "top_operators", rows=10)
    assert_same_numbers(operators, summary_json(cpu_run, 1000, "operator_details"), "operator_details")
    assert_same_numbers(memory, summary, "memory_peaks")
    assert_same_numbers(memory, summary_json(cpu_run, 1000, "memory_by_operator"), "memory_by_operator")
    assert_same_numbers(telemetry, summary, "telemetry_statistics")
    # A paged table in the report sorts in the page: by count, largest first.
    page.page.click("nav.views a[data-view=operators]")
    page.page.click("section[data-analysis=top_operators] th[data-column=count] button")
    counts = [int(row[1]["value"]) for row in page.tables()["top_operators"]["rows"]]
    assert counts == sorted(counts, reverse=True)
    page.page.close()


# --- the server -------------------------------------------------------------------------------

@contextlib.contextmanager
def serving(app: Any) -> Iterator[str]:
    """`app` served on a free port of 127.0.0.1 by a thread; its URL."""
    from werkzeug.serving import make_server

    listening = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=listening.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listening.server_port}"
    finally:
        listening.shutdown()
        thread.join()


@pytest.fixture(scope="module")
def server(gpu_run: Path, cpu_run: Path) -> Iterator[str]:
    with serving(_server.create_app([str(gpu_run.parent), str(cpu_run)], page_size=5)) as url:
        yield url


@needs_chromium
def test_server_lists_the_runs_and_serves_every_view(server, gpu_run, cpu_run, browser, screenshots):
    page = Page(browser)
    page.page.goto(server + "/")
    page.screenshot("ui-runs", screenshots)
    links = page.page.locator("table.runs a")
    assert sorted(links.all_inner_texts()) == sorted([gpu_run.name, cpu_run.name])
    summaries = {run.name: summary_json(run) for run in (gpu_run, cpu_run)}
    for run in (gpu_run, cpu_run):
        for view in VIEWS:
            response = page.page.goto(f"{server}/run/{run_id(str(run))}/{view}")
            assert response.status == 200
            page.page.wait_for_load_state("load")
            page.screenshot(f"ui-{run is gpu_run and 'gpu' or 'cpu'}-{view}", screenshots)
            shown = page.tables()
            if view == "overview" and run is gpu_run:
                for name in ("step_statistics", "temporal_breakdown", "top_kernels"):
                    assert_same_numbers(shown, summaries[run.name], name)
            if view == "operators" and run is cpu_run:
                assert_same_numbers(shown, summaries[run.name], "top_operators", rows=5)  # page 1 of 5 rows
    assert page.errors == [] and page.dialogs == []
    # Every request went to the server itself: no CDN.
    assert all(url.startswith(server) for url in page.requests)
    page.page.close()


@needs_chromium
def test_server_sorts_and_pages_the_operators(server, cpu_run, browser):
    expected = summary_json(cpu_run, top=1000)["top_operators"]  # every operator
    count = expected["columns"].index("count")
    by_count = sorted(expected["rows"], key=lambda row: row[count])
    page = Page(browser)
    base = f"{server}/run/{run_id(str(cpu_run))}/operators"
    page.page.goto(base + "?sort=count&order=asc&page=2")
    rows = page.tables()["top_operators"]["rows"]
    assert [int(row[1]["value"]) for row in rows] == [row[count] for row in by_count[5:10]]
    assert "page 2 of" in page.page.inner_text("section[data-analysis=top_operators] .pager")
    assert page.page.inner_text("section[data-analysis=top_operators] .count") == f"{len(expected['rows'])} rows"
    page.page.goto(base + "?q=linear")
    names = [row[0]["text"] for row in page.tables()["top_operators"]["rows"]]
    assert names and all("linear" in name for name in names)
    # Grouped by name and input shapes: operator_details, paged as well.
    page.page.click("nav.grouping a:text('by name and input shapes')")
    shown = page.tables()
    assert "top_operators" not in shown
    assert_same_numbers(shown, summary_json(cpu_run, 5, "operator_details"), "operator_details")
    page.page.click("section[data-analysis=operator_details] .pager a[rel=next]")
    assert "group=shapes" in page.page.url and "page 2 of" in page.page.inner_text(".pager")
    assert page.errors == []
    page.page.close()


@needs_chromium
def test_server_lists_the_allocations_of_a_time_range(server, cpu_run, browser):
    from perfprof.analysis import open_run
    from perfprof.analysis._summary import window_begin_ns

    with open_run(str(cpu_run)) as run:
        origin = window_begin_ns(run)
    expected = summary_json(cpu_run, 10, "memory_allocations")["memory_allocations"]
    time = expected["columns"].index("allocation_time_ns")
    page = Page(browser)
    memory = f"{server}/run/{run_id(str(cpu_run))}/memory"
    page.page.goto(memory)
    # Zooming into the memory curve points its link at the allocations of the range shown.
    page.page.evaluate("""() => Plotly.relayout(document.querySelector('.chart.js-plotly-plot'),
                                                {'xaxis.range[0]': 1.5, 'xaxis.range[1]': 2.25})""")
    assert page.page.get_attribute("a.range-link", "href") == "allocations?from=1.500&to=2.250"
    page.page.click("a.range-link")
    assert page.page.url == f"{server}/run/{run_id(str(cpu_run))}/allocations?from=1.500&to=2.250"
    # The allocations made from the 2nd one's time up to (not including) the 40th's, in ms from the start.
    start, end = expected["rows"][1][time], expected["rows"][39][time]
    page.page.goto(f"{server}/run/{run_id(str(cpu_run))}/allocations?from={(start - origin) / 1e6!r}"
                   f"&to={(end - origin) / 1e6!r}")
    wanted = [row for row in expected["rows"] if start <= row[time] < end]
    assert page.page.inner_text("section[data-analysis=memory_allocations] .count") == f"{len(wanted)} rows"
    assert_same_numbers(page.tables(), {"memory_allocations": dict(expected, rows=wanted[:5])}, "memory_allocations",
                        rows=5)
    assert page.errors == []
    page.page.close()


def compare_csv(base: Path, new: Path) -> Dict[str, Dict[str, Any]]:
    """`perfprof compare BASE NEW --csv`'s blocks by name: columns and rows of raw text."""
    import csv

    result = subprocess.run([sys.executable, "-m", "perfprof", "compare", str(base), str(new), "--csv"],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    blocks = {}
    for block in result.stdout.strip("\n").split("\n\n"):
        heading, *lines = block.splitlines()
        columns, *rows = list(csv.reader(lines))
        blocks[heading[2:].split(":")[0]] = {"columns": columns, "rows": rows}
    return blocks


@needs_chromium
def test_diff_page_says_what_perfprof_compare_says(server, gpu_run, cpu_run, browser, screenshots):
    expected = compare_csv(gpu_run, cpu_run)
    page = Page(browser)
    page.page.goto(server + "/")
    page.page.select_option("form.compare select[name=base]", label=gpu_run.name)
    page.page.select_option("form.compare select[name=new]", label=cpu_run.name)
    page.page.click("form.compare button")
    page.page.wait_for_load_state("load")
    page.screenshot("ui-diff", screenshots)
    shown = page.tables()
    assert set(shown) == {name for name, block in expected.items() if block["rows"]}
    for name, table in shown.items():
        block = expected[name]
        positions = [block["columns"].index(column) for column in table["columns"]]
        assert [[cell["value"] for cell in row] for row in table["rows"]] == \
            [[row[index] for index in positions] for row in block["rows"]], name
    assert page.errors == []
    page.page.close()


@pytest.fixture(scope="module")
def cluster_output(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`perfprof cluster` of a two-rank job: the Kineto test trace as rank 1 and, its
    distributedInfo changed, as rank 0."""
    from perfprof.cluster import analyse_cluster

    job = tmp_path_factory.mktemp("ui_cluster") / "job"
    job.mkdir()
    trace = json.loads((Path(__file__).parent / "data" / "kineto_gpu_nccl_rank1.pt.trace.json").read_text())
    for rank in (0, 1):
        trace["distributedInfo"]["rank"] = rank
        (job / f"rank{rank}.pt.trace.json").write_text(json.dumps(trace))
    return Path(analyse_cluster(str(job), jobs=1).output_dir)


@needs_chromium
def test_distributed_page_of_a_cluster_output(cluster_output, browser, screenshots):
    import csv

    verdict = subprocess.run([sys.executable, "-m", "perfprof", "summary", "--format", "json", str(cluster_output)],
                             capture_output=True, text=True, timeout=120, check=True).stdout
    steps = subprocess.run([sys.executable, "-m", "perfprof", "summary", "--format", "csv", str(cluster_output)],
                           capture_output=True, text=True, timeout=120, check=True).stdout
    columns, *rows = list(csv.reader(steps.splitlines()))
    with serving(_server.create_app([str(cluster_output.parent)])) as url:
        page = Page(browser)
        page.page.goto(url + "/")
        page.page.click(f"table.clusters a:text('{cluster_output.name}')")
        page.screenshot("ui-cluster", screenshots)
        assert page.page.inner_text("section.text p") == json.loads(verdict)["verdict"]
        shown = page.tables()["cluster_step_trace_time"]
        assert shown["columns"] == columns
        # The file's numbers (written as 60.0) are read back as the numbers they are.
        assert [[float(cell["value"]) if cell["value"][:1].isdigit() else cell["value"] for cell in row]
                for row in shown["rows"]] == [[float(cell) if cell[:1].isdigit() else cell for cell in row]
                                              for row in rows]
        assert page.errors == []
        page.page.close()


def read_csv(path: Path) -> Dict[str, Any]:
    import csv

    with open(path, newline="") as file:
        columns, *rows = list(csv.reader(file))
    return {"columns": columns, "rows": rows}


@needs_chromium
def test_sweeps_page_says_what_perfprof_aggregate_says(tmp_path, browser, screenshots):
    from test_aggregate import two_sweeps, write

    results = write(tmp_path, two_sweeps())
    subprocess.run([sys.executable, "-m", "perfprof", "aggregate", results, "-o", str(tmp_path / "out")],
                   capture_output=True, text=True, timeout=120, check=True)
    expected = {"metric_report": read_csv(tmp_path / "out" / "metric_report.csv"),
                "speedups": read_csv(tmp_path / "out" / "speedups.csv")}
    with serving(_server.create_app([str(tmp_path)])) as url:
        page = Page(browser)
        page.page.goto(url + "/")
        page.page.click("table.sweeps a")
        page.page.wait_for_load_state("load")
        page.screenshot("ui-sweep", screenshots)
        shown = page.tables()
        assert page.page.locator(".chart.js-plotly-plot").count() == 2  # speedup over time, latest speedups
        assert page.errors == []
        page.page.close()
    for name, table in expected.items():
        positions = [table["columns"].index(column) for column in shown[name]["columns"]]
        assert [[cell["value"] for cell in row] for row in shown[name]["rows"]] == \
            [[row[index] for index in positions] for row in table["rows"]], name


#: Stands in for ui.perfetto.dev (no network in the tests): answers PING with PONG, as Perfetto UI
#: does once ready, and shows the size of the trace it is then posted in its title.
FAKE_PERFETTO = """<!doctype html><title>waiting</title><script>
addEventListener('message', event => {
  if (event.data === 'PING') event.source.postMessage('PONG', event.origin);
  else if (event.data && event.data.perfetto) document.title = 'trace of ' + event.data.perfetto.buffer.byteLength +
                                                               ' bytes: ' + event.data.perfetto.title;
});</script>"""


@needs_chromium
def test_trace_view_downloads_the_trace_and_hands_it_to_perfetto(server, gpu_run, browser):
    (trace,) = Path(perfprof.trace_dir_of(str(gpu_run))).glob("*.pt.trace.json*")
    page = Page(browser)
    page.page.context.route("https://ui.perfetto.dev/**", lambda route: route.fulfill(
        status=200, content_type="text/html", body=FAKE_PERFETTO))
    page.page.goto(f"{server}/run/{run_id(str(gpu_run))}/trace")
    download_url = page.page.get_attribute("a.download", "href")
    body = page.page.request.get(server + download_url).body()
    assert body == trace.read_bytes()
    with page.page.expect_popup() as opened:
        page.page.click("button.open-perfetto")
    perfetto = opened.value
    perfetto.wait_for_function("document.title.startsWith('trace of')")
    assert perfetto.title() == f"trace of {trace.stat().st_size} bytes: {gpu_run.name}"
    assert page.errors == []
    page.page.context.unroute("https://ui.perfetto.dev/**")
    page.page.close()


def test_server_serves_nothing_outside_its_runs(gpu_run, cpu_run):
    client = _server.create_app([str(gpu_run)]).test_client()
    secret = Path(_server.__file__).read_text()
    known = run_id(str(gpu_run))
    for path in ("/static/../_server.py", "/static/..%2f_server.py", "/static/%2e%2e/_server.py",
                 "/static/templates/run.html", "/static/_server.py", "/../../etc/passwd",
                 f"/run/{known}/../../../etc/passwd", f"/run/{known}/%2e%2e%2f%2e%2e%2fetc%2fpasswd",
                 f"/run/{run_id(str(cpu_run))}/overview",  # a run, but not under this server's paths
                 f"/run/{known}/nonexistent", "/run/..%2f..%2fetc/overview", "/cluster/..%2f..%2fetc",
                 f"/cluster/{known}", f"/sweep/{known}",  # a run's id is no cluster analysis, no sweep
                 f"/run/{run_id(str(cpu_run))}/trace/download", "/run/0/trace/download"):
        response = client.get(path)
        assert response.status_code in (404, 308), path
        assert "root:" not in response.get_data(as_text=True) and secret not in response.get_data(as_text=True)
    assert client.post("/").status_code == 405  # read-only: nothing but GET
    page = client.get("/")
    assert page.status_code == 200
    assert "script-src 'self'" in page.headers["Content-Security-Policy"]
    assert page.headers["X-Content-Type-Options"] == "nosniff"


def test_server_names_a_bad_query(gpu_run):
    client = _server.create_app([str(gpu_run)]).test_client()
    base = f"/run/{run_id(str(gpu_run))}/kernels"
    response = client.get(base + "?sort=nonexistent")
    assert response.status_code == 400 and "has no column 'nonexistent'" in response.get_data(as_text=True)
    response = client.get(base + "?page=first")
    assert response.status_code == 400 and "'page' must be a whole number" in response.get_data(as_text=True)
    response = client.get(f"/run/{run_id(str(gpu_run))}/operators?group=module")
    assert response.status_code == 400 and "'group' must be one of name, shapes" in response.get_data(as_text=True)
    allocations = f"/run/{run_id(str(gpu_run))}/allocations"
    response = client.get(allocations + "?from=later")
    assert response.status_code == 400 and "'from' must be a time in ms" in response.get_data(as_text=True)
    response = client.get("/diff?base=0&new=1")
    assert response.status_code == 400
    assert "'base' and 'new' must each be the id of a run" in response.get_data(as_text=True)
    response = client.get(allocations + "?from=5&to=2")
    assert response.status_code == 400 and "'to' (2 ms) must be after 'from' (5 ms)" in response.get_data(as_text=True)


def test_ui_binds_localhost_by_default():
    from perfprof.cli.ui import ui

    assert {param.name: param.default for param in ui.params}["host"] == "127.0.0.1"


def test_ui_command_serves_until_stopped(cpu_run):
    import urllib.request

    server = subprocess.Popen([sys.executable, "-m", "perfprof", "ui", "--port", "0", str(cpu_run)],
                              stderr=subprocess.PIPE, text=True)
    try:
        line = server.stderr.readline()
        assert line.startswith("perfprof ui: serving http://127.0.0.1:"), line
        url = line.split()[3]
        with urllib.request.urlopen(url, timeout=60) as response:
            assert cpu_run.name in response.read().decode()
    finally:
        server.terminate()
        server.wait(timeout=60)
        server.stderr.close()


def test_ui_on_a_taken_port_is_one_line(cpu_run):
    import socket

    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        result = subprocess.run([sys.executable, "-m", "perfprof", "ui", "--port", str(port), str(cpu_run)],
                                capture_output=True, text=True, timeout=60)
    assert result.returncode == 1
    assert result.stderr.startswith(f"Error: cannot listen on 127.0.0.1:{port}: ") and result.stderr.count("\n") == 1


def test_report_of_a_torch_profiler_trace(tmp_path):
    """A Chrome trace torch.profiler (Kineto) wrote is a run too: imported, then reported."""
    trace = Path(__file__).parent / "data" / "kineto_gpu_nccl_rank1.pt.trace.json"
    output = tmp_path / "kineto.html"
    result = subprocess.run([sys.executable, "-m", "perfprof", "report", str(trace), "-o", str(output)],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    html = output.read_text()
    assert 'data-analysis="kernel_launch_configs"' in html and ">ampere_sgemm_128x64_nn<" in html
    assert ">aten::mm<" in html  # the operator that launched it


def test_report_of_no_run_is_one_line(tmp_path):
    result = subprocess.run([sys.executable, "-m", "perfprof", "report", str(tmp_path), "-o", str(tmp_path / "r.html")],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 1
    assert result.stderr.count("\n") == 1 and result.stderr.startswith(f"perfprof report: {tmp_path}: no run directory")
    assert not (tmp_path / "r.html").exists()


def test_import_perfprof_stays_light():
    loaded = subprocess.run([sys.executable, "-c", "import sys, perfprof, perfprof.ui; print(' '.join(sys.modules))"],
                            capture_output=True, text=True, timeout=60, check=True).stdout.split()
    assert not {"flask", "jinja2", "plotly", "werkzeug"} & set(loaded)
