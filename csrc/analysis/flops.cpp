#include "analysis/flops.h"

#include <cstddef>
#include <cstdint>
#include <optional>

namespace perfprof {
namespace {

constexpr int kMaxDigits = 18;  // any 18-digit number fits int64_t

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }

// Reads the ints and int lists of concrete input values.
class Scanner {
 public:
  explicit Scanner(std::string_view text) : text_(text) {}

  void skip_space() {
    while (pos_ < text_.size() && is_space(text_[pos_])) ++pos_;
  }
  bool at(char c) {
    skip_space();
    return pos_ < text_.size() && text_[pos_] == c;
  }
  bool eat(char c) {
    if (!at(c)) return false;
    ++pos_;
    return true;
  }
  std::optional<int64_t> integer() {
    const bool negative = eat('-');
    int64_t value = 0;
    int digits = 0;
    for (; pos_ < text_.size() && is_digit(text_[pos_]); ++pos_) {
      if (++digits > kMaxDigits) return std::nullopt;
      value = value * 10 + (text_[pos_] - '0');
    }
    if (digits == 0) return std::nullopt;
    return negative ? -value : value;
  }
  bool done() {
    skip_space();
    return pos_ == text_.size();
  }

 private:
  std::string_view text_;
  size_t pos_ = 0;
};

// A list of ints: "[2, 2]".
bool parse_ints(Scanner& s, std::vector<int64_t>& values) {
  if (!s.eat('[')) return false;
  if (s.eat(']')) return true;
  do {
    const std::optional<int64_t> value = s.integer();
    if (!value) return false;
    values.push_back(*value);
  } while (s.eat(','));
  return s.eat(']');
}

// A concrete int ("1"), alone in its text.
std::optional<int64_t> concrete_int(std::string_view text) {
  Scanner s(text);
  const std::optional<int64_t> value = s.integer();
  if (!value || !s.done()) return std::nullopt;
  return value;
}

// A concrete int list ("[2, 2]") of `size` ints, alone in its text.
std::optional<std::vector<int64_t>> concrete_ints(std::string_view text, size_t size) {
  Scanner s(text);
  std::vector<int64_t> values;
  if (!parse_ints(s, values) || !s.done() || values.size() != size) return std::nullopt;
  return values;
}

// A product of sizes that remembers a negative factor or an overflow, and is then 0.
class Product {
 public:
  Product& times(int64_t factor) {
    if (factor < 0 || __builtin_mul_overflow(value_, static_cast<uint64_t>(factor), &value_)) {
      valid_ = false;
    }
    return *this;
  }
  // Factors shape[from, to).
  Product& times(const std::vector<int64_t>& shape, size_t from, size_t to) {
    for (size_t i = from; i < to && i < shape.size(); ++i) times(shape[i]);
    return *this;
  }
  uint64_t value() const { return valid_ ? value_ : 0; }

 private:
  uint64_t value_ = 1;
  bool valid_ = true;
};

uint64_t gemm(int64_t batch, int64_t m, int64_t k, int64_t n) {
  return Product().times(2).times(batch).times(m).times(k).times(n).value();
}

uint64_t mm(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  if (a.size() != 2 || b.size() != 2 || a[1] != b[0]) return 0;
  return gemm(1, a[0], a[1], b[1]);
}

uint64_t bmm(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  if (a.size() != 3 || b.size() != 3 || a[0] != b[0] || a[2] != b[1]) return 0;
  return gemm(a[0], a[1], a[2], b[2]);
}

// torch.profiler counts one operation per element of the first input, whichever input is
// broadcast: [2, 3, 1] * [2, 3, 4] counts 6, [2, 3, 4] * [2, 3, 1] counts 24.
uint64_t first_input_elements(const InputDims& dims) {
  if (dims.empty()) return 0;
  return Product().times(dims[0], 0, dims[0].size()).value();
}

const std::vector<int64_t>& input(const InputDims& dims, size_t i) {
  static const std::vector<int64_t> kNone;
  return i < dims.size() ? dims[i] : kNone;
}

// One output size of a convolution, or nothing when the arguments are out of range.
std::optional<int64_t> convolution_output_size(int64_t in, int64_t kernel, int64_t stride, int64_t pad,
                                               int64_t dilation) {
  if (in < 0 || kernel < 1 || stride < 1 || pad < 0 || dilation < 1) return std::nullopt;
  int64_t padded = 0, span = 0;
  if (__builtin_mul_overflow(pad, 2, &padded) || __builtin_add_overflow(in, padded, &padded) ||
      __builtin_mul_overflow(dilation, kernel - 1, &span)) {
    return std::nullopt;
  }
  const int64_t reach = padded - span - 1;
  if (reach < 0) return std::nullopt;  // the window is larger than the padded input
  return reach / stride + 1;
}

// aten::conv2d(input, weight, bias, stride, padding, dilation, groups): its two spatial
// dimensions.
constexpr size_t kConv2dSpatialDims = 2;

// Output spatial sizes of aten::conv2d with batched `in` and `weight` of rank 4. torch.profiler
// reads stride, padding and dilation only as int lists of two (the string padding "same" or
// "valid" of the other overload counts 0 there), and so does this.
std::optional<std::vector<int64_t>> conv2d_output(const std::vector<int64_t>& in, const std::vector<int64_t>& weight,
                                                  const ConcreteInputs& concrete) {
  const auto stride = concrete_ints(concrete[3], kConv2dSpatialDims);
  const auto pad = concrete_ints(concrete[4], kConv2dSpatialDims);
  const auto dilation = concrete_ints(concrete[5], kConv2dSpatialDims);
  if (!stride || !pad || !dilation) return std::nullopt;
  std::vector<int64_t> out;
  for (size_t i = 0; i < kConv2dSpatialDims; ++i) {
    const auto size = convolution_output_size(in[i + 2], weight[i + 2], (*stride)[i], (*pad)[i], (*dilation)[i]);
    if (!size) return std::nullopt;
    out.push_back(*size);
  }
  return out;
}

uint64_t conv2d(const InputDims& dims, const ConcreteInputs& concrete) {
  const auto& in = input(dims, 0);
  const auto& weight = input(dims, 1);
  // Unbatched inputs and int lists not spelled out per dimension are valid in torch but left
  // uncounted by torch.profiler; so they are here.
  constexpr size_t kRank = kConv2dSpatialDims + 2;
  if (in.size() != kRank || weight.size() != kRank || concrete.size() < 7) return 0;
  const std::optional<int64_t> groups = concrete_int(concrete[6]);
  int64_t channels = 0;
  if (!groups || *groups < 1 || __builtin_mul_overflow(weight[1], *groups, &channels) || channels != in[1]) {
    return 0;
  }
  const auto out = conv2d_output(in, weight, concrete);
  if (!out) return 0;
  std::vector<int64_t> output{in[0], weight[0]};
  output.insert(output.end(), out->begin(), out->end());
  return convolution_flops(weight, output);
}

}  // namespace

OperatorInputs operator_inputs(const ArgSet& args, const std::vector<std::string>& strings) {
  OperatorInputs inputs;
  if (const IntTree* dims = args.find<IntTree>(ArgKey::InputDims)) inputs.dims = int_lists_of(*dims);
  if (const auto* concrete = args.find<std::vector<StringId>>(ArgKey::ConcreteInputs)) {
    for (const StringId id : *concrete) inputs.concrete.emplace_back(id < strings.size() ? strings[id] : std::string_view());
  }
  return inputs;
}

uint64_t flops_of(std::string_view op, const OperatorInputs& inputs) {
  // The ops aten::conv2d runs as (aten::convolution, aten::_convolution, backend ops) count 0,
  // so a convolution counts once.
  if (op == "aten::conv2d") return conv2d(inputs.dims, inputs.concrete);
  return flops_of(op, inputs.dims);
}

uint64_t flops_of(std::string_view op, const InputDims& dims) {
  if (op == "aten::mm") return mm(input(dims, 0), input(dims, 1));
  if (op == "aten::addmm") return mm(input(dims, 1), input(dims, 2));
  if (op == "aten::bmm") return bmm(input(dims, 0), input(dims, 1));
  if (op == "aten::baddbmm") return bmm(input(dims, 1), input(dims, 2));
  // Composite ops (aten::matmul, aten::linear, attention) are not counted: what they run as
  // (mm, addmm, bmm, ...) is, where torch.profiler counts it.
  if (op == "aten::mul" || op == "aten::add") return first_input_elements(dims);
  return 0;
}

uint64_t convolution_flops(const std::vector<int64_t>& weight, const std::vector<int64_t>& output) {
  if (weight.size() < 3 || weight.size() != output.size() || weight[0] != output[1]) return 0;
  return Product()
      .times(2)
      .times(output, 0, output.size())  // N, C_out and the output positions
      .times(weight, 1, weight.size())  // C_in / groups and the kernel
      .value();
}

}  // namespace perfprof
