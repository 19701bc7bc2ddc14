// Values that cross the wire: actions, observations, parameters and defaults.
// A closed set of alternatives rich enough for compiler RL (as CompilerGym's
// Event): scalars, strings, bytes, typed tensors with a shape, lists and dicts.
#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

namespace kiln {

template <class T>
struct Tensor {
  std::vector<std::int64_t> shape;  // row-major; product(shape) == values.size()
  std::vector<T> values;
  bool operator==(const Tensor&) const = default;
};
using Int64Tensor = Tensor<std::int64_t>;
using FloatTensor = Tensor<float>;
using DoubleTensor = Tensor<double>;

// Raw bytes, kept apart from std::string so that text and binary stay distinct.
struct Bytes {
  std::string data;
  bool operator==(const Bytes&) const = default;
};

struct Value;
struct NamedValue;
using ValueList = std::vector<Value>;
using ValueDict = std::vector<NamedValue>;  // keeps insertion order

struct Value {
  using Variant = std::variant<std::monostate, bool, std::int64_t, double, std::string, Bytes,
                               Int64Tensor, FloatTensor, DoubleTensor, ValueList, ValueDict>;
  Variant data;

  Value() = default;
  template <class T>
  requires std::is_constructible_v<Variant, T&&> &&
      (!std::is_same_v<std::decay_t<T>, Value>)Value(T&& v)
      : data(std::forward<T>(v)) {}  // NOLINT: implicit by design
  Value(int v);                      // NOLINT
  Value(const char* v);              // NOLINT

  bool isNone() const { return std::holds_alternative<std::monostate>(data); }
  template <class T>
  bool is() const {
    return std::holds_alternative<T>(data);
  }
  template <class T>
  const T& as() const {
    return std::get<T>(data);
  }
  template <class T>
  const T* getIf() const {
    return std::get_if<T>(&data);
  }

  bool operator==(const Value&) const;
  // A short human-readable rendering for logs and error messages.
  std::string describe() const;
};

struct NamedValue {
  std::string name;
  Value value;
  bool operator==(const NamedValue&) const = default;
};

// Out of the class: clang instantiates the variant's destructor here, which
// needs NamedValue complete (the clang fuzz build, docs/fuzzing.md).
inline Value::Value(int v) : data(std::int64_t{v}) {}
inline Value::Value(const char* v) : data(std::string(v)) {}

// Looks a key up in a dict value; nullptr if absent or not a dict.
const Value* findInDict(const Value& dict, const std::string& key);

}  // namespace kiln
