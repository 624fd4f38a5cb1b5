"""run_analyses: every analysis of a run side by side on one RunDatabase (a connection per
thread), with the same tables as one at a time, in the order asked, and failures raised."""
from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest

from analysis_runs import constructed_run
from test_analysis_gpu_time import SCENARIO  # its hand-computed numbers are checked there

from perfprof import analysis
from perfprof.analysis import ANALYSES, Analysis, open_run, run_analyses


@pytest.fixture(scope="module")
def gpu_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return constructed_run(SCENARIO, tmp_path_factory.mktemp("parallel"))


def test_side_by_side_the_tables_equal_those_of_one_at_a_time_in_the_order_asked(gpu_run):
    with open_run(gpu_run) as run:
        one_by_one = [entry(run, top=3) for entry in ANALYSES.values()]
    with open_run(gpu_run) as run:
        finished = []
        together = run_analyses(run, top=3, jobs=4, on_done=lambda entry: finished.append(entry.name))
        backwards = run_analyses(run, list(ANALYSES.values())[::-1], top=3, jobs=2)
    assert together == one_by_one
    assert backwards == one_by_one[::-1]
    assert sorted(finished) == sorted(ANALYSES)
    assert any(len(table) for table in together)


def test_each_thread_queries_through_its_own_connection(gpu_run):
    with open_run(gpu_run) as run:
        seen = []

        def probe() -> None:
            seen.append(run._connection())
            assert run._connection() is seen[-1]  # the same one for the thread's next query

        threads = [threading.Thread(target=probe) for _ in range(3)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert len({id(connection) for connection in seen}) == 3
        assert run._connection() not in seen
    with pytest.raises(sqlite3.ProgrammingError):  # closed: every thread's connection with it
        seen[0].execute("SELECT 1")


def test_the_breakdowns_share_one_pass_over_the_activities(gpu_run, monkeypatch):
    with open_run(gpu_run) as run:
        ran = []
        query = run.query
        monkeypatch.setattr(run, "query", lambda sql_name, *args, **kwargs: ran.append(sql_name) or
                            query(sql_name, *args, **kwargs))
        names = ["temporal_breakdown", "kernel_breakdown", "comm_comp_overlap"]
        tables = run_analyses(run, [ANALYSES[name] for name in names], jobs=3)
    assert ran == ["gpu_busy_time"]
    assert [table.name for table in tables] == names and all(len(table) for table in tables)


def test_a_failing_analysis_is_raised_and_the_rest_not_started(gpu_run):
    started = []

    def failing(run, top=10):
        started.append("failing")
        raise ValueError("broken analysis")

    def slow(run, top=10):
        started.append("slow")
        return analysis.step_statistics(run)

    broken = Analysis("broken", "Broken", "run", failing, True, False)
    after = [Analysis(f"after_{i}", "After", "run", slow, True, False) for i in range(50)]
    with open_run(gpu_run) as run, pytest.raises(ValueError, match="broken analysis"):
        run_analyses(run, [broken] + after, jobs=1)
    assert started == ["failing"]
    with open_run(gpu_run) as run, pytest.raises(ValueError, match="broken analysis"):
        run_analyses(run, [broken] + after, jobs=2)
    assert len(started) < 1 + 1 + 50  # the queue was cancelled


@pytest.mark.parametrize("jobs", [0, -1, 1.5, True, "2"])
def test_jobs_must_be_a_positive_int(gpu_run, jobs):
    with open_run(gpu_run) as run, pytest.raises(ValueError, match="'jobs' must be an int >= 1"):
        run_analyses(run, jobs=jobs)


@pytest.mark.parametrize("top", [0, -3, 2.0, False])
def test_top_must_be_a_positive_int(gpu_run, top):
    with open_run(gpu_run) as run, pytest.raises(ValueError, match="'top' must be an int >= 1"):
        run_analyses(run, top=top)
