// A parsed JSON document as a small value tree, for the JSON files kiln reads
// from builds and corpora (compile_commands.json, corpus_description.json).
// Parsing is Cap'n Proto's JSON codec, bounded in size and nesting.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <kiln/status.h>

namespace kiln::programs {

struct JsonValue {
  enum class Kind : std::uint8_t { kNull, kBool, kNumber, kString, kArray, kObject };
  Kind kind = Kind::kNull;
  bool boolean = false;
  double number = 0;
  std::string string;
  std::vector<JsonValue> array;
  std::vector<std::pair<std::string, JsonValue>> object;  // in the file's order

  // Out of line: a pair holding JsonValue is complete only after the class
  // (clang with libstdc++ checks where the members are instantiated).
  JsonValue();
  ~JsonValue();
  JsonValue(const JsonValue&);
  JsonValue(JsonValue&&) noexcept;
  JsonValue& operator=(const JsonValue&);
  JsonValue& operator=(JsonValue&&) noexcept;

  // The member `name` of an object, or nullptr (also when this is no object).
  const JsonValue* member(std::string_view name) const;
};

// The most nested arrays and objects a document may have.
inline constexpr std::size_t kMaxJsonNesting = 64;

// invalid-argument naming `what` (e.g. the file) and the parser's reason.
Result<JsonValue> parseJson(std::string_view text, std::string_view what);

}  // namespace kiln::programs
