-- cluster_step_trace_time.csv (msprof-analyze's columns, microseconds): per step, one row per
-- rank (Type "rank", Index its number), then the step's max, min and mean over the ranks.
WITH breakdown AS (
    SELECT step, rank, computing_ns, communication_not_overlapped_ns, overlapped_ns, communication_ns, free_ns,
           stage_ns, bubble_ns, communication_not_overlapped_exclude_receive_ns, preparing_ns
    FROM rank_steps
),
rows AS (
    SELECT 'rank' AS type, 0 AS type_order, rank AS index, * EXCLUDE (rank) FROM breakdown
    UNION ALL BY NAME
    SELECT 'max' AS type, 1 AS type_order, NULL AS index, step, max(COLUMNS(* EXCLUDE (step, rank))) FROM breakdown GROUP BY step
    UNION ALL BY NAME
    SELECT 'min' AS type, 2 AS type_order, NULL AS index, step, min(COLUMNS(* EXCLUDE (step, rank))) FROM breakdown GROUP BY step
    UNION ALL BY NAME
    SELECT 'mean' AS type, 3 AS type_order, NULL AS index, step, avg(COLUMNS(* EXCLUDE (step, rank))) FROM breakdown GROUP BY step
)
SELECT step AS "Step", type AS "Type", index AS "Index",
       round(computing_ns / 1e3, 3) AS "Computing",
       round(communication_not_overlapped_ns / 1e3, 3) AS "Communication(Not Overlapped)",
       round(overlapped_ns / 1e3, 3) AS "Overlapped",
       round(communication_ns / 1e3, 3) AS "Communication",
       round(free_ns / 1e3, 3) AS "Free",
       round(stage_ns / 1e3, 3) AS "Stage",
       round(bubble_ns / 1e3, 3) AS "Bubble",
       round(communication_not_overlapped_exclude_receive_ns / 1e3, 3) AS "Communication(Not Overlapped and Exclude Receive)",
       round(preparing_ns / 1e3, 3) AS "Preparing"
FROM rows
ORDER BY TRY_CAST(step AS BIGINT) NULLS LAST, step, type_order, index;
