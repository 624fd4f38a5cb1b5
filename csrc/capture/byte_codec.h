#pragma once
// Little-endian encoding of a capture's payloads. A struct is encoded by its `fields(io, value)`
// function (capture/capture_fields.h): one list of members that both directions run, the writer
// reading them and the reader filling them, so the two cannot drift apart.
//   numbers, enums, bool  their bytes (bool as one byte)
//   std::string           u32 length, then the bytes
//   std::vector<T>        u64 count, then each element
//   T[N]                  each element
//   a struct              its fields(), in order
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <fmt/format.h>

#include "capture/capture_error.h"
#include "common/args.h"

namespace perfprof {

class ByteWriter {
 public:
  explicit ByteWriter(std::string& out) : out_(out) {}

  template <typename T>
  void operator()(const T& value) {
    if constexpr (std::is_arithmetic_v<T> || std::is_enum_v<T>) {
      out_.append(reinterpret_cast<const char*>(&value), sizeof(T));
    } else {
      fields(*this, const_cast<T&>(value));  // the field lists are shared with the reader; nothing is written to
    }
  }
  void operator()(const std::string& text) {
    (*this)(static_cast<uint32_t>(text.size()));
    out_.append(text);
  }
  template <typename T>
  void operator()(const std::vector<T>& items) {
    (*this)(static_cast<uint64_t>(items.size()));
    for (const T& item : items) (*this)(item);
  }
  template <typename T, size_t N>
  void operator()(const T (&items)[N]) {
    for (const T& item : items) (*this)(item);
  }

 private:
  std::string& out_;
};

// The fewest bytes a T takes encoded: a list of `count` of them needs count times this many bytes
// left, which the reader checks before it allocates the list.
class EncodedSizeFloor {
 public:
  template <typename T>
  static size_t of() {
    static const size_t bytes = [] {
      EncodedSizeFloor floor;
      T value{};
      floor(value);
      return std::max<size_t>(floor.bytes_, 1);
    }();
    return bytes;
  }

  template <typename T>
  void operator()(T& value) {
    if constexpr (std::is_same_v<T, bool>) {
      bytes_ += 1;
    } else if constexpr (std::is_arithmetic_v<T> || std::is_enum_v<T>) {
      bytes_ += sizeof(T);
    } else {
      fields(*this, value);
    }
  }
  void operator()(std::string&) { bytes_ += sizeof(uint32_t); }
  template <typename T>
  void operator()(std::vector<T>&) {
    bytes_ += sizeof(uint64_t);
  }
  template <typename T, size_t N>
  void operator()(T (&items)[N]) {
    for (T& item : items) (*this)(item);
  }
  void operator()(Arg&) { bytes_ += 2 + sizeof(StringId); }  // key, type, and the smallest value: a text

 private:
  size_t bytes_ = 0;
};

class ByteReader {
 public:
  explicit ByteReader(std::string_view in) : in_(in) {}

  template <typename T>
  void operator()(T& value) {
    if constexpr (std::is_same_v<T, bool>) {
      uint8_t byte = 0;
      (*this)(byte);
      if (byte > 1) throw CaptureFormatError("a bool is neither 0 nor 1");
      value = byte == 1;
    } else if constexpr (std::is_arithmetic_v<T> || std::is_enum_v<T>) {
      std::memcpy(&value, take(sizeof(T)), sizeof(T));
    } else {
      fields(*this, value);
    }
  }
  void operator()(std::string& text) {
    uint32_t size = 0;
    (*this)(size);
    text.assign(take(size), size);
  }
  template <typename T>
  void operator()(std::vector<T>& items) {
    uint64_t count = 0;
    (*this)(count);
    if (count > in_.size() / EncodedSizeFloor::of<T>()) {
      throw CaptureFormatError(fmt::format("a list of {} items is longer than the {} bytes left in its chunk", count,
                                           in_.size()));
    }
    items.resize(count);
    for (T& item : items) (*this)(item);
  }
  template <typename T, size_t N>
  void operator()(T (&items)[N]) {
    for (T& item : items) (*this)(item);
  }
  size_t remaining() const { return in_.size(); }

 private:
  const char* take(size_t bytes) {
    if (bytes > in_.size()) throw CaptureFormatError("a field runs past its chunk");
    const char* data = in_.data();
    in_.remove_prefix(bytes);
    return data;
  }

  std::string_view in_;
};

}  // namespace perfprof
