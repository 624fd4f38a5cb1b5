-- telemetry_statistics: each counter the telemetry sampler read (host_sys, gpu_telemetry, sys_io,
-- sys_interconnection; docs/api.md "Telemetry") over the run, per instance: how many samples
-- had it, and its mean, minimum and maximum. The counter's name carries its unit; rates are
-- per second over each sample's interval, so their mean weighs every interval alike.
WITH samples(position, counter, instance, value) AS (
    SELECT CASE WHEN cpu = 'process' THEN 2 ELSE 1 END,
           CASE WHEN cpu = 'process' THEN 'Process CPU Usage (%)' ELSE 'CPU Usage (%)' END, cpu, usage
    FROM HOST_CPU_USAGE
    UNION ALL SELECT 3, 'Memory Used (bytes)', 'host', usedBytes FROM HOST_MEM_USAGE
    UNION ALL SELECT 4, 'Memory Available (bytes)', 'host', availableBytes FROM HOST_MEM_USAGE
    UNION ALL SELECT 5, 'Process RSS (bytes)', 'process', processRssBytes FROM HOST_MEM_USAGE
    UNION ALL SELECT 6, 'Disk Read (bytes/s)', device, readBytesPerSec FROM HOST_DISK_USAGE
    UNION ALL SELECT 7, 'Disk Write (bytes/s)', device, writeBytesPerSec FROM HOST_DISK_USAGE
    UNION ALL SELECT 8, 'Network Receive (bytes/s)', interface, receiveBytesPerSec FROM HOST_NETWORK_USAGE
    UNION ALL SELECT 9, 'Network Transmit (bytes/s)', interface, transmitBytesPerSec FROM HOST_NETWORK_USAGE
    UNION ALL SELECT 10, 'GPU Utilization (%)', gpu, utilization FROM GPU_TELEMETRY
    UNION ALL SELECT 11, 'GPU Memory Utilization (%)', gpu, memoryUtilization FROM GPU_TELEMETRY
    UNION ALL SELECT 12, 'GPU Memory Used (bytes)', gpu, memoryUsedBytes FROM GPU_TELEMETRY
    UNION ALL SELECT 13, 'GPU Power (W)', gpu, powerWatts FROM GPU_TELEMETRY
    UNION ALL SELECT 14, 'GPU SM Clock (MHz)', gpu, smClockMHz FROM GPU_TELEMETRY
    UNION ALL SELECT 15, 'GPU Temperature (C)', gpu, temperatureC FROM GPU_TELEMETRY
    UNION ALL SELECT 16, 'PCIe Receive (bytes/s)', gpu, receiveBytesPerSec FROM GPU_PCIE
    UNION ALL SELECT 17, 'PCIe Transmit (bytes/s)', gpu, transmitBytesPerSec FROM GPU_PCIE
    UNION ALL SELECT 18, 'NVLink Receive (bytes/s)', link, receiveBytesPerSec FROM GPU_NVLINK
    UNION ALL SELECT 19, 'NVLink Transmit (bytes/s)', link, transmitBytesPerSec FROM GPU_NVLINK
)
SELECT counter, instance, count(*) AS samples, avg(value) AS mean, min(value) AS minimum, max(value) AS maximum
FROM samples WHERE value IS NOT NULL
-- Instances in natural order: cpu2 before cpu10, the aggregate 'all' after the CPUs.
GROUP BY position, counter, instance
ORDER BY position, instance = 'all', length(instance), instance;
