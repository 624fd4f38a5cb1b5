-- operator_details: the PyTorch operators per name and input shapes with their host and device
-- times, as torch.profiler's key_averages(group_by_input_shape=True) gives them: the rows of
-- OPERATOR_DETAILS (operator_details.csv's, in ns). Operators torch merges into a caller of the
-- same name are counted in the caller, as torch counts them.
--   input_shapes                  torch's text, '[[8, 64], []]'; NULL without record_shapes
--   host_self_ns, host_total_ns   Σ (duration - its children's), Σ duration
--   device_self_ns                Σ durations of the device work the operator itself launched
--   device_total_ns               ... that it and the operators inside it launched
-- The :top rows (default 10; -1 every row) with the most host self time, then by name and shapes.
SELECT names.value AS name,
       shapes.value AS input_shapes,
       details.count,
       details.hostSelfDuration AS host_self_ns,
       details.hostTotalDuration AS host_total_ns,
       details.deviceSelfDuration AS device_self_ns,
       details.deviceTotalDuration AS device_total_ns
FROM OPERATOR_DETAILS AS details
JOIN StringIds AS names ON names.id = details.nameId
LEFT JOIN StringIds AS shapes ON shapes.id = details.inputShapesId
ORDER BY host_self_ns DESC, name, input_shapes
LIMIT coalesce(:top, 10);
