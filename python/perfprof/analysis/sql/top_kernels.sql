-- The GPU activities (kernels, copies, sets) that take the most device time, by name, with the
-- statistics of `nsys stats`' cuda_gpu_kern_sum: count, total, mean, median, min, max and sample
-- standard deviation (NULL for a single instance) of their durations, and their share of all
-- GPU activity time. The :top names with the largest totals (default 10).
-- The per-instance work (ranking for the median, deviations for the spread) is done for the
-- :top names only: the other names' instances are counted once, in per_name.
WITH per_name AS (
    SELECT nameId, lower(type) AS type, count(*) AS count, sum(duration) AS total_ns, avg(duration) AS avg_ns,
           min(duration) AS min_ns, max(duration) AS max_ns
    FROM KERNEL_DETAILS GROUP BY nameId, type
),
top_names AS MATERIALIZED (
    SELECT p.*, names.value AS name FROM per_name AS p JOIN StringIds AS names ON names.id = p.nameId
    ORDER BY p.total_ns DESC, name LIMIT coalesce(:top, 10)
),
ranked AS (
    SELECT nameId, duration, row_number() OVER (PARTITION BY nameId ORDER BY duration) AS position
    FROM KERNEL_DETAILS WHERE nameId IN (SELECT nameId FROM top_names)
),
spread AS (
    -- the middle duration, or the mean of the two middle ones; the standard deviation in two
    -- passes (deviations from the mean): exact where sum-of-squares formulas cancel
    SELECT t.nameId,
           avg(r.duration) FILTER (WHERE r.position IN ((t.count + 1) / 2, (t.count + 2) / 2)) AS median_ns,
           sqrt(sum((r.duration - t.avg_ns) * (r.duration - t.avg_ns)) / nullif(t.count - 1, 0)) AS stddev_ns
    FROM ranked AS r JOIN top_names AS t ON t.nameId = r.nameId
    GROUP BY t.nameId
)
SELECT t.name, t.type, t.count, t.total_ns, t.avg_ns, s.median_ns, t.min_ns, t.max_ns, s.stddev_ns,
       100.0 * t.total_ns / (SELECT sum(duration) FROM KERNEL_DETAILS) AS pct
FROM top_names AS t JOIN spread AS s ON s.nameId = t.nameId
ORDER BY t.total_ns DESC, t.name;
