-- A rank's kernel totals: each GPU kernel (and copy) name with its type, count and total time.
SELECT names.value AS name, k.type, count(*) AS count, sum(k.duration) AS totalNs
FROM KERNEL_DETAILS k
JOIN StringIds names ON names.id = k.nameId
GROUP BY k.nameId, k.type;
