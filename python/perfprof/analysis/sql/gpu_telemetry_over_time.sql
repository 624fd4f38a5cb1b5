-- gpu_telemetry_over_time: each GPU's NVML readings over the run (gpu_telemetry, sys_io,
-- sys_interconnection), for a plot: utilisation (%), memory used (bytes), power (W) and SM
-- clock (MHz) per sample. A reading the GPU does not give is NULL. Empty without GPU telemetry.
SELECT gpu, timestamp AS timestamp_ns, utilization AS utilization_pct, memoryUsedBytes AS memory_used_bytes,
       powerWatts AS power_watts, smClockMHz AS sm_clock_mhz
FROM GPU_TELEMETRY
-- GPUs in natural order: GPU 2 before GPU 10.
ORDER BY length(gpu), gpu, timestamp;
