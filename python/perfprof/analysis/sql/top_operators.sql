-- top_operators: the host ranges of one kind (:type, an ENUM_API_TYPE name: 'op' by default,
-- 'python_function' for python_hot_spots) per name, those with the most self time first (:top).
--   self_ns:   total_ns minus the time of the ranges of the same kind directly inside them (same
--              thread: PYTORCH_API.typeParentId). Ranges of other kinds are transparent: an
--              operator's record_function scopes count as its own time, the operators under a
--              Python call as the call's.
--   pct:       self_ns over the self time of all ranges of the kind (the time some range of the
--              kind ran, summed over threads): the rows of all names add up to 100.
--   median_ns: the middle duration, the mean of the two middle ones for an even count;
--   stddev_ns: sample standard deviation, NULL for a single call.
-- The per-call work (ranking for the median, deviations for the spread) is done for the :top
-- names only.
WITH ranges AS (
    SELECT name AS nameId, endNs - startNs AS ns, typeParentId FROM PYTORCH_API
    WHERE type = (SELECT id FROM ENUM_API_TYPE WHERE name = coalesce(:type, 'op'))
),
-- The time of the ranges directly inside another of the kind, by that range's name.
children AS (
    SELECT parent.name AS nameId, sum(child.ns) AS ns
    FROM ranges AS child JOIN PYTORCH_API AS parent ON parent.id = child.typeParentId
    GROUP BY parent.name
),
per_name AS (
    SELECT r.nameId, count(*) AS count, sum(r.ns) AS total_ns, sum(r.ns) - coalesce(c.ns, 0) AS self_ns,
           avg(r.ns) AS avg_ns, min(r.ns) AS min_ns, max(r.ns) AS max_ns
    FROM ranges AS r LEFT JOIN children AS c ON c.nameId = r.nameId
    GROUP BY r.nameId
),
-- pct's window sums over every name: windows are computed before ORDER BY and LIMIT.
top_names AS MATERIALIZED (
    SELECT p.*, names.value AS name, 100.0 * p.self_ns / sum(p.self_ns) OVER () AS pct
    FROM per_name AS p JOIN StringIds AS names ON names.id = p.nameId
    ORDER BY p.self_ns DESC, name LIMIT coalesce(:top, 10)
),
ranked AS (
    SELECT nameId, ns, row_number() OVER (PARTITION BY nameId ORDER BY ns) AS position
    FROM ranges WHERE nameId IN (SELECT nameId FROM top_names)
),
spread AS (
    -- the middle duration, or the mean of the two middle ones; the standard deviation in two
    -- passes (deviations from the mean): exact where sum-of-squares formulas cancel
    SELECT t.nameId,
           avg(r.ns) FILTER (WHERE r.position IN ((t.count + 1) / 2, (t.count + 2) / 2)) AS median_ns,
           sqrt(sum((r.ns - t.avg_ns) * (r.ns - t.avg_ns)) / nullif(t.count - 1, 0)) AS stddev_ns
    FROM ranked AS r JOIN top_names AS t ON t.nameId = r.nameId
    GROUP BY t.nameId
)
SELECT t.name, t.count, t.total_ns, t.self_ns, t.avg_ns, s.median_ns, t.min_ns, t.max_ns, s.stddev_ns, t.pct
FROM top_names AS t JOIN spread AS s ON s.nameId = t.nameId
ORDER BY t.self_ns DESC, t.name;
