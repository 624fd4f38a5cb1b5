-- The GPU activities (kernels, copies, sets) that take the most device time, by name, with the
-- statistics of `nsys stats`' cuda_gpu_kern_sum: count, total, mean, median, min, max and sample
-- standard deviation (NULL for a single instance) of their durations, and their share of all
-- GPU activity time. The :top names with the largest totals (default 10).
WITH ranked AS (
    SELECT nameId, lower(type) AS type, duration,
           row_number() OVER (PARTITION BY nameId ORDER BY duration) AS position,
           count(*) OVER (PARTITION BY nameId) AS instances
    FROM KERNEL_DETAILS
),
per_name AS (
    SELECT nameId, type, count(*) AS count, sum(duration) AS total_ns, avg(duration) AS avg_ns,
           -- the middle duration, or the mean of the two middle ones
           avg(CASE WHEN position IN ((instances + 1) / 2, (instances + 2) / 2) THEN duration END) AS median_ns,
           min(duration) AS min_ns, max(duration) AS max_ns
    FROM ranked GROUP BY nameId, type
),
spread AS (
    -- two passes (deviations from the mean): exact where sum-of-squares formulas cancel
    SELECT k.nameId, sqrt(sum((k.duration - p.avg_ns) * (k.duration - p.avg_ns)) / (p.count - 1)) AS stddev_ns
    FROM KERNEL_DETAILS AS k JOIN per_name AS p ON p.nameId = k.nameId
    WHERE p.count > 1
    GROUP BY k.nameId
)
SELECT names.value AS name, p.type, p.count, p.total_ns, p.avg_ns, p.median_ns, p.min_ns, p.max_ns,
       s.stddev_ns,
       100.0 * p.total_ns / (SELECT sum(duration) FROM KERNEL_DETAILS) AS pct
FROM per_name AS p
JOIN StringIds AS names ON names.id = p.nameId
LEFT JOIN spread AS s ON s.nameId = p.nameId
ORDER BY p.total_ns DESC, name
LIMIT coalesce(:top, 10);
