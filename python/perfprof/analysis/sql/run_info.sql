-- run_info: what a report says first about a run, as (name, value) rows of text: who ran it
-- (rank, world size, backend), when (the collection window, UTC), what it holds (steps, GPUs,
-- operators, annotations, kernels, mstx ranges, GC pauses), how it was profiled (the profile()
-- options, config.*), what was lost (the trace's non-zero loss counters, stats.*) and the user's
-- add_metadata values (metadata.*). Rows without a value (no GPU, no backend) are left out.
WITH window_ns(b, e) AS (
    SELECT (SELECT CAST(value AS INTEGER) FROM META_DATA WHERE name = 'window_begin_ns'),
           (SELECT CAST(value AS INTEGER) FROM META_DATA WHERE name = 'window_end_ns')
),
-- An option's value as text: true/false, a list as its items ("CPU, CUDA"), else the value.
options(key, type, value) AS (
    SELECT key, type, value FROM json_each((SELECT value FROM META_DATA WHERE name = 'config'))
    WHERE key <> 'experimental_config'
      AND NOT (type = 'object' AND value = '{}')  -- an option given nothing (activity_filters): no row
    UNION ALL
    SELECT key, type, value FROM json_each((SELECT value FROM META_DATA WHERE name = 'config'), '$.experimental_config')
    WHERE key IN ('profiler_level', 'mstx', 'gc_detect_threshold', 'export_type')
),
config AS (
    SELECT key, CASE WHEN type IN ('true', 'false') THEN type
                     WHEN type = 'array' THEN (SELECT group_concat(item.value, ', ') FROM json_each(options.value) AS item)
                     ELSE value END AS value
    FROM options
),
info(position, name, value) AS (
    SELECT 1, 'rank', (SELECT value FROM META_DATA WHERE name = 'rank')
    UNION ALL SELECT 2, 'world_size', (SELECT value FROM META_DATA WHERE name = 'world_size')
    UNION ALL SELECT 3, 'backend', (SELECT value FROM META_DATA WHERE name = 'distributed_backend')
    UNION ALL SELECT 4, 'window_start', strftime('%Y-%m-%d %H:%M:%f UTC', b / 1e9, 'unixepoch') FROM window_ns
    UNION ALL SELECT 5, 'window_end', strftime('%Y-%m-%d %H:%M:%f UTC', e / 1e9, 'unixepoch') FROM window_ns
    UNION ALL SELECT 6, 'window_duration_ns', e - b FROM window_ns
    UNION ALL SELECT 7, 'steps', (SELECT count(*) FROM STEP_TIME)
    UNION ALL SELECT 8, 'gpus', (SELECT group_concat(id || ': ' || name, ', ') FROM TARGET_INFO_GPU)
    UNION ALL SELECT 9, 'operators', (SELECT count(*) FROM PYTORCH_API
                                      WHERE type = (SELECT id FROM ENUM_API_TYPE WHERE name = 'op'))
    UNION ALL SELECT 10, 'annotations', (SELECT count(*) FROM PYTORCH_API
                                         WHERE type = (SELECT id FROM ENUM_API_TYPE WHERE name = 'annotation'))
    UNION ALL SELECT 11, 'kernels', (SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL)
    UNION ALL SELECT 12, 'mstx_ranges', (SELECT count(*) FROM NVTX_EVENTS WHERE eventType = 60)
    UNION ALL SELECT 13, 'gc_pauses', (SELECT count(*) FROM GC_RECORD)
    UNION ALL SELECT 20, 'config.' || key, value FROM config
    UNION ALL SELECT 30, name, value FROM META_DATA WHERE name LIKE 'stats.%' AND value <> '0'
    UNION ALL SELECT 40, 'metadata.' || name, value FROM META_DATA
              WHERE name NOT LIKE 'stats.%' AND name NOT IN ('schema_version', 'time_unit', 'window_begin_ns',
                    'window_end_ns', 'rank', 'world_size', 'distributed_backend', 'config', 'environment_variables')
)
SELECT name, CAST(value AS TEXT) AS value
FROM info
WHERE value IS NOT NULL AND value <> ''
ORDER BY position;
