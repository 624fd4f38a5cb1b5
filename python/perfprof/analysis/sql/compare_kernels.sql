-- compare_kernels: every GPU activity name of KERNEL_DETAILS (kernels, copies, sets) with its
-- count and total device time, for perfprof compare; top_kernels' per-name totals without its
-- per-instance statistics, for all names (a name of two types counted once).
SELECT names.value AS name, count(*) AS count, sum(k.duration) AS total_ns
FROM KERNEL_DETAILS AS k JOIN StringIds AS names ON names.id = k.nameId
GROUP BY names.value
ORDER BY total_ns DESC, name;
