#pragma once
// A kernel's short name as Nsight Systems shows it (CUPTI_ACTIVITY_KIND_KERNEL.shortName): its
// demangled name without return type, scope, template arguments or parameters.
#include <string_view>

namespace perfprof::db {

// "void at::native::vectorized_elementwise_kernel<4, Op>(int, Op)" -> "vectorized_elementwise_kernel";
// a name that is not a C++ signature ("ampere_sgemm_128x64_nn") is its own short name.
std::string_view short_kernel_name(std::string_view demangled);

}  // namespace perfprof::db
