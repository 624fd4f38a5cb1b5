#pragma once
// Turns CUPTI activity records into perfprof's GPU rows.
//
// The fields read are at the same offsets in every record version CUPTI 11.x-13.x writes
// (Kernel5-13, Memcpy4-7, Memset3-5, Device4-6, Memory2-4, Synchronization1-2, GraphTrace1-2;
// API and ExternalCorrelation have one version: checked at compile time in
// activity_decoder.cpp), so one decoder serves every libcupti perfprof may load. A libcupti
// whose records of any kind read are shorter than the fields read (cuptiActivityGetStructSize,
// CUPTI 13+) is refused at start with the reason, rather than misread.
#include <cupti.h>

#include <cstdint>
#include <string>
#include <unordered_map>

#include "record/gpu_records.h"

namespace perfprof {

class ActivityDecoder {
 public:
  // `names_of_calls` resolves API callback ids to names (cuptiGetCallbackName), may be null.
  using CallbackName = CUptiResult (*)(CUpti_CallbackDomain, uint32_t, const char**);
  explicit ActivityDecoder(CallbackName names_of_calls) : callback_name_(names_of_calls) {}

  // Appends what `record` describes to `out`. Returns false for kinds perfprof does not use.
  bool decode(const CUpti_Activity& record, GpuCollected& out);

  // Why records of the loaded libcupti cannot be decoded, or "" when they can.
  using CuptiStructSize = CUptiResult (*)(CUpti_ActivityKind, uint32_t, size_t*);
  static std::string layout_problem(CuptiStructSize struct_size);

 private:
  StringId intern_name(const char* name);
  StringId api_name(bool driver, uint32_t cbid);

  CallbackName callback_name_;
  std::unordered_map<const char*, StringId> names_;  // CUPTI shares one name pointer per kernel
  std::unordered_map<uint64_t, StringId> api_names_;
};

// A mangled C++ name demangled ("_Z6kernelPf" -> "kernel(float*)"), or the name as it is.
std::string demangled(const char* name);

// "Memcpy HtoD", "Memcpy DtoD", ... by CUpti_ActivityMemcpyKind.
const char* memcpy_kind_name(uint8_t copy_kind);

}  // namespace perfprof
