// A minimal NVTX injection library, standing in for Nsight Systems in tests.
//
// NVTX3 loads the library named by NVTX_INJECTION64_PATH on the first NVTX call and calls its
// InitializeInjectionNvtx2. Through the export table we replace the NVTX_CB_MODULE_CORE2
// (domain API) entries we care about; every other NVTX function becomes a no-op. Each call is
// appended as one tab-separated line to the file named by PERFPROF_NVTX_STUB_LOG:
//   init
//   domain_create <name>
//   mark <domain> <message>
//   range_start <domain> <message> <returned id>
//   range_end <domain> <id>
#define NVTX_NO_IMPL  // types and declarations only: this is a tool, not an instrumented program
#include <nvtx3/nvToolsExt.h>

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <string>

namespace {

constexpr uint64_t kFirstRangeId = 0x5EED0001;  // distinctive, to check it is passed back

std::mutex g_mutex;
std::deque<std::string> g_domains;  // domain handles point at these names
uint64_t g_next_range_id = kFirstRangeId;

void log_line(const std::string& line) {
  const char* path = std::getenv("PERFPROF_NVTX_STUB_LOG");
  if (!path) return;
  if (std::FILE* file = std::fopen(path, "a")) {
    std::fprintf(file, "%s\n", line.c_str());
    std::fclose(file);
  }
}

std::string domain_name(nvtxDomainHandle_t domain) {
  return domain ? *reinterpret_cast<const std::string*>(domain) : std::string("<default>");
}

std::string message_of(const nvtxEventAttributes_t* attributes) {
  if (!attributes || attributes->messageType != NVTX_MESSAGE_TYPE_ASCII || !attributes->message.ascii) {
    return "<no ascii message>";
  }
  return attributes->message.ascii;
}

nvtxDomainHandle_t NVTX_API domain_create_a(const char* name) {
  std::lock_guard<std::mutex> lock(g_mutex);
  std::string& stored = g_domains.emplace_back(name ? name : "");
  log_line("domain_create\t" + stored);
  return reinterpret_cast<nvtxDomainHandle_t>(&stored);
}

void NVTX_API domain_mark_ex(nvtxDomainHandle_t domain, const nvtxEventAttributes_t* attributes) {
  std::lock_guard<std::mutex> lock(g_mutex);
  log_line("mark\t" + domain_name(domain) + "\t" + message_of(attributes));
}

nvtxRangeId_t NVTX_API domain_range_start_ex(nvtxDomainHandle_t domain,
                                             const nvtxEventAttributes_t* attributes) {
  std::lock_guard<std::mutex> lock(g_mutex);
  const uint64_t id = g_next_range_id++;
  log_line("range_start\t" + domain_name(domain) + "\t" + message_of(attributes) + "\t" +
           std::to_string(id));
  return id;
}

void NVTX_API domain_range_end(nvtxDomainHandle_t domain, nvtxRangeId_t id) {
  std::lock_guard<std::mutex> lock(g_mutex);
  log_line("range_end\t" + domain_name(domain) + "\t" + std::to_string(id));
}

template <typename Function>
bool install(NvtxFunctionTable table, unsigned int size, unsigned int id, Function function) {
  if (id > size || !table[id]) return false;
  *table[id] = reinterpret_cast<NvtxFunctionPointer>(function);
  return true;
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int InitializeInjectionNvtx2(
    NvtxGetExportTableFunc_t get_export_table) {
  const auto* callbacks =
      static_cast<const NvtxExportTableCallbacks*>(get_export_table(NVTX_ETID_CALLBACKS));
  if (!callbacks || callbacks->struct_size < sizeof(NvtxExportTableCallbacks)) return 0;

  NvtxFunctionTable table = nullptr;
  unsigned int size = 0;
  if (!callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &table, &size) || !table) return 0;
  const bool installed =
      install(table, size, NVTX_CBID_CORE2_DomainCreateA, &domain_create_a) &&
      install(table, size, NVTX_CBID_CORE2_DomainMarkEx, &domain_mark_ex) &&
      install(table, size, NVTX_CBID_CORE2_DomainRangeStartEx, &domain_range_start_ex) &&
      install(table, size, NVTX_CBID_CORE2_DomainRangeEnd, &domain_range_end);
  if (!installed) return 0;
  log_line("init");
  return 1;
}
