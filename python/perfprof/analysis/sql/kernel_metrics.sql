-- kernel_metrics: the hardware metrics measured per kernel (ExperimentalConfig.gpu_metrics,
-- l2_cache; GPU_KERNEL_METRICS) by kernel name, for the :top names with the most device time
-- among their measured kernels (default 10; -1: every name): per metric, how many kernels had a
-- value, and its mean, minimum and maximum. Metrics come in the order the run measured them.
WITH measured AS MATERIALIZED (
    SELECT DISTINCT deviceId, correlationId, start FROM GPU_KERNEL_METRICS
),
kernels AS MATERIALIZED (
    SELECT k.deviceId, k.correlationId, k.start, k.demangledName AS nameId, k."end" - k.start AS duration
    FROM measured AS m JOIN CUPTI_ACTIVITY_KIND_KERNEL AS k USING (deviceId, correlationId, start)
),
top_names AS MATERIALIZED (
    SELECT k.nameId, names.value AS name, sum(k.duration) AS total_ns
    FROM kernels AS k JOIN StringIds AS names ON names.id = k.nameId
    GROUP BY k.nameId ORDER BY total_ns DESC, name LIMIT coalesce(:top, 10)
)
SELECT t.name, metrics.value AS metric, count(*) AS kernels, avg(m.value) AS mean, min(m.value) AS minimum,
       max(m.value) AS maximum
FROM GPU_KERNEL_METRICS AS m
JOIN kernels AS k USING (deviceId, correlationId, start)
JOIN top_names AS t ON t.nameId = k.nameId
JOIN StringIds AS metrics ON metrics.id = m.metricNameId
GROUP BY t.nameId, m.metricNameId
ORDER BY t.total_ns DESC, t.name, m.metricNameId;
