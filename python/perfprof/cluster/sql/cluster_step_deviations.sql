-- step_deviations (DuckDB): each rank's value on each dimension of each step, against the other
-- ranks' values in the same step (docs/cluster.md, "Slow-rank detection"). Comparing within a
-- step leaves out what every rank shares, such as a warm-up step that stalls on all of them.
-- Per step, dimension and rank:
--   others_median_ns = the median of the other ranks' values
--   others_mad_ns    = the median absolute deviation of the other ranks' values from that median
--   deviation_ns     = value - others_median_ns; on Communication others_median_ns - value: positive
--                      in the direction that makes a step slow (computing or idle longer, or
--                      communicating less while the others wait in their collectives)
--   scale_ns         = greatest(1.4826 * others_mad_ns, $floor * typical_step.step_ns): the
--                      others' spread as a normal standard deviation, but never under $floor of
--                      the typical step (ranks that agree exactly would make any difference
--                      stand out, and a near-empty step its smallest ones)
--   z                = deviation_ns / scale_ns (NULL when the typical step has no duration)
--   outlier          = z >= $z
-- A step only one rank ran has nothing to compare with and no rows.
CREATE OR REPLACE TABLE step_deviations AS
WITH compared_steps AS (
    SELECT step FROM rank_steps GROUP BY step HAVING count(*) > 1
),
peers AS (
    SELECT step, dimension, list({'rank': rank, 'value': value}) AS ranks FROM step_values GROUP BY step, dimension
),
others AS (
    SELECT v.step, v.dimension, v.rank, v.value,
           list_transform(list_filter(p.ranks, lambda peer: peer.rank <> v.rank), lambda peer: peer.value) AS peer_values
    FROM step_values v JOIN peers p USING (step, dimension) JOIN compared_steps USING (step)
),
centred AS (
    SELECT *, list_median(peer_values) AS others_median_ns FROM others
),
deviations AS (
    SELECT step, dimension, rank, value AS value_ns, others_median_ns,
           list_median(list_transform(peer_values, lambda x: abs(x - others_median_ns))) AS others_mad_ns,
           CASE dimension WHEN 'Communication' THEN others_median_ns - value ELSE value - others_median_ns END
               AS deviation_ns
    FROM centred
),
scaled AS (
    SELECT deviations.*, greatest(1.4826 * others_mad_ns, $floor * typical_step.step_ns) AS scale_ns
    FROM deviations, typical_step
)
SELECT step, dimension, rank, value_ns, others_median_ns, others_mad_ns, deviation_ns, scale_ns,
       CASE WHEN scale_ns > 0 THEN deviation_ns / scale_ns END AS z,
       coalesce(scale_ns > 0 AND deviation_ns / scale_ns >= $z, false) AS outlier
FROM scaled
ORDER BY TRY_CAST(step AS BIGINT) NULLS LAST, step, dimension, rank;
