"""Slow-rank detection over a cluster analysis's tables, with robust statistics (docs/cluster.md,
"Slow-rank detection", defines every quantity).

* Steps: in each step, each rank's Computing, Free and Communication are compared with the other
  ranks' in that step: its deviation from their median, scaled by their median absolute
  deviation (MAD) or, where they agree, by :data:`RELATIVE_FLOOR` of the typical step (the
  median over steps of each step's median duration; ``sql/cluster_step_deviations.sql``). A
  rank stands out in the step when that robust z reaches :data:`OUTLIER_Z`. Comparing within a
  step leaves out what every rank shares (a warm-up step that stalls on all of them); medians
  leave out one rank's stall.
* A rank is named on a step dimension when it stands out in more than half of its steps (one
  stalled step is not a rank's slowness).
* Collectives: each instance matched across ranks has a last rank to arrive, the others waiting
  for it. A rank is named when it arrived last at more than half of its instances, more often
  than chance by :data:`CHANCE_Z` standard deviations, and the others waited for it, per step
  (median over its steps), at least :data:`MIN_EFFECT` of the typical step.
* The verdict per rank combines the two: a rank that does more work or idles longer (the cause:
  Computing, Free) while the others wait for it (the effect: Communication, Collectives) is named
  with high confidence; one side alone, with medium confidence.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, List, Optional, Sequence, Tuple

from ..analysis._sql import sql_file_text
from ._map import SQL_DIR

if TYPE_CHECKING:
    import duckdb

#: A rank stands out in a step where its robust z reaches this (Iglewicz and Hoaglin's cut-off
#: for the modified z-score).
OUTLIER_Z = 3.5
#: The smallest scale of a step's comparison, as a fraction of the typical step.
RELATIVE_FLOOR = 0.01
#: The smallest effect named, as a fraction of the typical step: where the other ranks agree
#: exactly a deviation must reach it to stand out, and the wait a rank causes at the collectives too.
MIN_EFFECT = OUTLIER_Z * RELATIVE_FLOOR
#: Standard deviations above chance a rank's late arrivals must reach (one-sided 5%).
CHANCE_Z = 1.645
#: The dimensions of the step breakdown that show a rank's own slowness.
CAUSES = ("Computing", "Free")
COLLECTIVES = "Collectives"
#: What the other ranks see of a slow rank: they wait for it in their collectives.
EFFECTS = ("Communication", COLLECTIVES)
HIGH, MEDIUM = "high", "medium"


@dataclass(frozen=True)
class Evidence:
    """What names a rank slow on one dimension."""

    rank: int
    dimension: str  # Computing, Free, Communication, or Collectives (it arrived last)
    count: int  # steps it stands out in, or collective instances it arrived last to
    out_of: int  # its steps compared with other ranks, or its instances run with other ranks
    z: float  # steps: its median robust z; collectives: its late arrivals' distance from chance
    # Steps: medians over its steps of its deviation and of the other ranks' median.
    excess_ns: Optional[float] = None
    others_ns: Optional[float] = None
    # Collectives: the late arrivals chance alone gives, and the others' wait for it per step.
    expected: Optional[float] = None
    caused_wait_ns: Optional[float] = None

    @property
    def text(self) -> str:
        """One sentence with the numbers."""
        if self.dimension == COLLECTIVES:
            assert self.expected is not None and self.caused_wait_ns is not None
            return (f"Collectives: it arrived last at {self.count} of {self.out_of} collectives it ran with other "
                    f"ranks (chance alone: {self.expected:.1f}; z {self.z:.1f}); the others waited "
                    f"{self.caused_wait_ns / 1e6:.3f} ms per step for it (median over its steps)")
        assert self.excess_ns is not None and self.others_ns is not None
        less = self.dimension == "Communication"  # its deviation is then the others' median minus its value
        relative = f" ({(-1 if less else 1) * self.excess_ns / self.others_ns:+.1%})" if self.others_ns else ""
        direction = "less" if less else "more"
        return (f"{self.dimension}: {abs(self.excess_ns) / 1e6:.3f} ms per step {direction} than the other ranks' "
                f"median{relative}, median over its steps; it stands out in {self.count} of {self.out_of} steps "
                f"(median z {self.z:.1f})")


@dataclass(frozen=True)
class SlowRank:
    """A rank named slow: how sure the verdict is, and the evidence, causes first."""

    rank: int
    confidence: str  # "high": cause and effect agree; "medium": one of them
    evidence: Tuple[Evidence, ...]

    @property
    def dimensions(self) -> List[str]:
        """The dimensions it is named on."""
        return [item.dimension for item in self.evidence]

    @property
    def summary(self) -> str:
        """The verdict on this rank in one sentence."""
        return self.sentence(f"rank {self.rank}")

    def sentence(self, name: str) -> str:
        """The verdict on this rank in one sentence, naming it `name` (Markdown's ``**rank 3**``)."""
        if self.confidence == HIGH:
            why = "it works or idles longer than the other ranks, and they wait for it"
        elif any(dimension in CAUSES for dimension in self.dimensions):
            why = "it works or idles longer than the other ranks, but they are not seen waiting for it"
        else:
            why = "the other ranks wait for it, though its own step breakdown does not say why"
        return f"{name} is slow ({', '.join(self.dimensions)}), confidence {self.confidence}: {why}"


def verdict(slow: Sequence[SlowRank]) -> str:
    """The verdict over the job in one sentence: no slow rank, or the slow ranks."""
    if not slow:
        return ("No slow rank: no rank stands out from the others (robust z >= "
                f"{OUTLIER_Z:g}) in more than half of its steps, nor arrives last at the collectives more often "
                "than chance with the others waiting for it.")
    named = ", ".join(f"rank {rank.rank} (confidence {rank.confidence})" for rank in slow)
    return f"{len(slow)} slow rank{'s' if len(slow) > 1 else ''}: {named}."


def detect(connection: "duckdb.DuckDBPyConnection") -> List[SlowRank]:
    """Create ``step_deviations``, ``slow_rank_evidence``, ``slow_ranks`` and
    ``slow_rank_verdict`` in the cluster database; return the slow ranks, with high confidence
    first, then the most consistent."""
    connection.execute(sql_file_text(SQL_DIR, "cluster_step_values"))
    connection.execute(sql_file_text(SQL_DIR, "cluster_step_deviations"), {"floor": RELATIVE_FLOOR, "z": OUTLIER_Z})
    evidence = _from_steps(connection) + _from_collectives(connection)
    slow = [_judged(rank, [item for item in evidence if item.rank == rank])
            for rank in sorted({item.rank for item in evidence})]
    slow.sort(key=lambda s: (s.confidence != HIGH, -max(e.count / e.out_of for e in s.evidence), s.rank))
    _store(connection, slow)
    return slow


def _from_steps(connection: "duckdb.DuckDBPyConnection") -> List[Evidence]:
    return [Evidence(rank, dimension, count, out_of, z, excess_ns=excess_ns, others_ns=others_ns)
            for rank, dimension, out_of, count, excess_ns, others_ns, z
            in connection.execute(sql_file_text(SQL_DIR, "cluster_step_evidence")).fetchall()]


def _from_collectives(connection: "duckdb.DuckDBPyConnection") -> List[Evidence]:
    typical = connection.execute("SELECT step_ns FROM typical_step").fetchone()
    assert typical is not None  # an aggregate's one row
    min_wait_ns = MIN_EFFECT * (typical[0] or 0)
    found = []
    for rank, instances, late, expected, variance, caused_wait_ns in connection.execute(
            sql_file_text(SQL_DIR, "cluster_late_arrivals")).fetchall():
        z = _chance_z(late, instances, expected, variance)
        if z is not None and caused_wait_ns > 0 and caused_wait_ns >= min_wait_ns:  # > 0: a wait at all
            found.append(Evidence(rank, COLLECTIVES, late, instances, z, expected=expected,
                                  caused_wait_ns=caused_wait_ns))
    return found


def _chance_z(late: int, instances: int, expected: float, variance: float) -> Optional[float]:
    """The late arrivals' distance from chance in standard deviations (normal approximation with
    continuity correction), when they are a majority that stands out (else None)."""
    if late * 2 <= instances or variance <= 0:
        return None
    z = (late - 0.5 - expected) / math.sqrt(variance)
    return z if z >= CHANCE_Z else None


def _judged(rank: int, evidence: List[Evidence]) -> SlowRank:
    """The verdict on `rank` from its evidence: high confidence when a cause in its own steps and
    an effect on the other ranks agree."""
    order = (*CAUSES, *EFFECTS)
    dimensions = {item.dimension for item in evidence}
    both_sides = bool(dimensions & set(CAUSES)) and bool(dimensions & set(EFFECTS))
    return SlowRank(rank, HIGH if both_sides else MEDIUM,
                    tuple(sorted(evidence, key=lambda item: order.index(item.dimension))))


def _store(connection: "duckdb.DuckDBPyConnection", slow: Sequence[SlowRank]) -> None:
    connection.execute("CREATE OR REPLACE TABLE slow_rank_verdict (slow_ranks INTEGER[], verdict VARCHAR)")
    connection.execute("INSERT INTO slow_rank_verdict VALUES (?, ?)", [[s.rank for s in slow], verdict(slow)])
    connection.execute("""CREATE OR REPLACE TABLE slow_ranks (rank INTEGER, confidence VARCHAR, dimensions VARCHAR[],
        summary VARCHAR)""")
    connection.execute("""CREATE OR REPLACE TABLE slow_rank_evidence (rank INTEGER, dimension VARCHAR, count BIGINT,
        out_of BIGINT, z DOUBLE, excess_ns DOUBLE, others_ns DOUBLE, expected DOUBLE, caused_wait_ns DOUBLE,
        evidence VARCHAR)""")
    for s in slow:
        connection.execute("INSERT INTO slow_ranks VALUES (?, ?, ?, ?)",
                           [s.rank, s.confidence, s.dimensions, s.summary])
        for e in s.evidence:
            connection.execute("INSERT INTO slow_rank_evidence VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                               [e.rank, e.dimension, e.count, e.out_of, e.z, e.excess_ns, e.others_ns, e.expected,
                                e.caused_wait_ns, e.text])
