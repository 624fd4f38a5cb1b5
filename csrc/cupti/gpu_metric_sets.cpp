#include "cupti/gpu_metric_sets.h"

#include <algorithm>
#include <limits>

namespace perfprof {
namespace {

// Metric names are Nsight Compute's (PerfWorks'), checked against public ncu usage; whether a
// chip has them is asked of CUPTI at run time (supported_metric_groups), never assumed.
// Percentages "of peak sustained active" are over the cycles the unit was busy, "elapsed" over
// the whole kernel.

GpuMetricColumn one(const char* name, const char* metric, const char* description) {
  return {name, description, {{metric, 1.0}}};
}

// FLOPs of one precision from per-thread instruction counts: add + mul + 2 x fma.
GpuMetricColumn flops(const char* name, const char* add, const char* mul, const char* fma,
                      const char* description) {
  return {name, description, {{add, 1.0}, {mul, 1.0}, {fma, 2.0}}};
}

std::vector<GpuMetricColumn> pipe_utilization() {
  return {
      one("SM Throughput (%)", "sm__throughput.avg.pct_of_peak_sustained_elapsed",
          "throughput of the busiest SM unit, percent of its peak over the kernel's duration"),
      one("Tensor Pipe (%)", "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active",
          "cycles the tensor cores' HMMA pipe was busy, percent of peak over the SMs' active cycles"),
      one("FMA Pipe (%)", "sm__inst_executed_pipe_fma.avg.pct_of_peak_sustained_active",
          "instructions issued to the FMA pipe (FP32 multiply-add), percent of peak issue rate"),
      one("ALU Pipe (%)", "sm__inst_executed_pipe_alu.avg.pct_of_peak_sustained_active",
          "instructions issued to the ALU pipe (integer, logic, comparisons), percent of peak"),
      one("LSU Pipe (%)", "sm__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_active",
          "instructions issued to the load/store pipe (memory accesses), percent of peak"),
  };
}

std::vector<GpuMetricColumn> arithmetic_utilization() {
  constexpr const char* kWhat =
      "floating-point operations of non-tensor instructions, per thread, predicated-off threads "
      "excluded: add + mul + 2 x fma (tensor-core work is not counted)";
  return {
      flops("FP64 FLOPs", "smsp__sass_thread_inst_executed_op_dadd_pred_on.sum",
            "smsp__sass_thread_inst_executed_op_dmul_pred_on.sum",
            "smsp__sass_thread_inst_executed_op_dfma_pred_on.sum", kWhat),
      flops("FP32 FLOPs", "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum",
            "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum",
            "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum", kWhat),
      flops("FP16 FLOPs", "smsp__sass_thread_inst_executed_op_hadd_pred_on.sum",
            "smsp__sass_thread_inst_executed_op_hmul_pred_on.sum",
            "smsp__sass_thread_inst_executed_op_hfma_pred_on.sum", kWhat),
  };
}

std::vector<GpuMetricColumn> memory() {
  return {
      one("DRAM Read (bytes)", "dram__bytes_read.sum", "bytes read from device memory"),
      one("DRAM Write (bytes)", "dram__bytes_write.sum", "bytes written to device memory"),
      one("DRAM Throughput (%)", "dram__throughput.avg.pct_of_peak_sustained_elapsed",
          "device memory throughput, percent of peak over the kernel's duration"),
  };
}

std::vector<GpuMetricColumn> l2_cache() {
  return {
      l2_hit_rate_column(),
      one("L2 Traffic (bytes)", "lts__t_bytes.sum", "bytes requested from the L2 cache"),
      one("L2 Throughput (%)", "lts__throughput.avg.pct_of_peak_sustained_elapsed",
          "L2 cache throughput, percent of peak over the kernel's duration"),
  };
}

std::vector<GpuMetricColumn> memory_access() {
  return {
      one("Global Load (bytes)", "l1tex__t_bytes_pipe_lsu_mem_global_op_ld.sum",
          "bytes global-memory loads requested from L1"),
      one("Global Store (bytes)", "l1tex__t_bytes_pipe_lsu_mem_global_op_st.sum",
          "bytes global-memory stores requested from L1"),
      one("Shared Load (wavefronts)", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
          "shared-memory load wavefronts (one per conflict-free access; bank conflicts add more)"),
      one("Shared Store (wavefronts)", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
          "shared-memory store wavefronts (one per conflict-free access; bank conflicts add more)"),
  };
}

std::vector<GpuMetricColumn> occupancy() {
  return {
      one("Achieved Occupancy (%)", "sm__warps_active.avg.pct_of_peak_sustained_active",
          "warps resident per active cycle, percent of the most an SM can hold"),
      one("Active Warps per SM", "sm__warps_active.avg.per_cycle_active",
          "warps resident on an SM per active cycle"),
  };
}

struct GroupEntry {
  GpuMetricGroup group;
  const char* name;
  std::vector<GpuMetricColumn> columns;
};

const std::vector<GroupEntry>& groups() {
  static const std::vector<GroupEntry> table = {
      {GpuMetricGroup::None, "GpuMetricsNone", {}},
      {GpuMetricGroup::PipeUtilization, "PipeUtilization", pipe_utilization()},
      {GpuMetricGroup::ArithmeticUtilization, "ArithmeticUtilization", arithmetic_utilization()},
      {GpuMetricGroup::Memory, "Memory", memory()},
      {GpuMetricGroup::L2Cache, "L2Cache", l2_cache()},
      {GpuMetricGroup::MemoryAccess, "MemoryAccess", memory_access()},
      {GpuMetricGroup::Occupancy, "Occupancy", occupancy()},
  };
  return table;
}

const GroupEntry& entry(GpuMetricGroup group) {
  const auto& table = groups();
  const auto found = std::find_if(table.begin(), table.end(),
                                  [&](const GroupEntry& e) { return e.group == group; });
  return found == table.end() ? table.front() : *found;
}

}  // namespace

const char* gpu_metric_group_name(GpuMetricGroup group) { return entry(group).name; }

std::optional<GpuMetricGroup> gpu_metric_group_from_name(std::string_view name) {
  for (const GroupEntry& e : groups()) {
    if (name == e.name) return e.group;
  }
  return std::nullopt;
}

const std::vector<GpuMetricColumn>& gpu_metric_columns(GpuMetricGroup group) {
  return entry(group).columns;
}

const GpuMetricColumn& l2_hit_rate_column() {
  static const GpuMetricColumn column =
      one("L2 Hit Rate (%)", "lts__t_sector_hit_rate.pct",
          "share of the sectors requested from the L2 cache that were found there");
  return column;
}

std::string_view base_metric(std::string_view metric) { return metric.substr(0, metric.find('.')); }

GpuMetricPlan::GpuMetricPlan(GpuMetricGroup group, bool l2_cache) {
  for (const GpuMetricColumn& column : gpu_metric_columns(group)) add(column);
  if (l2_cache && group != GpuMetricGroup::L2Cache) add(l2_hit_rate_column());
}

void GpuMetricPlan::add(const GpuMetricColumn& column) {
  std::vector<std::pair<size_t, double>> terms;
  for (const GpuMetricTerm& term : column.terms) {
    const auto known = std::find(metrics_.begin(), metrics_.end(), term.metric);
    const size_t index = static_cast<size_t>(known - metrics_.begin());
    if (known == metrics_.end()) metrics_.emplace_back(term.metric);
    terms.emplace_back(index, term.weight);
  }
  columns_.push_back(&column);
  terms_.push_back(std::move(terms));
}

std::vector<double> GpuMetricPlan::column_values(const std::vector<double>& metric_values) const {
  std::vector<double> values;
  values.reserve(terms_.size());
  for (const auto& terms : terms_) {
    double sum = 0;
    for (const auto& [index, weight] : terms) {
      sum += index < metric_values.size() ? weight * metric_values[index]
                                          : std::numeric_limits<double>::quiet_NaN();
    }
    values.push_back(sum);
  }
  return values;
}

}  // namespace perfprof
