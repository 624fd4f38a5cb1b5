-- nvtx_ranges: the annotated ranges per domain and name, longest total first (:top), as
-- `nsys stats --report nvtx_sum` summarises NVTX ranges:
--   mstx ranges (NVTX_EVENTS eventType 60) under their domain, 'default' for mstx's default one;
--   record_function annotations (PYTORCH_API type 'annotation': the user's and torch's own, such as
--   'Optimizer.step#Adam.step') under the domain 'record_function'.
--   median_ns: the middle duration, the mean of the two middle ones for an even count;
--   stddev_ns: sample standard deviation, NULL for a single range.
WITH ranges AS (
    SELECT coalesce(domains.text, 'default') AS domain, e.text AS name, e."end" - e.start AS ns
    FROM NVTX_EVENTS AS e LEFT JOIN NVTX_EVENTS AS domains ON domains.eventType = 75 AND domains.domainId = e.domainId
    WHERE e.eventType = 60
    UNION ALL
    SELECT 'record_function', names.value, a.endNs - a.startNs
    FROM PYTORCH_API AS a JOIN ENUM_API_TYPE AS t ON t.id = a.type JOIN StringIds AS names ON names.id = a.name
    WHERE t.name = 'annotation'
),
ranked AS (
    SELECT domain, name, ns,
           row_number() OVER (PARTITION BY domain, name ORDER BY ns) AS k,
           count(*) OVER (PARTITION BY domain, name) AS n,
           avg(ns) OVER (PARTITION BY domain, name) AS mean
    FROM ranges
)
SELECT domain, name, count(*) AS count, sum(ns) AS total_ns, avg(ns) AS avg_ns,
       avg(ns) FILTER (WHERE k IN ((n + 1) / 2, (n + 2) / 2)) AS median_ns,
       min(ns) AS min_ns, max(ns) AS max_ns,
       sqrt(sum((ns - mean) * (ns - mean)) / nullif(count(*) - 1, 0)) AS stddev_ns
FROM ranked
GROUP BY domain, name
ORDER BY total_ns DESC, domain, name
LIMIT coalesce(:top, 10);
