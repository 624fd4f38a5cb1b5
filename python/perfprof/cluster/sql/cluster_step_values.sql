-- step_values (DuckDB): the dimensions of the step breakdown slow-rank detection compares, one
-- row per step, rank and dimension (Computing, Communication, Free).
CREATE OR REPLACE VIEW step_values AS
SELECT step, rank, dimension, value
FROM rank_steps
UNPIVOT (value FOR dimension IN (computing_ns AS 'Computing', communication_ns AS 'Communication', free_ns AS 'Free'));
