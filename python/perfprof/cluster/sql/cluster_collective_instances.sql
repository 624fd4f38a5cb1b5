-- collective_instances (DuckDB): each rank's collectives matched across ranks. Every rank of a
-- job runs its collectives in the same order, so the k-th operation of a name on each rank is
-- instance k of it. Point-to-point operations (send, recv) are left out: they pair two ranks,
-- not all (cluster_communication_matrix.json has them). Per rank and instance:
--   elapse_ns  = its end - its start on that rank
--   transit_ns = the instance's smallest elapse: the exchange once every rank has arrived (the
--                last rank to arrive waits for no one)
--   wait_ns    = elapse_ns - transit_ns: the time it waited for the others
--   late       = the rank with the smallest elapse (lowest rank on a tie): the last to arrive
-- Durations compare across machines whose clocks differ, as start times would not.
CREATE OR REPLACE TABLE collective_instances AS
WITH numbered AS (
    SELECT rank, name, source, start_ns, end_ns, end_ns - start_ns AS elapse_ns, bytes, count, data_type, step,
           row_number() OVER (PARTITION BY rank, name ORDER BY start_ns, end_ns) AS instance
    FROM communication
    WHERE NOT regexp_matches(name, '(:send|:recv)$|SendRecv')
),
ordered AS (
    SELECT *, count(*) OVER instance_ranks AS ranks, min(elapse_ns) OVER instance_ranks AS transit_ns,
           row_number() OVER (PARTITION BY name, instance ORDER BY elapse_ns, rank) AS arrival_from_last
    FROM numbered
    WINDOW instance_ranks AS (PARTITION BY name, instance)
)
SELECT name, instance, rank, source, step, start_ns, end_ns, elapse_ns, transit_ns, elapse_ns - transit_ns AS wait_ns,
       bytes, count, data_type, ranks, ranks > 1 AND arrival_from_last = 1 AS late
FROM ordered;
