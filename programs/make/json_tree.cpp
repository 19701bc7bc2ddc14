#include "programs/make/json_tree.h"

#include <capnp/compat/json.h>
#include <capnp/message.h>
#include <kj/exception.h>

namespace kiln::programs {

JsonValue::JsonValue() = default;
JsonValue::~JsonValue() = default;
JsonValue::JsonValue(const JsonValue&) = default;
JsonValue::JsonValue(JsonValue&&) noexcept = default;
JsonValue& JsonValue::operator=(const JsonValue&) = default;
JsonValue& JsonValue::operator=(JsonValue&&) noexcept = default;
namespace {

JsonValue convert(capnp::JsonValue::Reader value) {
  JsonValue out;
  switch (value.which()) {
    case capnp::JsonValue::NULL_:
      break;
    case capnp::JsonValue::BOOLEAN:
      out.kind = JsonValue::Kind::kBool;
      out.boolean = value.getBoolean();
      break;
    case capnp::JsonValue::NUMBER:
      out.kind = JsonValue::Kind::kNumber;
      out.number = value.getNumber();
      break;
    case capnp::JsonValue::STRING:
      out.kind = JsonValue::Kind::kString;
      out.string = value.getString();
      break;
    case capnp::JsonValue::ARRAY:
      out.kind = JsonValue::Kind::kArray;
      for (auto element : value.getArray()) out.array.push_back(convert(element));
      break;
    case capnp::JsonValue::OBJECT:
      out.kind = JsonValue::Kind::kObject;
      for (auto field : value.getObject()) {
        out.object.emplace_back(std::string(field.getName()), convert(field.getValue()));
      }
      break;
    case capnp::JsonValue::CALL:
      // The codec only makes calls from non-JSON syntax; parseJson refuses those below.
      break;
  }
  return out;
}

bool hasCall(capnp::JsonValue::Reader value) {
  switch (value.which()) {
    case capnp::JsonValue::CALL:
      return true;
    case capnp::JsonValue::ARRAY:
      for (auto element : value.getArray()) {
        if (hasCall(element)) return true;
      }
      return false;
    case capnp::JsonValue::OBJECT:
      for (auto field : value.getObject()) {
        if (hasCall(field.getValue())) return true;
      }
      return false;
    default:
      return false;
  }
}

int hexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// The code unit of "\uXXXX" at text[i] ('\\'), or -1.
long escapedUnit(std::string_view text, std::size_t i) {
  if (i + 6 > text.size() || text[i + 1] != 'u') return -1;
  long unit = 0;
  for (std::size_t k = i + 2; k < i + 6; ++k) {
    int digit = hexDigit(text[k]);
    if (digit < 0) return -1;
    unit = unit * 16 + digit;
  }
  return unit;
}

void appendUtf8(std::string& out, unsigned long cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

// Cap'n Proto 0.9's decoder keeps one byte of a "\u" escape beyond ASCII,
// so those escapes become raw UTF-8 first (valid JSON too): a surrogate pair
// becomes its code point, a lone surrogate U+FFFD. Other escapes stay.
std::string decodeNonAsciiEscapes(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '\\') {
      out.push_back(text[i]);
      continue;
    }
    long unit = escapedUnit(text, i);
    if (unit < 0x80) {  // not \u, or ASCII: the codec handles it
      out.push_back(text[i]);
      if (i + 1 < text.size()) out.push_back(text[++i]);
      continue;
    }
    unsigned long cp = static_cast<unsigned long>(unit);
    std::size_t used = 6;
    if (unit >= 0xD800 && unit <= 0xDBFF) {
      long low = text.size() > i + 6 && text[i + 6] == '\\' ? escapedUnit(text, i + 6) : -1;
      if (low >= 0xDC00 && low <= 0xDFFF) {
        cp = 0x10000 + ((cp - 0xD800) << 10) + static_cast<unsigned long>(low - 0xDC00);
        used = 12;
      } else {
        cp = 0xFFFD;
      }
    } else if (unit >= 0xDC00 && unit <= 0xDFFF) {
      cp = 0xFFFD;
    }
    appendUtf8(out, cp);
    i += used - 1;
  }
  return out;
}

}  // namespace

const JsonValue* JsonValue::member(std::string_view name) const {
  for (const auto& [key, value] : object) {
    if (key == name) return &value;
  }
  return nullptr;
}

Result<JsonValue> parseJson(std::string_view text, std::string_view what) {
  capnp::JsonCodec codec;
  codec.setMaxNestingDepth(kMaxJsonNesting);
  capnp::MallocMessageBuilder message;
  auto root = message.initRoot<capnp::JsonValue>();
  // The codec reports malformed input as a kj exception; it is an expected
  // failure here and becomes a value.
  std::string decoded = decodeNonAsciiEscapes(text);
  kj::Maybe<kj::Exception> error = kj::runCatchingExceptions(
      [&] { codec.decodeRaw(kj::ArrayPtr<const char>(decoded.data(), decoded.size()), root); });
  KJ_IF_MAYBE (e, error) {
    return invalidArgument(std::string(what) +
                           " is not valid JSON: " + std::string(e->getDescription().cStr()));
  }
  auto reader = root.asReader();
  if (hasCall(reader)) return invalidArgument(std::string(what) + " is not valid JSON");
  return convert(reader);
}

}  // namespace kiln::programs
