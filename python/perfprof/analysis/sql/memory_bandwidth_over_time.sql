-- memory_bandwidth_over_time: per device and kind of copy (HtoD, DtoH, DtoD, PtoP, ...,
-- Memset), the bandwidth the copies in progress use together: the step function of
-- HolisticTraceAnalysis's get_memory_bw_time_series. A copy uses bytes / duration GB/s (bytes
-- per ns) from its start to its end; one with no duration adds none. One row per time the
-- bandwidth changes; it holds until the next row of the same device and kind. (memory_bandwidth.sql
-- summarises the same copies: keep the two in step.)
WITH copies AS (
    SELECT deviceId,
           CASE copyKind WHEN 1 THEN 'HtoD' WHEN 2 THEN 'DtoH' WHEN 3 THEN 'HtoA' WHEN 4 THEN 'AtoH'
                         WHEN 5 THEN 'AtoA' WHEN 6 THEN 'AtoD' WHEN 7 THEN 'DtoA' WHEN 8 THEN 'DtoD'
                         WHEN 9 THEN 'HtoH' WHEN 10 THEN 'PtoP' ELSE 'Unknown' END AS kind,
           start, "end", bytes
    FROM CUPTI_ACTIVITY_KIND_MEMCPY
    UNION ALL
    SELECT deviceId, 'Memset', start, "end", bytes FROM CUPTI_ACTIVITY_KIND_MEMSET
),
changes AS (
    SELECT deviceId, kind, start AS time_ns, 1.0 * bytes / nullif("end" - start, 0) AS gbps FROM copies
    UNION ALL
    SELECT deviceId, kind, "end", -1.0 * bytes / nullif("end" - start, 0) FROM copies
),
per_time AS (
    SELECT deviceId, kind, time_ns, total(gbps) AS gbps FROM changes GROUP BY deviceId, kind, time_ns
)
SELECT deviceId,
       kind,
       time_ns AS start_ns,
       -- Rounded to 1 kB/s: the running sum of +/- floating-point rates leaves dust where
       -- every copy has ended.
       round(sum(gbps) OVER (PARTITION BY deviceId, kind ORDER BY time_ns ROWS UNBOUNDED PRECEDING), 6)
           AS gbps
FROM per_time
ORDER BY deviceId, kind, start_ns;
