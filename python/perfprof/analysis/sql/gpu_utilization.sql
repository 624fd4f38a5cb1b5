-- GPU utilisation over time per device: the device's span (first activity start to last
-- activity end) cut into :bins equal bins (default 100; bin i starts span * i / bins after the
-- span's start, in whole ns), and in each the time some activity (kernel, copy, set, on any
-- stream) runs, and that as a share of the bin.
WITH activity AS (
    SELECT deviceId, start, start + duration AS finish FROM KERNEL_DETAILS
),
-- Islands of overlapping intervals: a new one begins where an interval starts after every
-- earlier one (in start order) has ended.
reach AS (
    SELECT deviceId, start, finish,
           max(finish) OVER (PARTITION BY deviceId ORDER BY start, finish
                             ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS reached
    FROM activity
),
numbered AS (
    SELECT deviceId, start, finish,
           sum(reached IS NULL OR start > reached) OVER (PARTITION BY deviceId ORDER BY start, finish
                                                         ROWS UNBOUNDED PRECEDING) AS island
    FROM reach
),
islands AS (
    SELECT deviceId, min(start) AS start, max(finish) AS finish FROM numbered GROUP BY deviceId, island
),
spans AS (
    SELECT deviceId, min(start) AS first, max(finish) - min(start) AS span, coalesce(:bins, 100) AS bins
    FROM islands GROUP BY deviceId HAVING span > 0
),
counter(i) AS (
    SELECT 0 UNION ALL SELECT i + 1 FROM counter WHERE i + 1 < coalesce(:bins, 100)
),
grid AS (
    SELECT s.deviceId, c.i AS bin,
           s.first + s.span * c.i / s.bins AS bin_start, s.first + s.span * (c.i + 1) / s.bins AS bin_end
    FROM spans AS s CROSS JOIN counter AS c
),
-- Each island's first and last bin: bin i holds t exactly when (t - first) * bins / span = i.
placed AS (
    SELECT i.deviceId, i.start, i.finish,
           (i.start - s.first) * s.bins / s.span AS first_bin,
           (i.finish - 1 - s.first) * s.bins / s.span AS last_bin
    FROM islands AS i JOIN spans AS s ON s.deviceId = i.deviceId
),
busy AS (
    SELECT g.deviceId, g.bin, sum(min(p.finish, g.bin_end) - max(p.start, g.bin_start)) AS busy_ns
    FROM placed AS p JOIN grid AS g ON g.deviceId = p.deviceId AND g.bin BETWEEN p.first_bin AND p.last_bin
    GROUP BY g.deviceId, g.bin
)
SELECT g.deviceId, g.bin_start AS bin_start_ns, g.bin_end AS bin_end_ns,
       coalesce(b.busy_ns, 0) AS busy_ns,
       100.0 * coalesce(b.busy_ns, 0) / (g.bin_end - g.bin_start) AS utilization_pct
FROM grid AS g LEFT JOIN busy AS b ON b.deviceId = g.deviceId AND b.bin = g.bin
ORDER BY g.deviceId, g.bin;
