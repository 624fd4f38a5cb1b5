-- The late-arrival vote per rank (DuckDB): over the collective instances the rank ran with
-- others, how often it arrived last, how often it would by chance (1/ranks each time) with that
-- count's variance, for the outlier test of slow-rank detection; and the time the other ranks
-- waited for it at the instances it was last to (their mean wait, summed).
WITH instance_wait AS (
    SELECT name, instance, sum(wait_ns) / (count(*) - 1) AS others_wait_ns
    FROM collective_instances WHERE ranks > 1 GROUP BY name, instance
)
SELECT rank, count(*) AS instances, count(*) FILTER (WHERE late) AS late,
       sum(1.0 / ranks) AS expected, sum((1.0 / ranks) * (1 - 1.0 / ranks)) AS variance,
       coalesce(sum(others_wait_ns) FILTER (WHERE late), 0) AS caused_wait_ns
FROM collective_instances JOIN instance_wait USING (name, instance)
WHERE ranks > 1
GROUP BY rank
ORDER BY rank;
