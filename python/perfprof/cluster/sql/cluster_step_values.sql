-- step_values (DuckDB): the dimensions of the step breakdown slow-rank detection compares, one
-- row per step, rank and dimension (Computing, Communication, Free).
CREATE OR REPLACE VIEW step_values AS
SELECT step, rank, dimension, value
FROM rank_steps
UNPIVOT (value FOR dimension IN (computing_ns AS 'Computing', communication_ns AS 'Communication', free_ns AS 'Free'));

-- typical_step (DuckDB): the job's typical step, the yardstick of slow-rank detection's floors:
-- the median over steps of each step's median duration over its ranks (a warm-up step that
-- stalls, or a short last step, does not move it).
CREATE OR REPLACE VIEW typical_step AS
SELECT median(step_ns) AS step_ns
FROM (SELECT median(duration_ns) AS step_ns FROM rank_steps GROUP BY step);
