-- step_statistics: the run's steps summarised in one row (docs/analysis.md, "Steps"), the one
-- definition every output reads (summary, plots, compare, the sweep's results.jsonl, aggregate).
--   A step is a row of STEP_TIME: a ProfilerStep#N range that ended at a step boundary.
--   median_ns: the middle duration, the mean of the two middle ones for an even count;
--   p5_ns, p95_ns: percentiles interpolated linearly between the two nearest durations (numpy's
--     default): at position h = (count - 1) * p of the sorted durations (0-based);
--   stddev_ns: sample standard deviation (n - 1), NULL for a single step;
--   startup_ns: from the collection's start to the first step's start; tail_ns: the
--     ProfilerStep#N range after the last step boundary (the one the profiler stopped in, or one
--     left unfinished), 0 without one: the range the Chrome trace marks step_tail;
--   compile_ns, compile_source: TorchDynamo's compile time, the total of its
--     `_compile.compile_inner (dynamo_timed)` ranges ('dynamo'); without them the first step's
--     excess over the median of the other steps, at least 0 ('first_step_excess'), which needs
--     two steps; else NULL.
-- No row without steps.
WITH steps AS (
    SELECT endNs - startNs AS ns, startNs, endNs,
           row_number() OVER (ORDER BY endNs - startNs) AS k,
           row_number() OVER (ORDER BY startNs) AS position,
           count(*) OVER () AS n,
           avg(endNs - startNs) OVER () AS mean
    FROM STEP_TIME
),
percentile(p) AS (VALUES (0.05), (0.5), (0.95)),
-- Linear interpolation between the durations at ranks lo and lo + 1 (1-based).
ranks AS (
    SELECT p, CAST((n - 1) * p AS INTEGER) + 1 AS lo, (n - 1) * p - CAST((n - 1) * p AS INTEGER) AS frac
    FROM percentile, (SELECT count(*) AS n FROM STEP_TIME)
),
percentiles AS (
    SELECT r.p, sum(CASE WHEN s.k = r.lo THEN s.ns * (1 - r.frac) ELSE s.ns * r.frac END) AS ns
    FROM ranks r JOIN steps s ON s.k IN (r.lo, r.lo + 1)
    GROUP BY r.p
),
-- The ProfilerStep#N ranges that are no step: the ones from the last step's end on.
tail AS (
    SELECT coalesce(sum(a.endNs - a.startNs), 0) AS ns
    FROM PYTORCH_API a JOIN StringIds s ON s.id = a.name
    WHERE s.value LIKE 'ProfilerStep#%' AND a.startNs >= (SELECT max(endNs) FROM STEP_TIME)
),
dynamo AS (
    SELECT sum(a.endNs - a.startNs) AS ns
    FROM PYTORCH_API a JOIN StringIds s ON s.id = a.name
    WHERE s.value = '_compile.compile_inner (dynamo_timed)'
),
-- The median of the steps after the first, for the fallback.
later AS (
    SELECT ns, row_number() OVER (ORDER BY ns) AS k, count(*) OVER () AS n FROM steps WHERE position > 1
),
first_step_excess AS (
    SELECT max(0, (SELECT ns FROM steps WHERE position = 1) - avg(ns)) AS ns
    FROM later WHERE k IN ((n + 1) / 2, (n + 2) / 2)
    HAVING count(*) > 0
),
summary AS (
    SELECT count(*) AS count, sum(ns) AS total_ns, avg(ns) AS avg_ns,
           avg(ns) FILTER (WHERE k IN ((n + 1) / 2, (n + 2) / 2)) AS median_ns,
           min(ns) AS min_ns, max(ns) AS max_ns,
           sqrt(sum((ns - mean) * (ns - mean)) / nullif(count(*) - 1, 0)) AS stddev_ns,
           min(startNs) AS first_start_ns, max(endNs) AS last_end_ns
    FROM steps
    HAVING count(*) > 0
)
SELECT count, total_ns, avg_ns, median_ns,
       (SELECT ns FROM percentiles WHERE p = 0.05) AS p5_ns,
       (SELECT ns FROM percentiles WHERE p = 0.95) AS p95_ns,
       min_ns, max_ns, stddev_ns,
       first_start_ns - (SELECT CAST(value AS INTEGER) FROM META_DATA WHERE name = 'window_begin_ns') AS startup_ns,
       (SELECT ns FROM tail) AS tail_ns,
       coalesce((SELECT ns FROM dynamo), (SELECT ns FROM first_step_excess)) AS compile_ns,
       CASE WHEN (SELECT ns FROM dynamo) IS NOT NULL THEN 'dynamo'
            WHEN (SELECT ns FROM first_step_excess) IS NOT NULL THEN 'first_step_excess' END AS compile_source
FROM summary;
