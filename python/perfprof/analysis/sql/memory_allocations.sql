-- memory_allocations: each tensor allocation of a profile_memory run (OP_MEMORY, operator_memory.csv's
-- rows) made in [:start_ns, :end_ns) (ns since the Unix epoch; NULL: from the first, to the last),
-- in allocation order.
--   operator, module      the innermost operator and nn.Module around the allocation (NULL: none)
--   category              its memory category (docs/memory.md)
--   size_bytes            the allocation's size
--   allocation_time_ns, release_time_ns   when it was made and freed (NULL: not freed in the window)
--   lifetime_ns           release - allocation (NULL: not freed in the window)
SELECT devices.value AS deviceType,
       names.value AS operator,
       modules.value AS module,
       categories.value AS category,
       allocation.size AS size_bytes,
       allocation.allocationTime AS allocation_time_ns,
       allocation.releaseTime AS release_time_ns,
       allocation.duration AS lifetime_ns
FROM OP_MEMORY AS allocation
LEFT JOIN StringIds AS names ON names.id = allocation.name
LEFT JOIN StringIds AS modules ON modules.id = allocation.module
LEFT JOIN StringIds AS categories ON categories.id = allocation.category
LEFT JOIN StringIds AS devices ON devices.id = allocation.deviceType
WHERE allocation.allocationTime >= coalesce(:start_ns, allocation.allocationTime)
  AND (:end_ns IS NULL OR allocation.allocationTime < :end_ns)
ORDER BY allocation.allocationTime, allocation.rowid;
