"""Slow-rank detection over a cluster analysis's tables (msprof-analyze's approach: flag what
differs across ranks, let each flagged step or collective vote for the rank that explains it,
and name a rank whose votes stand out from chance).

* Steps: a step is flagged on Computing, Communication or Free when (max - min) / mean over its
  ranks exceeds :data:`SPREAD_THRESHOLD`. It votes for the rank that computes longest or sits
  idle longest, or on Communication for the rank that communicates least: in a synchronous job
  the other ranks wait inside their collectives for the slow one.
* Collectives: each instance matched across ranks votes for the rank that arrived last, the one
  with the smallest elapse (it waited for no one).

A rank is named on a dimension when it got more than half of the votes, more than chance gives
(with p = 1/ranks per vote, its count exceeds the expected count by :data:`OUTLIER_Z` standard
deviations: normal approximation, with continuity correction), and by enough to matter: its
distance from the other ranks' median on the dimension (steps), or the time the others waited for
it (collectives), is at least :data:`MIN_EFFECT` of the mean step time, per step. (A rank that
computes 0.6 ms longer in a 64 ms step (1%) does not make the job slow, however consistently.)
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Tuple

from ..analysis._sql import sql_file_text
from ._map import SQL_DIR

if TYPE_CHECKING:
    import duckdb

#: A step is flagged on a dimension when its ranks' (max - min) / mean exceeds this.
SPREAD_THRESHOLD = 0.05
#: Standard deviations above chance a rank's votes must reach (one-sided 5%).
OUTLIER_Z = 1.645
#: The smallest effect named, as a fraction of the mean step time (per step).
MIN_EFFECT = 0.02
#: The dimensions of the step breakdown, causes first: Communication is where the others wait.
STEP_DIMENSIONS = ("Computing", "Free", "Communication")
COLLECTIVES = "Collectives"


@dataclass(frozen=True)
class SlowRank:
    """A rank named slow on one dimension, with the evidence."""

    rank: int
    dimension: str  # Computing, Free, Communication, or Collectives (it arrived last)
    votes: int  # flagged steps, or collective instances, that pointed at it
    chances: int  # flagged steps on the dimension, or instances it ran with others
    expected: float  # votes chance alone gives
    z: float
    # Steps: the mean over its steps of (its value - the other ranks' median), and that median.
    excess_ns: Optional[float] = None
    others_ns: Optional[float] = None
    # Collectives: how long the other ranks waited for it, per step.
    caused_wait_ns: Optional[float] = None

    @property
    def evidence(self) -> str:
        """One sentence saying why."""
        share = f"{self.votes} of {self.chances}"
        if self.dimension == COLLECTIVES:
            assert self.caused_wait_ns is not None
            return (f"Collectives: it arrived last at {share} collectives it ran with other ranks "
                    f"(chance alone: {self.expected:.1f}); the others waited {self.caused_wait_ns / 1e6:.3f} ms "
                    "per step for it")
        assert self.excess_ns is not None and self.others_ns is not None
        relative = f" ({self.excess_ns / self.others_ns:+.1%})" if self.others_ns else ""
        direction = "less" if self.dimension == "Communication" else "more"
        return (f"{self.dimension} {abs(self.excess_ns) / 1e6:.3f} ms per step {direction} than the other ranks' "
                f"median{relative}; the rank that explains the spread in {share} flagged steps")


def detect(connection: "duckdb.DuckDBPyConnection") -> List[SlowRank]:
    """Create ``flagged_steps`` and ``slow_ranks`` in the cluster database and return the slow
    ranks: ranks by their strongest evidence, each rank's dimensions causes first (Computing,
    Free), then what the other ranks see of it (Communication, Collectives)."""
    connection.execute(sql_file_text(SQL_DIR, "cluster_step_values"))
    connection.execute(sql_file_text(SQL_DIR, "cluster_flagged_steps"), {"threshold": SPREAD_THRESHOLD})
    step = connection.execute("SELECT avg(duration_ns), count(DISTINCT step) FROM rank_steps").fetchone()
    assert step is not None  # an aggregate's one row
    mean_step_ns, steps = step
    if not steps:
        found: List[SlowRank] = []
    else:
        found = _from_steps(connection, MIN_EFFECT * mean_step_ns) + \
            _from_collectives(connection, steps, MIN_EFFECT * mean_step_ns)
    strongest: Dict[int, float] = {}
    for finding in found:
        strongest[finding.rank] = max(strongest.get(finding.rank, 0.0), finding.z)
    order = (*STEP_DIMENSIONS, COLLECTIVES)
    found.sort(key=lambda f: (-strongest[f.rank], f.rank, order.index(f.dimension)))
    _store(connection, found)
    return found


def _from_steps(connection: "duckdb.DuckDBPyConnection", min_effect_ns: float) -> List[SlowRank]:
    found = []
    for dimension in STEP_DIMENSIONS:
        rows = connection.execute("""
            SELECT suspect, count(*) OVER () AS flagged, count(*) OVER (PARTITION BY suspect) AS votes,
                   sum(1.0 / ranks) OVER () AS expected, sum((1.0 / ranks) * (1 - 1.0 / ranks)) OVER () AS variance
            FROM flagged_steps WHERE dimension = ?
            QUALIFY row_number() OVER (PARTITION BY suspect) = 1
            ORDER BY votes DESC, suspect LIMIT 1""", [dimension]).fetchall()
        for rank, flagged, votes, expected, variance in rows:
            z = _z(votes, flagged, expected, variance)
            if z is None:
                continue
            excess: Optional[Tuple[Any, ...]] = connection.execute(
                sql_file_text(SQL_DIR, "cluster_rank_excess"), {"rank": rank, "dimension": dimension}).fetchone()
            assert excess is not None  # an aggregate's one row
            excess_ns, others_ns = excess
            if abs(excess_ns) < min_effect_ns:
                continue
            found.append(SlowRank(rank, dimension, votes, flagged, expected, z, excess_ns, others_ns))
    return found


def _from_collectives(connection: "duckdb.DuckDBPyConnection", steps: int, min_effect_ns: float) -> List[SlowRank]:
    found = []
    for rank, instances, late, expected, variance, caused_wait_ns in connection.execute(
            sql_file_text(SQL_DIR, "cluster_late_arrivals")).fetchall():
        z = _z(late, instances, expected, variance)
        if z is not None and caused_wait_ns / steps >= min_effect_ns:
            found.append(SlowRank(rank, COLLECTIVES, late, instances, expected, z,
                                  caused_wait_ns=caused_wait_ns / steps))
    return found


def _z(votes: int, chances: int, expected: float, variance: float) -> Optional[float]:
    """The votes' distance from chance in standard deviations, when they are a majority that
    stands out (else None)."""
    if votes * 2 <= chances or variance <= 0:
        return None
    z = (votes - 0.5 - expected) / math.sqrt(variance)
    return z if z >= OUTLIER_Z else None


def _store(connection: "duckdb.DuckDBPyConnection", found: List[SlowRank]) -> None:
    connection.execute("""CREATE OR REPLACE TABLE slow_ranks (rank INTEGER, dimension VARCHAR, votes BIGINT,
        chances BIGINT, expected DOUBLE, z DOUBLE, excess_ns DOUBLE, others_ns DOUBLE, caused_wait_ns DOUBLE,
        evidence VARCHAR)""")
    for f in found:
        connection.execute("INSERT INTO slow_ranks VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                           [f.rank, f.dimension, f.votes, f.chances, f.expected, f.z, f.excess_ns, f.others_ns,
                            f.caused_wait_ns, f.evidence])
