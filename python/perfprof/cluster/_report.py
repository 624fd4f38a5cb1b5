"""cluster_report.md: what a cluster analysis found, in words and small tables: the slow ranks
with their evidence, each rank's mean step breakdown, the flagged steps and the collectives."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, List, Optional, Sequence, Tuple

from ._slow_rank import SPREAD_THRESHOLD, SlowRank

if TYPE_CHECKING:
    import duckdb

REPORT_FILE = "cluster_report.md"
#: Flagged steps listed in the report (all are in the database's flagged_steps).
MAX_FLAGGED_STEPS = 20


def report(connection: "duckdb.DuckDBPyConnection", directory: str, slow: Sequence[SlowRank],
           notes: Sequence[str]) -> str:
    """The report's Markdown."""
    run: Optional[Tuple[Any, ...]] = connection.execute("""
        SELECT count(DISTINCT rank), max(world_size), (SELECT count(DISTINCT step) FROM steps),
               string_agg(DISTINCT step_time_source, ', ' ORDER BY step_time_source)
        FROM run""").fetchone()
    assert run is not None  # an aggregate's one row
    ranks, world_size, steps, sources = run
    lines = [f"# perfprof cluster: {directory}", "",
             f"{ranks} rank{'s' if ranks != 1 else ''} (world size {world_size}), {steps} step{'s' if steps != 1 else ''}; "
             "the step breakdown measures the "
             f"{'host (no device work was recorded)' if sources == 'host' else sources}.", ""]
    lines += [f"- {note}" for note in notes] + ([""] if notes else [])
    lines += ["## Slow ranks", ""] + slow_rank_lines(slow) + [""]
    lines += _table("Mean step breakdown per rank (ms)", connection, """
        SELECT rank, count(*) AS steps, round(avg(duration_ns) / 1e6, 3) AS step,
               round(avg(computing_ns) / 1e6, 3) AS computing,
               round(avg(communication_not_overlapped_ns) / 1e6, 3) AS "communication (not overlapped)",
               round(avg(overlapped_ns) / 1e6, 3) AS overlapped, round(avg(communication_ns) / 1e6, 3) AS communication,
               round(avg(free_ns) / 1e6, 3) AS free
        FROM rank_steps GROUP BY rank ORDER BY rank""")
    lines += _table(f"Flagged steps: (max - min) / mean > {SPREAD_THRESHOLD:.0%} (ms)", connection, f"""
        SELECT step, dimension, round(spread * 100, 1) AS "spread %", max_rank AS "max rank",
               round(max_ns / 1e6, 3) AS max, min_rank AS "min rank", round(min_ns / 1e6, 3) AS min,
               round(mean_ns / 1e6, 3) AS mean
        FROM flagged_steps LIMIT {MAX_FLAGGED_STEPS}""")
    lines += _table("Collectives (ms, summed over instances)", connection, """
        SELECT name, max(count) AS instances, count(*) AS ranks,
               round(avg(elapse_ns) / 1e6, 3) AS "elapse per rank", round(avg(transit_ns) / 1e6, 3) AS transit,
               round(max(wait_ns) / 1e6, 3) AS "max wait", arg_max(rank, wait_ns) AS "waits most",
               arg_max(rank, late_arrivals) AS "most often last"
        FROM collective_ranks GROUP BY name ORDER BY name""")
    return "\n".join(lines).rstrip() + "\n"


def slow_rank_lines(slow: Sequence[SlowRank]) -> List[str]:
    """The slow ranks as Markdown list items: each rank, its dimensions, and the evidence."""
    if not slow:
        return ["No slow rank: no rank stands out on Computing, Free or Communication in the flagged steps, "
                "nor arrives last at the collectives more often than chance."]
    lines = []
    for rank in dict.fromkeys(finding.rank for finding in slow):
        findings = [finding for finding in slow if finding.rank == rank]
        lines.append(f"- **rank {rank}** is slow ({', '.join(finding.dimension for finding in findings)}):")
        lines += [f"  - {finding.evidence}" for finding in findings]
    return lines


def _table(title: str, connection: "duckdb.DuckDBPyConnection", query: str) -> List[str]:
    cursor = connection.execute(query)
    names = [column[0] for column in cursor.description]
    rows = cursor.fetchall()
    lines = [f"## {title}", ""]
    if not rows:
        return lines + ["None.", ""]
    lines.append("| " + " | ".join(names) + " |")
    lines.append("| " + " | ".join("---" for _ in names) + " |")
    lines += ["| " + " | ".join("" if value is None else str(value) for value in row) + " |" for row in rows]
    return lines + [""]
