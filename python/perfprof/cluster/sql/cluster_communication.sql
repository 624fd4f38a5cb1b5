-- cluster_communication.json's rows (DuckDB): per collective and rank, over its instances
-- (collective_instances), the time it took, the exchange itself, the waiting, the bytes, and how
-- often the rank arrived last; bandwidth_gb_s = bytes / transit (bytes per ns = GB/s).
SELECT name, rank, count(*) AS count, sum(elapse_ns) AS elapse_ns, sum(transit_ns) AS transit_ns,
       sum(wait_ns) AS wait_ns, sum(bytes) AS bytes, any_value(data_type) AS data_type,
       count(*) FILTER (WHERE late) AS late_arrivals,
       CASE WHEN sum(transit_ns) > 0 THEN round(sum(bytes) / sum(transit_ns), 6) END AS bandwidth_gb_s
FROM collective_instances
GROUP BY name, rank
ORDER BY name, rank;
