-- step_statistics: the steps' durations summarised in one row, as `nsys stats` summarises ranges.
--   median_ns: the middle duration, the mean of the two middle ones for an even count;
--   stddev_ns: sample standard deviation, NULL for a single step. No row without steps.
WITH steps AS (
    SELECT endNs - startNs AS ns,
           row_number() OVER (ORDER BY endNs - startNs) AS k,
           count(*) OVER () AS n,
           avg(endNs - startNs) OVER () AS mean
    FROM STEP_TIME
)
SELECT count(*) AS count, sum(ns) AS total_ns, avg(ns) AS avg_ns,
       avg(ns) FILTER (WHERE k IN ((n + 1) / 2, (n + 2) / 2)) AS median_ns,
       min(ns) AS min_ns, max(ns) AS max_ns,
       sqrt(sum((ns - mean) * (ns - mean)) / nullif(count(*) - 1, 0)) AS stddev_ns
FROM steps
HAVING count(*) > 0;
