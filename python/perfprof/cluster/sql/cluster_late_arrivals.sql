-- The late-arrival vote per rank (DuckDB): over the collective instances the rank ran with
-- others, how often it arrived last, and how often it would by chance (1/ranks each time) with
-- that count's variance, for the outlier test of slow-rank detection.
SELECT rank, count(*) AS instances, count(*) FILTER (WHERE late) AS late,
       sum(1.0 / ranks) AS expected, sum((1.0 / ranks) * (1 - 1.0 / ranks)) AS variance
FROM collective_instances
WHERE ranks > 1
GROUP BY rank
ORDER BY rank;
