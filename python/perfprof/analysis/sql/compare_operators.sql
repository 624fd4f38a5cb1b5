-- compare_operators: every operator name (PYTORCH_API ranges of type 'op') with its count, total
-- time and self time, for perfprof compare; top_operators' per-name totals without its per-call
-- statistics, for all names.
--   self_ns: total_ns minus the time of the operators directly inside them (same thread:
--            PYTORCH_API.typeParentId, the innermost enclosing operator), as in top_operators.
WITH ranges AS (
    SELECT name AS nameId, endNs - startNs AS ns, typeParentId FROM PYTORCH_API
    WHERE type = (SELECT id FROM ENUM_API_TYPE WHERE name = 'op')
),
-- The time of the operators directly inside another, by that operator's name.
children AS (
    SELECT parent.name AS nameId, sum(child.ns) AS ns
    FROM ranges AS child JOIN PYTORCH_API AS parent ON parent.id = child.typeParentId
    GROUP BY parent.name
)
SELECT names.value AS name, count(*) AS count, sum(r.ns) AS total_ns, sum(r.ns) - coalesce(c.ns, 0) AS self_ns
FROM ranges AS r JOIN StringIds AS names ON names.id = r.nameId
LEFT JOIN children AS c ON c.nameId = r.nameId
GROUP BY r.nameId
ORDER BY total_ns DESC, name;
