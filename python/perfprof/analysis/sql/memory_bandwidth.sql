-- memory_bandwidth: per device and kind of copy (HtoD, DtoH, DtoD, PtoP, ..., Memset), what
-- the copies moved and how fast:
--   copies, bytes   how many and how much
--   busy_ns         the time at least one copy of the kind was in progress
--   avg_gbps        bytes / busy_ns: the bandwidth while copying (GB/s = bytes per ns)
--   peak_gbps       the most bandwidth the copies in progress used together: the maximum of
--                   memory_bandwidth_over_time.sql's series (the same CTEs: keep them in step)
-- HolisticTraceAnalysis's get_memory_bw_summary has the same maximum; its mean is an average of
-- its series' change points, not weighted by time.
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
),
peaks AS (
    SELECT deviceId, kind, round(max(gbps), 6) AS peak_gbps
    FROM (SELECT deviceId, kind,
                 sum(gbps) OVER (PARTITION BY deviceId, kind ORDER BY time_ns ROWS UNBOUNDED PRECEDING) AS gbps
          FROM per_time)
    GROUP BY deviceId, kind
),
-- Busy time: copies sorted by start merge into one stretch while each starts before the ones
-- before it have all ended (the latest end so far).
reach AS (
    SELECT deviceId, kind, start, "end",
           max("end") OVER (PARTITION BY deviceId, kind ORDER BY start, "end"
                            ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS reached
    FROM copies
),
stretches AS (
    SELECT deviceId, kind, start, "end",
           sum(reached IS NULL OR start > reached)
               OVER (PARTITION BY deviceId, kind ORDER BY start, "end" ROWS UNBOUNDED PRECEDING) AS stretch
    FROM reach
),
busy AS (
    SELECT deviceId, kind, sum(stretch_ns) AS busy_ns
    FROM (SELECT deviceId, kind, max("end") - min(start) AS stretch_ns FROM stretches
          GROUP BY deviceId, kind, stretch)
    GROUP BY deviceId, kind
),
moved AS (
    SELECT deviceId, kind, count(*) AS copies, sum(bytes) AS bytes FROM copies GROUP BY deviceId, kind
)
SELECT moved.deviceId,
       moved.kind,
       moved.copies,
       moved.bytes,
       busy.busy_ns,
       1.0 * moved.bytes / nullif(busy.busy_ns, 0) AS avg_gbps,
       peaks.peak_gbps
FROM moved JOIN busy USING (deviceId, kind) JOIN peaks USING (deviceId, kind)
ORDER BY moved.deviceId, moved.bytes DESC;
