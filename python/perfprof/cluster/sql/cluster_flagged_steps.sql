-- flagged_steps (DuckDB): the steps whose ranks differ on a dimension of the step breakdown by
-- more than $threshold of its mean: (max - min) / mean > $threshold, over two ranks or more.
-- The suspect is the rank that makes the step slow: the one computing longest, or idle (Free)
-- longest, or, for Communication, the one that communicates least (the others wait for it).
CREATE OR REPLACE TABLE flagged_steps AS
WITH spread AS (
    SELECT step, dimension, count(*) AS ranks, max(value) AS max_ns, min(value) AS min_ns, avg(value) AS mean_ns,
           first(rank ORDER BY value DESC, rank) AS max_rank, first(rank ORDER BY value, rank) AS min_rank,
           median(value) AS median_ns
    FROM step_values
    GROUP BY step, dimension
)
SELECT step, dimension, ranks, max_ns, min_ns, mean_ns, median_ns, max_rank, min_rank,
       (max_ns - min_ns) / mean_ns AS spread,
       CASE dimension WHEN 'Communication' THEN min_rank ELSE max_rank END AS suspect
FROM spread
WHERE ranks > 1 AND mean_ns > 0 AND (max_ns - min_ns) / mean_ns > $threshold
ORDER BY TRY_CAST(step AS BIGINT) NULLS LAST, step, dimension;
