#include "python/src/convert.h"

#include <fmt/format.h>
#include <pybind11/numpy.h>

#include <climits>

#include "python/src/status_error.h"

namespace py = pybind11;

namespace kiln::python {

namespace {

std::string typeName(py::handle object) {
  return py::str(py::type::handle_of(object).attr("__name__")).cast<std::string>();
}

template <class T>
Tensor<T> toTensor(const py::array& array) {
  auto typed = py::array_t<T, py::array::c_style | py::array::forcecast>::ensure(array);
  if (!typed) throw StatusError(invalidArgument("cannot convert the numpy array to a tensor"));
  Tensor<T> tensor;
  tensor.shape.assign(typed.shape(), typed.shape() + typed.ndim());
  tensor.values.assign(typed.data(), typed.data() + typed.size());
  return tensor;
}

Value arrayToValue(const py::array& array) {
  char kind = array.dtype().kind();
  switch (kind) {
    case 'b':
    case 'i':
    case 'u':
      return toTensor<std::int64_t>(array);
    case 'f':
      if (array.dtype().itemsize() == 4) return toTensor<float>(array);
      return toTensor<double>(array);
    default:
      throw StatusError(invalidArgument(fmt::format(
          "cannot send a numpy array of dtype '{}': kiln tensors hold int64, float32 or float64",
          py::str(array.dtype()).cast<std::string>())));
  }
}

Value convert(py::handle object, int depth) {
  if (depth > kMaxValueDepth) {
    throw StatusError(invalidArgument(fmt::format(
        "value nests deeper than {} levels (a list that contains itself?)", kMaxValueDepth)));
  }
  if (object.is_none()) return Value{};
  if (PyBool_Check(object.ptr())) return Value{object.ptr() == Py_True};
  if (PyLong_Check(object.ptr())) {
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(object.ptr(), &overflow);
    if (overflow != 0) {
      throw StatusError(invalidArgument(
          fmt::format("integer {} does not fit in 64 bits", py::str(object).cast<std::string>())));
    }
    return Value{static_cast<std::int64_t>(v)};
  }
  if (PyFloat_Check(object.ptr())) return Value{PyFloat_AsDouble(object.ptr())};
  if (PyUnicode_Check(object.ptr())) {
    Py_ssize_t size = 0;
    const char* data = PyUnicode_AsUTF8AndSize(object.ptr(), &size);
    if (data == nullptr) throw py::error_already_set();
    return Value{std::string(data, static_cast<std::size_t>(size))};
  }
  if (PyBytes_Check(object.ptr()) || PyByteArray_Check(object.ptr())) {
    return Value{Bytes{py::bytes(py::reinterpret_borrow<py::object>(object)).cast<std::string>()}};
  }
  if (py::isinstance<py::array>(object)) {
    return arrayToValue(py::reinterpret_borrow<py::array>(object));
  }
  if (PyList_Check(object.ptr()) || PyTuple_Check(object.ptr())) {
    ValueList list;
    for (py::handle item : py::reinterpret_borrow<py::sequence>(object)) {
      list.push_back(convert(item, depth + 1));
    }
    return Value{std::move(list)};
  }
  if (PyDict_Check(object.ptr())) {
    ValueDict dict;
    for (auto [key, item] : py::reinterpret_borrow<py::dict>(object)) {
      if (!PyUnicode_Check(key.ptr())) {
        throw StatusError(invalidArgument(
            fmt::format("dict keys must be str, got a key of type '{}'", typeName(key))));
      }
      dict.push_back(NamedValue{key.cast<std::string>(), convert(item, depth + 1)});
    }
    return Value{std::move(dict)};
  }
  // numpy scalars (np.int64, np.float32, np.bool_) are not Python ints or
  // floats; item() turns them into the matching builtin.
  py::module_ numpy = py::module_::import("numpy");
  if (py::isinstance(object, numpy.attr("generic"))) {
    return convert(object.attr("item")(), depth + 1);
  }
  throw StatusError(
      invalidArgument(fmt::format("cannot send a value of type '{}' to kiln: use int, float, "
                                  "bool, str, bytes, a numpy array, a list or a dict",
                                  typeName(object))));
}

template <class T>
py::object tensorToPython(const Tensor<T>& tensor) {
  std::int64_t count = 1;
  bool shapeValid = true;
  for (std::int64_t dim : tensor.shape) {
    // Bounded by the value count first, so that the product cannot overflow
    // (a zero dimension makes any later one valid: the tensor is empty).
    if (dim < 0 || (count != 0 && dim > static_cast<std::int64_t>(tensor.values.size()))) {
      shapeValid = false;
      break;
    }
    count *= dim;
    if (count > static_cast<std::int64_t>(tensor.values.size())) {
      shapeValid = false;
      break;
    }
  }
  std::vector<py::ssize_t> shape(tensor.shape.begin(), tensor.shape.end());
  // A shape that does not match the values is shown flat rather than refused:
  // the values are still the worker's answer.
  if (!shapeValid || tensor.shape.empty() ||
      count != static_cast<std::int64_t>(tensor.values.size())) {
    shape = {static_cast<py::ssize_t>(tensor.values.size())};
  }
  py::array_t<T> array(shape);
  std::copy(tensor.values.begin(), tensor.values.end(), array.mutable_data());
  return array;
}

}  // namespace

Value toValue(py::handle object) { return convert(object, 0); }

py::object toPython(const Value& value) {
  return std::visit(
      [](const auto& v) -> py::object {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::monostate>) {
          return py::none();
        } else if constexpr (std::is_same_v<T, bool>) {
          return py::bool_(v);
        } else if constexpr (std::is_same_v<T, std::int64_t>) {
          return py::int_(v);
        } else if constexpr (std::is_same_v<T, double>) {
          return py::float_(v);
        } else if constexpr (std::is_same_v<T, std::string>) {
          // Compiler output is not always valid UTF-8; show it, do not fail.
          PyObject* text =
              PyUnicode_DecodeUTF8(v.data(), static_cast<Py_ssize_t>(v.size()), "replace");
          if (text == nullptr) throw py::error_already_set();
          return py::reinterpret_steal<py::str>(text);
        } else if constexpr (std::is_same_v<T, Bytes>) {
          return py::bytes(v.data);
        } else if constexpr (std::is_same_v<T, ValueList>) {
          py::list list;
          for (const Value& item : v) list.append(toPython(item));
          return list;
        } else if constexpr (std::is_same_v<T, ValueDict>) {
          py::dict dict;
          for (const NamedValue& item : v) dict[py::str(item.name)] = toPython(item.value);
          return dict;
        } else {
          return tensorToPython(v);
        }
      },
      value.data);
}

std::string spaceKindName(SpaceKind kind) {
  switch (kind) {
    case SpaceKind::kDiscrete:
      return "discrete";
    case SpaceKind::kNamedDiscrete:
      return "named_discrete";
    case SpaceKind::kInt64:
      return "int64";
    case SpaceKind::kDouble:
      return "double";
    case SpaceKind::kInt64Box:
      return "int64_box";
    case SpaceKind::kFloatBox:
      return "float_box";
    case SpaceKind::kDoubleBox:
      return "double_box";
    case SpaceKind::kString:
      return "string";
    case SpaceKind::kBytes:
      return "bytes";
    case SpaceKind::kList:
      return "list";
    case SpaceKind::kDict:
      return "dict";
    case SpaceKind::kAny:
      break;
  }
  return "any";
}

}  // namespace kiln::python
