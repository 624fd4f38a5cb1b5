-- The step evidence per rank and dimension (DuckDB, over step_deviations): over the steps the
-- rank ran with others, in how many it stands out (outlier), the median of its deviation and of
-- the other ranks' median, and its median z. Slow-rank detection names a rank on a dimension
-- where it stands out in more than half of its steps, so that one stalled step is no evidence.
SELECT rank, dimension, count(*) AS steps, count(*) FILTER (WHERE outlier) AS outlier_steps,
       median(deviation_ns) AS excess_ns, median(others_median_ns) AS others_ns, median(z) AS z
FROM step_deviations
GROUP BY rank, dimension
HAVING 2 * count(*) FILTER (WHERE outlier) > count(*)
ORDER BY rank, dimension;
