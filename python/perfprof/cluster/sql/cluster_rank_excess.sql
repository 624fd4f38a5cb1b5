-- How far a rank's dimension is from the other ranks' (DuckDB): over the steps it ran with
-- others, the mean of (its value - the median of the other ranks' values), and that median's mean.
SELECT avg(mine.value - others.median_ns) AS excess_ns, avg(others.median_ns) AS others_ns
FROM step_values mine
JOIN LATERAL (
    SELECT median(o.value) AS median_ns FROM step_values o
    WHERE o.step = mine.step AND o.dimension = mine.dimension AND o.rank <> mine.rank
) others ON others.median_ns IS NOT NULL
WHERE mine.rank = $rank AND mine.dimension = $dimension;
