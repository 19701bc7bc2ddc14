// Conversions between kiln::Value and Python objects (pure, GIL held):
// int/bool/float/str/bytes, numpy arrays <-> typed tensors with their shape,
// lists and dicts. Anything else is refused with an invalid-argument error.
#pragma once

#include <pybind11/pybind11.h>

#include <string>

#include <kiln/space.h>
#include <kiln/value.h>

namespace kiln::python {

// Deep structures from Python are refused past this nesting (a list that
// contains itself must not overflow the stack).
inline constexpr int kMaxValueDepth = 32;

// Throws StatusError(invalid argument) naming the type it cannot send.
Value toValue(pybind11::handle object);
pybind11::object toPython(const Value& value);

// "discrete", "named_discrete", "int64", "double", "int64_box", ... as the
// Python Space.kind.
std::string spaceKindName(SpaceKind kind);

}  // namespace kiln::python
