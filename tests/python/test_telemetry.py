"""Host telemetry (host_sys) end to end: a child script profiles phases of known activity (idle,
a busy loop, a 200 MB allocation, a 50 MB file written and synced, 20 MB sent over loopback) and
the counters in its trace and database must show each one."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any, Dict, List, Tuple

import pytest

from child_process import child_env, perfprof_lines, trace_events
from database_checks import query, us_to_ns

MB = 1 << 20

SCRIPT = """
import json, os, socket, sys, threading, time
import perfprof
from perfprof import ExperimentalConfig, ExportType, ProfilerActivity, profile, record_function

cpu_seconds = {}  # per phase: the process's CPU time in it, as the OS counts it

def phase(name, work):
    with record_function(name):
        started = time.process_time()
        work()
        time.sleep(0.1)  # a few samples after the work, so its rates are all in the phase
        cpu_seconds[name] = time.process_time() - started

def idle():
    time.sleep(0.4)

def busy():
    end = time.monotonic() + 0.5
    while time.monotonic() < end:
        pass

held = []
def allocate():
    held.append(b"\\x01" * (200 << 20))  # written, so resident

def write_file():
    with open(os.path.join(sys.argv[1], "fifty.bin"), "wb") as f:
        block = os.urandom(1 << 20)
        for _ in range(50):
            f.write(block)
        f.flush()
        os.fsync(f.fileno())

def send_loopback():
    server = socket.create_server(("127.0.0.1", 0))
    received = []
    def drain():
        connection, _ = server.accept()
        with connection:
            total = 0
            while total < (20 << 20):
                chunk = connection.recv(1 << 20)
                if not chunk:
                    break
                total += len(chunk)
            received.append(total)
    reader = threading.Thread(target=drain)
    reader.start()
    with socket.create_connection(server.getsockname()) as client:
        client.sendall(b"\\x02" * (20 << 20))
    reader.join()
    server.close()
    assert received == [20 << 20], received

config = ExperimentalConfig(host_sys=["cpu", "mem", "disk", "network"], export_type=[ExportType.Text, ExportType.Db])
with profile(activities=[ProfilerActivity.CPU], experimental_config=config,
             on_trace_ready=perfprof.tensorboard_trace_handler(sys.argv[2])) as prof:
    for name, work in (("idle", idle), ("busy", busy), ("allocate", allocate), ("write", write_file),
                       ("send", send_loopback)):
        phase(name, work)
with open(os.path.join(sys.argv[1], "cpu_seconds.json"), "w") as f:
    json.dump(cpu_seconds, f)
print("finished")
"""


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> Dict[str, Any]:
    """The child's run directory, trace events and database."""
    tmp = tmp_path_factory.mktemp("telemetry")
    result = subprocess.run([sys.executable, "-c", textwrap.dedent(SCRIPT), str(tmp), str(tmp / "runs")],
                            env=child_env(), capture_output=True, text=True, timeout=240)
    assert result.returncode == 0 and "finished" in result.stdout, result.stderr
    (run_dir,) = (tmp / "runs").iterdir()
    (database,) = (run_dir / "PERFPROF_OUTPUT").glob("*.db")
    return {"tmp": tmp, "events": trace_events(run_dir), "db": str(database), "stderr": result.stderr,
            "cpu_seconds": json.loads((tmp / "cpu_seconds.json").read_text())}


def phases(events: List[Dict[str, Any]]) -> Dict[str, Tuple[int, int]]:
    """Each phase's (begin, end) in trace ns."""
    return {e["name"]: (us_to_ns(e["ts"]), us_to_ns(e["ts"] + e["dur"]))
            for e in events if e.get("ph") == "X" and e.get("cat") == "user_annotation"
            and e["name"] in ("idle", "busy", "allocate", "write", "send")}


def counter_series(events: List[Dict[str, Any]], name: str, instance: str) -> List[Tuple[int, float]]:
    """(time in trace ns, value) of one instance of a counter track."""
    return [(us_to_ns(e["ts"]), e["args"][instance]) for e in events
            if e.get("ph") == "C" and e["name"] == name and instance in e["args"]]


def in_phase(series: List[Tuple[int, float]], span: Tuple[int, int]) -> List[float]:
    return [value for ts, value in series if span[0] < ts <= span[1]]


def cpu_seconds_in(series: List[Tuple[int, float]], span: Tuple[int, int]) -> float:
    """CPU seconds over `span` from (time ns, % of a CPU) samples, each rate holding over the
    interval before it, clipped to the span."""
    return sum(rate / 100 * max(0, min(ts, span[1]) - max(previous, span[0])) / 1e9
               for (previous, _), (ts, rate) in zip(series, series[1:]))


def integrated(rows: List[Tuple[int, float]]) -> float:
    """Bytes moved, from (time ns, bytes/s) samples: each rate covers the interval before it."""
    return sum(rate * (ts - previous) / 1e9 for (previous, _), (ts, rate) in zip(rows, rows[1:]) if rate is not None)


def test_the_run_logs_nothing(run):
    assert perfprof_lines(run["stderr"]) == []


def test_cpu_usage_stays_in_range_and_tracks_a_busy_loop(run):
    events = run["events"]
    cpus = os.cpu_count() or 1
    process = counter_series(events, "Process CPU Usage (%)", "process")
    span = phases(events)
    assert len(process) >= 40  # 20 ms over about 2.5 s
    assert all(0 <= value <= 100 * cpus + 1 for _, value in process)
    # The samples are rates over the interval before each: integrated over a phase they give the
    # CPU time the OS counted for the process in it (its own clock, measured beside the work),
    # however busy the machine. The intervals that straddle a phase's edges average in a little of
    # the neighbouring phases (idle before the busy loop, sleep after it).
    for name in ("idle", "busy"):
        measured = run["cpu_seconds"][name]
        assert cpu_seconds_in(process, span[name]) == pytest.approx(measured, rel=0.25, abs=0.02), name
    # The loop ran, if only on a share of a CPU (0.06 s of its 0.5 s seen with both cores busy).
    assert run["cpu_seconds"]["busy"] > run["cpu_seconds"]["idle"]
    every_cpu = [e for e in events if e.get("ph") == "C" and e["name"] == "CPU Usage (%)"]
    # Every CPU and "all" are series; a CPU whose counters did not move over a sample (no tick of
    # /proc/stat's 10 ms elapsed) has no reading that sample rather than a made-up 0%.
    series = {f"cpu{i}" for i in range(cpus)} | {"all"}
    assert every_cpu and all(set(e["args"]) <= series for e in every_cpu)
    assert all(sum(name in e["args"] for e in every_cpu) >= 0.8 * len(every_cpu) for name in series)
    assert all(0 <= value <= 100 for e in every_cpu for value in e["args"].values())


def test_rss_grows_by_the_allocation(run):
    rss = counter_series(run["events"], "Process RSS (bytes)", "process")
    span = phases(run["events"])["allocate"]
    before = [value for ts, value in rss if ts <= span[0]][-1]
    after = [value for ts, value in rss if ts > span[1]][0]
    assert 190 * MB <= after - before <= 260 * MB


def test_disk_write_bytes_add_up_to_the_file(run):
    if _on_tmpfs(run["tmp"]):
        pytest.skip("the test directory is on tmpfs: its writes reach no disk")
    rows = query(run["db"], "SELECT device, timestamp, writeBytesPerSec FROM HOST_DISK_USAGE "
                            "ORDER BY device, timestamp")
    written = {device: integrated([(ts, rate) for d, ts, rate in rows if d == device])
               for device in {r[0] for r in rows}}
    assert max(written.values()) >= 45 * MB, written
    assert not any(device.startswith(("loop", "ram", "zram")) for device in written)


def test_loopback_bytes_add_up_to_what_was_sent(run):
    rows = query(run["db"], "SELECT timestamp, receiveBytesPerSec, transmitBytesPerSec FROM HOST_NETWORK_USAGE "
                            "WHERE interface = 'lo' ORDER BY timestamp")
    received = integrated([(ts, rx) for ts, rx, _ in rows])
    sent = integrated([(ts, tx) for ts, _, tx in rows])
    # 20 MB of payload, plus TCP's headers and whatever else used loopback meanwhile.
    assert 20 * MB <= received <= 24 * MB and 20 * MB <= sent <= 24 * MB


def test_database_and_trace_hold_the_same_samples(run):
    events, database = run["events"], run["db"]
    process = counter_series(events, "Process CPU Usage (%)", "process")
    rows = query(database, "SELECT usage FROM HOST_CPU_USAGE WHERE cpu = 'process' ORDER BY timestamp")
    assert [value for value, in rows] == pytest.approx([value for _, value in process])
    memory = query(database, "SELECT usedBytes, availableBytes, processRssBytes FROM HOST_MEM_USAGE")
    assert len(memory) == len(counter_series(events, "Memory Used (bytes)", "host"))
    assert all(used > 0 and available > 0 and rss > 0 for used, available, rss in memory)
    # The sampler's counters are telemetry, not users' counters.
    assert query(database, "SELECT count(*) FROM COUNTERS") == [(0,)]


def _on_tmpfs(path: Path) -> bool:
    """Whether `path` is on a tmpfs (the longest mount point above it, from /proc/self/mounts)."""
    best, kind = "", ""
    for line in Path("/proc/self/mounts").read_text().splitlines():
        fields = line.split()
        mount = fields[1]
        if str(Path(path).resolve()).startswith(mount.rstrip("/") + "/") and len(mount) > len(best):
            best, kind = mount, fields[2]
    return kind == "tmpfs"



FORK_SCRIPT = """
import os, sys, time
import perfprof
from perfprof import ExperimentalConfig, ProfilerActivity, profile

with profile(activities=[ProfilerActivity.CPU], experimental_config=ExperimentalConfig(host_sys=["mem"]),
             on_trace_ready=perfprof.tensorboard_trace_handler(sys.argv[1])):
    time.sleep(0.1)
    child = os.fork()
    if child == 0:
        sys.exit(0)  # atexit handlers and C++ destructors run: the sampler thread is not here
    _, status = os.waitpid(child, 0)
    time.sleep(0.1)
print("child status", status)
"""


def test_a_child_forked_while_sampling_exits_cleanly(tmp_path):
    result = subprocess.run([sys.executable, "-c", FORK_SCRIPT, str(tmp_path / "runs")], env=child_env(),
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert "child status 0" in result.stdout
    (run_dir,) = (tmp_path / "runs").iterdir()
    rss = counter_series(trace_events(run_dir), "Process RSS (bytes)", "process")
    assert len(rss) >= 8  # sampled before and after the fork, every 20 ms


def test_telemetry_statistics_summarise_the_tables(run):
    from perfprof.analysis import open_run, telemetry_statistics

    with open_run(Path(run["db"]).parent.parent) as opened:
        table = telemetry_statistics(opened)
    rows = {(row["counter"], row["instance"]): row for row in table}
    usage = [value for value, in query(run["db"], "SELECT usage FROM HOST_CPU_USAGE WHERE cpu = 'process' "
                                                  "AND usage IS NOT NULL")]
    process = rows[("Process CPU Usage (%)", "process")]
    assert process["samples"] == len(usage)
    assert process["mean"] == pytest.approx(sum(usage) / len(usage))
    assert (process["minimum"], process["maximum"]) == (min(usage), max(usage))
    lo = [value for value, in query(run["db"], "SELECT receiveBytesPerSec FROM HOST_NETWORK_USAGE "
                                               "WHERE interface = 'lo' AND receiveBytesPerSec IS NOT NULL")]
    assert rows[("Network Receive (bytes/s)", "lo")]["maximum"] == max(lo)
    cpus = [instance for counter, instance in rows if counter == "CPU Usage (%)"]
    assert cpus == [f"cpu{i}" for i in range(os.cpu_count() or 1)] + ["all"]
    counters = list(dict.fromkeys(counter for counter, _ in rows))
    assert counters[:4] == ["CPU Usage (%)", "Process CPU Usage (%)", "Memory Used (bytes)", "Memory Available (bytes)"]
