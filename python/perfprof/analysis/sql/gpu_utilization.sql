-- GPU utilisation over time per device: the device's span (first activity start to last
-- activity end) cut into :bins equal bins (default 100; bin i starts span * i / bins after the
-- span's start, in whole ns), and in each the time some activity (kernel, copy, set, on any
-- stream) runs, and that as a share of the bin.
-- The busy time as disjoint segments: in start order, each interval adds the part of it after
-- everything earlier has ended, [max(start, reached), finish), when there is such a part.
WITH reach AS (
    SELECT deviceId, start, start + duration AS finish,
           max(start + duration) OVER (PARTITION BY deviceId ORDER BY start
                                       ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS reached
    FROM KERNEL_DETAILS
),
segments AS (
    SELECT deviceId, max(start, coalesce(reached, start)) AS start, finish
    FROM reach WHERE finish > coalesce(reached, start)
),
spans AS (
    SELECT deviceId, min(start) AS first, max(finish) - min(start) AS span, coalesce(:bins, 100) AS bins
    FROM segments GROUP BY deviceId HAVING span > 0
),
counter(i) AS (
    SELECT 0 UNION ALL SELECT i + 1 FROM counter WHERE i + 1 < coalesce(:bins, 100)
),
grid AS (
    SELECT s.deviceId, c.i AS bin,
           s.first + s.span * c.i / s.bins AS bin_start, s.first + s.span * (c.i + 1) / s.bins AS bin_end
    FROM spans AS s CROSS JOIN counter AS c
),
-- Each segment's first and last bin: bin i holds t exactly when (t - first) * bins / span = i.
placed AS (
    SELECT seg.deviceId, seg.start, seg.finish,
           (seg.start - s.first) * s.bins / s.span AS first_bin,
           (seg.finish - 1 - s.first) * s.bins / s.span AS last_bin
    FROM segments AS seg JOIN spans AS s ON s.deviceId = seg.deviceId
),
-- Most segments lie in one bin; only those across bin edges are cut at them.
pieces AS (
    SELECT deviceId, first_bin AS bin, finish - start AS busy_ns FROM placed WHERE first_bin = last_bin
    UNION ALL
    SELECT g.deviceId, g.bin, min(p.finish, g.bin_end) - max(p.start, g.bin_start)
    FROM placed AS p JOIN grid AS g ON g.deviceId = p.deviceId AND g.bin BETWEEN p.first_bin AND p.last_bin
    WHERE p.first_bin < p.last_bin
),
busy AS (
    SELECT deviceId, bin, sum(busy_ns) AS busy_ns FROM pieces GROUP BY deviceId, bin
)
SELECT g.deviceId, g.bin_start AS bin_start_ns, g.bin_end AS bin_end_ns,
       coalesce(b.busy_ns, 0) AS busy_ns,
       100.0 * coalesce(b.busy_ns, 0) / (g.bin_end - g.bin_start) AS utilization_pct
FROM grid AS g LEFT JOIN busy AS b ON b.deviceId = g.deviceId AND b.bin = g.bin
ORDER BY g.deviceId, g.bin;
