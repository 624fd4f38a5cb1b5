-- module_tree: the nn.Module calls (MODULES: with_modules, or with_stack's Module.__call__ frames)
-- as a tree of module paths, each with its calls' host and device time (the Modules view of perfprof ui).
--   module             the path from the outermost module, names joined with ' > ' ('Net_0 > Linear_0'),
--                      without torch's 'nn.Module: ' prefix; rows in tree order (a module, then
--                      its children), calls of one path added up
--   depth              0 for an outermost module
--   calls              the calls of that path
--   host_total_ns      Σ (end - start) of the calls
--   host_self_ns       host_total_ns minus the durations of the module calls made inside them
--   device_total_ns    Σ durations of the GPU work (KERNEL_DETAILS) whose launch call started inside
--                      the calls, on their thread (the forward pass: backward work runs on
--                      autograd's threads and is no module's)
--   device_self_ns     device_total_ns minus that of the module calls made inside them
--   (the device columns are NULL in a run without device work, rather than 0)
WITH RECURSIVE names AS (
    SELECT id, CASE WHEN value LIKE 'nn.Module: %' THEN substr(value, 12) ELSE value END AS name FROM StringIds
),
paths(id, module, depth) AS (
    SELECT m.id, n.name, 0 FROM MODULES AS m JOIN names AS n ON n.id = m.nameId WHERE m.parentId IS NULL
    UNION ALL
    SELECT m.id, p.module || ' > ' || n.name, p.depth + 1
    FROM MODULES AS m JOIN paths AS p ON m.parentId = p.id JOIN names AS n ON n.id = m.nameId
),
device AS (
    SELECT m.id, sum(k.duration) AS device_ns
    FROM MODULES AS m JOIN KERNEL_DETAILS AS k
      ON k.launchGlobalTid = m.globalTid AND k.launchStart >= m.startNs AND k.launchStart < m.endNs
    GROUP BY m.id
),
calls AS (
    SELECT m.id, m.parentId, m.endNs - m.startNs AS host_ns, coalesce(d.device_ns, 0) AS device_ns
    FROM MODULES AS m LEFT JOIN device AS d ON d.id = m.id
),
children AS (
    SELECT parentId AS id, sum(host_ns) AS host_ns, sum(device_ns) AS device_ns
    FROM calls WHERE parentId IS NOT NULL GROUP BY parentId
)
SELECT p.module,
       p.depth,
       count(*) AS calls,
       sum(c.host_ns) AS host_total_ns,
       sum(c.host_ns - coalesce(inner.host_ns, 0)) AS host_self_ns,
       CASE WHEN EXISTS (SELECT 1 FROM KERNEL_DETAILS) THEN sum(c.device_ns) END AS device_total_ns,
       CASE WHEN EXISTS (SELECT 1 FROM KERNEL_DETAILS) THEN sum(c.device_ns - coalesce(inner.device_ns, 0)) END
           AS device_self_ns
FROM paths AS p JOIN calls AS c ON c.id = p.id LEFT JOIN children AS inner ON inner.id = p.id
GROUP BY p.module, p.depth
ORDER BY p.module;
