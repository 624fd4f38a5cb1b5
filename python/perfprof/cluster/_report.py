"""cluster_report.md: what a cluster analysis found, in words and small tables: the verdict on
slow ranks with their evidence and confidence, each rank's mean step breakdown, the steps where a
rank stands out and the collectives."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, List, Optional, Sequence, Tuple

from ._slow_rank import OUTLIER_Z, SlowRank, verdict

if TYPE_CHECKING:
    import duckdb

REPORT_FILE = "cluster_report.md"
#: Steps where a rank stands out, listed in the report (all are in the database's step_deviations).
MAX_OUTLIER_ROWS = 20


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
             f"{ranks} rank{'s' if ranks != 1 else ''} (world size {world_size}), "
             f"{steps} step{'s' if steps != 1 else ''}; "
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
    lines += _table(f"Steps where a rank stands out: robust z >= {OUTLIER_Z:g} (ms; first {MAX_OUTLIER_ROWS})",
                    connection, f"""
        SELECT step, dimension, rank, round(value_ns / 1e6, 3) AS value,
               round(others_median_ns / 1e6, 3) AS "others' median", round(deviation_ns / 1e6, 3) AS deviation,
               round(scale_ns / 1e6, 3) AS scale, round(z, 1) AS z
        FROM step_deviations WHERE outlier
        ORDER BY TRY_CAST(step AS BIGINT) NULLS LAST, step, dimension, z DESC, rank LIMIT {MAX_OUTLIER_ROWS}""")
    lines += _table("Collectives (ms, summed over instances)", connection, """
        SELECT name, max(count) AS instances, count(*) AS ranks,
               round(avg(elapse_ns) / 1e6, 3) AS "elapse per rank", round(avg(transit_ns) / 1e6, 3) AS transit,
               round(max(wait_ns) / 1e6, 3) AS "max wait", arg_max(rank, wait_ns) AS "waits most",
               arg_max(rank, late_arrivals) AS "most often last"
        FROM collective_ranks GROUP BY name ORDER BY name""")
    return "\n".join(lines).rstrip() + "\n"


def slow_rank_lines(slow: Sequence[SlowRank]) -> List[str]:
    """The verdict as Markdown: its sentence, then each slow rank with its confidence and evidence
    (the sentences the database's slow_rank_verdict, slow_ranks and slow_rank_evidence hold)."""
    lines = [verdict(slow)]
    if slow:
        lines.append("")
    for rank in slow:
        lines.append(f"- {rank.sentence(f'**rank {rank.rank}**')}")
        lines += [f"  - {item.text}" for item in rank.evidence]
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
