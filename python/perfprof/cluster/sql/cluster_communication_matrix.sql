-- cluster_communication_matrix.json's rows (DuckDB): point-to-point traffic per src -> dst pair,
-- as each side saw it: a send on rank src to peer dst, a receive on rank dst from peer src (peers
-- are ranks of the operation's process group: the global ranks in the default group). The
-- pairs of a collective are not recorded (its backend exchanges them inside one range).
WITH directed AS (
    SELECT CASE WHEN name LIKE '%:send' THEN rank ELSE peer END AS src,
           CASE WHEN name LIKE '%:send' THEN peer ELSE rank END AS dst,
           CASE WHEN name LIKE '%:send' THEN 'send' ELSE 'recv' END AS op,
           end_ns - start_ns AS time_ns, bytes
    FROM communication
    WHERE peer IS NOT NULL AND regexp_matches(name, '(:send|:recv)$')
)
SELECT src, dst, op, count(*) AS count, sum(bytes) AS bytes, sum(time_ns) AS time_ns,
       CASE WHEN sum(time_ns) > 0 THEN round(sum(bytes) / sum(time_ns), 6) END AS bandwidth_gb_s
FROM directed
GROUP BY src, dst, op
ORDER BY src, dst, op;
