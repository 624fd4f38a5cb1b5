-- host_telemetry_over_time: the host counters of host_sys over the run, for a plot: one row per
-- sample and series, in four panels. cpu: the host (every CPU's use added up) and the profiled
-- process, both in % of one CPU (up to 100 x CPUs); memory: used by the host and the process's
-- RSS (bytes); disk and network: every device and every interface summed, loopback included
-- (bytes/s). Empty without host telemetry.
SELECT panel, series, timestamp AS timestamp_ns, value
FROM (
    -- 'all' is the mean over the CPUs (0-100): times the CPUs, it is in the process's unit.
    SELECT 1 AS position, 'cpu' AS panel, 'host' AS series, timestamp,
           usage * (SELECT count(DISTINCT cpu) FROM HOST_CPU_USAGE WHERE cpu NOT IN ('all', 'process')) AS value
    FROM HOST_CPU_USAGE WHERE cpu = 'all'
    UNION ALL SELECT 1, 'cpu', 'process', timestamp, usage FROM HOST_CPU_USAGE WHERE cpu = 'process'
    UNION ALL SELECT 2, 'memory', 'host used', timestamp, usedBytes FROM HOST_MEM_USAGE
    UNION ALL SELECT 2, 'memory', 'process RSS', timestamp, processRssBytes FROM HOST_MEM_USAGE
    UNION ALL SELECT 3, 'disk', 'read', timestamp, sum(readBytesPerSec) FROM HOST_DISK_USAGE GROUP BY timestamp
    UNION ALL SELECT 3, 'disk', 'write', timestamp, sum(writeBytesPerSec) FROM HOST_DISK_USAGE GROUP BY timestamp
    UNION ALL SELECT 4, 'network', 'receive', timestamp, sum(receiveBytesPerSec) FROM HOST_NETWORK_USAGE
        GROUP BY timestamp
    UNION ALL SELECT 4, 'network', 'transmit', timestamp, sum(transmitBytesPerSec) FROM HOST_NETWORK_USAGE
        GROUP BY timestamp
)
WHERE value IS NOT NULL
ORDER BY position, series, timestamp;
