#include "common/base/wire_convert.h"

#include <fmt/format.h>

namespace kiln {

namespace {

template <class T, class ListBuilder>
void fillList(const std::vector<T>& values, ListBuilder list) {
  for (unsigned i = 0; i < values.size(); ++i) list.set(i, values[i]);
}

template <class T, class ListReader>
std::vector<T> readList(ListReader list) {
  std::vector<T> out;
  out.reserve(list.size());
  for (auto v : list) out.push_back(static_cast<T>(v));
  return out;
}

template <class T, class TensorBuilder>
void tensorToWire(const Tensor<T>& tensor, TensorBuilder out) {
  fillList(tensor.shape, out.initShape(tensor.shape.size()));
  fillList(tensor.values, out.initValues(tensor.values.size()));
}

template <class T, class TensorReader>
Result<Value> tensorFromWire(TensorReader in) {
  Tensor<T> tensor{readList<std::int64_t>(in.getShape()), readList<T>(in.getValues())};
  std::int64_t count = 1;
  for (std::int64_t dim : tensor.shape) {
    if (dim < 0 || (dim > 0 && count > (std::int64_t{1} << 40) / dim)) {
      return invalidArgument(fmt::format("tensor has an invalid dimension {}", dim));
    }
    count *= dim;
  }
  if (static_cast<std::size_t>(count) != tensor.values.size()) {
    return invalidArgument(
        fmt::format("tensor shape holds {} values but {} were sent", count, tensor.values.size()));
  }
  return Value(std::move(tensor));
}

void rangeToWire(const Int64Range& r, wire::Int64Range::Builder out) {
  out.setHasMin(r.min.has_value());
  out.setMin(r.min.value_or(0));
  out.setHasMax(r.max.has_value());
  out.setMax(r.max.value_or(0));
}

void rangeToWire(const DoubleRange& r, wire::DoubleRange::Builder out) {
  out.setHasMin(r.min.has_value());
  out.setMin(r.min.value_or(0));
  out.setHasMax(r.max.has_value());
  out.setMax(r.max.value_or(0));
}

Int64Range rangeFromWire(wire::Int64Range::Reader in) {
  Int64Range r;
  if (in.getHasMin()) r.min = in.getMin();
  if (in.getHasMax()) r.max = in.getMax();
  return r;
}

DoubleRange rangeFromWire(wire::DoubleRange::Reader in) {
  DoubleRange r;
  if (in.getHasMin()) r.min = in.getMin();
  if (in.getHasMax()) r.max = in.getMax();
  return r;
}

struct ValueWriter {
  wire::Value::Builder out;
  void operator()(std::monostate) { out.setNone(); }
  void operator()(bool v) { out.setBoolean(v); }
  void operator()(std::int64_t v) { out.setInt64(v); }
  void operator()(double v) { out.setDouble(v); }
  void operator()(const std::string& v) { out.setString(v); }
  void operator()(const Bytes& v) {
    out.setBytes(kj::arrayPtr(reinterpret_cast<const kj::byte*>(v.data.data()), v.data.size()));
  }
  void operator()(const Int64Tensor& t) { tensorToWire(t, out.initInt64Tensor()); }
  void operator()(const FloatTensor& t) { tensorToWire(t, out.initFloatTensor()); }
  void operator()(const DoubleTensor& t) { tensorToWire(t, out.initDoubleTensor()); }
  void operator()(const ValueList& list) {
    auto items = out.initList(list.size());
    for (unsigned i = 0; i < list.size(); ++i) toWire(list[i], items[i]);
  }
  void operator()(const ValueDict& dict) {
    auto items = out.initDict(dict.size());
    for (unsigned i = 0; i < dict.size(); ++i) {
      items[i].setName(dict[i].name);
      toWire(dict[i].value, items[i].initValue());
    }
  }
};

}  // namespace

void toWire(const Value& value, wire::Value::Builder out) {
  std::visit(ValueWriter{out}, value.data);
}

Result<Value> fromWire(wire::Value::Reader in) {
  switch (in.which()) {
    case wire::Value::NONE:
      return Value();
    case wire::Value::BOOLEAN:
      return Value(in.getBoolean());
    case wire::Value::INT64:
      return Value(static_cast<std::int64_t>(in.getInt64()));
    case wire::Value::DOUBLE:
      return Value(in.getDouble());
    case wire::Value::STRING:
      return Value(std::string(in.getString().cStr()));
    case wire::Value::BYTES: {
      auto data = in.getBytes();
      return Value(Bytes{std::string(reinterpret_cast<const char*>(data.begin()), data.size())});
    }
    case wire::Value::INT64_TENSOR:
      return tensorFromWire<std::int64_t>(in.getInt64Tensor());
    case wire::Value::FLOAT_TENSOR:
      return tensorFromWire<float>(in.getFloatTensor());
    case wire::Value::DOUBLE_TENSOR:
      return tensorFromWire<double>(in.getDoubleTensor());
    case wire::Value::LIST: {
      ValueList list;
      for (auto item : in.getList()) {
        KILN_ASSIGN_OR_RETURN(Value v, fromWire(item));
        list.push_back(std::move(v));
      }
      return Value(std::move(list));
    }
    case wire::Value::DICT: {
      ValueDict dict;
      for (auto item : in.getDict()) {
        KILN_ASSIGN_OR_RETURN(Value v, fromWire(item.getValue()));
        dict.push_back({item.getName().cStr(), std::move(v)});
      }
      return Value(std::move(dict));
    }
  }
  return invalidArgument("value has an unknown kind (sent by a newer protocol?)");
}

void toWire(const Space& space, wire::Space::Builder out) {
  out.setName(space.name);
  out.setKind(static_cast<wire::SpaceKind>(space.kind));
  out.setDeterministic(space.deterministic);
  out.setPlatformDependent(space.platformDependent);
  out.setSinceLastObserved(space.sinceLastObserved);
  toWire(space.defaultValue, out.initDefaultValue());
  out.setN(space.n);
  auto names = out.initNames(space.names.size());
  for (unsigned i = 0; i < space.names.size(); ++i) names.set(i, space.names[i]);
  auto aliases = out.initAliases(space.aliases.size());
  for (unsigned i = 0; i < space.aliases.size(); ++i) aliases.set(i, space.aliases[i]);
  toWire(space.metadata, out.initMetadata());
  rangeToWire(space.int64Range, out.initInt64Range());
  rangeToWire(space.doubleRange, out.initDoubleRange());
  fillList(space.shape, out.initShape(space.shape.size()));
  auto members = out.initMembers(space.members.size());
  for (unsigned i = 0; i < space.members.size(); ++i) toWire(space.members[i], members[i]);
}

Result<Space> fromWire(wire::Space::Reader in) {
  Space space;
  space.name = in.getName().cStr();
  auto kind = static_cast<unsigned>(in.getKind());
  if (kind > static_cast<unsigned>(SpaceKind::kAny)) {
    return invalidArgument(fmt::format("space '{}' has an unknown kind {}", space.name, kind));
  }
  space.kind = static_cast<SpaceKind>(kind);
  space.deterministic = in.getDeterministic();
  space.platformDependent = in.getPlatformDependent();
  space.sinceLastObserved = in.getSinceLastObserved();
  KILN_ASSIGN_OR_RETURN(space.defaultValue, fromWire(in.getDefaultValue()));
  space.n = in.getN();
  for (auto name : in.getNames()) space.names.emplace_back(name.cStr());
  for (auto alias : in.getAliases()) space.aliases.emplace_back(alias.cStr());
  if (!space.aliases.empty() && space.aliases.size() != space.names.size()) {
    return invalidArgument(fmt::format("space '{}' has {} aliases for {} names", space.name,
                                       space.aliases.size(), space.names.size()));
  }
  KILN_ASSIGN_OR_RETURN(space.metadata, fromWire(in.getMetadata()));
  space.int64Range = rangeFromWire(in.getInt64Range());
  space.doubleRange = rangeFromWire(in.getDoubleRange());
  space.shape = readList<std::int64_t>(in.getShape());
  for (auto member : in.getMembers()) {
    KILN_ASSIGN_OR_RETURN(Space m, fromWire(member));
    space.members.push_back(std::move(m));
  }
  return space;
}

wire::ErrorCode toWire(ErrorCode code) { return static_cast<wire::ErrorCode>(code); }

ErrorCode fromWire(wire::ErrorCode code) {
  auto raw = static_cast<unsigned>(code);
  if (raw > static_cast<unsigned>(ErrorCode::kInternal)) return ErrorCode::kInternal;
  return static_cast<ErrorCode>(raw);
}

void toWire(const Status& status, wire::Error::Builder out) {
  out.setCode(toWire(status.code()));
  out.setMessage(status.message());
}

Status fromWire(wire::Error::Reader in) {
  ErrorCode code = fromWire(in.getCode());
  if (code == ErrorCode::kOk) return internalError("peer sent an error with code ok");
  return Status(code, in.getMessage().cStr());
}

}  // namespace kiln
