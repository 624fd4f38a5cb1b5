-- top_operators: the host ranges of one kind (:type, an ENUM_API_TYPE name: 'op' by default,
-- 'python_function' for python_hot_spots) per name, those with the most self time first (:top).
--   self_ns:   total_ns minus the time of the ranges of the same kind directly inside them (same
--              thread). Ranges of other kinds are transparent: an operator's record_function
--              scopes count as its own time, the operators under a Python call as the call's.
--   pct:       self_ns over the self time of all ranges of the kind (the time some range of the
--              kind ran, summed over threads): the rows of all names add up to 100.
--   median_ns: the middle duration, the mean of the two middle ones for an even count;
--   stddev_ns: sample standard deviation, NULL for a single call.
WITH ranges AS (
    SELECT rowid AS id, globalTid AS tid, name AS nameId, startNs AS s, endNs AS e
    FROM PYTORCH_API
    WHERE type = (SELECT id FROM ENUM_API_TYPE WHERE name = coalesce(:type, 'op'))
),
-- Starts (+1) and ends (-1) of each thread's ranges in the order of a call stack: by time; at one
-- instant ends first (a range that ends where the next begins does not hold it), then starts,
-- outermost first, then the ends of zero-length ranges; ends innermost first (the latest start).
-- Equal ranges nest in table order. An end carries its range's duration.
edges AS (
    SELECT tid, s AS time, 1 AS phase, -e AS outer_first, id AS tie, 1 AS delta, nameId, NULL AS ns FROM ranges
    UNION ALL
    SELECT tid, e, CASE WHEN e > s THEN 0 ELSE 2 END, -s, -id, -1, NULL, e - s FROM ranges
),
-- open: the ranges open after the edge; after a range's end, its parent (if any) is the last range
-- that started with `open` ranges open, i.e. at the same depth as the end leaves the thread.
sweep AS (
    SELECT tid, nameId, ns, sum(delta) OVER w AS open, row_number() OVER w AS position
    FROM edges
    WINDOW w AS (PARTITION BY tid ORDER BY time, phase, outer_first, tie ROWS UNBOUNDED PRECEDING)
),
-- Each end with its parent's name: the name of the latest start at that depth (position and name
-- packed in one integer so that one running max finds both).
ends AS (
    SELECT ns, max(position * 4294967296 + nameId) OVER (PARTITION BY tid, open ORDER BY position)
               % 4294967296 AS parent
    FROM sweep
),
children AS (
    SELECT parent AS nameId, sum(ns) AS ns FROM ends WHERE ns IS NOT NULL AND parent IS NOT NULL GROUP BY parent
),
ranked AS (
    SELECT nameId, e - s AS ns,
           row_number() OVER (PARTITION BY nameId ORDER BY e - s) AS k,
           count(*) OVER (PARTITION BY nameId) AS n,
           avg(e - s) OVER (PARTITION BY nameId) AS mean
    FROM ranges
),
statistics AS (
    SELECT nameId, count(*) AS count, sum(ns) AS total_ns, avg(ns) AS avg_ns,
           avg(ns) FILTER (WHERE k IN ((n + 1) / 2, (n + 2) / 2)) AS median_ns,
           min(ns) AS min_ns, max(ns) AS max_ns,
           sqrt(sum((ns - mean) * (ns - mean)) / nullif(count(*) - 1, 0)) AS stddev_ns
    FROM ranked
    GROUP BY nameId
)
SELECT names.value AS name, count, total_ns, total_ns - coalesce(children.ns, 0) AS self_ns, avg_ns, median_ns,
       min_ns, max_ns, stddev_ns,
       100.0 * (total_ns - coalesce(children.ns, 0)) / sum(total_ns - coalesce(children.ns, 0)) OVER () AS pct
FROM statistics JOIN StringIds AS names ON names.id = statistics.nameId
LEFT JOIN children USING (nameId)
ORDER BY self_ns DESC, name
LIMIT coalesce(:top, 10);
