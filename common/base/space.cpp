#include <kiln/space.h>

#include <fmt/format.h>

#include <numeric>

#include "common/base/near_names.h"

namespace kiln {

namespace {

Space makeSpace(std::string name, SpaceKind kind) {
  Space space;
  space.name = std::move(name);
  space.kind = kind;
  return space;
}

std::string describeRange(const Int64Range& r) {
  return fmt::format("[{}, {}]", r.min ? std::to_string(*r.min) : "-inf",
                     r.max ? std::to_string(*r.max) : "inf");
}

std::string describeRange(const DoubleRange& r) {
  return fmt::format("[{}, {}]", r.min ? fmt::format("{}", *r.min) : "-inf",
                     r.max ? fmt::format("{}", *r.max) : "inf");
}

Status mismatch(const Space& space, const std::string& expected, const Value& value) {
  return invalidArgument(
      fmt::format("space '{}' expects {}, got {}", space.name, expected, value.describe()));
}

template <class T>
Status checkShape(const Space& space, const Tensor<T>& tensor) {
  if (tensor.shape.size() != space.shape.size()) {
    return invalidArgument(fmt::format("space '{}' expects a tensor of rank {}, got rank {}",
                                       space.name, space.shape.size(), tensor.shape.size()));
  }
  std::int64_t count = 1;
  for (std::size_t i = 0; i < tensor.shape.size(); ++i) {
    if (tensor.shape[i] < 0 || (space.shape[i] >= 0 && tensor.shape[i] != space.shape[i])) {
      return invalidArgument(fmt::format("space '{}': dimension {} is {}, expected {}", space.name,
                                         i, tensor.shape[i], space.shape[i]));
    }
    count *= tensor.shape[i];
  }
  if (static_cast<std::size_t>(count) != tensor.values.size()) {
    return invalidArgument(fmt::format("space '{}': tensor shape holds {} values but {} were sent",
                                       space.name, count, tensor.values.size()));
  }
  return okStatus();
}

template <class T, class Range>
Status checkElements(const Space& space, const Tensor<T>& tensor, const Range& range) {
  KILN_RETURN_IF_ERROR(checkShape(space, tensor));
  for (std::size_t i = 0; i < tensor.values.size(); ++i) {
    if (!range.contains(tensor.values[i])) {
      return invalidArgument(fmt::format("space '{}': element {} = {} is outside {}", space.name, i,
                                         tensor.values[i], describeRange(range)));
    }
  }
  return okStatus();
}

Status checkIndex(const Space& space, const Value& value) {
  const auto* index = value.getIf<std::int64_t>();
  if (index == nullptr) return mismatch(space, "an int64 action index", value);
  std::int64_t count = space.choiceCount();
  if (*index < 0 || *index >= count) {
    return invalidArgument(
        fmt::format("action {} is out of range [0, {}) of space '{}'", *index, count, space.name));
  }
  return okStatus();
}

Status checkLength(const Space& space, std::size_t length, const char* what) {
  if (!space.int64Range.contains(static_cast<std::int64_t>(length))) {
    return invalidArgument(fmt::format("space '{}': {} length {} is outside {}", space.name, what,
                                       length, describeRange(space.int64Range)));
  }
  return okStatus();
}

}  // namespace

Space Space::discrete(std::string name, std::int64_t n) {
  Space s = makeSpace(std::move(name), SpaceKind::kDiscrete);
  s.n = n;
  return s;
}
Space Space::namedDiscrete(std::string name, std::vector<std::string> names) {
  Space s = makeSpace(std::move(name), SpaceKind::kNamedDiscrete);
  s.names = std::move(names);
  return s;
}
Space Space::int64Scalar(std::string name, Int64Range range) {
  Space s = makeSpace(std::move(name), SpaceKind::kInt64);
  s.int64Range = range;
  return s;
}
Space Space::doubleScalar(std::string name, DoubleRange range) {
  Space s = makeSpace(std::move(name), SpaceKind::kDouble);
  s.doubleRange = range;
  return s;
}
Space Space::int64Box(std::string name, std::vector<std::int64_t> shape, Int64Range range) {
  Space s = makeSpace(std::move(name), SpaceKind::kInt64Box);
  s.shape = std::move(shape);
  s.int64Range = range;
  return s;
}
Space Space::floatBox(std::string name, std::vector<std::int64_t> shape, DoubleRange range) {
  Space s = makeSpace(std::move(name), SpaceKind::kFloatBox);
  s.shape = std::move(shape);
  s.doubleRange = range;
  return s;
}
Space Space::doubleBox(std::string name, std::vector<std::int64_t> shape, DoubleRange range) {
  Space s = makeSpace(std::move(name), SpaceKind::kDoubleBox);
  s.shape = std::move(shape);
  s.doubleRange = range;
  return s;
}
Space Space::string(std::string name, Int64Range lengthRange) {
  Space s = makeSpace(std::move(name), SpaceKind::kString);
  s.int64Range = lengthRange;
  return s;
}
Space Space::bytes(std::string name, Int64Range lengthRange) {
  Space s = makeSpace(std::move(name), SpaceKind::kBytes);
  s.int64Range = lengthRange;
  return s;
}
Space Space::list(std::string name, std::vector<Space> members) {
  Space s = makeSpace(std::move(name), SpaceKind::kList);
  s.members = std::move(members);
  return s;
}
Space Space::dict(std::string name, std::vector<Space> members) {
  Space s = makeSpace(std::move(name), SpaceKind::kDict);
  s.members = std::move(members);
  return s;
}
Space Space::any(std::string name) { return makeSpace(std::move(name), SpaceKind::kAny); }

std::int64_t Space::choiceCount() const {
  if (kind == SpaceKind::kDiscrete) return n;
  if (kind == SpaceKind::kNamedDiscrete) return static_cast<std::int64_t>(names.size());
  return 0;
}

Result<std::int64_t> Space::findChoice(std::string_view wanted) const {
  if (kind != SpaceKind::kNamedDiscrete) {
    return invalidArgument(
        fmt::format("space '{}' has no named choices: give an index, not '{}'", name, wanted));
  }
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (names[i] == wanted) return static_cast<std::int64_t>(i);
  }
  for (std::size_t i = 0; i < aliases.size() && i < names.size(); ++i) {
    if (!aliases[i].empty() && aliases[i] == wanted) return static_cast<std::int64_t>(i);
  }
  std::vector<std::string> known = names;
  for (const std::string& alias : aliases) {
    if (!alias.empty()) known.push_back(alias);
  }
  return notFound(fmt::format("unknown action '{}' in space '{}' ({} actions){}", wanted, name,
                              names.size(), didYouMean(wanted, known)));
}

Status Space::check(const Value& value) const {
  switch (kind) {
    case SpaceKind::kDiscrete:
    case SpaceKind::kNamedDiscrete:
      return checkIndex(*this, value);
    case SpaceKind::kInt64: {
      const auto* v = value.getIf<std::int64_t>();
      if (v == nullptr) return mismatch(*this, "an int64", value);
      if (!int64Range.contains(*v)) {
        return invalidArgument(
            fmt::format("space '{}': {} is outside {}", name, *v, describeRange(int64Range)));
      }
      return okStatus();
    }
    case SpaceKind::kDouble: {
      const auto* v = value.getIf<double>();
      if (v == nullptr) return mismatch(*this, "a double", value);
      if (!doubleRange.contains(*v)) {
        return invalidArgument(
            fmt::format("space '{}': {} is outside {}", name, *v, describeRange(doubleRange)));
      }
      return okStatus();
    }
    case SpaceKind::kInt64Box: {
      const auto* t = value.getIf<Int64Tensor>();
      if (t == nullptr) return mismatch(*this, "an int64 tensor", value);
      return checkElements(*this, *t, int64Range);
    }
    case SpaceKind::kFloatBox: {
      const auto* t = value.getIf<FloatTensor>();
      if (t == nullptr) return mismatch(*this, "a float tensor", value);
      return checkElements(*this, *t, doubleRange);
    }
    case SpaceKind::kDoubleBox: {
      const auto* t = value.getIf<DoubleTensor>();
      if (t == nullptr) return mismatch(*this, "a double tensor", value);
      return checkElements(*this, *t, doubleRange);
    }
    case SpaceKind::kString: {
      const auto* v = value.getIf<std::string>();
      if (v == nullptr) return mismatch(*this, "a string", value);
      return checkLength(*this, v->size(), "string");
    }
    case SpaceKind::kBytes: {
      const auto* v = value.getIf<Bytes>();
      if (v == nullptr) return mismatch(*this, "bytes", value);
      return checkLength(*this, v->data.size(), "byte");
    }
    case SpaceKind::kList: {
      const auto* v = value.getIf<ValueList>();
      if (v == nullptr) return mismatch(*this, "a list", value);
      if (v->size() != members.size()) {
        return invalidArgument(fmt::format("space '{}' expects a list of {} elements, got {}", name,
                                           members.size(), v->size()));
      }
      for (std::size_t i = 0; i < members.size(); ++i) {
        KILN_RETURN_IF_ERROR(members[i].check((*v)[i]));
      }
      return okStatus();
    }
    case SpaceKind::kDict: {
      if (!value.is<ValueDict>()) return mismatch(*this, "a dict", value);
      for (const Space& member : members) {
        const Value* entry = findInDict(value, member.name);
        if (entry == nullptr) {
          return invalidArgument(
              fmt::format("space '{}': dict has no entry '{}'", name, member.name));
        }
        KILN_RETURN_IF_ERROR(member.check(*entry));
      }
      return okStatus();
    }
    case SpaceKind::kAny:
      return okStatus();
  }
  return internalError("unknown space kind");
}

Result<std::size_t> findSpace(const std::vector<Space>& spaces, const std::string& name) {
  std::string known;
  for (std::size_t i = 0; i < spaces.size(); ++i) {
    if (spaces[i].name == name) return i;
    if (i < 12) known += (known.empty() ? "" : ", ") + spaces[i].name;
  }
  if (spaces.size() > 12) known += ", ...";
  return notFound(fmt::format("no space named '{}' (known: {})", name, known));
}

}  // namespace kiln
