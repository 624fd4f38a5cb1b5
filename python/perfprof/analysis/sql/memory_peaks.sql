-- memory_peaks: per device, the peak of each memory category of the memory timeline
-- (MEMORY_CATEGORIES, docs/memory.md) and, as category 'TOTAL', the peak of their sum: the numbers
-- export_memory_timeline's plot gives in its legend. peak_time_ns: the first point that reaches it.
WITH totals AS MATERIALIZED (
    SELECT deviceType, timestamp, sum(bytes) AS bytes FROM MEMORY_CATEGORIES GROUP BY deviceType, timestamp
),
-- position orders the categories as the timeline does (by their first row), the total last.
peaks AS (
    SELECT deviceType, category, max(bytes) AS bytes, min(rowid) AS position
    FROM MEMORY_CATEGORIES GROUP BY deviceType, category
    UNION ALL
    SELECT deviceType, NULL, max(bytes), NULL FROM totals GROUP BY deviceType
)
-- The first time of each peak: one scan of the timeline per peak (a dozen), not a sort of it.
SELECT devices.value AS deviceType, coalesce(names.value, 'TOTAL') AS category, p.bytes AS peak_bytes,
       CASE WHEN p.category IS NULL
            THEN (SELECT min(timestamp) FROM totals AS t WHERE t.deviceType = p.deviceType AND t.bytes = p.bytes)
            ELSE (SELECT min(timestamp) FROM MEMORY_CATEGORIES AS m
                  WHERE m.deviceType = p.deviceType AND m.category = p.category AND m.bytes = p.bytes)
       END AS peak_time_ns
FROM peaks AS p JOIN StringIds AS devices ON devices.id = p.deviceType
LEFT JOIN StringIds AS names ON names.id = p.category
ORDER BY devices.value, p.position IS NULL, p.position;
