-- memory_over_time: the memory timeline (MEMORY_CATEGORIES, docs/memory.md) per device, for a
-- stacked-area plot: the bytes live in each category from timestamp_ns until the device's next point.
-- A device with more than :points points (2000 by default) is thinned: its time span is cut into
-- :points equal buckets and each keeps its point of largest total (the first on ties), so every
-- point shown is one the timeline has and the total's peak is among them.
WITH totals AS (
    SELECT deviceType, timestamp, sum(bytes) AS bytes FROM MEMORY_CATEGORIES GROUP BY deviceType, timestamp
),
spans AS (
    SELECT deviceType, count(*) AS points, min(timestamp) AS first, max(timestamp) AS last
    FROM totals GROUP BY deviceType
),
bucketed AS (
    SELECT t.deviceType, t.timestamp,
           CASE WHEN sp.points <= coalesce(:points, 2000) THEN t.timestamp
                ELSE (t.timestamp - sp.first) * coalesce(:points, 2000) / (sp.last - sp.first + 1) END AS bucket,
           t.bytes
    FROM totals AS t JOIN spans AS sp USING (deviceType)
),
kept AS (
    SELECT deviceType, timestamp FROM (
        SELECT deviceType, timestamp,
               row_number() OVER (PARTITION BY deviceType, bucket ORDER BY bytes DESC, timestamp) AS k
        FROM bucketed)
    WHERE k = 1
)
SELECT devices.value AS deviceType, m.timestamp AS timestamp_ns, names.value AS category, m.bytes
FROM kept JOIN MEMORY_CATEGORIES AS m USING (deviceType, timestamp)
JOIN StringIds AS devices ON devices.id = m.deviceType JOIN StringIds AS names ON names.id = m.category
ORDER BY devices.value, m.timestamp, m.category;
