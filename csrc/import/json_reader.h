#pragma once
// A streaming JSON reader for untrusted trace files: values are pulled one at a time from a file
// read a buffer at a time (gzip-compressed or not, told apart by its first bytes), so a file of
// any size is read in the memory of its largest single value. The caller walks the document
// (objects member by member, arrays item by item), holding whole only the small values it wants
// (JsonValue: an event's args) and skipping the rest. Every malformed byte, every string or
// nesting beyond its bound, and a file cut short is a TraceImportError naming the file and the
// byte offset; nothing is trusted, nothing crashes.
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace perfprof {

// A trace file that cannot be read or is not what it claims: the message is one line naming the
// file and what was wrong.
class TraceImportError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A value held whole. Numbers keep their text (a timestamp's decimals are exact in it, not in a
// double).
struct JsonValue {
  enum class Type : uint8_t { Null, False, True, Number, String, Array, Object };
  Type type = Type::Null;
  std::string text;               // Number: its text; String: its value (unescaped, UTF-8)
  std::vector<JsonValue> items;   // Array: its items; Object: its members' values
  std::vector<std::string> keys;  // Object: its members' keys, parallel to items

  // The member `key` of an object, or null (also for a value that is not an object).
  const JsonValue* member(std::string_view key) const;
};

class JsonReader {
 public:
  // Opens `path`; throws TraceImportError when it cannot be opened.
  explicit JsonReader(const std::string& path);
  ~JsonReader();
  JsonReader(const JsonReader&) = delete;
  JsonReader& operator=(const JsonReader&) = delete;

  // The members of an object, read after its '{': `while (members.next(key)) { read the value }`.
  class Members {
   public:
    explicit Members(JsonReader& reader) : reader_(reader) {}
    // Reads the next key and its ':'; false at the object's '}'.
    bool next(std::string& key);

   private:
    JsonReader& reader_;
    bool first_ = true;
  };

  // The items of an array, read after its '[': `while (items.next()) { read the item }`.
  class Items {
   public:
    explicit Items(JsonReader& reader) : reader_(reader) {}
    // Whether another item follows (false at the array's ']').
    bool next();

   private:
    JsonReader& reader_;
    bool first_ = true;
  };

  // The next value's first byte, whitespace skipped; '\0' at the end of the file.
  char peek();
  Members object();  // reads '{'
  Items array();     // reads '['
  void read_string(std::string& out);
  // A number's text, checked against JSON's grammar.
  void read_number(std::string& out);
  // Any value whole, nested at most kMaxDepth deep.
  void read_value(JsonValue& out);
  // Any value, read and dropped.
  void skip_value();
  // Fails unless only whitespace is left.
  void expect_end();

  // Throws TraceImportError "<path>: byte <offset>: <what>".
  [[noreturn]] void fail(std::string_view what) const;
  const std::string& path() const { return path_; }

  static constexpr size_t kMaxDepth = 64;                 // nesting of arrays and objects
  static constexpr size_t kMaxStringBytes = 16u << 20;     // one string, unescaped

 private:
  struct Source;

  char next_byte();  // the next byte, failing at the end of the file
  bool refill();     // false at the end of the file
  void skip_whitespace();
  void expect(char c, std::string_view where);
  void read_literal(std::string_view rest);
  void read_value(JsonValue& out, size_t depth);
  void skip_value(size_t depth);
  void append_escape(std::string& out);
  uint32_t read_hex4();

  std::string path_;
  std::unique_ptr<Source> source_;
  std::vector<char> buffer_;
  size_t position_ = 0;
  size_t end_ = 0;
  uint64_t consumed_ = 0;  // bytes of the (uncompressed) text before buffer_'s start
};

// JSON number text as an integer; false for a fraction, an exponent or a value beyond int64.
bool json_int(const std::string& text, int64_t& out);
// JSON number text as an unsigned integer (addresses reach past int64); false otherwise.
bool json_uint(const std::string& text, uint64_t& out);
// JSON number text as a double (finite); false otherwise.
bool json_double(const std::string& text, double& out);
// Microseconds given as JSON number text ("1234.5678") in nanoseconds, rounded to the nearest:
// exact for decimals, whatever their number; false beyond int64's range.
bool json_us_to_ns(const std::string& text, int64_t& out);

}  // namespace perfprof
