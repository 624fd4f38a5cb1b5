-- The collectives evidence per rank (DuckDB, over collective_instances): of the instances it ran
-- with other ranks, how many it arrived last to, how many it would by chance (1/ranks each time)
-- with that count's variance, for the outlier test of slow-rank detection; and how long the
-- others waited for it per step: per step, the sum over the instances it was last to of the
-- other ranks' median wait there; the median of that over its steps (0 in a step where it was
-- last to none), so that one stalled step does not make a rank slow.
WITH instance_wait AS (
    SELECT name, instance, median(wait_ns) FILTER (WHERE NOT late) AS others_wait_ns
    FROM collective_instances WHERE ranks > 1 GROUP BY name, instance
),
caused AS (
    SELECT rank, step, sum(others_wait_ns) AS wait_ns
    FROM collective_instances JOIN instance_wait USING (name, instance)
    WHERE late AND step IS NOT NULL
    GROUP BY rank, step
),
per_step AS (
    SELECT s.rank, median(coalesce(c.wait_ns, 0)) AS caused_wait_ns
    FROM rank_steps s LEFT JOIN caused c ON c.rank = s.rank AND c.step = s.step
    GROUP BY s.rank
)
SELECT rank, count(*) AS instances, count(*) FILTER (WHERE late) AS late,
       sum(1.0 / ranks) AS expected, sum((1.0 / ranks) * (1 - 1.0 / ranks)) AS variance,
       coalesce(any_value(per_step.caused_wait_ns), 0) AS caused_wait_ns
FROM collective_instances LEFT JOIN per_step USING (rank)
WHERE ranks > 1
GROUP BY rank
ORDER BY rank;
