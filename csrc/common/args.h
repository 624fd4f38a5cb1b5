#pragma once
// Typed arguments of trace events: what torch.profiler writes in an event's "args" (an
// operator's input shapes, an mstx range's domain, a GC pause's counts...). An event refers to
// an interned *argument set*, a list of (key, value) pairs. Keys come from one closed list,
// each with a fixed value type, so a consumer reads a value typed (flops_of reads the input
// shapes as ints) and only a writer turns it into text (the Chrome writer into JSON).
#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <variant>
#include <vector>

#include "common/string_table.h"

namespace perfprof {

// An argument set's index in its table: a type of its own, so it is never taken for a StringId.
enum class ArgSetId : uint32_t {};
inline constexpr ArgSetId kNoArgs{0};  // the empty set
inline constexpr size_t index_of(ArgSetId id) { return static_cast<size_t>(id); }

// What an argument's value is.
enum class ArgType : uint8_t {
  Int,      // int64_t
  Text,     // StringId
  Texts,    // std::vector<StringId>: one text per operator input
  IntTree,  // IntTree: one entry per operator input, ints in lists nested to any depth
};

// The keys. Their numbers are part of the capture format (docs/formats/capture.md): a key is
// only ever added, never renumbered or retyped.
enum class ArgKey : uint8_t {
  InputDims = 1,        // IntTree: each input's sizes; a tensor list's is a list of sizes; [] for others
  InputTypes = 2,       // Texts: each input's type as torch names it ("float", "Scalar", "TensorList", "")
  InputStrides = 3,     // IntTree: each input's strides, shaped like InputDims
  ConcreteInputs = 4,   // Texts: each non-tensor input's value as torch prints it ("" for tensors)
  Annotation = 5,       // Text: the text given to record_function(args=...)
  Domain = 6,           // Text: an mstx event's domain
  Stream = 7,           // Int: the CUDA stream an mstx range annotates
  GcGeneration = 8,     // Int: the generation a garbage collection collected
  GcCollected = 9,      // Int: objects it freed
  GcUncollectable = 10, // Int: objects it found uncollectable
  GcThread = 11,        // Int: the OS thread it ran on
  Cbid = 12,            // Int: a CUDA API call's CUPTI callback id
  Flops = 13,           // Int: an operator's floating-point operations (derived by analysis/)
  // A collective's parameters, as torch's record_param_comms and its NCCL kernels carry them in a
  // torch.profiler trace (read by import/).
  CollectiveName = 14,    // Text: "allreduce", "allgather", ...
  InMsgElements = 15,     // Int: elements sent
  OutMsgElements = 16,    // Int: elements received
  GroupSize = 17,         // Int: ranks in the process group
  DataType = 18,          // Text: the elements' type ("Float")
  ProcessGroupName = 19,  // Text
  ProcessGroupRanks = 20, // Text: the group's ranks as torch writes them ("[0, 1]")
  // Texts: an operator's keyword inputs (torch._C._profiler._RecordFunctionFast's, which
  // torch.compile's Triton launchers record: "grid", "stream", "scope"...), as pairs of texts:
  // the name, then the value, a KeywordValue character followed by the value's text ("i128",
  // "sgrid(4,)"). Written as members of their own, one per name, as torch.profiler writes them.
  KeywordInputs = 21,
};

// The type of a keyword input's value: the first character of its text (ArgKey::KeywordInputs).
enum class KeywordValue : char { Text = 's', Int = 'i', Float = 'f', Bool = 'b' };

struct ArgKeySpec {
  ArgKey key;
  ArgType type;
  std::string_view name;  // the member name torch.profiler's traces give it
};

// Every key with its type and name: the one list exporters and the capture reader consult.
inline constexpr ArgKeySpec kArgKeys[] = {
    {ArgKey::InputDims, ArgType::IntTree, "Input Dims"},
    {ArgKey::InputTypes, ArgType::Texts, "Input type"},
    {ArgKey::InputStrides, ArgType::IntTree, "Input Strides"},
    {ArgKey::ConcreteInputs, ArgType::Texts, "Concrete Inputs"},
    {ArgKey::Annotation, ArgType::Text, "args"},
    {ArgKey::Domain, ArgType::Text, "domain"},
    {ArgKey::Stream, ArgType::Int, "stream"},
    {ArgKey::GcGeneration, ArgType::Int, "generation"},
    {ArgKey::GcCollected, ArgType::Int, "collected"},
    {ArgKey::GcUncollectable, ArgType::Int, "uncollectable"},
    {ArgKey::GcThread, ArgType::Int, "Thread Id"},
    {ArgKey::Cbid, ArgType::Int, "cbid"},
    {ArgKey::Flops, ArgType::Int, "flops"},
    {ArgKey::CollectiveName, ArgType::Text, "Collective name"},
    {ArgKey::InMsgElements, ArgType::Int, "In msg nelems"},
    {ArgKey::OutMsgElements, ArgType::Int, "Out msg nelems"},
    {ArgKey::GroupSize, ArgType::Int, "Group size"},
    {ArgKey::DataType, ArgType::Text, "dtype"},
    {ArgKey::ProcessGroupName, ArgType::Text, "Process Group Name"},
    {ArgKey::ProcessGroupRanks, ArgType::Text, "Process Group Ranks"},
    {ArgKey::KeywordInputs, ArgType::Texts, "kwinputs"},
};

// The spec of `key`, or null for a number no key has (a capture from a newer perfprof).
const ArgKeySpec* spec_of(ArgKey key);

// One node of an IntTree: an int, or a list whose `value` items follow it.
struct IntTreeNode {
  int64_t value = 0;
  bool is_list = false;
  bool operator==(const IntTreeNode& other) const { return value == other.value && is_list == other.is_list; }
};

// Ints in lists nested to any depth, in preorder: [[8, 64], [[4, 8]], []] is
// list(3) list(2) 8 64 list(1) list(2) 4 8 list(0).
using IntTree = std::vector<IntTreeNode>;

using ArgValue = std::variant<int64_t, StringId, std::vector<StringId>, IntTree>;

// The type a value holds (the variant's alternatives are in ArgType's order).
inline ArgType type_of(const ArgValue& value) { return static_cast<ArgType>(value.index()); }

struct Arg {
  ArgKey key{};
  ArgValue value;
  bool operator==(const Arg& other) const { return key == other.key && value == other.value; }
};

struct ArgSet {
  std::vector<Arg> args;  // in the order writers write them

  bool operator==(const ArgSet& other) const { return args == other.args; }
  bool empty() const { return args.empty(); }
  // The value of `key` if the set has it with the key's type.
  template <typename T>
  const T* find(ArgKey key) const {
    for (const Arg& arg : args) {
      if (arg.key == key) return std::get_if<T>(&arg.value);
    }
    return nullptr;
  }
};

// The lists of ints an IntTree's root list holds (shapes: one per operator input); an item
// that is an int or a list nested deeper (a tensor list's shapes) gives an empty list.
std::vector<std::vector<int64_t>> int_lists_of(const IntTree& tree);

// Appends `tree` as JSON ("[[8,64],[]]"; an empty tree is "[]"). A list claiming more items
// than the tree holds ends with the tree, so the text is always valid.
void append_int_tree_json(std::string& out, const IntTree& tree);

// Appends `texts` (ids into `strings`) as a JSON list of strings: ["float","Scalar"].
void append_texts_json(std::string& out, const std::vector<StringId>& texts, const std::vector<std::string>& strings);

// Interned argument sets: events store a 32-bit id. Id 0 is the empty set. Thread-safe.
class ArgSetTable {
 public:
  ArgSetTable();
  // A table holding `sets` at their indexes (a capture's: ids it does not use are empty).
  explicit ArgSetTable(std::vector<ArgSet> sets);
  ArgSetTable(const ArgSetTable&) = delete;
  ArgSetTable& operator=(const ArgSetTable&) = delete;

  ArgSetId intern(const ArgSet& set);
  // Copy of the sets whose ids are marked in `used` (others empty), indexed by id.
  std::vector<ArgSet> snapshot(const std::vector<bool>& used) const;
  // Every set, indexed by id, moved out; the table is left empty.
  std::vector<ArgSet> take();

 private:
  struct Hash {
    size_t operator()(const ArgSet* set) const;
  };
  struct Equal {
    bool operator()(const ArgSet* a, const ArgSet* b) const { return *a == *b; }
  };

  mutable std::mutex mutex_;
  std::deque<ArgSet> sets_;  // deque: the map's keys stay valid as it grows
  std::unordered_map<const ArgSet*, ArgSetId, Hash, Equal> ids_;
};

// The process-wide table every recorded event's args refer to.
ArgSetTable& global_arg_sets();

}  // namespace perfprof
