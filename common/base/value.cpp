#include <kiln/value.h>

#include <fmt/format.h>

namespace kiln {

bool Value::operator==(const Value& other) const { return data == other.data; }

const Value* findInDict(const Value& dict, const std::string& key) {
  const auto* entries = dict.getIf<ValueDict>();
  if (entries == nullptr) return nullptr;
  for (const NamedValue& entry : *entries) {
    if (entry.name == key) return &entry.value;
  }
  return nullptr;
}

namespace {

std::string describeShape(const std::vector<std::int64_t>& shape) {
  return fmt::format("[{}]", fmt::join(shape, ", "));
}

struct Describer {
  std::string operator()(std::monostate) const { return "none"; }
  std::string operator()(bool v) const { return v ? "true" : "false"; }
  std::string operator()(std::int64_t v) const { return std::to_string(v); }
  std::string operator()(double v) const { return fmt::format("{}", v); }
  std::string operator()(const std::string& v) const {
    constexpr std::size_t kShown = 40;
    return v.size() <= kShown ? fmt::format("'{}'", v)
                              : fmt::format("'{}...' ({} chars)", v.substr(0, kShown), v.size());
  }
  std::string operator()(const Bytes& v) const { return fmt::format("{} bytes", v.data.size()); }
  std::string operator()(const Int64Tensor& t) const {
    return "int64 tensor " + describeShape(t.shape);
  }
  std::string operator()(const FloatTensor& t) const {
    return "float tensor " + describeShape(t.shape);
  }
  std::string operator()(const DoubleTensor& t) const {
    return "double tensor " + describeShape(t.shape);
  }
  std::string operator()(const ValueList& l) const { return fmt::format("list of {}", l.size()); }
  std::string operator()(const ValueDict& d) const { return fmt::format("dict of {}", d.size()); }
};

}  // namespace

std::string Value::describe() const { return std::visit(Describer{}, data); }

}  // namespace kiln
