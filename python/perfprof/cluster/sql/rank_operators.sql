-- A rank's operator totals: each PyTorch operator name with its count and total (inclusive) time.
SELECT names.value AS name, count(*) AS count, sum(p.endNs - p.startNs) AS totalNs
FROM PYTORCH_API p
JOIN ENUM_API_TYPE t ON t.id = p.type AND t.name = 'op'
JOIN StringIds names ON names.id = p.name
GROUP BY p.name;
