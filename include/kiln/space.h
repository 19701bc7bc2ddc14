// Spaces describe what a session accepts (action spaces) and what it can
// observe (observation spaces), as CompilerGym's spaces do. `check` is the
// policy that the worker applies to every incoming action.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <kiln/status.h>
#include <kiln/value.h>

namespace kiln {

struct Int64Range {
  std::optional<std::int64_t> min;  // inclusive; absent = unbounded
  std::optional<std::int64_t> max;  // inclusive
  bool operator==(const Int64Range&) const = default;
  bool contains(std::int64_t v) const { return (!min || v >= *min) && (!max || v <= *max); }
};

struct DoubleRange {
  std::optional<double> min;
  std::optional<double> max;
  bool operator==(const DoubleRange&) const = default;
  bool contains(double v) const { return (!min || v >= *min) && (!max || v <= *max); }
};

enum class SpaceKind : std::uint8_t {
  kDiscrete,       // an int64 in [0, n)
  kNamedDiscrete,  // an int64 index into `names`
  kInt64,          // an int64 scalar within `int64Range`
  kDouble,         // a double scalar within `doubleRange`
  kInt64Box,       // an Int64Tensor of `shape` (-1 = any length) with elements in `int64Range`
  kFloatBox,       // a FloatTensor of `shape` with elements in `doubleRange`
  kDoubleBox,      // a DoubleTensor of `shape` with elements in `doubleRange`
  kString,         // text whose length is within `int64Range`
  kBytes,          // bytes whose length is within `int64Range`
  kList,           // a list whose i-th element is in members[i]
  kDict,           // a dict whose entry `members[i].name` is in members[i]
  kAny,            // anything (e.g. a compiler-defined structure)
};

struct Space {
  std::string name;
  SpaceKind kind = SpaceKind::kAny;
  bool deterministic = true;       // the same state always gives the same value
  bool platformDependent = false;  // the value depends on the host (e.g. object code size)
  // The value is measured since the session last computed this space (a
  // reward: the drop of a cost since the previous reward), so it depends on
  // when it was observed, not on the state alone. A restored session's replay
  // computes it again where the original last did (client/session_restore.cpp).
  bool sinceLastObserved = false;
  Value defaultValue;  // e.g. the observation of an empty program; may be none

  std::int64_t n = 0;              // kDiscrete
  std::vector<std::string> names;  // kNamedDiscrete
  // kNamedDiscrete: another name accepted for choice i (e.g. CompilerGym's
  // flag "-gvn" for "gvn"); empty, or one per name ("" = none).
  std::vector<std::string> aliases;
  // What the session type says about its choices beyond their names, e.g.
  // {"pipelines": [...]}, the exact pass pipeline of each llvm action.
  // None when there is nothing; peers older than the field see none.
  Value metadata;
  Int64Range int64Range;    // kInt64, kInt64Box elements, kString/kBytes length
  DoubleRange doubleRange;  // kDouble, kFloatBox/kDoubleBox elements
  std::vector<std::int64_t> shape;
  std::vector<Space> members;  // kList, kDict

  bool operator==(const Space&) const = default;

  static Space discrete(std::string name, std::int64_t n);
  static Space namedDiscrete(std::string name, std::vector<std::string> names);
  static Space int64Scalar(std::string name, Int64Range range);
  static Space doubleScalar(std::string name, DoubleRange range);
  static Space int64Box(std::string name, std::vector<std::int64_t> shape, Int64Range range);
  static Space floatBox(std::string name, std::vector<std::int64_t> shape, DoubleRange range);
  static Space doubleBox(std::string name, std::vector<std::int64_t> shape, DoubleRange range);
  static Space string(std::string name, Int64Range lengthRange = {});
  static Space bytes(std::string name, Int64Range lengthRange = {});
  static Space list(std::string name, std::vector<Space> members);
  static Space dict(std::string name, std::vector<Space> members);
  static Space any(std::string name);

  // Number of choices of a discrete space (n or names.size()); 0 otherwise.
  std::int64_t choiceCount() const;

  // The index of the choice of a named discrete space called `name` or
  // aliased so; not-found naming the space, the unknown name and the names
  // nearest to it otherwise.
  Result<std::int64_t> findChoice(std::string_view name) const;

  // Ok if `value` belongs to this space; otherwise an invalid-argument status
  // that names the space and what was wrong (e.g. "action 12 is out of range
  // [0, 10) of space 'passes'").
  Status check(const Value& value) const;
};

// Index of the space called `name`, or not-found naming the spaces there are.
Result<std::size_t> findSpace(const std::vector<Space>& spaces, const std::string& name);

}  // namespace kiln
