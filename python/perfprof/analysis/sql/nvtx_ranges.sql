-- nvtx_ranges: the annotated ranges per domain and name, longest total first (:top), as
-- `nsys stats --report nvtx_sum` summarises NVTX ranges:
--   mstx ranges (NVTX_EVENTS eventType 60) under their domain, 'default' for mstx's default one;
--   record_function annotations (PYTORCH_API type 'annotation': the user's and torch's own, such as
--   'Optimizer.step#Adam.step') under the domain 'record_function'.
--   median_ns: the middle duration, the mean of the two middle ones for an even count;
--   stddev_ns: sample standard deviation, NULL for a single range.
-- Annotations are grouped by their name's id and named once grouped; the per-range work
-- (ranking for the median, deviations for the spread) is done for the :top groups only.
WITH ranges AS (
    SELECT 0 AS annotation, coalesce(domains.text, 'default') AS domain, e.text AS name, e."end" - e.start AS ns
    FROM NVTX_EVENTS AS e LEFT JOIN NVTX_EVENTS AS domains ON domains.eventType = 75 AND domains.domainId = e.domainId
    WHERE e.eventType = 60
    UNION ALL
    SELECT 1, 'record_function', name, endNs - startNs FROM PYTORCH_API
    WHERE type = (SELECT id FROM ENUM_API_TYPE WHERE name = 'annotation')
),
per_name AS (
    SELECT annotation, domain, name, count(*) AS count, sum(ns) AS total_ns, avg(ns) AS avg_ns,
           min(ns) AS min_ns, max(ns) AS max_ns
    FROM ranges GROUP BY annotation, domain, name
),
top_names AS MATERIALIZED (
    SELECT *, CASE WHEN annotation THEN (SELECT value FROM StringIds WHERE id = name) ELSE name END AS text
    FROM per_name ORDER BY total_ns DESC, domain, text LIMIT coalesce(:top, 10)
),
ranked AS (
    SELECT r.annotation, r.domain, r.name, r.ns,
           row_number() OVER (PARTITION BY r.annotation, r.domain, r.name ORDER BY r.ns) AS k
    FROM ranges AS r JOIN top_names AS t ON t.annotation = r.annotation AND t.domain = r.domain AND t.name IS r.name
),
spread AS (
    SELECT t.annotation, t.domain, t.name,
           avg(r.ns) FILTER (WHERE r.k IN ((t.count + 1) / 2, (t.count + 2) / 2)) AS median_ns,
           sqrt(sum((r.ns - t.avg_ns) * (r.ns - t.avg_ns)) / nullif(t.count - 1, 0)) AS stddev_ns
    FROM ranked AS r JOIN top_names AS t ON t.annotation = r.annotation AND t.domain = r.domain AND t.name IS r.name
    GROUP BY t.annotation, t.domain, t.name
)
SELECT t.domain, t.text AS name, t.count, t.total_ns, t.avg_ns, s.median_ns, t.min_ns, t.max_ns, s.stddev_ns
FROM top_names AS t JOIN spread AS s ON s.annotation = t.annotation AND s.domain = t.domain AND s.name IS t.name
ORDER BY t.total_ns DESC, t.domain, t.text;
